"""Streaming a job log through LogScanner: the lines kept, and the failures found in them."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.triage.failures import (
    extract,
    extract_failures,
    extract_from_chunks,
    log_scanner,
    markers_fired,
)
from bot.triage.logscan import INFRA, LogScanner, parser_marker_names, parser_markers
from bot.triage.parsers import PARSERS
from bot.triage.parsers.actions_log import clean_log
from bot.triage.parsers.custom import MAX_LINE, CustomPattern

CORPUS_LOGS = Path(__file__).resolve().parent / "fixtures" / "corpus" / "logs"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "logs"
ALL_MARKERS = re.compile("|".join(f"(?:{m.pattern})" for m in parser_markers()), re.MULTILINE)


def _raw(path: Path) -> bytes:
    """A log as the runner served it; corpus fixtures lose their tool's markers (INDEX.md)."""
    kept = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.startswith("#=SOURCE=#"):
            continue
        kept.append(line.removeprefix("#=MATCH=# ").replace("\u2039", "").replace("\u203a", ""))
    text = "\n".join(kept)
    return (text if text.endswith("\n") else text + "\n").encode()


def _logs() -> list[Path]:
    corpus = sorted(CORPUS_LOGS.rglob("*.txt"))
    return corpus + sorted(FIXTURES.rglob("*.log"))


LOGS = _logs()
LOG_IDS = [f"{p.parent.name}/{p.name}" for p in LOGS]


def keep_windows(lines: list[str], before: int, after: int, tail: int) -> list[str]:
    """The reference: every marker line (with or without a leading workflow command) with
    its context and the last `tail` lines, by a plain loop over the lines."""
    keep = set(range(max(0, len(lines) - tail), len(lines)))
    for i, line in enumerate(lines):
        text = re.sub(r"^##\[[a-z]+\]", "", line)
        if ALL_MARKERS.search(line + "\n") or (text and ALL_MARKERS.search(text + "\n")):
            keep.update(range(max(0, i - before), min(len(lines), i + after + 1)))
    return [lines[i] for i in sorted(keep)]


def _scan(
    raw: bytes,
    chunk: int,
    *,
    before: int = 40,
    after: int = 300,
    tail_lines: int = 2000,
    max_kept_bytes: int = 16 << 20,
) -> LogScanner:
    scanner = LogScanner(
        before=before, after=after, tail_lines=tail_lines, max_kept_bytes=max_kept_bytes
    )
    for start in range(0, len(raw), chunk):
        scanner.feed(raw[start : start + chunk])
    return scanner


def test_every_registered_parser_has_a_marker() -> None:
    assert len(parser_markers()) == len(PARSERS) + 1  # and the infrastructure patterns


@pytest.mark.parametrize("path", LOGS, ids=LOG_IDS)
@pytest.mark.parametrize("chunk", [7, 1 << 20])
@pytest.mark.parametrize(
    ("before", "after", "tail"), [(40, 300, 0), (3, 5, 10), (0, 0, 0), (1, 2, 50)]
)
def test_kept_lines_equal_the_line_by_line_reference(
    path: Path, chunk: int, before: int, after: int, tail: int
) -> None:
    raw = _raw(path)
    scanner = _scan(raw, chunk, before=before, after=after, tail_lines=tail)

    assert scanner.finish() == keep_windows(clean_log(raw.decode()), before, after, tail)


# Enough plain output around a log that neither its head nor its body is in the tail.
_NOISE = b"".join(
    b"2026-11-30T10:00:00.0000000Z INFO worker %d processed batch %d in 12ms\n" % (i, i * 7)
    for i in range(3000)
)


@pytest.mark.parametrize("path", LOGS, ids=LOG_IDS)
def test_extraction_over_the_scan_equals_extraction_over_the_whole_log(path: Path) -> None:
    raw = _raw(path)
    padded = _NOISE + raw + _NOISE

    whole = extract(log_lines=clean_log(raw.decode()))
    streamed = extract_from_chunks(padded[i : i + 65536] for i in range(0, len(padded), 65536))

    assert streamed == whole


def markers_in(lines: list[str]) -> set[str]:
    """The reference: the names of the markers some line matches, with or without a leading
    workflow command, by a plain loop over the lines."""
    named = zip(parser_marker_names(), parser_markers(), strict=True)
    texts = [line + "\n" for line in lines]
    texts += [text + "\n" for line in lines if (text := re.sub(r"^##\[[a-z]+\]", "", line))]
    return {name for name, marker in named if any(marker.search(text) for text in texts)}


