"""Failed tests from `go test -json`'s event stream (one JSON object a line).

A test's last `pass`/`fail` event decides; earlier ones are retries (gotestsum
--rerun-fails runs a test again in the same stream). A package that fails with no failed
test in it (a panic in init, a build failure, a timeout) is reported as the package.
Lines that are not events (build output mixed into the stream) are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from bot.triage.models import Failure
from bot.triage.parsers.paths import PathMap
from bot.triage.reports.fields import json_line
from bot.triage.reports.locations import choose
from bot.triage.reports.messages import head
from bot.triage.reports.reported import reported_failure, stated_seconds
from bot.triage.reports.traces import repo_frames

SOURCE = "go-json"
FRAMEWORK = "go"

# Output a test's events carry that is the framework's framing, not the test's own words: a
# benchmark's name alone on a line opens its output.
_FRAMING = re.compile(
    r"^\s*(?:=== (?:RUN|PAUSE|CONT|NAME)\b|--- (?:FAIL|PASS|SKIP):|FAIL$|PASS$"
    r"|ok\s|FAIL\t|exit status \d+$|Benchmark\S*$)"
)
_TERMINAL = frozenset({"pass", "fail"})
# Output kept per test: enough for a message and a panic's stack.
_MAX_OUTPUT_LINES = 200


@dataclass
class _Test:
    outcomes: list[str] = field(default_factory=list)
    output: list[str] = field(default_factory=list)
    seconds: float | None = None  # the last outcome's `Elapsed`

    def add_output(self, text: str) -> None:
        if len(self.output) < _MAX_OUTPUT_LINES:
            self.output.extend(text.splitlines())


def is_event(line: str) -> bool:
    """True when `line`, a stream's first non-blank one, is a go test event."""
    event = json_line(line)
    return event is not None and "Action" in event


def parse_go_json(lines: Iterable[str]) -> tuple[list[Failure], int]:
    """The failed tests (and failed packages without one) and the number of tests seen, read
    line by line as the stream arrives."""
    tests: dict[tuple[str, str], _Test] = {}
    packages: dict[str, _Test] = {}
    for line in lines:
        event = json_line(line)
        if event is None:
            continue
        package, test = event.get("Package"), event.get("Test")
        action, output = event.get("Action"), event.get("Output")
        if not isinstance(package, str) or not isinstance(action, str):
            continue
        if isinstance(test, str) and test:
            record = tests.setdefault((package, test), _Test())
        else:
            record = packages.setdefault(package, _Test())
        if action == "output" and isinstance(output, str):
            record.add_output(output)
        elif action in _TERMINAL:
            record.outcomes.append(action)
            record.seconds = stated_seconds(event.get("Elapsed"))
    failures = [
        _failure(f"{pkg}.{test}", test, record)
        for (pkg, test), record in tests.items()
        if "fail" in record.outcomes
    ]
    failed_packages = {pkg for (pkg, test), r in tests.items() if "fail" in r.outcomes}
    failures.extend(
        _failure(pkg, pkg, record)
        for pkg, record in packages.items()
        if record.outcomes[-1:] == ["fail"] and pkg not in failed_packages
    )
    return failures, sum(1 for record in tests.values() if record.outcomes)


def _failure(test_id: str, name: str, record: _Test) -> Failure:
    own = [line.strip() for line in record.output if line.strip() and not _FRAMING.match(line)]
    message = head("\n".join(own))
    output = "\n".join(record.output)
    frames = repo_frames(output, PathMap())
    # `t.Errorf` prints the test file's bare name (`store_test.go:41: ...`): kept as printed.
    found = choose(stack=frames, attribute=None, message="\n".join(own), stack_text=output)
    return reported_failure(
        test_id=test_id,
        name=name,
        framework=FRAMEWORK,
        source=SOURCE,
        message=message,
        found=found,
        frames=frames,
        attempts=(record.outcomes.count("fail"), len(record.outcomes)),
        seconds=record.seconds,
    )
