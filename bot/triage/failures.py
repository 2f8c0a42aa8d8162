"""Everything one failed job says about its failed tests, from every source, merged.

Sources, best first: test reports (JUnit, TRX, go test -json, mocha JSON), check-run
annotations, then the job log read by every registered log parser (and the repository's own
patterns). The same test named by several sources is one Failure: the best source's reading
wins where they disagree, gaps are filled from the others, and the paths of every trace are
kept. Ids are matched across sources by a normalised key, so pytest's
`tests/test_a.py::TestX::test_y` from the log meets `tests.test_a.TestX.test_y` from JUnit.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from bot.triage.annotations import failures_from_annotations
from bot.triage.infra import classify_infra
from bot.triage.logscan import INFRA, LogScanner, Marker, parser_marker_names, parser_markers
from bot.triage.models import Extraction, Failure
from bot.triage.parsers import PARSERS
from bot.triage.parsers.actions_log import clean_log
from bot.triage.parsers.custom import CustomPattern, parse_custom
from bot.triage.reports import ReportResult, parse_report
from bot.triage.runner_header import read_runner_header
from bot.triage.signature import is_generic

# Test runners print their summary and failure details at the end of a run, so on a huge
# log held in memory the tail is what matters; streamed logs go through LogScanner instead.
MAX_LOG_CHARS = 8 * 1024 * 1024
MASS_THRESHOLD = 10

_RANK = {"junit": 0, "trx": 0, "go-json": 0, "mocha-json": 0, "annotation": 1, "log": 2}
_WORST = max(_RANK.values()) + 1
_REPORTS = frozenset(source for source, rank in _RANK.items() if rank == 0)

_EXTENSION = re.compile(r"\.(?:py|[cm]?[jt]sx?|rb|java|kt|cs|php|go|rs)(?=::| \u203a | > |#|$)")
_SEPARATOR = re.compile(r"\s*(?:::|\u203a|#|/|\\|\.| > )\s*")


def extract_failures(log: str) -> list[Failure]:
    """The failed tests named in a raw job log, one Failure per test.

    Only the last MAX_LOG_CHARS characters (8 MiB of ASCII) are read, starting at the first
    full line inside that window, which bounds the work on a runaway log.
    """
    if len(log) > MAX_LOG_CHARS:
        tail = log[-MAX_LOG_CHARS:]
        log = tail[tail.find("\n") + 1 :]
    return extract(log_lines=clean_log(log)).failures


def extract_from_chunks(
    chunks: Iterable[bytes],
    *,
    reports: Sequence[tuple[str, bytes]] = (),
    annotations: Sequence[Mapping[str, Any]] = (),
    custom: Sequence[CustomPattern] = (),
    mass_threshold: int = MASS_THRESHOLD,
    engine: str | None = None,
) -> Extraction:
    """`extract` over a log streamed in raw chunks, read in bounded memory by LogScanner
    (with the literal search `engine`; None: the process's, `logscan.engine_in_use()`)."""
    scanner = log_scanner(custom, engine)
    for chunk in chunks:
        scanner.feed(chunk)
    lines = scanner.finish()
    extraction = extract(
        log_lines=lines,
        active_parsers=markers_fired(scanner),
        reports=reports,
        annotations=annotations,
        custom=custom,
        mass_threshold=mass_threshold,
    )
    extraction.runner = read_runner_header(scanner.head_lines())
    if scanner.truncated:
        extraction.problems.append(
            f"log: more matching lines than {scanner.max_kept_bytes // (1024 * 1024)} MiB; "
            "the earliest were not read"
        )
    return extraction


def log_scanner(custom: Sequence[CustomPattern] = (), engine: str | None = None) -> LogScanner:
    """A scanner keeping what every log parser and the repository's own patterns read."""
    markers: list[Marker] = [*parser_markers(), *(p.compiled() for p in custom)]
    return LogScanner(markers, engine=engine)


def markers_fired(scanner: LogScanner) -> frozenset[str]:
    """The log parsers (REGISTRY names) and INFRA whose marker matched a line of the log that
    `scanner`, made by `log_scanner`, has finished: `extract`'s `active_parsers`."""
    names = parser_marker_names()
    return frozenset(names[i] for i in scanner.markers_seen if i < len(names))


def extract(
    *,
    log_lines: Sequence[str] | None,
    active_parsers: Collection[str] | None = None,
    reports: Sequence[tuple[str, bytes]] = (),
    parsed_reports: Sequence[ReportResult] = (),
    annotations: Sequence[Mapping[str, Any]] = (),
    custom: Sequence[CustomPattern] = (),
    mass_threshold: int = MASS_THRESHOLD,
    report_format: str = "auto",
    generic_messages: Sequence[str] = (),
) -> Extraction:
    """The failed tests of one job from every source, merged, and why the job failed when
    no test did.

    `infra` is set whenever the log shows an infrastructure cause; with failed tests beside
    it, it is a note and the tests are still the failures to decide on. `mass_failure` is
    set when more than `mass_threshold` distinct tests failed. `report_format` names the
    reports' format when known (see reports.FORMATS); "auto" tells it from each content.
    `parsed_reports` are reports already read (artifacts are parsed as they decompress).
    `generic_messages` are the repository's own regexes for messages that say nothing
    (see signature.is_generic).

    `active_parsers` names the log parsers to run and, with INFRA, whether to look for an
    infrastructure cause; None runs them all. A parser's registered marker matches every line
    it needs, so a parser whose marker matched no line of the log finds nothing:
    `markers_fired` names the others, for a log read by `log_scanner`. The repository's
    patterns always run.
    """
    found: list[Failure] = []
    problems: list[str] = []
    results = [*parsed_reports, *(parse_report(n, d, report_format) for n, d in reports)]
    for result in results:
        found.extend(result.failures)
        problems.extend(result.problems)
    found.extend(failures_from_annotations(annotations, generic_messages))
    if log_lines is not None:
        for name, parse in PARSERS.items():
            if _active(name, active_parsers):
                found.extend(parse(log_lines))
        if custom:
            found.extend(parse_custom(log_lines, custom))
    failures = merge(found, generic_messages)
    return Extraction(
        failures=failures,
        infra=classify_infra(log_lines) if log_lines and _active(INFRA, active_parsers) else None,
        mass_failure=len(failures) > mass_threshold,
        problems=problems,
    )


def _active(name: str, active_parsers: Collection[str] | None) -> bool:
    return active_parsers is None or name in active_parsers


def merge(failures: Iterable[Failure], generic_messages: Sequence[str] = ()) -> list[Failure]:
    """One Failure per test: the best-ranked source's reading, completed by the others.

    Order follows each test's best reading, sources being stable-sorted by rank first.
    """
    ranked = sorted(failures, key=lambda f: _RANK.get(f.source, _WORST))
    merged: list[Failure] = []
    by_key: dict[str, int] = {}
    for failure in ranked:
        key = match_key(failure.test_id)
        index = by_key.get(key)
        if index is None:
            index = _suffix_match(key, by_key)
        if index is not None and _namesakes(merged[index], failure):
            index = None
        if index is None:
            by_key.setdefault(key, len(merged))
            merged.append(failure)
        else:
            by_key.setdefault(key, index)
            merged[index] = _complete(merged[index], failure, generic_messages)
    return merged


def _namesakes(kept: Failure, other: Failure) -> bool:
    """Two tests a report names apart whose keys meet (suites `a/b` and `a.b`): a report
    states each test's identity, so they are never one test."""
    return kept.source == other.source and kept.source in _REPORTS and kept.test_id != other.test_id


def match_key(test_id: str) -> str:
    """`test_id` with file extensions dropped and every separator (`::`, `/`, `.`, `#`,
    jest's U+203A) made one, so the same test named by two sources has one key."""
    key = _EXTENSION.sub("", test_id.strip().removeprefix("./"))
    return _SEPARATOR.sub(".", key).strip(".")


def _suffix_match(key: str, by_key: Mapping[str, int]) -> int | None:
    """A test already seen whose key ends with this one, or that this one ends with: one
    source printed the id relative to a subdirectory. Only an unambiguous match counts."""
    if "." not in key:
        return None
    hits = {
        index
        for other, index in by_key.items()
        if "." in other and (other.endswith("." + key) or key.endswith("." + other))
    }
    return hits.pop() if len(hits) == 1 else None


def _complete(best: Failure, other: Failure, generic: Sequence[str]) -> Failure:
    update: dict[str, Any] = {
        "file": best.file or other.file,
        "location": best.location or other.location,
        "location_source": best.location_source if best.location else other.location_source,
        "location_note": best.location_note if best.location else other.location_note,
        "declared_at": best.declared_at or other.declared_at,
        "unplaced_frames": best.unplaced_frames or other.unplaced_frames,
        "trace_paths": list(dict.fromkeys([*best.trace_paths, *other.trace_paths])),
        "seconds": best.seconds if best.seconds is not None else other.seconds,
    }
    if is_generic(best.message, generic) and not is_generic(other.message, generic):
        update["message"] = other.message
        update["signature"] = other.signature
    if best.attempts_total == 1 and other.attempts_total > 1:
        update["attempts_failed"] = other.attempts_failed
        update["attempts_total"] = other.attempts_total
    return best.model_copy(update=update)