def _fired(raw: bytes, chunk: int) -> tuple[list[str], frozenset[str]]:
    scanner = log_scanner()
    for start in range(0, len(raw), chunk):
        scanner.feed(raw[start : start + chunk])
    return scanner.finish(), markers_fired(scanner)


def test_markers_are_named_in_their_order() -> None:
    assert parser_marker_names() == [*PARSERS, INFRA]


@pytest.mark.parametrize("path", LOGS, ids=LOG_IDS)
def test_the_markers_fired_are_those_some_line_matches(path: Path) -> None:
    raw = _raw(path)

    _, fired = _fired(_NOISE + raw + _NOISE, 4099)

    assert fired == markers_in(clean_log(raw.decode()))


@pytest.mark.parametrize("path", LOGS, ids=LOG_IDS)
def test_extraction_running_only_the_fired_parsers_equals_running_them_all(path: Path) -> None:
    raw = _raw(path)
    whole = clean_log(raw.decode())

    kept, fired = _fired(_NOISE + raw + _NOISE, 65536)

    assert extract(log_lines=kept, active_parsers=fired) == extract(log_lines=kept)
    assert extract(log_lines=whole, active_parsers=fired) == extract(log_lines=whole)


def test_a_line_longer_than_what_is_read_of_it_fires_the_markers_it_may_match() -> None:
    scanner = LogScanner([re.compile(r"^--- FAIL: "), re.compile("boom")], tail_lines=0)
    scanner.feed(b"noise\n" + b"x" * 5000 + b" boom\n--- PASS: TestA\n")
    scanner.finish()

    assert scanner.markers_seen == {1}


def test_repository_patterns_are_kept_too() -> None:
    raw = _raw(FIXTURES / "custom" / "scenarios.log")
    patterns = [CustomPattern(name="scenario", regex=r"^scenario (?P<test>[\w-]+) failed")]
    padded = _NOISE + raw + _NOISE

    whole = extract(log_lines=clean_log(raw.decode()), custom=patterns)
    streamed = extract_from_chunks([padded], custom=patterns)

    assert {f.test_id for f in whole.failures} == {
        "captain-idle-wakeup",
        "dock-überfüllt",
        "storm-reroute",
    }
    assert streamed == whole


@pytest.mark.parametrize(
    "regex",
    [
        r"(?P<test>[\w-]+) FAILED$",  # RE2's `$` is the end of the line, not of its newline
        r"^\pL+ (?P<test>[\w-]+) FAILED",  # RE2 syntax Python's parser does not know
        r"(?P<test>(a|a)*)!|(?P<file>[\w-]+) FAILED",  # no word: tried on every line
    ],
)
def test_repository_patterns_run_by_re2_keep_their_lines(regex: str) -> None:
    pattern = CustomPattern(name="harness", regex=regex)
    # A line on which a backtracking engine would spin for years, beside the one to keep.
    raw = _NOISE + b"a" * 4000 + b"\nscenario dock-wait FAILED\n" + _NOISE

    scanner = log_scanner([pattern])
    scanner.feed(raw)

    assert "scenario dock-wait FAILED" in scanner.finish()


def test_repository_patterns_read_only_the_head_of_a_line_as_their_parser_does() -> None:
    pattern = CustomPattern(name="tail", regex=r"(?P<test>needle-\d+)")
    scanner = LogScanner([pattern.compiled()], before=0, after=0, tail_lines=0)
    scanner.feed(b"x" * MAX_LINE + b" needle-2\n" + b"needle-1\n")

    assert scanner.finish() == ["needle-1"]


def test_scanners_of_the_same_markers_run_in_threads_at_once() -> None:
    # Every scanner of one pattern set shares its Hyperscan database: each needs its own
    # scratch, or two scans at once fail (ScratchInUseError).
    raw = (b"FAILED tests/test_a.py::test_x - assert 1\n" + b"building module\n" * 50) * 2000
    chunks = [raw[i : i + 256 * 1024] for i in range(0, len(raw), 256 * 1024)]

    def scan(_: int) -> list[str]:
        scanner = log_scanner()
        for chunk in chunks:
            scanner.feed(chunk)
        return scanner.finish()

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(scan, range(8)))

    assert all(lines == results[0] for lines in results)


