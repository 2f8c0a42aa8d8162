"""Plain data that flows through triage: failures, footprints, verdicts, and the recorded runs
and failed tests they are judged against."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field

from bot.triage.runner_header import RunnerHeader


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
    # Where `location` came from: "stack" (a repository frame: the line that raised),
    # "attribute" (the test case's own file/line, when no frame is the repository's),
    # "message", "tree" (a bare name or a frame printed elsewhere, placed in the commit's
    # tree); None: not said.
    location_source: str | None = None
    location_note: str = ""  # why a location was kept as printed, when it was
    # Where the report says the test case is declared (its own file/line attributes,
    # `location`, `line`): what identifies the test, kept beside `location` (where it failed).
    declared_at: str | None = None
    # Stack frames printed outside every known checkout (`path:line` as printed, innermost
    # first, a few): the commit's tree places them (reports/locations.py, resolve_in_tree).
    unplaced_frames: list[str] = Field(default_factory=list)
    message: str = ""  # first line(s) of the error, raw (escaping is report/'s job)
    signature: str = ""  # normalised message: stable across runs of the same failure
    trace_paths: list[str] = Field(default_factory=list)  # repo paths seen in its traceback
    # Where it was read: a report format (reports.FORMATS: "junit", "tap", ...),
    # "annotation" or "log".
    source: str = "log"
    # Retries inside one run (pytest-rerunfailures, Surefire rerunFailingTestsCount, nextest
    # retries): failed `attempts_failed` of `attempts_total`. Fewer failures than attempts
    # means the test passed in the end: flake evidence in itself.
    attempts_failed: int = 1
    attempts_total: int = 1
    # The workspace package whose script ran the test, when the log names it (npm's
    # `> @acme/web@1.4.0 test` banner): where a path printed relative to it is placed.
    workspace: str | None = None
    # How long the test ran, where its report says (JUnit `time`, go test -json `Elapsed`).
    seconds: float | None = None


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
    runner: RunnerHeader | None = None  # what the log's opening lines say of its runner


class ImportStep(BaseModel):
    """One hop of an import chain: `importer` imports `module`, which is the file `path`."""

    importer: str
    module: str
    path: str


class Reason(StrEnum):
    """Why a path is in a test's footprint (`bot/triage/footprint.py` says how each is found)."""

    TEST_FILE = "test file"
    TRACEBACK = "in traceback"
    PAIR = "conventional pair"
    DIRECTORY = "test package directory"
    TESTDATA = "test data folder"
    TESTS_FOLDER = "folder tested by its __tests__"
    GO_PACKAGE = "Go package"
    CONFIG = "mapped in .github/flaky.yml"  # followed by " (the mapping's glob)"
    IMPORTED = "imported by the test"
    RUNS = "runs for the test"  # a conftest.py, a setup file, a file of its package
    # A tsconfig (and what it extends), a package.json, go.mod, pyproject.toml, ...
    RESOLVES = "configures how the test's imports resolve"
    NAMED = "named by the failure"  # a changed path its id or error names (verdict.py)


class Strength(StrEnum):
    """How sure an entry is. STRONG: the test's run reads the path for certain (the test
    file, its traceback, what it imports or what runs for it, its Go package, the
    configuration that steers its imports, the repo's own mapping); only a strong hit makes a
    failure related. WEAK: a guess from names and folders (same folder, name pair, test data
    folder, the folder a `__tests__` tests): a caveat."""

    STRONG = "strong"
    WEAK = "weak"


# The one place an entry's strength is decided: every reason not listed here is strong.
WEAK_REASONS = frozenset({Reason.PAIR, Reason.DIRECTORY, Reason.TESTDATA, Reason.TESTS_FOLDER})


class FootprintEntry(BaseModel):
    """A path a test depends on, and why: a file, a directory ending in "/", or a
    `**/tail` pattern matching that tail anywhere in the tree."""

    path: str
    reason: str
    glob: bool = False  # `path` is a gitignore-style glob (a `footprints` mapping in flaky.yml)
    # A folder's files it does not cover: a C# project's `.cs` files, counted one by one by
    # what they declare (`Start.except_suffixes`).
    except_suffixes: list[str] = Field(default_factory=list)
    # For a file the test reaches by its imports: the hops from the test file (or from the
    # conftest.py that imports it) to this file; its length is the file's depth.
    chain: list[ImportStep] = Field(default_factory=list)
    # What runs for the test, as a noun phrase ("a conftest.py"): for a file that runs with
    # the test, what it is; for an imported file, what its chain starts from, when that is
    # not the test file.
    detail: str = ""

    @property
    def strength(self) -> Strength:
        return Strength.WEAK if self.reason in WEAK_REASONS else Strength.STRONG


class Footprint(BaseModel):
    test_id: str
    entries: list[FootprintEntry]


