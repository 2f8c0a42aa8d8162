"""Failed tests from Maven Surefire / Failsafe console output.

Surefire prints, per test class, `Tests run: 3, Failures: 1, ... <<< FAILURE! -- in
com.acme.FooTest`, then one block per failed test: `com.acme.FooTest.bar -- Time elapsed:
0.01 s  <<< FAILURE!` (Surefire 2 wrote `bar(com.acme.FooTest)  Time elapsed: ...`), the
exception and its `at ...` frames. The `Results:` section lists failures again and, with
`rerunFailingTestsCount`, every run of a retried test (`Run 1: ...`, `Run 2: PASS`); tests that
passed on a rerun are listed under `Flakes:` and are not failures.

Surefire 2.x running JUnit 5 prints only the method on the failing line (`[ERROR]
formatsDates  Time elapsed: 0.003 s  <<< FAILURE!`): its class is the one the `Running ...`
line and the class summary (`... <<< FAILURE! - in org.example.FooTest`) just named. A task
runner running several builds at once (Nx, Turborepo, Gradle-style wrappers) puts `[project] `
before every line; it is dropped.

Stack frames name only a class's file (`FooTest.java:42`), not its directory, so `file` stays
unknown rather than guessed from a source layout; `location` is that file and line as the
test's own frame states them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.triage.models import Failure
from bot.triage.parsers.actions_log import output_lines
from bot.triage.signature import signature

FRAMEWORK = "maven"

_MAX_LINE = 4096
_MAX_MESSAGE_LINES = 5

MARKER = re.compile(
    r"<<< (?:FAILURE|ERROR)!"
    r"|^(?:\[[\w.:@/-]+\] )?\[(?:ERROR|WARNING)\] (?:Failures|Errors|Flakes): "
)

# A task runner's `[project] ` before each line of Maven's output (and its own `[LEVEL] `).
_RUNNER_PREFIX = re.compile(r"^\[(?!(?:INFO|ERROR|WARNING|WARN|DEBUG)\])[\w.:@/-]+\](?: |$)")
_LEVEL = re.compile(r"^\[(?P<level>INFO|ERROR|WARNING|WARN)\] ?")
_RUNNING = re.compile(r"^Running (?P<cls>[\w$]+(?:\.[\w$]+)+)$")
_OWN_FRAME = re.compile(
    r"^\s*at (?:[\w.$-]+//)?(?P<cls>[\w.$]+)\.[\w$<>]+\((?P<file>[\w$-]+\.\w+):(?P<line>\d+)\)"
)
_CLASS_SUMMARY = re.compile(
    r"^Tests run: \d+, Failures: \d+, Errors: \d+, Skipped: \d+, Time elapsed: .*?"
    r"(?:-|--) in (?P<cls>\S+)\s*$"
)
_DETAIL = re.compile(
    r"^(?P<name>\S.*?)\s+(?:-- )?Time elapsed: [\d.,]+ s(?:ec)?\s+<<< (?P<kind>FAILURE|ERROR)!$"
)
_OLD_NAME = re.compile(r"^(?P<method>[^\s(]+.*?)\((?P<cls>[\w.$]+)\)$")
_RESULTS_HEADER = re.compile(r"^(?P<kind>Failures|Errors|Flakes): ?$")
_RESULTS_QUALIFIED = re.compile(r"^(?P<name>[\w$]+(?:\.[\w$]+)+\S*)$")
_RUN = re.compile(r"^\s+Run (?P<n>\d+): (?P<text>.*)$")
_FRAME = re.compile(r"^\s*at \S")
_RESULTS_END = re.compile(r"^Tests run: \d+, Failures: \d+")


@dataclass
class _Test:
    test_id: str
    name: str
    message_lines: list[str] = field(default_factory=list)
    runs: list[bool] = field(default_factory=list)  # True: that run failed
    location: str | None = None


class _Parser:
    def __init__(self) -> None:
        self.tests: dict[str, _Test] = {}
        self.flakes: set[str] = set()
        self.current_class: str | None = None
        self.reading: _Test | None = None
        self.results_kind: str | None = None
        self.results_test: str | None = None

    def feed(self, raw: str) -> None:
        prefix = _RUNNER_PREFIX.match(raw)
        if prefix:
            raw = raw[prefix.end() :]
        level = _LEVEL.match(raw)
        if level is None:
            self.feed_plain(raw)
            return
        line = raw[level.end() :]
        summary = _CLASS_SUMMARY.match(line) or _RUNNING.match(line)
        if summary:
            self.enter_class(summary.group("cls"))
            return
        detail = _DETAIL.match(line)
        if detail:
            test_id, name = self.identify(detail.group("name"))
            self.reading = self.tests.setdefault(test_id, _Test(test_id, name))
            self.reading.message_lines.clear()
            return
        self.reading = None
        if line.strip() == "Results:":
            self.results_kind = None
            return
        header = _RESULTS_HEADER.match(line)
        if header:
            self.results_kind = header.group("kind")
            self.results_test = None
            return
        if _RESULTS_END.match(line):
            self.results_kind = None
            return
        if self.results_kind is not None:
            self.feed_results(line)

    def enter_class(self, cls: str) -> None:
        self.current_class = cls
        self.reading = None

    def feed_plain(self, line: str) -> None:
        running = _RUNNING.match(line)
        if running:  # Surefire 2 without Maven's log levels
            self.enter_class(running.group("cls"))
            return
        if self.reading is None:
            return
        frame = _OWN_FRAME.match(line)
        test_class = self.reading.test_id.split("#", 1)[0]
        if (
            frame
            and self.reading.location is None
            and frame.group("cls").split("$")[0] == test_class
        ):
            self.reading.location = f"{frame.group('file')}:{frame.group('line')}"
        if not line.strip():
            self.reading = None
        elif not _FRAME.match(line) and len(self.reading.message_lines) < _MAX_MESSAGE_LINES:
            if line.startswith("\t...") or line.startswith("Caused by:"):
                self.reading = None
            else:
                self.reading.message_lines.append(line.strip())

    def feed_results(self, line: str) -> None:
        run = _RUN.match(line)
        if run and self.results_test is not None:
            test = self.tests.get(self.results_test)
            if test is not None:
                test.runs.append(run.group("text").strip() != "PASS")
            return
        qualified = _RESULTS_QUALIFIED.match(line)
        if qualified:
            test_id, name = self.identify(qualified.group("name"))
            self.results_test = test_id
            if self.results_kind == "Flakes":
                self.flakes.add(test_id)
            else:
                self.tests.setdefault(test_id, _Test(test_id, name)).runs.clear()

    def identify(self, printed: str) -> tuple[str, str]:
        """`(test id, name)` for `com.acme.FooTest.bar`, `bar(com.acme.FooTest)` or a class."""
        old = _OLD_NAME.match(printed)
        if old and "." in old.group("cls"):
            cls, method = old.group("cls"), old.group("method")
        elif printed == self.current_class:
            return printed, printed.rsplit(".", 1)[-1]
        else:
            # Parameters may hold dots (`rounds(double)[1] 0.5`): split before them.
            cut = min((i for i in (printed.find("("), printed.find("[")) if i >= 0), default=-1)
            head, tail = (printed[:cut], printed[cut:]) if cut >= 0 else (printed, "")
            cls, _, method = head.rpartition(".")
            method += tail
            if not cls and self.current_class:
                # Surefire 2.x with JUnit 5: the method alone, in the class just run.
                cls = self.current_class
            elif not cls:
                return printed, printed
        return f"{cls}#{method}", f"{cls.rsplit('.', 1)[-1]}#{method}"

    def failures(self) -> list[Failure]:
        result = []
        for test in self.tests.values():
            if test.test_id in self.flakes or (test.runs and not any(test.runs)):
                continue
            message = "\n".join(test.message_lines)
            result.append(
                Failure(
                    test_id=test.test_id,
                    name=test.name,
                    framework=FRAMEWORK,
                    location=test.location,
                    message=message,
                    signature=signature(message),
                    attempts_failed=sum(test.runs) if test.runs else 1,
                    attempts_total=len(test.runs) if test.runs else 1,
                )
            )
        return result


def parse_maven(lines: Sequence[str]) -> list[Failure]:
    """The tests Surefire reports as failed or in error, one Failure per `Class#method`."""
    parser = _Parser()
    for line in output_lines(lines, _MAX_LINE):
        parser.feed(line)
    return parser.failures()
