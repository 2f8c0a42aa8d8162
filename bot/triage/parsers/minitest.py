"""Failed tests from Ruby minitest's console output (Rails' `bin/rails test`, rake, gems).

minitest prints each failure at the end of the run, or as it happens with Rails' reporter:

    1) Failure:
  GithubDiffParserTest#test_boom1 [/home/runner/work/r/r/test/github_diff_parser_test.rb:7]:
  Expected true to not be truthy.

    2) Error:
  BunnyTest#test_error_me:
  ArgumentError: Wups! Bet you didn't expect this!
      test/models/bunny_test.rb:19:in `block in <class:BunnyTest>'

A failure's `[path:line]` is the assertion that failed; an error's location is the first
backtrace line inside the repository. Rails adds `bin/rails test test/models/x_test.rb:6`, the
test's own file. `Skipped:` entries are not failures. Lines written by other processes may
sit between a header and its test (rake's own messages share the terminal), so the test line
is looked for among the next few lines.

A test is `Class#test_name`, as minitest names it: the same name in two classes is two tests.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.triage.models import Failure
from bot.triage.parsers.actions_log import output_lines
from bot.triage.parsers.paths import PathMap
from bot.triage.signature import signature

FRAMEWORK = "minitest"

_MAX_LINE = 4096
_MAX_MESSAGE_LINES = 5
# How many lines after `Failure:` the test's line may be, past interleaved output.
_LOOKAHEAD = 4

MARKER = re.compile(
    r"^\s*(?:\d+\) )?(?:Failure|Error):\s*$"
    r"|^\d+ (?:runs|tests), \d+ assertions, \d+ failures, \d+ errors"
)

_HEADER = re.compile(r"^\s*(?:\d+\) )?(?P<kind>Failure|Error|Skipped):\s*$")
# `Class#test_name [path:line]:`; spec-style class names may hold spaces and `::`.
_TEST = re.compile(
    r"^(?P<cls>[^\s#][^#\n]*?)#(?P<name>[^\s\[][^\n]*?)"
    r"(?: \[(?P<path>[^\]\n]+?):(?P<line>\d+)\])?:$"
)
_FRAME = re.compile(r"^\s+(?P<path>[^\s:][^:\n]*\.rb):(?P<line>\d+):in ")
_RAILS_RERUN = re.compile(r"^(?:bin/)?rails test (?P<path>\S+?\.rb):\d+$")
_EXCEPTION = re.compile(r"^(?:[A-Z]\w*::)*[A-Z]\w*(?:Error|Exception|Interrupt)\b")
_SUMMARY = re.compile(r"^\d+ (?:runs|tests), \d+ assertions, ")
_RUN_STARTED = re.compile(r"^# Running|^Run options: |^\d+ (?:runs|tests), \d+ assertions, ")


@dataclass
class _Block:
    kind: str
    test_id: str = ""
    location: str | None = None
    file: str | None = None
    message: list[str] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)
    after_blank: bool = False

    def text(self) -> str:
        """The message: from the exception's own line when an error shows one, since other
        processes' lines may come first."""
        lines = self.message
        for i, line in enumerate(lines):
            if _EXCEPTION.match(line):
                lines = lines[i:]
                break
        return "\n".join(lines[:_MAX_MESSAGE_LINES])


class _Parser:
    def __init__(self) -> None:
        self.paths = PathMap()
        self.blocks: list[_Block] = []
        self.block: _Block | None = None
        self.waiting = 0  # lines left in which the open header's test line may come
        self.is_minitest = False

    def feed(self, line: str) -> None:
        if _RUN_STARTED.match(line):
            self.is_minitest = True
        header = _HEADER.match(line)
        if header:
            self.block = _Block(header.group("kind"))
            self.waiting = _LOOKAHEAD
            return
        block = self.block
        if block is None:
            self.feed_rerun(line)
            return
        if not block.test_id:
            self.find_test(block, line)
        elif not line.strip():
            block.after_blank = True
        elif _SUMMARY.match(line) or (block.after_blank and not line[0].isspace()):
            # A block ends at a blank line followed by unindented text (Rails' rerun line,
            # the run's summary); an error's backtrace may follow a blank line, indented.
            self.block = None
            self.feed_rerun(line)
        else:
            self.feed_detail(block, line)

    def find_test(self, block: _Block, line: str) -> None:
        test = _TEST.match(line)
        if test is None:
            self.waiting -= 1
            if self.waiting <= 0:
                self.block = None
            return
        block.test_id = f"{test.group('cls')}#{test.group('name')}"
        if test.group("path"):
            path = self.paths.to_repo(test.group("path"))
            block.location = f"{path}:{test.group('line')}" if path else None
            block.file = path
        if block.kind != "Skipped":
            self.blocks.append(block)

    def feed_detail(self, block: _Block, line: str) -> None:
        frame = _FRAME.match(line)
        if frame:
            path = self.paths.to_repo(frame.group("path"))
            if path is not None:
                block.frames.append(f"{path}:{frame.group('line')}")
        elif not block.after_blank and len(block.message) < 2 * _MAX_MESSAGE_LINES:
            block.message.append(line.strip())

    def feed_rerun(self, line: str) -> None:
        rerun = _RAILS_RERUN.match(line)
        if rerun and self.blocks and self.blocks[-1].file is None:
            self.blocks[-1].file = self.paths.to_repo(rerun.group("path"))

    def failures(self) -> list[Failure]:
        if not self.is_minitest:
            return []
        found: dict[str, Failure] = {}
        for block in self.blocks:
            message = block.text()
            found[block.test_id] = Failure(
                test_id=block.test_id,
                name=block.test_id,
                file=block.file or _test_file(block.frames),
                framework=FRAMEWORK,
                location=block.location or (block.frames[0] if block.frames else None),
                message=message,
                signature=signature(message),
                trace_paths=list(dict.fromkeys(f.rsplit(":", 1)[0] for f in block.frames)),
            )
        return list(found.values())


def _test_file(frames: list[str]) -> str | None:
    """The test file among an error's frames: minitest's file naming, `*_test.rb` or
    `test_*.rb`."""
    for frame in frames:
        path = frame.rsplit(":", 1)[0]
        base = path.rsplit("/", 1)[-1]
        if base.endswith("_test.rb") or base.startswith("test_"):
            return path
    return None


def parse_minitest(lines: Sequence[str]) -> list[Failure]:
    """The tests minitest reports under `Failure:` or `Error:`, one per `Class#test_name`."""
    parser = _Parser()
    for line in output_lines(lines, _MAX_LINE):
        parser.feed(line)
    return parser.failures()
