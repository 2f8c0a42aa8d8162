"""The log pre-filter's two literal searches (bot/triage/literals.py) give the bot the same
results: the same places for random literals in random bytes, and the same kept lines, fired
markers and extracted failures for every log of the parser corpus.

Hyperscan is optional (no wheel for every platform); without it these comparisons cannot
run, and they skip saying so as an optional tool.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.triage import logscan
from bot.triage.failures import extract_from_chunks, log_scanner
from bot.triage.literals import (
    ENGINES,
    HYPERSCAN,
    RE2,
    compile_literals,
    default_engine,
    hyperscan_installed,
)
from bot.triage.parsers.custom import CustomPattern
from tests.test_logscan import LOG_IDS, LOGS, _raw

needs_hyperscan = pytest.mark.skipif(
    not hyperscan_installed(), reason="optional tool: hyperscan is not installed"
)

# Patterns a repository might write: one with a word, one the scanner must try on every line.
CUSTOM = (
    CustomPattern(name="harness", regex=r"^scenario (?P<test>[\w-]+) (?:failed|FAIL)"),
    CustomPattern(name="any", regex=r"^\s*(?P<test>[a-z]+_[0-9]+)\s*!$"),
)


def _scan(raw: bytes, chunk: int, engine: str) -> tuple[list[str], set[int], bool]:
    scanner = log_scanner(CUSTOM, engine)
    for start in range(0, len(raw), chunk):
        scanner.feed(raw[start : start + chunk])
    lines = scanner.finish()
    return lines, scanner.markers_seen, scanner.truncated


@needs_hyperscan
@pytest.mark.parametrize("path", LOGS, ids=LOG_IDS)
def test_both_engines_keep_the_same_lines_of_every_corpus_log(path: Path) -> None:
    raw = _raw(path)
    for chunk in (4093, 1 << 20):
        assert _scan(raw, chunk, RE2) == _scan(raw, chunk, HYPERSCAN), chunk


@needs_hyperscan
@pytest.mark.parametrize("path", LOGS, ids=LOG_IDS)
def test_both_engines_extract_the_same_failures_from_every_corpus_log(path: Path) -> None:
    raw = _raw(path)
    chunks = [raw[i : i + 65536] for i in range(0, len(raw), 65536)]
    extractions = [
        extract_from_chunks(chunks, custom=CUSTOM, engine=engine).model_dump() for engine in ENGINES
    ]
    assert extractions[0] == extractions[1]


# No NUL: Hyperscan's binding reads a literal as a C string (the scanner's words hold none).
_words = st.lists(
    st.binary(min_size=1, max_size=6).filter(lambda w: b"\x00" not in w), min_size=1, max_size=8
)
_text = st.lists(
    st.sampled_from([b"a", b"A", b"b", b"\n", b"\x1b", b"\xc3\xa9", b"\xc3\x89", b"Ab\n", b"ab"]),
    max_size=80,
).map(b"".join)


@needs_hyperscan
@settings(max_examples=300, deadline=None)
@given(words=_words, text=_text, data=st.data())
def test_both_engines_find_every_literal_at_the_same_places(
    words: list[bytes], text: bytes, data: st.DataObject
) -> None:
    # Literals made of the text's own pieces, so that they occur, and random bytes.
    piece = st.sampled_from([b"a", b"B", b"\n", b"\xc3", b"b\x1b"])
    pieces = data.draw(st.lists(piece, max_size=4))
    literals = [(w, i % 3) for i, w in enumerate([*words, b"".join(pieces) or b"a"])]
    lo = data.draw(st.integers(0, len(text)))
    hi = data.draw(st.integers(lo, len(text)))
    by_re2 = compile_literals(literals, RE2).hits(text, lo, hi, None)
    assert by_re2 == _hyperscan_hits(literals, text, lo, hi)


def _hyperscan_hits(
    literals: list[tuple[bytes, int]], text: bytes, lo: int, hi: int
) -> set[tuple[int, int]]:
    search = compile_literals(literals, HYPERSCAN)
    return search.hits(text, lo, hi, search.scratch())


def test_the_re2_search_folds_ascii_letters_only() -> None:
    search = compile_literals([(b"fail", 0), (b"\xc3\xa9", 1)], RE2)
    text = b"FaIL\n\xc3\x89 \xc3\xa9\nfail"
    assert search.hits(text, 0, len(text), None) == {(3, 0), (9, 1), (14, 0)}
    # Only matches ending inside [lo, hi) count; they may begin before lo.
    assert search.hits(text, 2, 12, None) == {(3, 0), (9, 1)}


def test_the_engine_in_use_can_be_chosen_and_hyperscan_only_when_installed() -> None:
    try:
        assert logscan.use_engine(RE2) == RE2
        assert logscan.engine_in_use() == RE2
        assert log_scanner().engine == RE2
        with pytest.raises(ValueError, match="unknown log scanner 'fast'"):
            logscan.use_engine("fast")
        if hyperscan_installed():
            assert logscan.use_engine(HYPERSCAN) == HYPERSCAN
        else:
            with pytest.raises(ValueError, match="pip install hyperscan"):
                logscan.use_engine(HYPERSCAN)
    finally:
        logscan.use_engine("auto")
    assert logscan.engine_in_use() == default_engine()
