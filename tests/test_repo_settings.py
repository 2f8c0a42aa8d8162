"""Which `.github/flaky.yml` files make a repository's settings and how they merge (pure)."""

from __future__ import annotations

from typing import Any

import pytest

from bot.config import LoadedRepoConfig
from bot.repo_settings import MAX_HOPS, SettingsChain, SettingsFile, extends_target, merge

ORG = SettingsFile("acme/.github")
OWN = SettingsFile("acme/bus")


@pytest.mark.parametrize(
    ("base", "over", "merged"),
    [
        # The extending file wins a scalar, and keeps the base's other keys.
        ({"rerun": False, "max_reruns": 2}, {"rerun": True}, {"rerun": True, "max_reruns": 2}),
        # A top-level list is replaced, not added: a repository can drop the base's items.
        ({"risky_paths": ["a/**"]}, {"risky_paths": ["b/**"]}, {"risky_paths": ["b/**"]}),
        # A mapping in both is merged key by key ...
        (
            {"footprints": {"tests/e2e/**": ["**"]}},
            {"footprints": {"tests/api/**": ["src/api/**"]}},
            {"footprints": {"tests/e2e/**": ["**"], "tests/api/**": ["src/api/**"]}},
        ),
        # ... and a list under a key of both is the base's plus the new items.
        (
            {"footprints": {"tests/**": ["src/**", "lib/**"]}},
            {"footprints": {"tests/**": ["lib/**", "docs/**"]}},
            {"footprints": {"tests/**": ["src/**", "lib/**", "docs/**"]}},
        ),
        # One level deep only: a mapping's scalar is the extending file's.
        (
            {"auto_close": {"passes": 50, "days": 14}},
            {"auto_close": {"days": 7}},
            {"auto_close": {"passes": 50, "days": 7}},
        ),
        # A value of another kind replaces the base's (null turns auto_close off again).
        ({"auto_close": {"passes": 50, "days": 14}}, {"auto_close": None}, {"auto_close": None}),
        ({}, {"comment": "never"}, {"comment": "never"}),
        ({"comment": "never"}, {}, {"comment": "never"}),
    ],
)
def test_merge_table(base: dict[str, Any], over: dict[str, Any], merged: dict[str, Any]) -> None:
    before = repr(base)
    assert merge(base, over) == merged
    assert repr(base) == before  # the base is not changed in place


@pytest.mark.parametrize(
    ("value", "target"),
    [
        (".github", SettingsFile("acme/.github")),
        ("ci-settings", SettingsFile("acme/ci-settings")),
        ("other-org/shared", SettingsFile("other-org/shared")),
        ("other-org/shared:ci/flaky.yaml", SettingsFile("other-org/shared", "ci/flaky.yaml")),
        (" .github ", SettingsFile("acme/.github")),
        # Not a file Probot's syntax names, or a path out of the repository's contents.
        ("shared:notes.txt", None),
        ("shared:../secrets.yml", None),
        ("shared:/abs.yml", None),
        ("..", None),
        ("-bad/shared", None),
        ("a/b/c", None),
        ("", None),
        (3, None),
        (["shared"], None),
    ],
)
def test_extends_values(value: object, target: SettingsFile | None) -> None:
    assert extends_target(value, "acme") == target


def chain_of(
    files: dict[SettingsFile, str | int], hidden: frozenset[str] = frozenset()
) -> tuple[LoadedRepoConfig, list[SettingsFile]]:
    """Read acme/bus's settings from `files` (text, or the status GitHub answers); `hidden`:
    the repositories the comment may not name."""
    chain, read = SettingsChain("acme/bus"), []
    target: SettingsFile | None = chain.first()
    while target is not None:
        read.append(target)
        found = files.get(target, 404)
        text, status = (found, 200) if isinstance(found, str) else (None, found)
        target = chain.take(target, text, status)
    return chain.result(hidden), read


def test_no_file_anywhere_is_the_built_in_defaults_and_a_note_for_the_log() -> None:
    config, read = chain_of({})
    assert read == [OWN, ORG]
    assert config.config.rerun is True and config.errors == [] and config.applied == []
    assert not config.outside
    assert config.notes == [
        "acme/.github .github/flaky.yml: not read (not installed or no such file)"
    ]


def test_the_organisation_default_applies_when_the_repository_has_none() -> None:
    config, read = chain_of({ORG: "rerun: false\nmax_reruns: 3\n"})
    assert read == [OWN, ORG]
    assert (config.config.rerun, config.config.max_reruns) == (False, 3)
    assert config.applied == ["acme/.github"] and config.outside


def test_a_repository_file_replaces_the_organisation_default_unless_it_extends_it() -> None:
    config, read = chain_of({OWN: "max_reruns: 2\n", ORG: "rerun: false\n"})
    assert read == [OWN]
    assert (config.config.rerun, config.config.max_reruns) == (True, 2)
    assert config.applied == ["acme/bus"] and not config.outside

    config, read = chain_of({OWN: "_extends: .github\nmax_reruns: 2\n", ORG: "rerun: false\n"})
    assert read == [OWN, ORG]
    assert (config.config.rerun, config.config.max_reruns) == (False, 2)
    assert config.applied == ["acme/bus", "acme/.github"] and config.outside
    assert config.errors == []  # `_extends` is no unknown key


def test_the_organisation_default_can_extend_too() -> None:
    shared = SettingsFile("other/shared", "flaky/base.yml")
    config, read = chain_of({ORG: "_extends: other/shared:flaky/base.yml\n", shared: "rerun: no"})
    assert read == [OWN, ORG, shared]
    # acme/.github only names its base: it supplies no key, so it is not listed as applied.
    assert config.applied == ["other/shared:flaky/base.yml"]
    assert config.config.rerun is False


