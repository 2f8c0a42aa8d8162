"""Failed tests from `dart test --reporter json` / `flutter test --machine` (one JSON event a
line, read line by line as it arrives).

A test is its suite's file and its name, split at its innermost group (`test/a_test.dart
\u203a Group Sub \u203a title`: Dart's names repeat their groups' names); two tests of one name
in a file are told apart by the line that declared them, which a retry keeps. A `loading
<file>` test that failed is the file failing to load (a compile error). A test done several
times (`--retry`) failed n of m; its last result decides.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from bot.triage.models import Failure
from bot.triage.parsers.paths import PathMap
from bot.triage.reports.fields import items, json_line, mapping, number, text
from bot.triage.reports.junit import TITLE_SEPARATOR
from bot.triage.reports.locations import choose, stated_path
from bot.triage.reports.messages import head
from bot.triage.reports.reported import reported_failure
from bot.triage.reports.traces import repo_frames

SOURCE = "dart-json"
FRAMEWORK = "dart"
_EVENTS = frozenset({"start", "suite", "testStart", "group", "allSuites", "debug"})
# Dart's stack frames: `test/a_test.dart 13:9  main.<fn>`; made `path:line` for repo_frames.
_DART_FRAME = re.compile(r"^(?P<path>\S+\.dart) (?P<line>\d+):\d+ ", re.MULTILINE)
# Frames of the SDK and of packages (`package:test_api/src/frontend/expect.dart 155:31`):
# never the repository's, though their paths look relative.
_NOT_REPO = re.compile(r"\(?(?<![\w./])(?:package|dart):[^\s)]*\)?")
_MAX_ERRORS = 20
_MAX_EXCEPTION = 16 * 1024
# Flutter's test binding prints the exception and its stack, then reports this error.
_FLUTTER_BANNER = "EXCEPTION CAUGHT BY"
_LOADING = "loading "
_SEE_ABOVE = "Test failed. See exception logs above."


@dataclass
class _Test:
    suite: str
    name: str
    group: str
    line: int  # where the suite's file declares the test; 0: not said
    results: list[str] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)
    exception: str = ""  # Flutter's `EXCEPTION CAUGHT BY` report, printed before its error
    hidden: bool = False


def is_dart_event(line: str) -> bool:
    """True when `line`, a stream's first non-blank one, is a Dart test runner event."""
    event = json_line(line)
    return event is not None and event.get("type") in _EVENTS


def parse_dart_json(lines: Iterable[str]) -> tuple[list[Failure], int]:
    suites: dict[int, str] = {}
    groups: dict[int, str] = {}
    by_id: dict[int, _Test] = {}
    tests: dict[tuple[str, str, int], _Test] = {}
    for line in lines:
        event = json_line(line)
        if event is None:
            continue
        kind = event.get("type")
        if kind == "suite":
            suite = mapping(event.get("suite"))
            suites[number(suite.get("id"))] = stated_path(text(suite.get("path"))) or ""
        elif kind == "group":
            group = mapping(event.get("group"))
            groups[number(group.get("id"))] = text(group.get("name"))
        elif kind == "testStart":
            test = mapping(event.get("test"))
            by_id[number(test.get("id"))] = _started(test, suites, groups, tests)
        else:
            _record(event, kind, by_id)
    failures = [_failure(t) for t in tests.values() if any(r != "success" for r in t.results)]
    return failures, sum(1 for t in tests.values() if t.results and not t.hidden)


def _started(
    test: dict[str, object],
    suites: dict[int, str],
    groups: dict[int, str],
    tests: dict[tuple[str, str, int], _Test],
) -> _Test:
    """The test a `testStart` event begins: a new one, or a retry of one seen before."""
    ids = [g for g in items(test.get("groupIDs")) if isinstance(g, int)]
    suite, name = suites.get(number(test.get("suiteID")), ""), text(test.get("name"))
    line = number(test.get("root_line")) or number(test.get("line"))
    group = groups.get(ids[-1], "") if ids else ""
    # `line` is in `url`'s file, which is a helper's when `root_line` names the suite's.
    declared = line if test.get("root_line") or _in_suite(text(test.get("url")), suite) else 0
    return tests.setdefault((suite, name, line), _Test(suite, name, group, declared))


def _in_suite(url: str, suite: str) -> bool:
    return bool(suite) and url.replace("\\", "/").endswith("/" + suite)


def _record(event: dict[str, object], kind: object, by_id: dict[int, _Test]) -> None:
    """An `error` or `testDone` event added to its test; a skipped test has no result."""
    test = by_id.get(number(event.get("testID")))
    if test is None:
        return
    message = text(event.get("message"))
    if kind == "print" and _FLUTTER_BANNER in message and not test.exception:
        test.exception = message[:_MAX_EXCEPTION]
    elif kind == "error" and len(test.errors) < _MAX_ERRORS:
        test.errors.append((text(event.get("error")), text(event.get("stackTrace"))))
    elif kind == "testDone" and event.get("skipped") is not True:
        test.results.append(text(event.get("result")) or "error")
        test.hidden = event.get("hidden") is True


def _chain(test: _Test) -> list[str]:
    """The test's innermost group and title below its file; none for the file's own
    `loading` test (the file did not compile or load)."""
    if test.name.startswith(_LOADING) and stated_path(test.name[len(_LOADING) :]) == test.suite:
        return []
    if test.group and test.name.startswith(f"{test.group} "):
        return [test.group, test.name.removeprefix(f"{test.group} ")]
    return [test.name]


def _failure(test: _Test) -> Failure:
    chain = _chain(test)
    error, stack = test.errors[0] if test.errors else ("", "")
    if test.exception and (error.startswith(_SEE_ABOVE) or not error):
        error = stack = test.exception.split("\n", 1)[-1]
    message = head(error)
    stack = _NOT_REPO.sub("", stack.replace("\\", "/").replace("file://", ""))
    stack = _DART_FRAME.sub(r"\g<path>:\g<line> ", stack)
    frames = repo_frames(stack, PathMap(), test.suite or None)
    declared = f"{test.suite}:{test.line}" if test.suite and test.line else None
    found = choose(stack=frames, attribute=declared, message=error, stack_text=stack)
    failed = sum(1 for r in test.results if r != "success")
    return reported_failure(
        test_id=TITLE_SEPARATOR.join(p for p in (test.suite, *chain) if p),
        name=TITLE_SEPARATOR.join(chain) or test.suite,
        file=test.suite or None,
        framework=FRAMEWORK,
        source=SOURCE,
        message=message,
        found=found,
        frames=frames,
        attempts=(failed, len(test.results)),
    )
