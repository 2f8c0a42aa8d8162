"""Failed tests from `cargo test` and `cargo nextest run` console output.

cargo test prints `test mod::name ... FAILED` per test, then each failure's captured output
under `---- mod::name stdout ----` (the panic: `thread 'mod::name' panicked at src/x.rs:12:5:`
and its message; Rust before 1.73 wrote `panicked at 'message', src/x.rs:12:5`), a
`failures:` list and `test result: FAILED.`. The binary running (`Running tests/api.rs (...)`)
names an integration test's file.

nextest prints one line per attempt, `FAIL [ 0.010s] crate::bin mod::name` (`TRY 2 FAIL`,
`TRY 2 PASS` when it retries; `SIGSEGV`, `TIMEOUT`, ... for crashes), the output under
`STDERR:` / `STDOUT:` headers, and a `Summary` that lists the results again (not counted).
Its test id keeps the binary: `crate::bin mod::name`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.triage.models import Failure
from bot.triage.parsers.actions_log import output_lines
from bot.triage.parsers.paths import PathMap
from bot.triage.signature import signature

FRAMEWORK = "cargo"
NEXTEST = "nextest"

_MAX_LINE = 4096
_MAX_MESSAGE_LINES = 5

_NEXTEST_STATUS = r"(?:PASS|FAIL|FLAKY \d+/\d+|TIMEOUT|LEAK(?:-FAIL)?|ABORT|SIG[A-Z]+)"
MARKER = re.compile(
    r"^test .+ \.\.\. FAILED$|^test result: FAILED|^-{4} .+ std(?:out|err) -{4}$"
    rf"|^\s*(?:TRY \d+ )?{_NEXTEST_STATUS} \[|panicked at"
)

_RUNNING = re.compile(r"^\s*Running (?:unittests )?(?P<src>\S+\.rs) \(")
_CARGO_RESULT = re.compile(r"^test (?P<name>.+) \.\.\. (?P<status>ok|FAILED|ignored)(?:, .*)?$")
_CARGO_OUTPUT = re.compile(r"^-{4} (?P<name>.+) std(?:out|err) -{4}$")
_NEXTEST_RESULT = re.compile(
    rf"^\s*(?:TRY (?P<try>\d+) )?(?P<status>{_NEXTEST_STATUS}) \[\s*[\d.]+s\] "
    r"(?P<binary>\S+) (?P<name>.+?)\s*$"
)
_NEXTEST_OUTPUT = re.compile(
    r"^(?:-{3}|\u2500{4}) (?:TRY \d+ )?STD(?:OUT|ERR):\s+(?P<binary>\S+) (?P<name>.+?)(?: -{3})?$"
)
_NEXTEST_SUMMARY = re.compile(r"^\s*Summary \[")
_PANIC = re.compile(
    r"^thread '(?P<thread>[^'\n]*)' panicked at "
    r"(?:'(?P<old>.*)', (?P<old_at>\S+?):(?P<old_line>\d+):\d+$"
    r"|(?P<at>\S+?):(?P<line>\d+):\d+:?$)"
)
_MESSAGE_END = re.compile(r"^(?:note: |stack backtrace:|thread '|failures:$|-{4} |\s*$)")


@dataclass
class _Test:
    test_id: str
    name: str
    framework: str
    file: str | None
    attempts: list[bool] = field(default_factory=list)  # True: that attempt failed
    message: list[str] = field(default_factory=list)
    location: str | None = None
    outcome: str = ""  # nextest's status of the last attempt: FAIL, SIGSEGV, TIMEOUT, ...


class _Parser:
    def __init__(self) -> None:
        self.paths = PathMap()
        self.tests: dict[str, _Test] = {}
        self.source: str | None = None
        self.output: _Test | None = None
        self.reading_message = False
        self.in_summary = False

    def feed(self, line: str) -> None:
        running = _RUNNING.match(line)
        if running:
            unit = running.group(0).lstrip().startswith("Running unittests")
            self.source = None if unit else self.paths.to_repo(running.group("src"))
            return
        if _NEXTEST_SUMMARY.match(line):
            self.in_summary = True
            self.output = None
            return
        cargo = _CARGO_RESULT.match(line)
        if cargo:
            self.output = None
            test = self.test(cargo.group("name"), cargo.group("name"), FRAMEWORK, self.source)
            test.attempts.append(cargo.group("status") == "FAILED")
            return
        nextest = _NEXTEST_RESULT.match(line)
        if nextest:
            self.output = None
            if not self.in_summary:
                test_id = f"{nextest.group('binary')} {nextest.group('name')}"
                test = self.test(test_id, nextest.group("name"), NEXTEST, None)
                status = nextest.group("status")
                test.attempts.append(status != "PASS")
                test.outcome = status
            return
        header = _CARGO_OUTPUT.match(line)
        if header:
            self.open_output(header.group("name"))
            return
        header = _NEXTEST_OUTPUT.match(line)
        if header:
            self.open_output(f"{header.group('binary')} {header.group('name')}")
            return
        if self.output is not None:
            self.feed_output(self.output, line)

    def test(self, test_id: str, name: str, framework: str, file: str | None) -> _Test:
        test = self.tests.get(test_id)
        if test is None:
            test = self.tests[test_id] = _Test(test_id, name, framework, file)
        return test

    def open_output(self, test_id: str) -> None:
        self.output = self.tests.get(test_id)
        self.reading_message = False
        if self.output is not None:
            # Each attempt's output replaces the previous one: the last attempt decides.
            self.output.message.clear()
            self.output.location = None

    def feed_output(self, test: _Test, line: str) -> None:
        panic = _PANIC.match(line)
        if panic and not test.message:
            at, number = panic.group("at", "line")
            if panic.group("old") is not None:
                at, number = panic.group("old_at", "old_line")
                test.message.append(panic.group("old"))
            repo = self.paths.to_repo(at)
            test.location = f"{repo}:{number}" if repo is not None else None
            self.reading_message = True
            return
        if not self.reading_message:
            return
        if _MESSAGE_END.match(line) or len(test.message) >= _MAX_MESSAGE_LINES:
            self.reading_message = False
        else:
            test.message.append(line.strip())

    def failures(self) -> list[Failure]:
        result = []
        for test in self.tests.values():
            if not test.attempts or not test.attempts[-1]:
                continue
            message = "\n".join(test.message)
            if not message and test.outcome not in ("", "FAIL"):
                message = test.outcome  # a crash or timeout prints no panic
            location_file = test.location.rsplit(":", 1)[0] if test.location else None
            result.append(
                Failure(
                    test_id=test.test_id,
                    name=test.name,
                    file=test.file,
                    framework=test.framework,
                    location=test.location,
                    message=message,
                    signature=signature(message),
                    trace_paths=[location_file] if location_file else [],
                    attempts_failed=sum(test.attempts),
                    attempts_total=len(test.attempts),
                )
            )
        return result


def parse_cargo(lines: Sequence[str]) -> list[Failure]:
    """The tests cargo test or nextest reports as failed in their last attempt."""
    parser = _Parser()
    for line in output_lines(lines, _MAX_LINE):
        parser.feed(line)
    return parser.failures()
