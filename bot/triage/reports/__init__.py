"""Failed tests from test-report files: JUnit XML, .NET TRX, mocha JSON, go test -json.

Pure: takes a file's name and bytes, returns plain data. A file that cannot be read gives a
problem naming it, never an exception. `artifacts.read_artifact_zip` gets the files out of
an Actions artifact.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, Field

from bot.triage.models import Failure
from bot.triage.reports.go_json import is_event_stream, parse_go_json
from bot.triage.reports.junit import parse_junit
from bot.triage.reports.mocha_json import is_mocha_json, parse_mocha_json
from bot.triage.reports.trx import is_trx, parse_trx
from bot.triage.reports.xml_safe import local_name, parse_xml

FORMATS = ("junit", "trx", "mocha-json", "go-json")


class ReportResult(BaseModel):
    """What one report file says: its failed tests, how many tests it holds, and what
    stopped it from being read (`problems`), in the format it was read as."""

    failures: list[Failure] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)
    tests_total: int = 0  # distinct tests that ran (passed or failed), skipped ones left out
    format: str = "unknown"


def parse_report(name: str, data: bytes, fmt: str = "auto") -> ReportResult:
    """The failed tests in report file `name`; `fmt` is one of FORMATS or "auto" to tell
    the format from the content."""
    if fmt != "auto" and fmt not in FORMATS:
        return ReportResult(problems=[f"{name}: unknown report format {fmt!r}"])
    start = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    if fmt in ("junit", "trx") or (fmt == "auto" and start == b"<"):
        return _xml(name, data, fmt)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        return ReportResult(problems=[f"{name}: not UTF-8 text (byte {error.start})"])
    if fmt == "go-json" or (fmt == "auto" and is_event_stream(text)):
        failures, total = parse_go_json(text)
        return ReportResult(failures=failures, tests_total=total, format="go-json")
    try:
        document = json.loads(text)
    except ValueError:
        return ReportResult(problems=[f"{name}: not a test report this bot reads"])
    if is_mocha_json(document):
        failures, total = parse_mocha_json(document)
        return ReportResult(failures=failures, tests_total=total, format="mocha-json")
    return ReportResult(problems=[f"{name}: JSON but not mocha's JSON report"])


def _xml(name: str, data: bytes, fmt: str) -> ReportResult:
    root, problems = parse_xml(name, data)
    if root is None:
        return ReportResult(problems=problems, format=fmt if fmt != "auto" else "xml")
    if fmt == "trx" or (fmt == "auto" and is_trx(root)):
        failures, total = parse_trx(root)
        return ReportResult(failures=failures, tests_total=total, format="trx")
    if local_name(root) not in ("testsuites", "testsuite"):
        return ReportResult(
            problems=[f"{name}: XML root <{local_name(root)}> is not a JUnit report"],
            format="junit",
        )
    failures, total = parse_junit(root)
    return ReportResult(failures=failures, tests_total=total, format="junit")


__all__ = ["FORMATS", "ReportResult", "parse_report"]