class Confidence(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class EvidenceKind(StrEnum):
    OVERLAP = "overlap"  # a changed path inside the footprint
    NO_OVERLAP = "no-overlap"  # the footprint, untouched by the PR
    RISKY = "risky"  # a changed path that can break any test (caveat)
    INCOMPLETE = "incomplete"  # the PR's file list is cut off, or the footprint is empty
    RERUN = "rerun"  # passed, or failed again, on a rerun of the same commit
    RETRIES = "retries"  # failed then passed inside one run (pytest-rerunfailures, Surefire)
    HISTORY = "history"  # seen before on other PRs or the default branch
    BASE = "base"  # the same failure on the base commit or the default branch
    RATE = "rate"  # failure rate over the check's runs, with its interval
    FEEDBACK = "feedback"  # someone said `/flaky wrong`
    INFRA = "infra"
    MASS = "mass"
    UNREAD = "unread"  # a report or log the bot refused or could not read (Extraction.problems)
    IMPORTS = "imports"  # how far the test's imports were followed, and whether that was cut
    WEAK = "weak"  # a changed path near the test that it does not import (caveat)
    RULED_OUT = "ruled-out"  # a changed path a rule clears, and which rule


class Evidence(BaseModel):
    """One fact behind a verdict, as a line a reviewer can check."""

    kind: EvidenceKind
    text: str


class RunRate(BaseModel):
    """How often a test failed over the recorded runs of its check."""

    failures: int
    runs: int
    low: float  # Wilson 95 % interval, 0..1
    high: float
    flips: int = 0  # pass<->fail changes between attempts on the same commit
    flip_commits: int = 0  # commits with more than one attempt (the flips' denominator)


class PastOccurrence(BaseModel):
    """An earlier failure of the same test, read from the store."""

    pr_number: int | None  # None: a run on a branch (e.g. the default branch), not a PR
    branch: str | None = None
    author: str | None = None
    head_sha: str
    check_name: str
    at: float
    same_signature: bool  # a generic signature never counts as the same on its own
    passed_on_rerun: bool | None = None  # None: not rerun (or not yet known)
    html_url: str = ""


class BaseResult(BaseModel):
    """The same test failing where the PR did not change anything: base commit or default branch."""

    where: str  # "the base commit 1a2b3c4", "the latest run of `test` on main"
    head_sha: str
    same_signature: bool
    html_url: str = ""


class TestContext(BaseModel):
    """What the store knows about one failed test before the verdict (keyed by match_key)."""

    history: list[PastOccurrence] = Field(default_factory=list)
    base: BaseResult | None = None
    rate: RunRate | None = None
    disputed_by: list[str] = Field(default_factory=list)  # logins that said `/flaky wrong`


class WalkSummary(BaseModel):
    """How far the walk of a test's imports went, for the comment and the JSON output."""

    test_file: str
    language: str
    files_read: int
    files_found: int  # repository files the test reaches
    depth: int  # the deepest import chain found
    cut: list[str] = Field(default_factory=list)  # why it is partial; empty when complete

    @property
    def partial(self) -> bool:
        return bool(self.cut)


class Decision(BaseModel):
    """The verdict on one failure (or on a whole check when no test was identified)."""

    failure: Failure | None
    verdict: Verdict
    evidence: str  # one line a reviewer can check: the strongest reason
    matched_paths: list[str] = Field(default_factory=list)  # changed paths inside the footprint
    footprint: list[FootprintEntry] = Field(default_factory=list)
    confidence: Confidence = Confidence.MEDIUM
    items: list[Evidence] = Field(default_factory=list)  # every fact that produced the verdict
    caveats: list[str] = Field(default_factory=list)  # e.g. risky changed paths
    rate: RunRate | None = None
    history: list[PastOccurrence] = Field(default_factory=list)  # shown as "seen on other PRs"
    tracking_issue: int | None = None  # filled in by the tracking-issue step
    walk: WalkSummary | None = None  # the walk of the test's imports, when one was made


class RunRecord(BaseModel):
    """One completed check run, whatever its conclusion: the denominator of failure rates."""

    repo: str
    check_run_id: int
    check_name: str
    head_sha: str
    branch: str | None = None  # the head branch (the default branch for runs on it)
    pr_number: int | None = None  # None: not on a pull request (e.g. a push to main)
    author: str | None = None  # the PR's author
    attempt: int = 1
    conclusion: str
    completed_at: float
    html_url: str = ""
    started_at: float | None = None  # None: not recorded (runs kept before it was)
    # The runner as the failed job's log names it (runner_header.py); None for a pass.
    runner_name: str | None = None
    runner_os: str | None = None
    runner_image: str | None = None


class Occurrence(BaseModel):
    """One failed test in one completed run."""

    repo: str
    check_run_id: int
    check_name: str
    test_key: str  # bot.triage.failures.match_key(test_id)
    test_id: str
    signature: str
    generic: bool  # a signature too generic to match failures on by itself
    location: str | None = None
    message: str = ""
    head_sha: str
    branch: str | None = None
    pr_number: int | None = None
    author: str | None = None
    attempt: int = 1
    at: float
    verdict: str  # the Verdict given at the time
    html_url: str = ""
    test_seconds: float | None = None  # the test's own duration, where a report gave it


class RunHint(BaseModel):
    """What a tracking issue needs to say how to run its test alone."""

    framework: str
    file: str | None = None
    name: str
    test_id: str