def test_a_failure_far_from_the_end_is_kept_with_its_context() -> None:
    body = [
        "============================= test session starts ==============================",
        "rootdir: /home/runner/work/shop/shop/backend",
        "tests/test_cart.py::test_total FAILED                                      [ 50%]",
        "=================================== FAILURES ===================================",
        "__________________________________ test_total __________________________________",
        "tests/test_cart.py:12: in test_total",
        "E   assert 41 == 42",
        "=========================== short test summary info ============================",
        "FAILED tests/test_cart.py::test_total - assert 41 == 42",
        "============================== 1 failed in 0.12s ===============================",
    ]
    raw = _NOISE + "".join(f"2026-11-30T10:00:01.0000000Z {line}\n" for line in body).encode()

    lines = _scan(raw + _NOISE * 3, 4096).finish()
    (failure,) = extract(log_lines=lines).failures

    assert failure.test_id == "tests/test_cart.py::test_total"
    assert failure.file == "backend/tests/test_cart.py"  # rootdir was kept, far above the end
    assert failure.location == "backend/tests/test_cart.py:12"
    assert len(lines) < 2000 + 400


def test_held_windows_are_capped_oldest_first() -> None:
    noise = _NOISE[: _NOISE.index(b"\n", 20000) + 1]
    block = b"".join(b"--- FAIL: TestX%d (0.00s)\n" % i + noise for i in range(40))

    scanner = _scan(block, 1 << 16, tail_lines=0, max_kept_bytes=100_000)
    lines = scanner.finish()

    assert scanner.truncated
    assert sum(len(line) + 1 for line in lines) < 100_000 + 25_000
    assert "--- FAIL: TestX39 (0.00s)" in lines
    assert "--- FAIL: TestX0 (0.00s)" not in lines


def test_a_line_without_end_is_cut_not_held_whole() -> None:
    scanner = LogScanner(tail_lines=5)
    scanner.feed(b"start\n")
    for _ in range(3):
        scanner.feed(b"x" * (1 << 20))
    scanner.feed(b"\nFAIL\texample.com/shop\t0.1s\n")

    lines = scanner.finish()

    assert lines[0] == "start"
    assert len(lines[1]) == 1 << 20
    assert lines[2:] == ["FAIL\texample.com/shop\t0.1s"]


def test_the_last_line_needs_no_newline() -> None:
    scanner = LogScanner(before=0, after=0, tail_lines=0)
    scanner.feed(b"noise\n2026-11-30T10:00:00.1234567Z --- FAIL: TestY (0.01s)")

    assert scanner.finish() == ["--- FAIL: TestY (0.01s)"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["noise", "--- FAIL: TestZ (0.00s)", "", "\x1b[31mFAILED\x1b[0m x", "é ✕ ok", "a\rb"]
        )
        | st.text(max_size=30),
        max_size=60,
    ),
    st.integers(min_value=1, max_value=64),
    st.integers(min_value=0, max_value=4),
)
def test_any_text_in_any_chunks_gives_the_reference(
    parts: list[str], chunk: int, context: int
) -> None:
    raw = "\n".join(parts).encode()

    kept = _scan(raw, chunk, before=context, after=context, tail_lines=context).finish()

    reference = clean_log(raw.decode())
    assert kept == keep_windows(reference, context, context, context)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(["noise line", "--- FAIL: TestZ (0.00s)", "", "x"]), max_size=200),
    st.integers(min_value=20, max_value=600),
    st.integers(min_value=0, max_value=30),
)
def test_windows_spanning_many_chunks_give_the_reference(
    parts: list[str], chunk: int, context: int
) -> None:
    # Chunks of many lines, with context longer than a chunk: a window's first lines are in
    # the blocks scanned before the one holding its marker.
    raw = "\n".join(parts).encode()

    kept = _scan(raw, chunk, before=context, after=context, tail_lines=context).finish()

    assert kept == keep_windows(clean_log(raw.decode()), context, context, context)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "noise",
                "--- FAIL: TestZ (0.00s)",
                "FAILED tests/test_a.py::test_b - x",
                "##[error]No space left on device",
                "  1) cart adds",
                "\x1b[31mFAIL\x1b[0m src/a.test.ts",
                "Tests run: 3, Failures: 1",
                "",
            ]
        )
        | st.text(max_size=30),
        max_size=40,
    ),
    st.integers(min_value=1, max_value=64),
)
def test_any_text_in_any_chunks_fires_the_reference_markers(parts: list[str], chunk: int) -> None:
    raw = "\n".join(parts).encode()

    _, fired = _fired(raw, chunk)

    # The scanner reads the bytes as sent: text a carriage return later overwrites on the
    # terminal (`\u00d7\r0` shows `0`) is still read, so it may fire a marker; a parser then
    # reads the clean lines and finds nothing there. So the reference is the clean lines'
    # markers and those of the text before each carriage return.
    overwritten = clean_log(raw.decode().replace("\r", "\n"))
    assert fired == markers_in(clean_log(raw.decode())) | markers_in(overwritten)


