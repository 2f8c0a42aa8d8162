"""Failed tests from `go test -v` console output.

Go prints a test's output as `    file_test.go:12: message` lines under the test that is
running (`=== RUN`, `=== CONT`, `=== NAME` switch it), its result as `--- FAIL: TestX (0.00s)`
(nested subtests indented, named `TestX/sub`), and closes each package with
`FAIL\tpkg/name\t0.01s` or `ok  \tpkg/name\t0.01s`. Tests belong to the package line that
follows them: `go test ./...` prints each package's output as one block.

Where a test failed: testify's `Error Trace:` lists the frames of a failed assertion (absolute
paths, one a line, the test's own file among them), made repository-relative; else the
`file_test.go:12:` line of its last message. Go prints that file's name only: when no frame
names its folder it is kept as printed (`clock_test.go:41`), for the tree to place (the
package's folder, `imports/locate.py`), and is not the test's file.

A failing subtest makes its parent fail too: both are reported, as `go test -json` and
go-junit-report's JUnit report them, so the readers of one run agree. A benchmark names itself
alone on a line before its output and fails with `--- FAIL: BenchmarkX` (no time); Go 1.4
and before print `(0.02 seconds)` and indent a message's further lines with tabs. Panics, data
races and build failures name their cause; a package that fails with no failing test is
reported under the package's own name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.triage.models import Failure
from bot.triage.parsers.actions_log import is_workflow_command
from bot.triage.parsers.paths import PathMap
from bot.triage.signature import signature

FRAMEWORK = "go"

_MAX_LINE = 4096
_MAX_MESSAGE_LINES = 5

MARKER = re.compile(r"^\s*--- FAIL: |^FAIL\s|^panic: |^WARNING: DATA RACE|^# \S+")

_RUN = re.compile(r"^=== (?:RUN|CONT|NAME|PAUSE)\s+(?P<name>\S*)\s*$")
# `(0.00s)`; Go 1.4 and before `(0.02 seconds)`; a benchmark's result line has no time.
_RESULT = re.compile(
    r"^(?P<indent>\s*)--- (?P<status>FAIL|PASS|SKIP): (?P<name>\S+)"
    r"(?: \([\d.]+(?:s| seconds)\))?\s*$"
)
# A benchmark names itself alone on a line before its output (`BenchmarkFatal`); its
# measurements follow the name on the same line (`BenchmarkX-8  1000  12 ns/op`).
_BENCHMARK = re.compile(r"^(?P<name>Benchmark\S*)$")
_PACKAGE = re.compile(
    r"^(?P<status>FAIL|ok)\s+(?P<pkg>\S+)\s+(?:[\d.]+s|\(cached\)|\[(?P<note>[^\]\n]+)\])"
)
_OUTPUT = re.compile(
    r"^(?P<indent>\s+)(?P<path>(?:[A-Za-z]:)?[^\s:]+\.go):(?P<line>\d+): ?(?P<text>.*)$"
)
_PANIC = re.compile(r"^panic: (?P<text>.*?)(?: \[recovered\])?$")
_FRAME = re.compile(
    r"^\s+(?P<path>(?:[A-Za-z]:)?[/\\][^\s:]+\.go):(?P<line>\d+)(?: \+0x[0-9a-f]+)?$"
)
_BUILD_HEADER = re.compile(r"^# (?P<pkg>\S+)(?: \[[^\]\n]+\])?$")
_GOROUTINE = re.compile(r"^goroutine \d+ \[")
# testify: `Error Trace:\t/path/x_test.go:41`, then one frame a line under it.
_TRACE_HEAD = re.compile(r"^\s+Error Trace:\s+(?P<rest>\S.*)$")
_TRACE_MORE = re.compile(r"^\s*(?P<path>(?:[A-Za-z]:)?[^\s:]+\.go):(?P<line>\d+)\s*$")
_BUILD_ERROR = re.compile(r"^(?P<path>[^\s:]+\.go):(?P<line>\d+):(?:\d+:)? (?P<text>.+)$")
_RACE = "WARNING: DATA RACE"
# A message's further lines: indented under it, with spaces (Go 1.14+) or tabs (before).
_CONTINUED = ("        ", "\t\t")


@dataclass
class _Entry:
    path: str
    line: int
    lines: list[str]


@dataclass
class _Test:
    name: str
    entries: list[_Entry] = field(default_factory=list)
    failed: bool = False
    panic: str = ""
    race: bool = False
    frames: list[tuple[str, int]] = field(default_factory=list)


@dataclass
class _Package:
    tests: dict[str, _Test] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    panic: str = ""
    frames: list[tuple[str, int]] = field(default_factory=list)
    build_errors: list[_Entry] = field(default_factory=list)

    def test(self, name: str) -> _Test:
        test = self.tests.get(name)
        if test is None:
            test = self.tests[name] = _Test(name)
            self.order.append(name)
        return test


class _Parser:
    def __init__(self) -> None:
        self.paths = PathMap()
        self.package = _Package()
        self.current: _Test | None = None
        self.entry: _Entry | None = None
        self.in_panic = False
        self.in_trace = False
        self.goroutines = 0
        self.build_pkg: str | None = None
        self.failures: dict[str, tuple[str, _Test | None, _Package]] = {}
        self.basenames: dict[str, set[str]] = {}

    def feed(self, line: str) -> None:
        package = _PACKAGE.match(line)
        if package:
            self.close_package(package.group("pkg"), package.group("status") == "FAIL")
            return
        run = _RUN.match(line)
        if run:
            self.entry = None
            self.in_panic = False
            if run.group("name"):
                self.current = self.package.test(run.group("name"))
            return
        benchmark = _BENCHMARK.match(line)
        if benchmark:
            self.entry = None
            self.current = self.package.test(benchmark.group("name"))
            return
        result = _RESULT.match(line)
        if result:
            self.entry = None
            test = self.package.test(result.group("name"))
            test.failed = result.group("status") == "FAIL"
            # Older Go prints a test's output after its result line.
            self.current = test
            return
        build = _BUILD_HEADER.match(line)
        if build:
            self.build_pkg = build.group("pkg")
            return
        if self.read_trace(line) or self.read_panic(line):
            return
        output = _OUTPUT.match(line)
        if output and self.current is not None:
            self.entry = _Entry(output.group("path"), int(output.group("line")), [])
            self.entry.lines.append(output.group("text").strip())
            self.current.entries.append(self.entry)
            return
        if self.build_pkg is not None:
            error = _BUILD_ERROR.match(line)
            if error:
                self.package.build_errors.append(
                    _Entry(error.group("path"), int(error.group("line")), [error.group("text")])
                )
                return
        if line == _RACE and self.current is not None:
            self.current.race = True
            return
        if self.entry is not None and line.startswith(_CONTINUED) and line.strip():
            self.entry.lines.append(line.strip())
        elif not line.startswith(" "):
            self.entry = None

    def read_trace(self, line: str) -> bool:
        """testify's `Error Trace:` frames, kept as the test's frames (not its message)."""
        head = _TRACE_HEAD.match(line)
        frame = _TRACE_MORE.match(head.group("rest").strip()) if head else None
        if head is None and self.in_trace:
            frame = _TRACE_MORE.match(line)
        self.in_trace = frame is not None
        if frame is None or self.current is None:
            return frame is not None
        repo = self.paths.to_repo(frame.group("path"))
        if repo is not None:
            self.basenames.setdefault(repo.rsplit("/", 1)[-1], set()).add(repo)
            self.current.frames.append((repo, int(frame.group("line"))))
        return True

    def read_panic(self, line: str) -> bool:
        panic = _PANIC.match(line)
        if panic:
            self.in_panic = True
            self.goroutines = 0
            text = "panic: " + panic.group("text")
            if self.current is not None:
                self.current.failed = True
                self.current.panic = self.current.panic or text
            else:
                self.package.panic = self.package.panic or text
            return True
        if _GOROUTINE.match(line):
            # Only the panicking goroutine's stack says where the panic was raised.
            self.goroutines += 1
            return True
        frame = _FRAME.match(line)
        if frame:
            path, number = frame.group("path"), int(frame.group("line"))
            repo = self.paths.to_repo(path)
            if repo is not None:
                self.basenames.setdefault(repo.rsplit("/", 1)[-1], set()).add(repo)
                in_stack = self.in_panic and self.goroutines <= 1
                if in_stack or (self.current is not None and self.current.race):
                    target = self.current.frames if self.current else self.package.frames
                    target.append((repo, number))
            return True
        return False

    def close_package(self, pkg: str, failed: bool) -> None:
        package, self.package = self.package, _Package()
        self.current = None
        self.entry = None
        self.in_panic = False
        self.build_pkg = None
        if not failed:
            return
        failing = [package.tests[n] for n in package.order if package.tests[n].failed]
        for test in failing:
            self.failures[f"{pkg}.{test.name}"] = (pkg, test, package)
        if not failing:
            self.failures[pkg] = (pkg, None, package)

    def result(self) -> list[Failure]:
        return [
            self.to_failure(test_id, pkg, test, package)
            for test_id, (pkg, test, package) in self.failures.items()
        ]

    def resolve(self, path: str) -> str | None:
        if "/" in path.replace("\\", "/"):
            return self.paths.to_repo(path)
        candidates = self.basenames.get(path, set())
        return next(iter(candidates)) if len(candidates) == 1 else None

    def to_failure(self, test_id: str, pkg: str, test: _Test | None, package: _Package) -> Failure:
        frames = test.frames if test is not None else package.frames
        message = ""
        location: str | None = None
        printed: str | None = None  # a bare `name_test.go:41` no frame placed
        if test is not None:
            message, location, printed = self.describe(test)
        elif package.build_errors:
            first = package.build_errors[0]
            message = "build failed: " + first.lines[0]
            location = _at(self.resolve(first.path), first.line)
            frames = [(p, e.line) for e in package.build_errors if (p := self.resolve(e.path))]
        elif package.panic:
            message = package.panic
        if location is None and frames:
            location = f"{frames[0][0]}:{frames[0][1]}"
        trace_paths = list(dict.fromkeys(path for path, _ in frames))
        file = None
        if test is not None:
            test_files = [p for p in trace_paths if p.endswith("_test.go")]
            file = test_files[0] if test_files else None
            if (
                file is None
                and location is not None
                and location.split(":")[0].endswith("_test.go")
            ):
                file = location.split(":")[0]
        return Failure(
            test_id=test_id,
            name=test.name if test is not None else pkg,
            file=file,
            framework=FRAMEWORK,
            location=location or printed,
            message=message,
            signature=signature(message),
            trace_paths=trace_paths,
        )

    def describe(self, test: _Test) -> tuple[str, str | None, str | None]:
        """The message, where it was printed (a repository path), and that place as
        printed when it is a bare file name no frame places."""
        if test.panic:
            return test.panic, None, None
        if test.race:
            return _RACE, None, None
        if not test.entries:
            return "", None, None
        # t.Log and t.Error print alike; the last line a failing test printed is most often
        # the assertion that failed it (t.Fatal ends the test). testify's starts empty.
        entry = test.entries[-1]
        lines = [line for line in entry.lines if line][:_MAX_MESSAGE_LINES]
        location = _at(self.resolve(entry.path), entry.line)
        bare = "/" not in entry.path.replace("\\", "/")
        return "\n".join(lines), location, f"{entry.path}:{entry.line}" if bare else None


def _at(path: str | None, line: int) -> str | None:
    return f"{path}:{line}" if path is not None else None


def parse_go_test(lines: Sequence[str]) -> list[Failure]:
    """The tests `go test -v` reports as failed, one Failure per `pkg.TestX/sub` id."""
    parser = _Parser()
    for line in lines:
        if line.startswith("##[") and is_workflow_command(line):
            continue
        parser.feed(line[:_MAX_LINE].rstrip())
    return parser.result()
