"""Failed tests from Gradle's console output.

Gradle prints `FooTest > bar() FAILED` (JUnit 4 qualifies the class, JUnit 5 does not; nested
classes and parameters add ` > ` segments), then the exception indented, in SHORT form
(`AssertionError at FooTest.java:42`) or FULL form with `at com.acme.FooTest.bar(FooTest.java:
42)` frames. A class printed without its package is qualified from a frame of that class. The
test-retry plugin runs a failed test again: its later `PASSED` line makes it a pass, and each
`FAILED` line counts as a failed attempt.

A task runner running several builds at once (Nx, Turborepo, `[backend:build:ci] `) puts the
task's name before every line: it is dropped, so it never becomes part of a test's id. The
task's own `> Task :app:test FAILED` line is never a failed test.

Frames name a class's file (`FooTest.java`), not its directory, so `file` stays unknown; the
class name in the id is what ties the failure to the code. `location` is the file and line the
test's first frame in its own class (or SHORT form's `at FooTest.java:42`) states.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.triage.models import Failure
from bot.triage.parsers.actions_log import output_lines
from bot.triage.signature import signature

FRAMEWORK = "gradle"

_MAX_LINE = 4096
_MAX_MESSAGE_LINES = 5

MARKER = re.compile(
    r"^\S.*? > .+ FAILED$|^> Task :|tests completed, \d+ failed|^BUILD FAILED|^FAILURE: Build"
)

# A task runner's `[project:target] ` before each line of the build's output.
_RUNNER_PREFIX = re.compile(r"^\[[\w.:@/-]+\](?: |$)")
_RESULT = re.compile(r"^(?P<cls>[^\s>][^>]*?) > (?P<name>.+) (?P<status>FAILED|PASSED|SKIPPED)$")
_GRADLE = re.compile(r"^> Task :|tests completed, \d+ failed|^BUILD FAILED|^FAILURE: Build")
_FRAME = re.compile(
    r"^\s+at (?:[\w.$-]+//)?(?P<cls>[\w.$]+)\.[\w$<>]+"
    r"\((?:(?P<file>[\w$-]+\.\w+):(?P<line>\d+)|[^)\n]*)\)$"
)
_SHORT_AT = re.compile(r" at (?P<file>[\w$-]+\.(?:java|kt|groovy|scala)):(?P<line>\d+)$")
_FRAME_LIKE = re.compile(r"^\s+(?:at |\.\.\. \d+ more)")


@dataclass
class _Test:
    cls: str
    name: str
    statuses: list[str] = field(default_factory=list)
    message_lines: list[str] = field(default_factory=list)
    frame_classes: list[str] = field(default_factory=list)
    location: str | None = None


class _Parser:
    def __init__(self) -> None:
        self.tests: dict[tuple[str, str], _Test] = {}
        self.is_gradle = False
        self.reading: _Test | None = None
        self.in_frames = False

    def feed(self, line: str) -> None:
        prefix = _RUNNER_PREFIX.match(line)
        if prefix:
            line = line[prefix.end() :]
        if _GRADLE.search(line):
            self.is_gradle = True
        result = None if line.startswith("> Task ") else _RESULT.match(line)
        if result:
            key = (result.group("cls").strip(), result.group("name"))
            test = self.tests.get(key)
            if test is None:
                test = self.tests[key] = _Test(*key)
            test.statuses.append(result.group("status"))
            if result.group("status") == "FAILED":
                test.message_lines.clear()
                self.reading, self.in_frames = test, False
            else:
                self.reading = None
            return
        test = self.reading
        if test is None:
            return
        if not line.startswith(" ") or not line.strip():
            self.reading = None
            return
        frame = _FRAME.match(line)
        if frame:
            self.in_frames = True
            test.frame_classes.append(frame.group("cls"))
            if test.location is None and frame.group("file") and _is_own(frame, test.cls):
                test.location = f"{frame.group('file')}:{frame.group('line')}"
        elif _FRAME_LIKE.match(line) or line.strip().startswith("Caused by:"):
            self.in_frames = True
        elif not self.in_frames and len(test.message_lines) < _MAX_MESSAGE_LINES:
            test.message_lines.append(line.strip())
            short = _SHORT_AT.search(line)
            if short and test.location is None:
                test.location = f"{short.group('file')}:{short.group('line')}"

    def failures(self) -> list[Failure]:
        if not self.is_gradle:
            return []
        found: dict[str, Failure] = {}
        for test in self.tests.values():
            if not test.statuses or test.statuses[-1] != "FAILED":
                continue
            cls = _qualify(test.cls, test.frame_classes)
            message = "\n".join(test.message_lines)
            failed = test.statuses.count("FAILED")
            found[f"{cls}#{test.name}"] = Failure(
                test_id=f"{cls}#{test.name}",
                name=f"{test.cls.rsplit('.', 1)[-1]}#{test.name}",
                framework=FRAMEWORK,
                location=test.location,
                message=message,
                signature=signature(message),
                attempts_failed=failed,
                attempts_total=failed + test.statuses.count("PASSED"),
            )
        return list(found.values())


def _is_own(frame: re.Match[str], printed_cls: str) -> bool:
    """The frame is in the test's own class (or a class nested in it), not a library's."""
    outer = frame.group("cls").split("$", 1)[0].rsplit(".", 1)[-1]
    return outer == printed_cls.rsplit(".", 1)[-1].split("$", 1)[0]


def _qualify(printed: str, frame_classes: list[str]) -> str:
    if "." in printed:
        return printed
    for cls in frame_classes:
        outer = cls.split("$", 1)[0]
        if outer.rsplit(".", 1)[-1] == printed:
            return outer
    return printed


def parse_gradle(lines: Sequence[str]) -> list[Failure]:
    """The tests Gradle reports as FAILED and not passed on a retry, one per `Class#name`."""
    parser = _Parser()
    for line in output_lines(lines, _MAX_LINE):
        parser.feed(line)
    return parser.failures()
