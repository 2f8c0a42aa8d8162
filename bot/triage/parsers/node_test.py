"""Failed tests from node's built-in test runner (`node --test`), TAP and spec reporters.

TAP (the default when output is not a terminal before node 23): `not ok N - name` lines
indented four spaces per nesting level, each with a YAML block holding `location`, `error`,
`failureType` and `stack`. A test's subtests come before its own result line. spec (the
default since node 23): `▶ suite` opens a group, `✖ name (1.2ms)` is a failure with its
error indented under it, and a closing `✖ failing tests:` section repeats each failure
after a `test at file:line:col` line, which is where the test's file comes from.

A parent that failed only because its subtests did is not reported: its failed subtests
are. A test cancelled because its parent failed is not reported either: the parent is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bot.triage.models import Failure
from bot.triage.parsers.actions_log import is_workflow_command
from bot.triage.parsers.js_stack import (
    Trace,
    chain_failure,
    is_frame,
    repo_path,
    tap_frame_location,
)
from bot.triage.parsers.paths import PathMap

FRAMEWORK = "node_test"

MARKER = re.compile(
    r"^\s*not ok \d+|^\s*\u2716 |^\s*\u2139 fail \d|^# fail \d|^test at |^TAP version"
)

_MAX_LINE = 4096
_MAX_MESSAGE_LINES = 5
_NOT_REPORTED = frozenset({"subtestsFailed", "cancelledByParent"})

# `ok 3 - name`; TAP also allows no number, no dash (`not ok 1 Resolve address`), no name.
_TAP_RESULT = re.compile(
    r"^(?P<indent> *)(?P<ok>not ok|ok)\b(?: (?P<number>\d+))?(?: -)?(?: (?P<rest>.*))?$"
)
_TAP_SUBTEST = re.compile(r"^(?P<indent> *)# Subtest: (?P<name>.*)$")
_DIRECTIVE = re.compile(r"(?<!\\) # (?:TODO|SKIP)\b.*$", re.IGNORECASE)
_YAML_KEY = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z_]\w*):(?: (?P<value>.*))?$")
_TAP_RECOGNISED = re.compile(r"^TAP version \d+|^# (?:tests|fail) \d+$")
_LOCATION = re.compile(r"^(?P<path>.+?):(?P<line>\d+)(?::\d+)?$")

_SPEC_LINE = re.compile(
    r"^(?P<indent> *)(?P<mark>[\u25b6\u2714\u2716\ufe63]) (?P<name>.*?)"
    r"(?P<duration> \(\d+(?:\.\d+)?m?s\))?(?P<directive> # (?:TODO|SKIP)\b.*)?$"
)
_SPEC_INFO = re.compile(r"^\s*\u2139 (?:tests|fail) \d+")
_SPEC_FAILING = re.compile(r"^\s*\u2716 failing tests:\s*$")
_SPEC_TEST_AT = re.compile(r"^\s*test at (?P<location>.+)$")
_GROUP, _PASS, _FAIL = "\u25b6", "\u2714", "\u2716"


@dataclass
class _Test:
    chain: list[str]
    location: str | None = None  # where the test is defined: names its file
    failure_type: str = ""
    error_class: str = ""  # the YAML `name`, e.g. AssertionError
    error: list[str] = field(default_factory=list)
    stack: list[tuple[str, int]] = field(default_factory=list)
    failed_children: list[_Test] = field(default_factory=list)


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1].replace('\\"', '"')
    return value


def _tap_name(rest: str) -> str:
    return _DIRECTIVE.sub("", rest).replace("\\#", "#").replace("\\\\", "\\").strip()


def _file_of(location: str | None, paths: PathMap) -> str | None:
    if not location:
        return None
    match = _LOCATION.match(location.strip())
    return repo_path(match.group("path") if match else location, paths)


def _to_failure(test: _Test, message: str, trace: Trace, paths: PathMap) -> Failure:
    file = _file_of(test.location, paths)
    # node < 20 wraps each file in a test named after its path: the file already leads the id.
    chain = [n for n in test.chain if not (file and repo_path(n, paths) == file)] or test.chain
    if trace.location() is None and test.location:
        match = _LOCATION.match(test.location.strip())
        if match:
            trace.add((match.group("path"), int(match.group("line"))))
    return chain_failure(FRAMEWORK, file, chain, message, trace)


def _first_lines(lines: Sequence[str]) -> str:
    kept: list[str] = []
    for line in lines:
        if is_frame(line) or len(kept) == _MAX_MESSAGE_LINES:
            break
        if line.strip():
            kept.append(line.strip())
    return "\n".join(kept)


# --- TAP --------------------------------------------------------------------------------------


class _Tap:
    def __init__(self) -> None:
        self.open: list[tuple[int, str]] = []  # `# Subtest:` names not yet closed by a result
        # Failed results per indent since their parent's `# Subtest:` line: the parent's
        # failed children once its own result arrives.
        self.failed_at: dict[int, list[_Test]] = {}
        self.tests: list[_Test] = []
        self.yaml_for: _Test | None = None
        self.yaml_indent = 0
        self.block_key: str | None = None
        self.block_indent = 0
        self.ran = 0  # results not skipped

    def feed(self, line: str) -> None:
        if self.yaml_for is not None:
            self.feed_yaml(self.yaml_for, line)
            return
        subtest = _TAP_SUBTEST.match(line)
        if subtest:
            indent = len(subtest.group("indent"))
            self.close_deeper(indent - 1)
            self.open.append((indent, _tap_name(subtest.group("name"))))
            self.failed_at[indent + 4] = []
            return
        result = _TAP_RESULT.match(line)
        if result is None:
            return
        indent = len(result.group("indent"))
        name = _tap_name(result.group("rest") or "") or f"test {result.group('number') or ''}"
        directive = _DIRECTIVE.search(result.group("rest") or "")
        self.close_deeper(indent)
        chain = [n for i, n in self.open if i < indent] + [name]
        if self.open and self.open[-1][0] == indent:
            self.open.pop()
        failed = result.group("ok") == "not ok" and directive is None
        self.ran += 1 if directive is None or "TODO" in directive.group().upper() else 0
        test = _Test(chain, failed_children=self.failed_at.pop(indent + 4, []))
        if failed:
            self.failed_at.setdefault(indent, []).append(test)
            self.tests.append(test)
        self.yaml_for, self.yaml_indent = test, indent + 2

    def close_deeper(self, indent: int) -> None:
        while self.open and self.open[-1][0] > indent:
            self.open.pop()

    def feed_yaml(self, test: _Test, line: str) -> None:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip(" "))
        if stripped == "---" and indent == self.yaml_indent:
            return
        if (stripped == "..." and indent == self.yaml_indent) or (
            stripped and indent < self.yaml_indent
        ):
            self.yaml_for = self.block_key = None
            if stripped != "...":
                self.feed(line)
            return
        if self.block_key is not None and (not stripped or indent > self.yaml_indent):
            self.feed_block(test, self.block_key, line[self.yaml_indent + 2 :])
            return
        self.block_key = None
        key = _YAML_KEY.match(line)
        if key is None or len(key.group("indent")) != self.yaml_indent:
            return
        name, value = key.group("key"), (key.group("value") or "").strip()
        if value.startswith(("|", ">")):
            self.block_key = name
        else:
            self.feed_block(test, name, _unquote(value))

    def feed_block(self, test: _Test, key: str, text: str) -> None:
        if key == "location":
            test.location = text
        elif key == "failureType":
            test.failure_type = text
        elif key in ("error", "message"):  # node's test runner; the TAP 13 specification
            test.error.append(text)
        elif key == "name":
            test.error_class = text
        elif key == "stack":
            location = tap_frame_location(text)
            if location is not None:
                test.stack.append(location)

    def failures(self, paths: PathMap) -> list[Failure]:
        found: list[Failure] = []
        reported: set[int] = set()
        # Children come before their parent, so each child is decided before its parent asks.
        for test in self.tests:
            if test.failure_type in _NOT_REPORTED or any(
                id(child) in reported for child in test.failed_children
            ):
                continue
            reported.add(id(test))
            trace = Trace(paths)
            for location in test.stack:
                trace.add(location)
            found.append(_to_failure(test, _tap_message(test), trace, paths))
        return found


def _tap_message(test: _Test) -> str:
    """The error's first lines, led by its class as the spec reporter would print it."""
    text = _first_lines(test.error)
    if test.error_class and text and not text.startswith(test.error_class):
        return f"{test.error_class}: {text}"
    return text


