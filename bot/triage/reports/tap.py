"""Failed tests from a TAP file (Test Anything Protocol, version 13 or 14, with YAML
diagnostics), read line by line as it arrives.

TAP is read as the node test runner's log parser reads it (`parsers/node_test.py`), so a run's
TAP file and its log agree: a test is its `# Subtest:` chain and its description (`test N`
when it has none), `# SKIP` and `# TODO` results are not failures, and a parent that failed
only because its subtests did is reported through them. The diagnostics' `error` or `message`
is the message, their `stack` and `location` say where. TAP names no file: a test's id is its
chain unless a diagnostic's `location` names one in the repository.

`Bail out!` stops the run (TAP 13 and 14): the producer ran no test after it, so the stream
ends there, as tap-parser ends it, and the report says it stopped (`bailed_out`): a stream that
bailed out before any test failed must not pass for a clean run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bot.triage.models import Failure
from bot.triage.parsers.node_test import read_tap

SOURCE = "tap"
FRAMEWORK = "tap"
# What a TAP stream opens with: its version, a plan, a result or a subtest's heading.
_START = re.compile(r"^(?:TAP version \d+|1\.\.\d+|(?:not )?ok\b|# Subtest: )", re.IGNORECASE)
# Indented in a subtest, as node-tap writes it before its top-level one.
_BAIL_OUT = re.compile(r"^\s*bail out!(?P<reason>.*)$", re.IGNORECASE)


def is_tap(line: str) -> bool:
    """True when `line`, a stream's first non-blank one, opens a TAP stream."""
    return _START.match(line.strip()) is not None


def bailed_out(line: str) -> str | None:
    """What a `Bail out!` line says of the run, or None for any other line."""
    found = _BAIL_OUT.match(line.rstrip())
    if found is None:
        return None
    reason = found.group("reason").strip()
    said = f" ({reason[:200]})" if reason else ""
    return f"the run bailed out{said}: no test ran after it"


def parse_tap(lines: Iterable[str]) -> tuple[list[Failure], int]:
    failures, ran = read_tap(lines)
    update = {"source": SOURCE, "framework": FRAMEWORK}
    return [failure.model_copy(update=update) for failure in failures], ran
