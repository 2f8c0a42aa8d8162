"""Failed tests named by a repository's own regexes, for harnesses no parser knows.

`.github/flaky.yml` may list patterns such as `scenario (?P<test>[\\w-]+) failed` (a harness
printing `scenario captain-idle-wakeup failed`). Named groups: `test` (required), and
optionally `file`, `line`, `message`. The patterns come from the repository, so they are
untrusted: a pattern that does not compile, lacks `test`, or repeats a group that itself repeats
(`(a+)+`, the classic catastrophic-backtracking shape) is rejected when the config is read, and
each pattern only ever sees the first MAX_LINE characters of a line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from bot.triage.models import Failure
from bot.triage.parsers.actions_log import workflow_command
from bot.triage.parsers.paths import PathMap
from bot.triage.signature import signature

MAX_LINE = 1000
MAX_PATTERN = 500
_GROUPS = frozenset({"test", "file", "line", "message"})
# Commands whose text is the job's own output (`echo "::error::..."`); the rest are framing.
_OUTPUT_COMMANDS = frozenset({"error", "warning", "notice"})


class CustomPattern(BaseModel):
    """One `.github/flaky.yml` pattern: a regex whose `test` group names a failed test."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1, max_length=100)
    regex: str = Field(min_length=1, max_length=MAX_PATTERN)

    @field_validator("regex")
    @classmethod
    def _safe_regex(cls, value: str) -> str:
        try:
            compiled = re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from exc
        if "test" not in compiled.groupindex:
            raise ValueError("needs a named group `test`, e.g. (?P<test>[\\w-]+)")
        unknown = set(compiled.groupindex) - _GROUPS
        if unknown:
            raise ValueError(
                f"unknown named groups {sorted(unknown)}; allowed: test, file, line, message"
            )
        if _has_nested_quantifier(value):
            raise ValueError(
                "repeats a group that itself repeats, such as (a+)+: this can take "
                "exponential time on a long line; rewrite it without the nesting"
            )
        return value

    def compiled(self) -> re.Pattern[str]:
        return re.compile(self.regex)


def _has_nested_quantifier(regex: str) -> bool:
    """True when a group containing `*`, `+` or `{n,}` is itself followed by one of those."""
    stack: list[bool] = []  # per open group: does it contain an unbounded repeat?
    closed_repeats = False  # the group just closed contained one
    i = 0
    while i < len(regex):
        char = regex[i]
        if char == "\\":
            i += 2
            closed_repeats = False
            continue
        if char == "[":
            i = _skip_class(regex, i)
            closed_repeats = False
            continue
        repeat = _unbounded_at(regex, i)
        if repeat:
            if closed_repeats:
                return True
            if stack:
                stack[-1] = True
        elif char == "(":
            stack.append(False)
        elif char == ")" and stack:
            inner = stack.pop()
            if stack and inner:
                stack[-1] = True
            closed_repeats = inner
            i += 1
            continue
        closed_repeats = False
        i += 1
    return False


def _unbounded_at(regex: str, i: int) -> bool:
    if regex[i] in "*+":
        return True
    if regex[i] == "{":
        match = re.match(r"\{\d*,\d*\}", regex[i:])
        return match is not None and match.group(0).endswith(",}")
    return False


def _skip_class(regex: str, i: int) -> int:
    """The index after the character class opening at `i`."""
    j = i + 1
    if j < len(regex) and regex[j] == "^":
        j += 1
    if j < len(regex) and regex[j] == "]":
        j += 1
    while j < len(regex) and regex[j] != "]":
        j += 2 if regex[j] == "\\" else 1
    return j + 1


def parse_custom(lines: Sequence[str], patterns: Sequence[CustomPattern]) -> list[Failure]:
    """The tests the repository's patterns name, one Failure per test id, first line wins.

    `framework` is the pattern's name, so a report can say which harness failed.
    """
    compiled = [(p.name, p.compiled()) for p in patterns]
    paths = PathMap()
    found: dict[str, Failure] = {}
    for raw in lines:
        line = raw
        command = workflow_command(raw)
        if command is not None:
            if command[0] not in _OUTPUT_COMMANDS:
                continue
            line = command[1]
        line = line[:MAX_LINE]
        for name, regex in compiled:
            match = regex.search(line)
            if match is None:
                continue
            groups = match.groupdict()
            test = (groups.get("test") or "").strip()
            if not test or test in found:
                continue
            file = paths.to_repo(groups["file"]) if groups.get("file") else None
            line_no = groups.get("line")
            message = (groups.get("message") or line).strip()
            found[test] = Failure(
                test_id=test,
                name=test,
                file=file,
                framework=name,
                location=f"{file}:{line_no}" if file and line_no and line_no.isdigit() else None,
                message=message,
                signature=signature(message),
            )
    return list(found.values())
