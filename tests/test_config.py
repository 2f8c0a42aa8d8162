"""App settings from the environment and the lenient per-repo `.github/flaky.yml` parser."""

from __future__ import annotations

import ipaddress
import secrets
from pathlib import Path

import pytest
from pydantic import ValidationError

from bot.config import (
    CommentMode,
    ImportBudget,
    OwnersMode,
    RepoConfig,
    Settings,
    parse_settings_file,
    settings_problems,
)
from bot.triage.imports.walk import WalkLimits
from bot.triage.signature import is_generic

_VARIABLES = (
    "APP_ID",
    "PRIVATE_KEY",
    "PRIVATE_KEY_PATH",
    "WEBHOOK_SECRET",
    "WEBHOOK_PATH",
    "DASHBOARD_TOKEN",
    "TRUSTED_PROXIES",
)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _VARIABLES:
        monkeypatch.delenv(name, raising=False)


def _settings() -> Settings:
    return Settings(_env_file=None)


def test_missing_for_serve_names_every_absent_variable() -> None:
    assert _settings().missing_for_serve() == [
        "APP_ID",
        "PRIVATE_KEY or PRIVATE_KEY_PATH",
        "WEBHOOK_SECRET",
    ]


def test_empty_webhook_secret_counts_as_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("APP_ID", "12")
    monkeypatch.setenv("PRIVATE_KEY_PATH", str(tmp_path / "key.pem"))
    monkeypatch.setenv("WEBHOOK_SECRET", "")
    assert _settings().missing_for_serve() == ["WEBHOOK_SECRET"]
    monkeypatch.setenv("WEBHOOK_SECRET", "s")
    settings = _settings()
    assert settings.missing_for_serve() == []
    assert (settings.app_id, settings.secret()) == (12, "s")


@pytest.mark.parametrize(
    "token",
    [
        "a",
        "hunter2",
        "x" * 64,
        "abcabcabcabcabcabcabcabcabcabcabcabc",  # 36 characters, 3 different
        "password1password1password1passw",  # 32 characters, 9 different
        secrets.token_hex(15),  # 30 characters
    ],
    ids=["one-letter", "common", "one-character", "three-characters", "nine-characters", "short"],
)
def test_a_dashboard_token_easy_to_guess_is_refused_saying_how_to_make_one(
    monkeypatch: pytest.MonkeyPatch, token: str
) -> None:
    monkeypatch.setenv("DASHBOARD_TOKEN", token)
    with pytest.raises(ValidationError) as refused:
        _settings()

    (problem,) = settings_problems(refused.value)
    assert problem.startswith("DASHBOARD_TOKEN: too easy to guess")
    assert "secrets.token_urlsafe(32)" in problem
    assert "openssl rand -hex 32" in problem
    # A refused value may be a secret: never echoed, in the message nor in the exception.
    assert "input_value" not in str(refused.value)
    assert f"'{token}'" not in str(refused.value) + problem


@pytest.mark.parametrize(
    "token", [secrets.token_urlsafe(32), secrets.token_hex(32)], ids=["urlsafe", "hex"]
)
def test_a_dashboard_token_made_as_the_hint_says_is_accepted(
    monkeypatch: pytest.MonkeyPatch, token: str
) -> None:
    monkeypatch.setenv("DASHBOARD_TOKEN", token)
    settings = _settings()
    assert settings.dashboard_token is not None
    assert settings.dashboard_token.get_secret_value() == token


def test_an_empty_dashboard_token_leaves_the_dashboard_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DASHBOARD_TOKEN", "")
    assert _settings().dashboard_token is None


@pytest.mark.parametrize(
    ("given", "kept"),
    [("https://triage.example.org/", "https://triage.example.org"), ("", None)],
)
def test_the_dashboard_url_is_kept_without_its_trailing_slash(
    monkeypatch: pytest.MonkeyPatch, given: str, kept: str | None
) -> None:
    monkeypatch.setenv("DASHBOARD_URL", given)
    assert _settings().dashboard_url == kept