# --- spec -------------------------------------------------------------------------------------


@dataclass
class _SpecFailure:
    test: _Test
    lines: list[str] = field(default_factory=list)


class _Spec:
    def __init__(self) -> None:
        self.groups: list[tuple[int, str]] = []
        self.failed: list[_SpecFailure] = []
        self.current: _SpecFailure | None = None
        self.in_summary = False
        self.summary_location: str | None = None

    def feed(self, line: str) -> None:
        if _SPEC_FAILING.match(line):
            self.in_summary, self.current = True, None
            return
        at = _SPEC_TEST_AT.match(line)
        if at and self.in_summary:
            self.summary_location, self.current = at.group("location").strip(), None
            return
        spec = _SPEC_LINE.match(line)
        if spec is None:
            if self.current is not None:
                self.current.lines.append(line)
            return
        self.current = None
        if self.in_summary:
            if spec.group("mark") == _FAIL:
                self.summary_entry(spec.group("name"))
            return
        indent, name, mark = len(spec.group("indent")), spec.group("name"), spec.group("mark")
        while self.groups and self.groups[-1][0] > indent:
            self.groups.pop()
        if self.groups and self.groups[-1] == (indent, name) and spec.group("duration"):
            self.groups.pop()  # a suite's closing line
            return
        if mark == _GROUP and not spec.group("duration"):
            self.groups.append((indent, name))
        elif mark == _FAIL and not spec.group("directive"):
            chain = [n for i, n in self.groups if i < indent] + [name]
            self.current = _SpecFailure(_Test(chain))
            self.failed.append(self.current)

    def summary_entry(self, name: str) -> None:
        """Give the first failure of that name without a file its `test at` location."""
        location, self.summary_location = self.summary_location, None
        for failure in self.failed:
            if failure.test.chain[-1] == name and failure.test.location is None:
                failure.test.location = location
                return
        self.current = _SpecFailure(_Test([name], location=location))
        self.failed.append(self.current)

    def failures(self, paths: PathMap) -> list[Failure]:
        found: list[Failure] = []
        for failure in self.failed:
            trace = Trace(paths)
            trace.extend(failure.lines)
            found.append(_to_failure(failure.test, _first_lines(failure.lines), trace, paths))
        return found


def read_tap(lines: Iterable[str]) -> tuple[list[Failure], int]:
    """The failed tests of a TAP stream (a report file, nothing else in it), as the log's
    TAP is read, and how many results were not skipped."""
    tap = _Tap()
    for line in lines:
        tap.feed(line[:_MAX_LINE].rstrip())
    return tap.failures(PathMap()), tap.ran


def parse_node_test(lines: Sequence[str]) -> list[Failure]:
    """The tests node's test runner reports as failed, one Failure per test id."""
    tap, spec = _Tap(), _Spec()
    tap_seen = spec_seen = False
    for raw in lines:
        if is_workflow_command(raw):
            continue
        line = raw[:_MAX_LINE].rstrip()
        tap_seen = tap_seen or bool(_TAP_RECOGNISED.match(line))
        spec_seen = spec_seen or bool(_SPEC_INFO.match(line) or _SPEC_FAILING.match(line))
        tap.feed(line)
        spec.feed(line)
    paths = PathMap()
    found: dict[str, Failure] = {}
    for failure in (tap.failures(paths) if tap_seen else []) + (
        spec.failures(paths) if spec_seen else []
    ):
        found.setdefault(failure.test_id, failure)
    return list(found.values())
