"""Failed tests from `dotnet test` (VSTest console logger) output.

Each failure reads `  Failed Namespace.Class.Method [12 ms]` (xUnit prints the full name,
NUnit and MSTest may print the method alone; arguments follow in parentheses), then
`  Error Message:` with the assertion's lines and `  Stack Trace:` with `at ... in
/path/File.cs:line 42` frames. The run ends with `Failed!  - Failed: 1, Passed: 3, ...`.
The id is the name as printed; the file is the frame of the test method itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.triage.models import Failure
from bot.triage.parsers.actions_log import output_lines
from bot.triage.parsers.paths import PathMap
from bot.triage.signature import signature

FRAMEWORK = "dotnet"

_MAX_LINE = 4096
_MAX_MESSAGE_LINES = 5

MARKER = re.compile(r"^\s+Failed \S.* \[[^\]\n]+\]$|^\s*Error Message:$|^Failed!\s+- Failed:")

_FAILED = re.compile(r"^\s+(?P<status>Failed|Passed|Skipped) (?P<name>\S.*?) \[[^\]\n]+\]$")
_SECTION = re.compile(
    r"^\s*(?P<section>Error Message|Stack Trace|Standard Output Messages"
    r"|Standard Error Messages|Debug Trace|Additional Information Messages):$"
)
_FRAME = re.compile(r"^\s*at (?P<symbol>.+?) in (?P<path>.+?):line (?P<line>\d+)\s*$")


@dataclass
class _Test:
    name: str
    message: list[str] = field(default_factory=list)
    frames: list[tuple[str, str, int]] = field(default_factory=list)  # symbol, repo path, line


class _Parser:
    def __init__(self) -> None:
        self.paths = PathMap()
        self.tests: dict[str, _Test] = {}
        self.confirmed: set[str] = set()
        self.current: _Test | None = None
        self.section: str | None = None

    def feed(self, line: str) -> None:
        result = _FAILED.match(line)
        if result:
            self.section = None
            self.current = None
            if result.group("status") == "Failed":
                name = result.group("name")
                self.current = self.tests[name] = _Test(name)
            return
        if self.current is None:
            return
        section = _SECTION.match(line)
        if section:
            self.section = section.group("section")
            # Only the VSTest logger follows a `Failed` line with these headers.
            self.confirmed.add(self.current.name)
            return
        if self.section == "Error Message":
            if not line.strip():
                self.section = None
            elif len(self.current.message) < _MAX_MESSAGE_LINES:
                self.current.message.append(line.strip())
        elif self.section == "Stack Trace":
            frame = _FRAME.match(line)
            if frame:
                repo = self.paths.to_repo(frame.group("path"))
                if repo is not None:
                    entry = (frame.group("symbol"), repo, int(frame.group("line")))
                    self.current.frames.append(entry)

    def failures(self) -> list[Failure]:
        return [_to_failure(test) for name, test in self.tests.items() if name in self.confirmed]


def _to_failure(test: _Test) -> Failure:
    method = test.name.split("(", 1)[0]
    own = [f for f in test.frames if f[0].split("(", 1)[0].endswith(method)]
    file = own[0][1] if own else None
    location = f"{test.frames[0][1]}:{test.frames[0][2]}" if test.frames else None
    message = "\n".join(test.message)
    return Failure(
        test_id=test.name,
        name=test.name,
        file=file,
        framework=FRAMEWORK,
        location=location,
        message=message,
        signature=signature(message),
        trace_paths=list(dict.fromkeys(path for _, path, _ in test.frames)),
    )


def parse_dotnet(lines: Sequence[str]) -> list[Failure]:
    """The tests `dotnet test` reports as Failed, one Failure per printed test name."""
    parser = _Parser()
    for line in output_lines(lines, _MAX_LINE):
        parser.feed(line)
    return parser.failures()
