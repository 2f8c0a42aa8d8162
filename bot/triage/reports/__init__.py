"""Failed tests from test-report files: JUnit XML, .NET TRX, NUnit 2 and 3 XML, xUnit.net
v1 and v2 XML; go test -json, Dart/Flutter JSON and TAP read line by line; mocha, RSpec,
jest, Playwright, CTRF and Cucumber JSON documents.

Pure: takes a file's name and its bytes (whole, or as chunks read from an archive), returns
plain data. A file that cannot be read gives a problem naming it, never an exception.
`artifacts.read_artifact_reports` reads the files of an Actions artifact.

Memory follows what a file holds, not its size in bytes: XML and go test -json are parsed as
their chunks arrive, JUnit case by case (each `<testcase>` cleared once read), and the XML
elements and a JSON document's bytes and containers are capped, so a dense file is refused
instead of filling memory or the CPU.

A report that counts more failures than were read from it (a result with no outcome, a
truncated file) or that stopped its run early (TAP's `Bail out!`) gives a problem saying so,
beside what was read: it never looks clean.
"""

from __future__ import annotations

import codecs
import itertools
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any
from xml.etree.ElementTree import Element

from pydantic import BaseModel, Field

from bot.triage.models import Failure
from bot.triage.reports.ctrf_json import ctrf_counted, is_ctrf, parse_ctrf
from bot.triage.reports.cucumber_json import is_cucumber_json, parse_cucumber_json
from bot.triage.reports.dart_json import is_dart_event, parse_dart_json
from bot.triage.reports.go_json import is_event, parse_go_json
from bot.triage.reports.jest_json import is_jest_json, jest_counted, parse_jest_json
from bot.triage.reports.junit import JUnitReader
from bot.triage.reports.mocha_json import is_mocha_json, mocha_counted, parse_mocha_json
from bot.triage.reports.nunit import is_nunit, nunit_counted, parse_nunit
from bot.triage.reports.playwright_json import (
    is_playwright_json,
    parse_playwright_json,
    playwright_counted,
)
from bot.triage.reports.rspec_json import is_rspec_json, parse_rspec_json, rspec_counted
from bot.triage.reports.tap import bailed_out, is_tap, parse_tap
from bot.triage.reports.trx import is_trx, parse_trx, trx_counted
from bot.triage.reports.xml_safe import MAX_ELEMENTS, XmlStream, local_name
from bot.triage.reports.xunit import is_xunit, parse_xunit, xunit_counted


@dataclass(frozen=True)
class XmlFormat:
    """An XML format read from its whole tree: what its root looks like, its failed tests
    and distinct tests, and the failures the document counts itself (None: it says not)."""

    name: str
    is_root: Callable[[Element], bool]
    parse: Callable[[Element], tuple[list[Failure], int]]
    counted: Callable[[Element], int | None]


# Tried in order on the root element; JUnit (`<testsuites>`, `<testsuite>`) streams instead.
XML_FORMATS = (
    XmlFormat("trx", is_trx, parse_trx, trx_counted),
    XmlFormat("nunit", is_nunit, parse_nunit, nunit_counted),
    XmlFormat("xunit", is_xunit, parse_xunit, xunit_counted),
)
_BY_NAME = {f.name: f for f in XML_FORMATS}


def _never_stops(line: str) -> str | None:
    return None


@dataclass(frozen=True)
class StreamFormat:
    """A report read line by line as it arrives: one event (or TAP line) a line. `stops`
    says why the run stopped at a line (TAP's `Bail out!`): the stream is read no further,
    and the report names it among its problems."""

    name: str
    detect: Callable[[str], bool]  # on the stream's first non-blank line
    parse: Callable[[Iterable[str]], tuple[list[Failure], int]]
    stops: Callable[[str], str | None] = _never_stops


@dataclass(frozen=True)
class DocumentFormat:
    """A report that is one JSON document, parsed whole under MAX_JSON_BYTES, and the
    failures it counts itself (None: it says not)."""

    name: str
    detect: Callable[[object], bool]
    parse: Callable[[Any], tuple[list[Failure], int]]
    counted: Callable[[Any], int | None] = lambda _: None


