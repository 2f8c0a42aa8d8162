"""Plain data that flows through triage: failures, footprints, verdicts."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field


class Verdict(StrEnum):
    FLAKY = "flaky"
    UNRELATED = "unrelated"
    BROKEN_BASE = "broken-base"
    INFRA = "infra"
    RELATED = "related"
    UNKNOWN = "unknown"


class Failure(BaseModel):
    """One failed test as read from a log, report or annotation."""

    test_id: str  # stable across runs, e.g. "tests/bus/test_core.py::TestBus::test_publish"
    name: str  # the test's own name, e.g. "TestBus::test_publish"
    file: str | None = None  # repo-relative path of the test file, when known
    framework: str  # "pytest", ...
    location: str | None = None  # "path/to/file.py:42", where the failure was raised
    message: str = ""  # first line(s) of the error, raw (escaping is report/'s job)
    signature: str = ""  # normalised message: stable across runs of the same failure
    trace_paths: list[str] = Field(default_factory=list)  # repo paths seen in its traceback
    # Where it was read: "junit", "trx", "go-json", "mocha-json", "annotation" or "log".
    source: str = "log"
    # Retries inside one run (pytest-rerunfailures, Surefire rerunFailingTestsCount, nextest
    # retries): failed `attempts_failed` of `attempts_total`. Fewer failures than attempts
    # means the test passed in the end: flake evidence in itself.
    attempts_failed: int = 1
    attempts_total: int = 1


class InfraCause(BaseModel):
    """A job that failed for a reason outside the tests, and the log line that shows it."""

    kind: str  # "runner-lost", "cancelled", "timeout", "oom", "disk-full", "network", ...
    line: str


class Extraction(BaseModel):
    """Everything read from one failed job: its failed tests, or why there are none."""

    failures: list[Failure] = Field(default_factory=list)
    infra: InfraCause | None = None
    mass_failure: bool = False  # more failed tests than the repo's threshold: never "flaky"
    problems: list[str] = Field(default_factory=list)  # e.g. "report.xml: not well-formed"


class FootprintEntry(BaseModel):
    """A path a test depends on, and why: a file, a directory ending in "/", or a
    `**/tail` pattern matching that tail anywhere in the tree."""

    path: str
    reason: str


class Footprint(BaseModel):
    test_id: str
    entries: list[FootprintEntry]


class Decision(BaseModel):
    """The verdict on one failure (or on a whole check when no test was identified)."""

    failure: Failure | None
    verdict: Verdict
    evidence: str  # one line a reviewer can check
    matched_paths: list[str] = Field(default_factory=list)  # changed paths inside the footprint
    footprint: list[FootprintEntry] = Field(default_factory=list)
