"""Failed tests named by check-run annotations (the REST shape of
`GET /repos/{o}/{r}/check-runs/{id}/annotations`).

The rule: an annotation names a test when its level is "failure" or "warning" (some reporters
write failures as warnings), it points into the repository (not the runner's ".github"
pseudo-path), its message is not a generic "exit code 1", and either

- its title has a reporter's test shape: `name (Class) failed` / `... with error` (JUnit
  report publishers), `N out of M runs failed: name (Class)`, or `[Suite] name`; or
- it sits on a test file (by the usual naming conventions) and has a title, which is then
  the test's name.

Anything else (compiler errors, linters, the runner's own messages) is not a test.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from bot.triage.models import Failure
from bot.triage.parsers.paths import PathMap
from bot.triage.signature import is_generic, signature

SOURCE = "annotation"
FRAMEWORK = "annotation"

# Jest's separator between a file and its suites (U+203A, a single right angle quote).
_SEP = " \u203a "
_LEVELS = frozenset({"failure", "warning"})
_RUNNER_PATH = ".github"
_MAX_MESSAGE_LINES = 5
_MAX_TITLE = 500

_CLASS_FORM = re.compile(
    r"^(?:\d+ out of \d+ runs (?:failed|with error): )?"
    r"(?P<name>.+?) \((?P<cls>[^()\s]+)\)(?: failed| with error)?$"
)
_SUITE_FORM = re.compile(r"^\[(?P<suite>[^\]]+)\] (?P<name>.+)$")
_TEST_FILE = re.compile(
    r"(?:^|/)(?:test_[^/]*\.py|[^/]*_test\.(?:py|go)|[^/]*\.(?:test|spec)\.[cm]?[jt]sx?"
    r"|[^/]*Tests?\.(?:java|kt|cs|scala|php)|[^/]*_spec\.rb)$"
    r"|(?:^|/)(?:tests?|__tests__|spec)/"
)


def failures_from_annotations(
    annotations: Sequence[Mapping[str, Any]], generic_messages: Sequence[str] = ()
) -> list[Failure]:
    """One Failure per test the annotations name, in their order; the first naming wins.

    `generic_messages` are the repository's own regexes for messages that say nothing.
    """
    paths = PathMap()
    found: dict[str, Failure] = {}
    for annotation in annotations:
        failure = _failure(annotation, paths, generic_messages)
        if failure is not None:
            found.setdefault(failure.test_id, failure)
    return list(found.values())


def _failure(
    annotation: Mapping[str, Any], paths: PathMap, generic: Sequence[str]
) -> Failure | None:
    level = _text(annotation.get("annotation_level"))
    printed_path = _text(annotation.get("path"))
    title = _text(annotation.get("title")).strip()[:_MAX_TITLE]
    message = _message(_text(annotation.get("message")))
    if level not in _LEVELS or not printed_path or printed_path == _RUNNER_PATH:
        return None
    if is_generic(message, generic) and is_generic(title, generic):
        return None
    file = paths.to_repo(printed_path)
    test_id = name = ""
    shaped = _CLASS_FORM.match(title)
    suited = _SUITE_FORM.match(title)
    if shaped:
        name = shaped.group("name")
        test_id = f"{shaped.group('cls')}.{name}"
        # These publishers put the report's file name in the message, the error in the details.
        message = _details_message(_text(annotation.get("raw_details"))) or message
    elif suited:
        name = suited.group("name")
        test_id = f"{suited.group('suite')}{_SEP}{name}"
    elif title and file and _TEST_FILE.search(file) and not is_generic(title, generic):
        name = title
        test_id = f"{file}{_SEP}{title}"
    if not test_id:
        return None
    line = annotation.get("start_line")
    location = f"{file}:{line}" if file and isinstance(line, int) and line > 0 else None
    if is_generic(message, generic):
        message = ""
    return Failure(
        test_id=test_id,
        name=name,
        file=file,
        framework=FRAMEWORK,
        location=location,
        message=message,
        signature=signature(message),
        trace_paths=[file] if file else [],
        source=SOURCE,
    )


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _details_message(details: str) -> str:
    lines = [line.strip() for line in details.splitlines() if line.strip()]
    e_lines = [line[2:] for line in lines if line.startswith("E ")]
    return "\n".join((e_lines or lines)[:_MAX_MESSAGE_LINES])


def _message(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return "\n".join(lines[:_MAX_MESSAGE_LINES])