# Every text report format, in the order content is tried against them ("auto"); the XML
# formats are told apart by their root. A document format's `detect` must not accept
# another's documents: each keys on fields only its producer writes.
STREAMS: tuple[StreamFormat, ...] = (
    StreamFormat("go-json", is_event, parse_go_json),
    StreamFormat("dart-json", is_dart_event, parse_dart_json),
    StreamFormat("tap", is_tap, parse_tap, bailed_out),
)
DOCUMENTS: tuple[DocumentFormat, ...] = (
    DocumentFormat("mocha-json", is_mocha_json, parse_mocha_json, mocha_counted),
    DocumentFormat("rspec-json", is_rspec_json, parse_rspec_json, rspec_counted),
    DocumentFormat("ctrf", is_ctrf, parse_ctrf, ctrf_counted),
    DocumentFormat("jest-json", is_jest_json, parse_jest_json, jest_counted),
    DocumentFormat(
        "playwright-json", is_playwright_json, parse_playwright_json, playwright_counted
    ),
    # Cucumber's JSON keeps no counts of its own.
    DocumentFormat("cucumber-json", is_cucumber_json, parse_cucumber_json),
)
FORMATS = ("junit", *_BY_NAME, *(f.name for f in STREAMS), *(f.name for f in DOCUMENTS))
# A JSON document is parsed whole: its bytes and its containers (`{`, `[`: 56-64 bytes each
# once parsed) are capped. mocha's, jest's, RSpec's or Playwright's JSON for thousands of
# tests fits well within both; a larger one is refused with a problem naming it.
MAX_JSON_BYTES = 4 * 1024 * 1024
MAX_JSON_CONTAINERS = MAX_ELEMENTS
_BLANK = b"\xef\xbb\xbf \t\r\n"
_MAX_OPENING_LINES = 20


class ReportResult(BaseModel):
    """What one report file says: its failed tests, how many tests it holds, and what
    stopped it from being read (`problems`), in the format it was read as."""

    failures: list[Failure] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)
    tests_total: int = 0  # distinct tests that ran (passed or failed), skipped ones left out
    format: str = "unknown"
    elements: int = 0  # XML elements parsed: what the file cost to read, whatever it held


def parse_report(name: str, data: bytes, fmt: str = "auto") -> ReportResult:
    """The failed tests in report file `name`; `fmt` is one of FORMATS or "auto" to tell
    the format from the content."""
    return read_report(name, iter((data,)), fmt)


def read_report(
    name: str, chunks: Iterable[bytes], fmt: str = "auto", *, max_elements: int = MAX_ELEMENTS
) -> ReportResult:
    """`parse_report` over a file read in chunks, never holding more of it than its format
    needs; an XML file over `max_elements` is refused. Exceptions the chunks raise (an
    archive's read errors, a byte cap) pass through."""
    if fmt != "auto" and fmt not in FORMATS:
        return ReportResult(problems=[f"{name}: unknown report format {fmt!r}"])
    start, stream = _first_byte(iter(chunks))
    if fmt == "junit" or fmt in _BY_NAME or (fmt == "auto" and start == b"<"):
        return _xml(name, stream, fmt, max_elements)
    try:
        lines = _lines(stream)
        head, first = _opening(lines)
        stream_format = _stream_format(fmt, first)
        if stream_format is not None:
            stopped: list[str] = []
            read = _until_stopped(itertools.chain(head, (first,), lines), stream_format, stopped)
            failures, total = stream_format.parse(read)
            return ReportResult(
                failures=failures,
                problems=[f"{name}: {why}" for why in stopped],
                tests_total=total,
                format=stream_format.name,
            )
        document = _json(name, itertools.chain(head, (first,), lines))
    except UnicodeDecodeError as error:
        return ReportResult(problems=[f"{name}: not UTF-8 text (byte {error.start})"])
    if isinstance(document, str):
        return ReportResult(problems=[document])
    for known in DOCUMENTS:
        if fmt in ("auto", known.name) and known.detect(document):
            failures, total = known.parse(document)
            # Their counts are of tests that failed in the end, not of tries.
            failed = sum(1 for f in failures if f.attempts_failed >= f.attempts_total)
            problems = _disagreement(name, known.counted(document), failed, [])
            return ReportResult(
                failures=failures, problems=problems, tests_total=total, format=known.name
            )
    wanted = fmt if fmt != "auto" else "a test report format this bot reads"
    return ReportResult(problems=[f"{name}: JSON but not {wanted}"])


def _opening(lines: Iterator[str]) -> tuple[list[str], str]:
    """The lines before the first that tells the format, and that line: blank lines and a
    few `#` comments (Perl's Test::More opens its TAP with one) come before it."""
    head: list[str] = []
    for line in lines:
        if line.strip() and not line.startswith("#"):
            return head, line
        head.append(line)
        if len(head) > _MAX_OPENING_LINES:
            break
    return head, ""


def _until_stopped(lines: Iterable[str], form: StreamFormat, stopped: list[str]) -> Iterator[str]:
    """The stream's lines up to the one that says the run stopped; why, into `stopped`."""
    for line in lines:
        why = form.stops(line)
        if why is not None:
            stopped.append(why)
            return
        yield line


