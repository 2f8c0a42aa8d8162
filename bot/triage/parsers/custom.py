"""Failed tests named by a repository's own regexes, for harnesses no parser knows.

`.github/flaky.yml` may list patterns such as `scenario (?P<test>[\\w-]+) failed` (a harness
printing `scenario captain-idle-wakeup failed`). Named groups: `test` (required), and
optionally `file`, `line`, `message`. The patterns come from the repository, so they are
untrusted, and so is the log: they run by RE2, in time linear in the line (see user_regex); a
pattern RE2 cannot run, or without `test`, is refused when the config is read; and each pattern
only ever sees the first MAX_LINE characters of a line.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from bot.triage.models import Failure
from bot.triage.parsers.actions_log import workflow_command
from bot.triage.parsers.paths import PathMap
from bot.triage.signature import signature
from bot.triage.user_regex import UserRegex, UserRegexError, compile_user

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
            compiled = compile_user(value)
        except UserRegexError as exc:
            raise ValueError(str(exc)) from None
        if "test" not in compiled.groupindex:
            raise ValueError("needs a named group `test`, e.g. (?P<test>[\\w-]+)")
        unknown = set(compiled.groupindex) - _GROUPS
        if unknown:
            raise ValueError(
                f"unknown named groups {sorted(unknown)}; allowed: test, file, line, message"
            )
        return value

    def compiled(self) -> UserRegex:
        return compile_user(self.regex)


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
            path = groups.get("file")
            file = paths.to_repo(path) if path else None
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
