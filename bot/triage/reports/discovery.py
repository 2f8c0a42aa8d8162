"""Which artifacts hold a failed job's test reports when `.github/flaky.yml` names none.

Only the artifacts the job itself uploaded are its own, and its log says which: the
actions/upload-artifact step writes `Artifact NAME has been successfully uploaded!` (v3), and
from v4 on adds ` Final size is N bytes. Artifact ID is N` (src/shared/upload-artifact.ts). A
workflow run's list of artifacts names no job: the run's other jobs (a matrix's siblings, a
lint job) upload reports of their own failures, and reading one as this job's would blame it
for them, and call them flaky once a rerun of this job passed. An artifact name, even one
holding the job's name, proves nothing (`test-results` is whichever job uploaded it).

Of the job's uploads, the names decide what is never downloaded (coverage, builds, logs,
screenshots) and what is read first; every other upload is read for entries whose content is
a report format this bot reads. The words come from the names public workflows give their
`actions/upload-artifact` steps (searched for this module): `test-results`,
`test-results-${{ matrix.os }}`, `test-report`, `surefire-reports`, `failsafe-reports`,
`playwright-report`, `junit`, `jest-junit` hold reports; `coverage`, `coverage-report`,
`coverage-data-<uuid>`, `htmlcov`, `wheel-py3_10-cpu`, `dist`, `build-logs`, `gatling-logs`,
`docker-image`, `rendered-video` do not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import NamedTuple, Protocol, TypeVar

from bot.triage.reports import ReportResult

# What an unconfigured artifact is read for: every format the registry tells by content.
FILES = ["**/*.xml", "**/*.trx", "**/*.json", "**/*.jsonl", "**/*.ndjson", "**/*.tap"]

_UPLOADED = b" has been successfully uploaded!"
_UPLOAD_LINE = re.compile(
    r"^\ufeff?(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z )?"
    r"Artifact (?P<name>.+?) has been successfully uploaded!"
    r"(?: Final size is \d+ bytes\. Artifact ID is (?P<id>\d+))?\s*$"
)
_MAX_LINE = 4096
MAX_UPLOADS = 50  # upload steps a job's log is read for; a job uploads a handful

# A word naming a report format or a report tool's results: read, whatever else the name says.
_FORMAT_WORDS = frozenset(
    {"junit", "xunit", "nunit", "trx", "surefire", "failsafe", "ctrf", "tap", "testresults"}
)
_NOT_REPORT_WORDS = frozenset(
    {
        "coverage", "codecov", "lcov", "htmlcov", "jacoco", "cobertura", "dist", "sdist",
        "wheel", "wheels", "whl", "build", "builds", "binary", "binaries", "release",
        "releases", "package", "packages", "docs", "doc", "site", "pages", "screenshot",
        "screenshots", "video", "videos", "log", "logs", "sbom", "docker", "image", "images",
        "apk", "ipa", "bundle", "benchmark", "benchmarks", "trace", "traces", "sarif", "dump",
    }
)  # fmt: skip
_REPORT_WORDS = frozenset(
    {
        "results", "result", "report", "reports", "testreport", "testreports", "pytest",
        "jest", "vitest", "mocha", "rspec", "cucumber", "playwright", "nextest", "gotestsum",
    }
)  # fmt: skip
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD = re.compile(r"[a-z]+")


class Upload(NamedTuple):
    """An artifact the job's log says it uploaded; its id from upload-artifact v4 on."""

    name: str
    artifact_id: int | None