def _stream_format(fmt: str, first: str) -> StreamFormat | None:
    """The line-stream format `fmt` names, or under "auto" the one whose first line this is."""
    for known in STREAMS:
        if fmt == known.name or (fmt == "auto" and known.detect(first)):
            return known
    return None


def _first_byte(chunks: Iterator[bytes]) -> tuple[bytes, Iterator[bytes]]:
    """The first byte after a BOM and blanks, and every chunk, those read to find it too."""
    seen: list[bytes] = []
    for chunk in chunks:
        seen.append(chunk)
        start = chunk.lstrip(_BLANK)[:1]
        if start:
            # A BOM split across chunks leaves its tail here: it is not a report's start.
            return start, itertools.chain(seen, chunks)
    return b"", iter(seen)


def _lines(chunks: Iterator[bytes]) -> Iterator[str]:
    """UTF-8 lines as the chunks arrive; a UnicodeDecodeError's `start` counts from the
    file's first byte."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    offset = 0
    rest = ""
    for chunk in itertools.chain(chunks, (b"",)):
        pending = len(decoder.getstate()[0])  # bytes of a character split across chunks
        try:
            text = decoder.decode(chunk, final=not chunk)
        except UnicodeDecodeError as error:
            error.start += offset - pending
            raise
        offset += len(chunk)
        lines = (rest + text).splitlines(keepends=True)
        rest = lines.pop() if lines and not lines[-1].endswith(("\n", "\r")) else ""
        yield from lines
    if rest:
        yield rest


def _json(name: str, lines: Iterator[str]) -> object:
    """The JSON document, or a problem naming the file when it is over a cap or not JSON."""
    kept: list[str] = []
    size = 0
    for line in lines:
        size += len(line)
        if size > MAX_JSON_BYTES:
            return f"{name}: refused: a JSON report over {MAX_JSON_BYTES // 1024 // 1024} MiB"
        kept.append(line)
    text = "".join(kept)
    containers = text.count("{") + text.count("[")
    if containers > MAX_JSON_CONTAINERS:
        return f"{name}: refused: over {MAX_JSON_CONTAINERS} JSON objects and arrays"
    try:
        document: object = json.loads(text)
    except ValueError:
        return f"{name}: not a test report this bot reads"
    return document


def _xml(name: str, chunks: Iterator[bytes], fmt: str, max_elements: int) -> ReportResult:
    """A JUnit document read case by case as it streams; one of XML_FORMATS (TRX results
    name definitions that come after them) kept whole, under the element cap."""
    stream = XmlStream(name, chunks, max_elements)
    kind = ""
    junit = JUnitReader()
    for event, element in stream.events():
        if not kind:
            kind = _kind(element, fmt)
        if kind != "junit":
            continue
        if event == "start":
            junit.start(element)
        else:
            junit.end(element)
    if stream.problem is not None or stream.root is None:
        problem = stream.problem or f"{name}: not well-formed XML (no element)"
        fallback = fmt if fmt != "auto" else "xml"
        return ReportResult(problems=[problem], format=fallback, elements=stream.elements)
    if kind == "junit":
        failures, total = junit.result()
        counted, read = junit.counted(), junit.failed_elements
    elif kind in _BY_NAME:
        form = _BY_NAME[kind]
        failures, total = form.parse(stream.root)
        counted, read = form.counted(stream.root), 0
    else:
        return ReportResult(
            problems=[f"{name}: XML root <{local_name(stream.root)}> is not a test report"],
            format=fmt if fmt != "auto" else "unknown",
            elements=stream.elements,
        )
    return ReportResult(
        failures=failures,
        problems=_disagreement(name, counted, read, failures),
        tests_total=total,
        format=kind,
        elements=stream.elements,
    )


def _disagreement(
    name: str, counted: int | None, elements: int, failures: list[Failure]
) -> list[str]:
    """A problem when the report counts more failures than were read from it: its failed
    runs, or its failure elements when it counts those (`elements`)."""
    read = max(elements, sum(f.attempts_failed for f in failures))
    if counted is None or counted <= read:
        return []
    return [f"{name}: the report counts {counted} failures, {read} were read"]


def _kind(root: Element, fmt: str) -> str:
    """ "junit", one of XML_FORMATS, or "other": what `fmt` or the document's root says."""
    if fmt in _BY_NAME:
        return fmt
    if fmt == "auto":
        found = next((f.name for f in XML_FORMATS if f.is_root(root)), None)
        if found is not None:
            return found
    return "junit" if local_name(root) in ("testsuites", "testsuite") else "other"


__all__ = [
    "DOCUMENTS",
    "FORMATS",
    "STREAMS",
    "XML_FORMATS",
    "DocumentFormat",
    "ReportResult",
    "StreamFormat",
    "XmlFormat",
    "parse_report",
    "read_report",
]