def test_a_cycle_is_named_and_its_closing_base_ignored() -> None:
    a, b = SettingsFile("acme/a"), SettingsFile("acme/b")
    files: dict[SettingsFile, str | int] = {
        OWN: "_extends: a\nmax_reruns: 2\n",
        a: "_extends: b\nrerun: false\n",
        b: "_extends: acme/A\ncomment: never\n",
    }
    config, read = chain_of(files)
    assert read == [OWN, a, b]
    assert config.errors == [
        "acme/b: _extends: acme/a → acme/b → acme/A is a cycle; acme/A not read again"
    ]
    assert (config.config.max_reruns, config.config.rerun, config.config.comment) == (
        2,
        False,
        "never",
    )


def test_a_repository_extending_itself_is_a_cycle() -> None:
    config, read = chain_of({OWN: "_extends: bus\nrerun: false\n"})
    assert read == [OWN]
    assert config.errors == ["_extends: acme/bus → acme/bus is a cycle; acme/bus not read again"]
    assert config.config.rerun is False


def test_extends_stops_after_the_hop_limit() -> None:
    names = [f"acme/r{i}" for i in range(MAX_HOPS + 1)]
    files: dict[SettingsFile, str | int] = {OWN: "_extends: r0\n"}
    for i, name in enumerate(names):
        files[SettingsFile(name)] = f"_extends: r{i + 1}\nmax_reruns: {i % 5}\n"
    config, read = chain_of(files)
    assert read == [OWN, *(SettingsFile(n) for n in names[:MAX_HOPS])]
    assert config.errors == [f"acme/r2: _extends: more than {MAX_HOPS} hops; acme/r3 not read"]
    assert config.config.max_reruns == 0  # r0's, the nearest base that sets it


def test_an_extended_file_that_cannot_be_read_is_a_problem_and_the_rest_applies() -> None:
    config, _ = chain_of({OWN: "_extends: private-settings\nrerun: false\n"})
    assert config.errors == [
        "_extends: acme/private-settings is not there or the App cannot read it"
    ]
    assert config.config.rerun is False and config.applied == ["acme/bus"]


def test_an_unreadable_organisation_repository_is_a_note_not_a_problem() -> None:
    config, _ = chain_of({ORG: 403})
    assert config.errors == [] and config.notes == [
        "acme/.github .github/flaky.yml: not read (status 403)"
    ]


def test_problems_name_the_file_they_are_in_unless_it_is_the_repositorys() -> None:
    files: dict[SettingsFile, str | int] = {
        OWN: "_extends: .github\nrerun: maybe\ncomments: always\n",
        ORG: "_extends: [1]\nmax_reruns: 9\nrerun: false\n",
    }
    config, _ = chain_of(files)
    assert config.errors == [
        "rerun: Input should be a valid boolean, unable to interpret input",
        "unknown key 'comments'",
        "acme/.github: max_reruns: Input should be less than or equal to 5",
        "acme/.github: _extends: not [owner/]repo[:path.yml]: '[1]'",
    ]
    # The repository's invalid value is dropped, so the organisation's applies.
    assert config.config.rerun is False and config.config.max_reruns == 1


def test_merged_values_past_a_limit_are_named_as_the_merge() -> None:
    org = "footprints:\n" + "".join(f"  'a{i}/**': ['x']\n" for i in range(30))
    own = "_extends: .github\nfootprints:\n" + "".join(f"  'b{i}/**': ['y']\n" for i in range(30))
    config, _ = chain_of({OWN: own, ORG: org})
    assert [e.split(":")[0] for e in config.errors] == ["merged settings"]
    assert config.config.footprints == {}


def test_a_file_of_the_organisation_repository_itself_has_no_fallback() -> None:
    chain = SettingsChain("acme/.github")
    assert chain.take(chain.first(), None, 404) is None
    assert chain.result().notes == []


def test_a_hidden_files_name_keys_and_problems_are_not_shown() -> None:
    """acme/bus is public, acme/.github and acme/vault private: the comment says neither's
    name nor keys, only that settings came from them and how many problems they hold; the
    log (`errors`) keeps every problem."""
    vault = SettingsFile("acme/vault", "ci/secret.yml")
    files: dict[SettingsFile, str | int] = {
        OWN: "_extends: .github\nrerun: maybe\nmax_reruns: 1\n",
        ORG: "_extends: vault:ci/secret.yml\nmax_reruns: 2\ndbpassword: x\n",
        vault: "_extends: bus\ncomment: never\napikey: y\n",
    }
    config, _ = chain_of(files, frozenset({"acme/.github", "acme/vault"}))
    assert config.shown_from == [
        "acme/bus",
        "the organisation's private .github repository",
        "a private repository of the same owner",
    ]
    assert config.shown_errors == [
        "rerun: Input should be a valid boolean, unable to interpret input",
        "the organisation's private .github repository: 1 problem, in the bot's log",
        "a private repository of the same owner: 2 problems, in the bot's log",
    ]
    shown = " ".join(config.shown_errors + config.shown_from)
    assert not any(word in shown for word in ("dbpassword", "apikey", "vault", "acme/.github"))
    assert "acme/.github: unknown key 'dbpassword'" in config.errors


def test_another_owners_base_is_refused_as_a_problem_of_the_file_naming_it() -> None:
    chain = SettingsChain("acme/bus")
    target = chain.take(OWN, "_extends: other/settings\nrerun: false\n")
    assert target == SettingsFile("other/settings") and chain.crosses_owner(target)
    assert not chain.crosses_owner(SettingsFile("ACME/vault"))
    chain.refuse(target)
    config = chain.result()
    assert config.errors == ["_extends: other/settings is another owner's and not public: not read"]
    assert config.config.rerun is False and config.applied == ["acme/bus"]