class UploadsSeen:
    """The uploads a job's log names, read from its raw bytes chunk by chunk: only lines
    holding upload-artifact's words are decoded, so a log costs one byte search."""

    def __init__(self) -> None:
        self.uploads: list[Upload] = []
        self._rest = b""

    def feed(self, chunk: bytes) -> None:
        first = chunk.find(b"\n")
        if first < 0:
            self._rest = (self._rest + chunk)[-_MAX_LINE:]
            return
        begun = self._rest + chunk[: first + 1]  # the line an earlier chunk began
        self._take(begun, 0, len(begun))
        last = chunk.rfind(b"\n") + 1
        self._take(chunk, first + 1, last)  # searched in place: a chunk is never copied
        self._rest = chunk[last:][-_MAX_LINE:]

    def finish(self) -> list[Upload]:
        self._take(self._rest, 0, len(self._rest))
        self._rest = b""
        return self.uploads

    def _take(self, data: bytes, start: int, end: int) -> None:
        at = data.find(_UPLOADED, start, end)
        while at >= 0 and len(self.uploads) < MAX_UPLOADS:
            line_start = max(data.rfind(b"\n", start, at) + 1, start)
            line_end = data.find(b"\n", at, end)
            line_end = end if line_end < 0 else line_end
            line = data[max(line_start, line_end - _MAX_LINE) : line_end]
            found = _UPLOAD_LINE.match(line.decode("utf-8", "replace").rstrip("\r"))
            if found is not None:
                number = found.group("id")
                upload = Upload(found.group("name"), int(number) if number else None)
                if upload not in self.uploads:
                    self.uploads.append(upload)
            at = data.find(_UPLOADED, line_end, end)


class Kind(StrEnum):
    REPORTS = "reports"  # its name says test results: read first
    UNKNOWN = "unknown"  # read for entries whose content is a report
    NOT_REPORTS = "not-reports"  # coverage, builds, logs, media: never downloaded


def kind_of(name: str) -> Kind:
    """What an artifact's name says it holds."""
    words = set(_WORD.findall(_CAMEL.sub(" ", name).lower()))
    words |= {"".join(_WORD.findall(name.lower()))}  # `TestResults`, `test_results`
    if words & _FORMAT_WORDS:
        return Kind.REPORTS
    if words & _NOT_REPORT_WORDS:
        return Kind.NOT_REPORTS
    return Kind.REPORTS if words & _REPORT_WORDS else Kind.UNKNOWN


class Listed(Protocol):
    @property
    def id(self) -> int: ...
    @property
    def name(self) -> str: ...


A = TypeVar("A", bound=Listed)


def candidates(uploads: Iterable[Upload]) -> list[Upload]:
    """The uploads worth listing the run's artifacts for: those a name does not rule out."""
    return [u for u in uploads if kind_of(u.name) is not Kind.NOT_REPORTS]


def own(listed: Sequence[A], uploads: Sequence[Upload]) -> list[A]:
    """The run's artifacts (`listed`) the job uploaded, in the order it uploaded them. An
    upload is its artifact by id when the log gives one (a rerun's upload of the same name is
    another artifact), else the newest of its name; one the run does not list (expired,
    deleted, another run's id) is left out."""
    found: list[A] = []
    for upload in uploads:
        same = [a for a in listed if a.name == upload.name and upload.artifact_id in (None, a.id)]
        if same:
            artifact = max(same, key=lambda a: a.id)
            if all(artifact.id != earlier.id for earlier in found):
                found.append(artifact)
    return found


def choose(listed: Sequence[A], uploads: Sequence[Upload]) -> list[tuple[A, Kind]]:
    """The job's own artifacts (`own`) worth reading: those named reports first, then those
    to read by content, each in the order the job uploaded them."""
    kinds = [(artifact, kind_of(artifact.name)) for artifact in own(listed, uploads)]
    chosen = [(artifact, kind) for artifact, kind in kinds if kind is not Kind.NOT_REPORTS]
    return sorted(chosen, key=lambda pair: pair[1] is not Kind.REPORTS)


def recognised(found: Iterable[tuple[str, ReportResult]]) -> list[ReportResult]:
    """The entries of an unconfigured artifact that are reports: one whose content is no
    report format (a `package.json`, a coverage XML) says nothing of the job's tests and is
    left out, problems and all."""
    return [result for _, result in found if result.format != "unknown"]
