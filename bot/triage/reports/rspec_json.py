"""Failed examples from RSpec's JSON formatter (`--format json`).

An example is `spec/x_spec.rb \u203a full description`, as the RSpec log parser names it (a line
number moves with every edit, the description does not). A file that failed to load is
counted in `errors_outside_of_examples_count` and told in `messages`: it is reported as a
failure of that file. The formatter writes no retries (rspec-retry's tries are not in it).
"""

from __future__ import annotations

import re
from typing import TypeGuard

from bot.triage.models import Failure
from bot.triage.parsers.paths import PathMap
from bot.triage.reports.fields import count, dicts, mapping, number, strings, text
from bot.triage.reports.junit import TITLE_SEPARATOR
from bot.triage.reports.locations import choose, stated_path
from bot.triage.reports.messages import head
from bot.triage.reports.reported import reported_failure
from bot.triage.reports.traces import repo_frames

SOURCE = "rspec-json"
FRAMEWORK = "rspec"
_LOAD_ERROR = re.compile(r"An error occurred while loading (?P<file>\S+)\.?\n(?P<rest>.*)", re.S)


def is_rspec_json(document: object) -> TypeGuard[dict[str, object]]:
    return (
        isinstance(document, dict)
        and isinstance(document.get("examples"), list)
        and isinstance(document.get("summary"), dict)
    )


def parse_rspec_json(document: dict[str, object]) -> tuple[list[Failure], int]:
    examples = dicts(document.get("examples"))
    failures = [_failure(e) for e in examples if e.get("status") == "failed"]
    if number(mapping(document.get("summary")).get("errors_outside_of_examples_count")):
        failures.extend(_load_error(m) for m in strings(document.get("messages")) if _is_load(m))
    ran = sum(1 for e in examples if e.get("status") in ("passed", "failed"))
    return failures, ran


def rspec_counted(document: dict[str, object]) -> int | None:
    """The failed examples and the files that failed to load, as the summary counts them."""
    summary = mapping(document.get("summary"))
    counted = [count(summary.get(k)) for k in ("failure_count", "errors_outside_of_examples_count")]
    known = [c for c in counted if c is not None]
    return sum(known) if known else None


def _is_load(message: str) -> bool:
    return _LOAD_ERROR.search(message) is not None


def _load_error(message: str) -> Failure:
    match = _LOAD_ERROR.search(message)
    assert match is not None  # _is_load chose it
    file = stated_path(match.group("file").rstrip(".")) or match.group("file")
    return _made(file, file, file, head(match.group("rest")), match.group("rest"))


def _failure(example: dict[str, object]) -> Failure:
    printed = text(example.get("file_path"))
    file = stated_path(printed) if printed else None
    described = text(example.get("full_description")) or text(example.get("description"))
    exception = mapping(example.get("exception"))
    message = head(text(exception.get("message")))
    name = text(exception.get("class"))
    if name and not message.startswith(name):
        message = f"{name}: {message}" if message else name
    backtrace = "\n".join(strings(exception.get("backtrace")))
    test_id = TITLE_SEPARATOR.join(p for p in (file, described) if p)
    line = number(example.get("line_number"))
    declared = f"{file}:{line}" if file and line else None
    return _made(test_id, described, file, message, backtrace, declared)


def _made(
    test_id: str,
    name: str,
    file: str | None,
    message: str,
    trace: str,
    declared: str | None = None,
) -> Failure:
    """`declared`: the example's own line (`line_number`), what identifies it."""
    frames = repo_frames(trace, PathMap(), file)
    found = choose(stack=frames, attribute=declared, message=message, stack_text=trace)
    return reported_failure(
        test_id=test_id,
        name=name,
        file=file,
        framework=FRAMEWORK,
        source=SOURCE,
        message=message,
        found=found,
        frames=frames,
    )
