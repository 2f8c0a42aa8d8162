"""Hypothesis fuzzing of what reads hostile text: the `/flaky` command parser, the
`.github/flaky.yml` parser and the log parsers (arbitrary text, and real logs mutated).

(The webhook endpoint is fuzzed over real HTTP in tests/test_web.py.) Example counts stay
modest: the CI profile is derandomized, so these are the same examples on every run.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.commands import MAX_ARGUMENT, Name, parse_commands
from bot.config import EXTENDS_KEY, RepoConfig, parse_settings_file
from bot.repo_settings import MAX_HOPS, SettingsChain, SettingsFile
from bot.triage.failures import extract, extract_from_chunks, match_key
from bot.triage.models import Extraction
from bot.triage.parsers.log_forms import jobs_of, sniff

CORPUS_LOGS = Path(__file__).resolve().parent / "fixtures" / "corpus" / "logs"
# The corpus, and the real logs of the runners and forms it lacks (fixtures/logs/PROVENANCE.md).
OWN_LOGS = Path(__file__).resolve().parent / "fixtures" / "logs"
REAL_LOGS = [
    *sorted(CORPUS_LOGS.rglob("*.txt")),
    OWN_LOGS / "gh" / "motion5_log_failed.txt",
    OWN_LOGS / "maven" / "streampark_surefire2_junit5.log",
    OWN_LOGS / "minitest" / "zeitwerk_error_interleaved.log",
    OWN_LOGS / "pytest" / "agno_failures_only.log",
]

# --- the command parser ------------------------------------------------------------------

_COMMENT_BITS = st.sampled_from(
    [
        "/flaky",
        "/FLAKY ",
        " rerun",
        " status",
        " help",
        " wrong ",
        " track ",
        "#12 ",
        "#0",
        "tests/a.py::t",
        "```",
        "~~~",
        "> ",
        "    ",
        "\t",
        "\n",
        "\r\n",
        "\r",
        "`",
        "'",
        '"',
        "@admin",
        "\u200b",
        "\x00",
    ]
)
_COMMENTS = st.lists(st.one_of(_COMMENT_BITS, st.text(max_size=30)), max_size=40).map("".join)
_COMMAND_LINE = re.compile(r" {0,3}/flaky", re.IGNORECASE)


@settings(max_examples=300)
@given(_COMMENTS)
def test_the_command_parser_reads_any_comment_within_its_bounds(body: str) -> None:
    commands = parse_commands(body)

    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    assert len(commands) <= sum(1 for line in lines if _COMMAND_LINE.match(line))
    for command in commands:
        assert len(command.argument) <= MAX_ARGUMENT
        if command.name is Name.TRACK:
            assert command.issue is not None and command.issue > 0 and command.argument
        else:
            assert command.issue is None
        if command.name in (Name.STATUS, Name.HELP):
            assert command.argument == ""
        assert "\n" not in command.argument


# --- the flaky.yml parser ----------------------------------------------------------------

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.sampled_from(["always", "never", "failures", "**/*.py", "(unclosed", "junit-*", "yes"]),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
_KEYS = st.one_of(st.sampled_from(sorted(RepoConfig.model_fields)), st.text(max_size=12))
_CONFIGS = st.dictionaries(_KEYS, _VALUES, max_size=8)
_SCALAR_FIELDS = [
    name
    for name, field in RepoConfig.model_fields.items()
    if not isinstance(field.default, (list, dict)) and field.default_factory is None
]


@settings(max_examples=300)
@given(_CONFIGS)
def test_any_settings_mapping_gives_a_valid_config_and_names_what_it_dropped(
    raw: dict[str, Any],
) -> None:
    loaded = parse_settings_file(yaml.safe_dump(raw))

    # The result is a config the bot can act on, whatever came in.
    assert RepoConfig.model_validate(loaded.config.model_dump()) == loaded.config
    # `_extends` is a directive, not a setting (hypothesis finds it among the code's strings).
    directives = {EXTENDS_KEY}
    known = set(RepoConfig.model_fields) | directives
    assert loaded.unknown_keys == sorted(k for k in raw if k not in known)
    assert all("\n" not in problem for problem in loaded.errors)
    named = {problem.split(".", 1)[0].split(":", 1)[0] for problem in loaded.errors}
    assert named <= set(raw)
    # A scalar setting named in an error is back at its default, and one not named is kept.
    for field in _SCALAR_FIELDS:
        value = loaded.config.model_dump()[field]  # a nested model (imports) as plain data
        if field in named:
            assert value == RepoConfig.model_fields[field].default
        elif field in raw:
            assert value == RepoConfig.model_validate({field: raw[field]}).model_dump()[field]


@settings(max_examples=300)
@given(
    st.one_of(
        st.text(max_size=200),
        st.lists(
            st.sampled_from(
                ["rerun: ", "comment: ", "- ", "[", "]", "{", "}", "&a ", "*a", "!!python/", "\n"]
            )
            | st.text(max_size=10),
            max_size=30,
        ).map("".join),
    )
)
def test_any_text_as_flaky_yml_is_survived(text: str) -> None:
    loaded = parse_settings_file(text)

    assert isinstance(loaded.config, RepoConfig)
    assert all(isinstance(p, str) and "\n" not in p for p in loaded.errors)


_SETTINGS_TEXT = st.lists(
    st.sampled_from(
        ["_extends: ", ".github", "a/b:c.yml", "bus", "footprints: ", "rerun: ", "{", "}", "[", "]"]
    )
    | st.sampled_from(["\n", " ", ": ", "- ", "x/**", "max_reruns: 2"])
    | st.text(max_size=6),
    max_size=25,
).map("".join)


@settings(max_examples=200)
@given(
    st.dictionaries(st.sampled_from(["acme/bus", "acme/.github", "acme/a", "a/b"]), _SETTINGS_TEXT)
)
def test_any_chain_of_settings_files_is_survived(files: dict[str, str]) -> None:
    """Whatever the repository's, its organisation's and their bases' files hold, reading
    them ends within the hop limit with settings, each problem on one line."""
    chain = SettingsChain("acme/bus")
    target: SettingsFile | None = chain.first()
    reads = 0
    while target is not None:
        reads += 1
        assert reads <= 2 + MAX_HOPS  # the repository's, its organisation's, the hops
        text = files.get(target.repo) if target.path == ".github/flaky.yml" else None
        target = chain.take(target, text, 404)
    loaded = chain.result()
    assert isinstance(loaded.config, RepoConfig)
    assert all(isinstance(p, str) and "\n" not in p for p in loaded.errors)


# --- the log parsers ---------------------------------------------------------------------


def _bounded(extraction: Extraction, text: str) -> None:
    """What any log may give: no more failures than lines, each named once, and nothing
    larger than the log itself."""
    lines = text.count("\n") + 1
    assert len(extraction.failures) <= lines
    assert len({match_key(f.test_id) for f in extraction.failures}) == len(extraction.failures)
    for failure in extraction.failures:
        assert failure.test_id
        assert len(failure.test_id) <= len(text)
        assert len(failure.message) <= len(text)


@settings(max_examples=200)
@given(st.lists(st.text(max_size=120), max_size=60))
def test_log_parsers_never_raise_on_arbitrary_lines(lines: list[str]) -> None:
    text = "\n".join(lines)
    _bounded(extract(log_lines=text.split("\n")), text)


def _mutations(source: bytes) -> st.SearchStrategy[bytes]:
    """The log cut, spliced, with lines dropped, repeated or replaced, and bytes flipped."""
    size = len(source)
    cut = st.tuples(st.integers(0, size), st.integers(0, size)).map(
        lambda ab: source[: min(ab)] + source[max(ab) :]
    )
    repeated = st.tuples(st.integers(0, size), st.integers(0, 400), st.integers(1, 20)).map(
        lambda t: source[: t[0]] + source[t[0] : t[0] + t[1]] * t[2] + source[t[0] :]
    )
    inserted = st.tuples(st.integers(0, size), st.binary(max_size=200)).map(
        lambda t: source[: t[0]] + t[1] + source[t[0] :]
    )
    flipped = st.lists(
        st.tuples(st.integers(0, max(size - 1, 0)), st.integers(0, 255)), max_size=30
    )

    def flip(changes: list[tuple[int, int]]) -> bytes:
        data = bytearray(source)
        for index, value in changes:
            if data:
                data[index] = value
        return bytes(data)

    return st.one_of(cut, repeated, inserted, flipped.map(flip))


@pytest.mark.parametrize("path", REAL_LOGS, ids=lambda p: p.name)
def test_log_parsers_never_raise_on_mutated_real_logs(path: Path) -> None:
    source = path.read_bytes()

    @settings(max_examples=25)
    @given(_mutations(source), st.integers(1, 4096))
    def mutated(data: bytes, chunk: int) -> None:
        chunks = [data[i : i + chunk] for i in range(0, len(data), chunk)]
        text = data.decode("utf-8", "replace")
        _bounded(extract_from_chunks(chunks), text)

    mutated()


@settings(max_examples=200)
@given(st.binary(max_size=600), st.integers(1, 64))
def test_log_forms_read_any_bytes_in_any_chunks_into_whole_lines(data: bytes, chunk: int) -> None:
    form = sniff(data[:200])
    chunks = [data[i : i + chunk] for i in range(0, len(data), chunk)]

    pieces = [piece for _, piece in jobs_of(form, chunks)]

    assert all(piece.endswith(b"\n") for piece in pieces)
    if form.kind != "gh-run-view":
        # Nothing but `^[` is changed: the log is the same bytes, ends of lines kept.
        expected = data if data.endswith(b"\n") or not data else data + b"\n"
        assert b"".join(pieces) == re.sub(rb"\^\[(?=[\[\]])", b"\x1b", expected)
