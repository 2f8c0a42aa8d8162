"""Failed tests from mocha's console output (the default `spec` reporter and its relatives).

After the run mocha prints `N passing`, `N failing`, then one numbered block per failure: the
test's title path one part per line (`1) Suite`, `     nested`, `       test:`), the error
message, an optional `+ expected - actual` diff, and the stack. mocha never prints the test
file: it is read from the stack frame of the test body (`Context.<anonymous>`), from the path
a timeout message ends with, or from the first test-like file in the stack.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.triage.models import Failure
from bot.triage.parsers.actions_log import is_workflow_command
from bot.triage.parsers.js_stack import Trace, chain_failure, frame_location, is_frame, repo_path
from bot.triage.parsers.paths import PathMap

FRAMEWORK = "mocha"

MARKER = re.compile(r"^\s*\d+ failing\s*$|^\s*\d+\) \S")

_MAX_LINE = 4096
_MAX_MESSAGE_LINES = 5
# A title path deeper than this is not a title: the block is dropped.
_MAX_TITLE_LINES = 32

_FAILING = re.compile(r"^\s*\d+ failing\s*$")
_PASSING = re.compile(r"^\s*\d+ passing\b")
_BLOCK = re.compile(r"^\s{0,4}(?P<n>\d+)\) (?P<title>\S.*?)\s*$")
_DIFF = re.compile(r"^\s*\+ expected - actual\s*$")
_TEST_BODY = re.compile(r"^\s*at (?:async )?Context\.<anonymous> \(")
_TIMEOUT_FILE = re.compile(r"\((?P<path>[^()\n]+\.[cm]?[jt]sx?)\)\s*$")
_TEST_LIKE = re.compile(r"(?:^|/)(?:tests?|specs?|__tests__)/|[._-](?:spec|test)\.[cm]?[jt]sx?$")


@dataclass
class _Block:
    titles: list[str]
    complete: bool = False
    lines: list[str] = field(default_factory=list)

    def feed(self, line: str) -> None:
        if self.complete:
            self.lines.append(line)
            return
        if len(self.titles) >= _MAX_TITLE_LINES:
            return
        self.titles.append(line.strip())
        self.complete = line.endswith(":")


def _message(lines: Sequence[str]) -> str:
    kept: list[str] = []
    for line in lines:
        if is_frame(line) or _DIFF.match(line) or len(kept) == _MAX_MESSAGE_LINES:
            break
        if line.strip():
            kept.append(line.strip())
    return "\n".join(kept)


def _test_file(block: _Block, message: str, paths: PathMap) -> str | None:
    """The repository file holding the test, read from its stack or its timeout message."""
    for line in block.lines:
        if _TEST_BODY.match(line):
            location = frame_location(line)
            if location is not None and (path := repo_path(location[0], paths)):
                return path
    timeout = _TIMEOUT_FILE.search(message)
    if timeout and (path := repo_path(timeout.group("path"), paths)):
        return path
    for line in block.lines:
        location = frame_location(line)
        if location is not None:
            path = repo_path(location[0], paths)
            if path is not None and _TEST_LIKE.search(path):
                return path
    return None


def _to_failure(block: _Block, paths: PathMap) -> Failure:
    chain = [*block.titles[:-1], block.titles[-1].removesuffix(":")]
    message = _message(block.lines)
    file = _test_file(block, message, paths)
    trace = Trace(paths)
    trace.extend(block.lines)
    return chain_failure(FRAMEWORK, file, chain, message, trace)


def parse_mocha(lines: Sequence[str]) -> list[Failure]:
    """The tests mocha reports as failing, one Failure per test id."""
    blocks: list[_Block] = []
    block: _Block | None = None
    in_failures = False
    number = 1
    for raw in lines:
        if is_workflow_command(raw):
            continue
        line = raw[:_MAX_LINE].rstrip()
        if _FAILING.match(line):
            in_failures = True
            block = None
            number = 1
            continue
        if not in_failures:
            continue
        if _PASSING.match(line):
            in_failures = False
            block = None
            continue
        start = _BLOCK.match(line)
        # Numbers run 1, 2, 3: a numbered line inside an error message is not a new block.
        if start and int(start.group("n")) == number and (block is None or block.complete):
            number += 1
            block = _Block([])
            block.feed(start.group("title"))
            blocks.append(block)
        elif block is not None:
            block.feed(line)
    paths = PathMap()
    found: dict[str, Failure] = {}
    for done in blocks:
        if done.complete:
            failure = _to_failure(done, paths)
            found.setdefault(failure.test_id, failure)
    return list(found.values())