def test_text_a_carriage_return_overwrites_may_fire_a_marker_and_nothing_more() -> None:
    cross = "\u00d7"  # the cross jest and vitest print before a failed test
    raw = f"{cross}\r0".encode()
    assert _fired(raw, 1)[1] == markers_in([cross])
    assert extract_failures(raw.decode()) == []


def test_a_marker_without_a_word_still_finds_its_lines() -> None:
    scanner = LogScanner(re.compile(r"^\d+$"), before=0, after=1, tail_lines=0)
    scanner.feed(b"noise\n2026-11-30T10:00:00.0000000Z 12\n  at cart.js:3\nmore\n")

    assert scanner.finish() == ["12", "  at cart.js:3"]


def test_a_marker_whose_alternatives_share_a_group_is_kept_whole() -> None:
    marker = re.compile(r"^(?P<w>FAIL) |^again (?P=w)")
    scanner = LogScanner(marker, before=0, after=0, tail_lines=0)
    scanner.feed(b"a\nFAIL pkg\nb\nagain FAIL\nc\n")

    # Python never matches a backreference to another alternative's group: only line 2.
    assert scanner.finish() == ["FAIL pkg"]


@pytest.mark.parametrize("tail", [50, 30_000])
@pytest.mark.parametrize("chunk", [1 << 20, 999_983])
def test_a_log_larger_than_the_text_held_for_the_tail_keeps_windows_and_tail(
    chunk: int, tail: int
) -> None:
    # 24 MiB: past the point where the held text is cut to the tail (16 MiB), with failures
    # in the first cut, across a chunk boundary, and inside the tail. The noise matches no
    # marker, so the expected lines follow from where the failures are.
    stamp = "2026-11-30T10:00:00.0000000Z "
    lines = [f"INFO worker {i} processed batch in 12ms {'x' * 190}" for i in range(96_000)]
    first_chunk = "".join(f"{stamp}{line}\n" for line in lines[:5000]).encode()[: 1 << 20]
    failures = (10, first_chunk.count(b"\n") - 2, 50_000, 95_990)
    for at in failures:
        lines[at] = f"--- FAIL: TestAt{at} (0.00s)"
    raw = "".join(f"{stamp}{line}\n" for line in lines).encode()
    keep = {i for at in failures for i in range(at - 3, at + 6)}
    keep.update(range(len(lines) - tail, len(lines)))

    scanner = _scan(raw, chunk, before=3, after=5, tail_lines=tail)

    assert scanner.finish() == [lines[i] for i in sorted(keep)]


def test_words_with_other_letters_than_ascii_are_found_in_their_case() -> None:
    markers = [re.compile(r"^ÜBERFÜLLT"), re.compile(r"(?i)^schloß überfüllt")]
    scanner = LogScanner(markers, before=0, after=0, tail_lines=0)
    scanner.feed("a\nÜBERFÜLLT dock 3\nb\nSCHLOSS\nSchloß ÜBERFÜLLT\nc\n".encode())

    assert scanner.finish() == ["ÜBERFÜLLT dock 3", "Schloß ÜBERFÜLLT"]


def test_escape_codes_between_a_status_and_its_bracket_do_not_hide_the_line() -> None:
    scanner = LogScanner(before=0, after=0, tail_lines=0)
    scanner.feed(
        b"noise\n"
        b"\x1b[32m        PASS\x1b[0m [   0.011s] shop tests::cart_total\n"
        b"\x1b[31m        FLAKY 2/3\x1b[K [   0.020s] shop tests::retry\n"
        b"        PASSED [ 12%]\n"
    )

    assert scanner.finish() == [
        "        PASS [   0.011s] shop tests::cart_total",
        "        FLAKY 2/3 [   0.020s] shop tests::retry",
    ]


def test_punctuation_after_a_number_is_found_with_the_digit_before_it() -> None:
    # mocha's `^\s*\d+\) \S` is searched as `0) ` to `9) ` and `m) ` (a colour code's end),
    # not as `) `, which is on many lines of a real log.
    scanner = LogScanner(re.compile(r"^\s*\d+\) \S"), before=0, after=0, tail_lines=0)
    scanner.feed(
        b"call(a) b\n"
        b"2026-11-30T10:00:00.0000000Z   12) cart adds\n"
        b"\x1b[31m  3) \x1b[0mtotal\n"
        b"f(x) = 1) y\n"
        b"\x1b[1m7\x1b[22m) ordered\n"
    )

    assert scanner.finish() == ["  12) cart adds", "  3) total", "7) ordered"]