@pytest.mark.parametrize("url", ["javascript:alert(1)", "triage.example.org", "https://"])
def test_a_dashboard_url_that_is_not_a_web_address_is_refused(
    monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    monkeypatch.setenv("DASHBOARD_URL", url)
    with pytest.raises(ValidationError) as refused:
        _settings()
    (problem,) = settings_problems(refused.value)
    assert problem.startswith("DASHBOARD_URL: ")
    assert "https://host" in problem


def test_trusted_proxies_are_addresses_or_networks_separated_by_commas(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert _settings().trusted_proxies is None
    monkeypatch.setenv("TRUSTED_PROXIES", "10.0.0.0/8, 192.0.2.7,fd00::/8")
    assert _settings().trusted_proxies == [
        ipaddress.ip_network("10.0.0.0/8"),
        ipaddress.ip_network("192.0.2.7/32"),
        ipaddress.ip_network("fd00::/8"),
    ]
    monkeypatch.setenv("TRUSTED_PROXIES", "10.0.0.0/8,proxy.internal")
    with pytest.raises(ValidationError) as refused:
        _settings()
    assert settings_problems(refused.value) == [
        "TRUSTED_PROXIES.1: value is not a valid IPv4 or IPv6 network"
    ]


def test_private_key_with_literal_newlines_is_unfolded(
    monkeypatch: pytest.MonkeyPatch, private_key: str
) -> None:
    monkeypatch.setenv("PRIVATE_KEY", private_key.replace("\n", "\\n"))
    assert _settings().private_key_pem() == private_key


def test_private_key_is_read_from_its_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, private_key: str
) -> None:
    (tmp_path / "key.pem").write_text(private_key)
    monkeypatch.setenv("PRIVATE_KEY_PATH", str(tmp_path / "key.pem"))
    assert _settings().private_key_pem() == private_key


def test_secrets_are_not_shown_in_the_settings_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBHOOK_SECRET", "hush-hush")
    monkeypatch.setenv("PRIVATE_KEY", "key-material")
    shown = repr(_settings())
    assert "hush-hush" not in shown
    assert "key-material" not in shown


def test_webhook_path_defaults_to_probots_and_is_made_absolute(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert _settings().webhook_path == "/api/github/webhooks"
    monkeypatch.setenv("WEBHOOK_PATH", "hooks")
    assert _settings().webhook_path == "/hooks"


@pytest.mark.parametrize("text", [None, "", "   \n", "# only a comment\n"])
def test_absent_or_empty_repo_config_gives_defaults(text: str | None) -> None:
    loaded = parse_settings_file(text)
    assert (loaded.config, loaded.unknown_keys, loaded.errors) == (RepoConfig(), [], [])


def test_repo_config_values_are_read() -> None:
    loaded = parse_settings_file("comment: always\nrerun: false\nmax_reruns: 3\n")
    assert loaded.config == RepoConfig(comment=CommentMode.ALWAYS, rerun=False, max_reruns=3)
    assert loaded.errors == []


def test_unknown_keys_are_kept_not_fatal() -> None:
    loaded = parse_settings_file("rerun: false\nlabels: [flaky]\nzz_extra: 1\n")
    assert loaded.config.rerun is False
    assert loaded.unknown_keys == ["labels", "zz_extra"]
    assert loaded.errors == []


def test_invalid_values_fall_back_to_defaults_and_are_named() -> None:
    loaded = parse_settings_file("comment: sometimes\nmax_reruns: 99\nrerun: false\n")
    assert loaded.config == RepoConfig(rerun=False)
    assert len(loaded.errors) == 2
    assert any("comment" in error for error in loaded.errors)
    assert any("max_reruns" in error for error in loaded.errors)


@pytest.mark.parametrize("text", ["comment: [unclosed\n", "rerun: true\n  bad: indent: here\n"])
def test_invalid_yaml_is_survived(text: str) -> None:
    loaded = parse_settings_file(text)
    assert loaded.config == RepoConfig()
    assert len(loaded.errors) == 1
    assert "not valid YAML" in loaded.errors[0]


@pytest.mark.parametrize("text", ["- rerun\n- comment\n", "just a string\n", "42\n"])
def test_yaml_that_is_not_a_mapping_is_survived(text: str) -> None:
    loaded = parse_settings_file(text)
    assert loaded.config == RepoConfig()
    assert loaded.errors == ["not a mapping of settings"]


@pytest.mark.parametrize(
    ("text", "reports"),
    [("rerun: true\n", None), ("reports: []\n", []), ("reports: null\n", None)],
)
def test_reports_unset_discovers_and_an_empty_list_reads_no_artifact(
    text: str, reports: list[object] | None
) -> None:
    loaded = parse_settings_file(text)
    assert loaded.errors == []
    assert loaded.config.reports == reports


def test_a_reports_list_with_no_valid_item_is_unset_not_empty() -> None:
    # An empty list turns the reading of artifacts off: a list the user meant to fill, whose
    # every item was wrong, goes back to the default instead, and is named.
    loaded = parse_settings_file("reports:\n  - {artifact: ''}\n")
    assert loaded.config.reports is None
    assert [e.split(":")[0] for e in loaded.errors] == ["reports.0.artifact"]


def test_one_bad_list_item_is_dropped_and_named_while_the_others_stay() -> None:
    loaded = parse_settings_file(
        "custom_patterns:\n"
        "  - {name: scenario, regex: 'scenario (?P<test>[\\w-]+) failed'}\n"
        "  - {name: echo, regex: '(?P<test>x+) \\1'}\n"
        "  - 5\n"
        "reports:\n"
        "  - {artifact: 'junit-{job}', files: ['**/*.xml']}\n"
        "max_reruns: 99\n"
    )

    assert [p.name for p in loaded.config.custom_patterns] == ["scenario"]
    assert loaded.config.max_reruns == 1
    assert loaded.config.reports is not None
    assert [r.artifact for r in loaded.config.reports] == ["junit-{job}"]
    assert loaded.config.reports[0].matches("junit-tests (3.12)", "tests (3.12)")
    assert not loaded.config.reports[0].matches("junit-lint", "tests (3.12)")
    named = "\n".join(loaded.errors)
    assert "custom_patterns.1.regex" in named and "custom_patterns.2" in named
    assert "max_reruns" in named
    assert "custom_patterns.0" not in named


def test_generic_messages_run_by_re2_in_linear_time_and_what_it_cannot_run_is_named() -> None:
    loaded = parse_settings_file(
        "generic_messages:\n"
        "  - '(x+x+)+y'\n"  # exponential for a backtracking engine
        "  - 'harness: (?=\\d) checks failed'\n"  # lookahead: RE2 refuses it
        "  - 'harness: \\d+ checks failed'\n"
    )

    assert loaded.config.generic_messages == ["(x+x+)+y", "harness: \\d+ checks failed"]
    (error,) = loaded.errors
    assert error.startswith("generic_messages.1: Value error, not a regular expression RE2 can run")
    assert "invalid perl operator: (?=" in error
    # A backtracking engine would not finish this first line in our lifetime.
    assert not is_generic("x" * 1900, loaded.config.generic_messages)
    assert is_generic("HARNESS: 3 checks failed", loaded.config.generic_messages)


@pytest.mark.parametrize("mode", list(OwnersMode))
def test_owners_mode_is_read(mode: OwnersMode) -> None:
    loaded = parse_settings_file(f"owners: {mode.value}\n")
    assert (loaded.config.owners, loaded.errors) == (mode, [])


def test_an_unknown_owners_mode_shows_them_and_is_named() -> None:
    loaded = parse_settings_file("owners: notify-everyone\n")
    assert loaded.config.owners == OwnersMode.SHOW
    assert len(loaded.errors) == 1 and "owners" in loaded.errors[0]


def test_a_repository_budget_narrows_the_apps_never_widens_it() -> None:
    app = WalkLimits(files=500, bytes=1_000)
    assert app.within(None, None) == app
    assert app.within(50, 10**9) == WalkLimits(files=50, bytes=1_000)
    assert app.within(0, None).files == 0


def test_flaky_yml_imports_is_validated_and_import_depth_names_its_replacement() -> None:
    parsed = parse_settings_file("imports:\n  files: 40\n  bytes: 0\nimport_depth: 4\n")
    assert parsed.config.imports is None  # one invalid value drops the key
    assert parsed.problems() == [
        "imports.bytes: Input should be greater than or equal to 1",
        "`import_depth` is no longer read: the import walk has no depth limit; "
        "`imports: {files: N, bytes: N}` sets its budgets",
    ]
    assert parse_settings_file("imports: {files: 40}\n").config.imports == ImportBudget(files=40)
