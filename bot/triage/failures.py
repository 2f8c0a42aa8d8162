"""Failed tests from a CI job log: clean it, then let every registered parser read it."""

from __future__ import annotations

from bot.triage.models import Failure
from bot.triage.parsers import PARSERS
from bot.triage.parsers.actions_log import clean_log

# Test runners print their summary and failure details at the end of a run, so on a huge
# log the tail is what matters; the head is mostly setup output.
MAX_LOG_CHARS = 8 * 1024 * 1024


def extract_failures(log: str) -> list[Failure]:
    """The failed tests named in a raw job log, one Failure per test id.

    Only the last MAX_LOG_CHARS characters (8 MiB of ASCII) are read, starting at the first
    full line inside that window, which bounds the work on a runaway log. When several
    parsers name the same test the first registered parser's reading is kept.
    """
    if len(log) > MAX_LOG_CHARS:
        tail = log[-MAX_LOG_CHARS:]
        log = tail[tail.find("\n") + 1 :]
    lines = clean_log(log)
    found: dict[str, Failure] = {}
    for parse in PARSERS.values():
        for failure in parse(lines):
            found.setdefault(failure.test_id, failure)
    return list(found.values())
