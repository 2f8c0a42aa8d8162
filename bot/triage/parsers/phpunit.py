"""Failed tests from PHPUnit's console output (also ParaTest's, which prints the same).

After the run PHPUnit lists `There was 1 failure:` / `There were 2 errors:` sections of numbered
entries, `1) Tests\\FooTest::testBar` (a data provider adds `with data set "name" (args)`),
the message, a blank line, then `/path/FooTest.php:42` frames. Risky, incomplete, skipped,
warning and deprecation sections are not failures. The id drops a data set's arguments (they
can be long or hold run-dependent values) and keeps its name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.triage.models import Failure
from bot.triage.parsers.actions_log import output_lines
from bot.triage.parsers.paths import PathMap
from bot.triage.signature import signature

FRAMEWORK = "phpunit"

_MAX_LINE = 4096
_MAX_MESSAGE_LINES = 5

MARKER = re.compile(r"^There (?:was|were) \d+ |^(?:FAILURES|ERRORS)!$")

_SECTION = re.compile(r"^There (?:was|were) \d+ (?P<kind>[a-z ]+?):$")
_FAILING_KINDS = frozenset({"failure", "failures", "error", "errors"})
_ENTRY = re.compile(
    r"^\d+\) (?P<cls>[\w\\]+)::(?P<method>\w+)"
    r"(?P<data> with data set (?:#\d+|\"(?:[^\"\\]|\\.)*\"))?(?: \(.*\))?$"
)
_FRAME = re.compile(r"^(?P<path>(?:[A-Za-z]:)?[^\s:]+\.php):(?P<line>\d+)$")
_END = re.compile(r"^(?:--$|FAILURES!|ERRORS!|OK, but|Tests: \d+)")


@dataclass
class _Entry:
    cls: str
    name: str
    message: list[str] = field(default_factory=list)
    frames: list[tuple[str, int]] = field(default_factory=list)
    past_message: bool = False


class _Parser:
    def __init__(self) -> None:
        self.paths = PathMap()
        self.entries: list[_Entry] = []
        self.failing_section = False
        self.entry: _Entry | None = None

    def feed(self, line: str) -> None:
        section = _SECTION.match(line)
        if section:
            self.failing_section = section.group("kind") in _FAILING_KINDS
            self.entry = None
            return
        if not self.failing_section:
            return
        if _END.match(line):
            self.entry = None
            if line != "--":
                self.failing_section = False
            return
        entry = _ENTRY.match(line)
        if entry:
            name = entry.group("method") + (entry.group("data") or "")
            self.entry = _Entry(entry.group("cls"), name)
            self.entries.append(self.entry)
            return
        if self.entry is None:
            return
        frame = _FRAME.match(line.strip())
        if frame and self.entry.past_message:
            repo = self.paths.to_repo(frame.group("path"))
            if repo is not None:
                self.entry.frames.append((repo, int(frame.group("line"))))
        elif not line.strip():
            self.entry.past_message = True
        elif not self.entry.past_message and len(self.entry.message) < _MAX_MESSAGE_LINES:
            self.entry.message.append(line.strip())

    def failures(self) -> list[Failure]:
        found: dict[str, Failure] = {}
        for entry in self.entries:
            failure = _to_failure(entry)
            found.setdefault(failure.test_id, failure)
        return list(found.values())


def _to_failure(entry: _Entry) -> Failure:
    short = entry.cls.rsplit("\\", 1)[-1]
    own = [path for path, _ in entry.frames if path.rsplit("/", 1)[-1] == f"{short}.php"]
    message = "\n".join(entry.message)
    return Failure(
        test_id=f"{entry.cls}::{entry.name}",
        name=f"{short}::{entry.name}",
        file=own[0] if own else None,
        framework=FRAMEWORK,
        location=f"{entry.frames[0][0]}:{entry.frames[0][1]}" if entry.frames else None,
        message=message,
        signature=signature(message),
        trace_paths=list(dict.fromkeys(path for path, _ in entry.frames)),
    )


def parse_phpunit(lines: Sequence[str]) -> list[Failure]:
    """The tests PHPUnit lists under its failure and error sections."""
    parser = _Parser()
    for line in output_lines(lines, _MAX_LINE):
        parser.feed(line)
    return parser.failures()
