"""Quarantine: a known flaky test whose failures stop blocking merges, for a while, in the open.

A quarantine names one test (by match key), the tracking issue that shows it, who decided
it, who owns it, and when it ends. It ends at its expiry (read lazily: an expired row is
simply not active), when someone ends it, or when its tracking issue is closed as fixed.
Deciding what an expiry argument means and whether a test earns an automatic quarantine is
here; the store keeps the rows and the handlers act.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from enum import StrEnum

from pydantic import BaseModel

from bot.triage.models import RunRate

DAY = 86_400.0
DEFAULT_DAYS = 14
REMIND_DAYS = 2  # the owner is told this long before a quarantine ends
DIGEST_DAYS = 7  # a quarantine's week on its issue, this often
MAX_DAYS = 365  # a quarantine is for a while: renewing it says someone still looks

_RELATIVE = re.compile(r"(?P<count>[1-9][0-9]{0,3})(?P<unit>[dw])$", re.IGNORECASE)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}$")
_UNIT_DAYS = {"d": 1, "w": 7}


class Source(StrEnum):
    """How a quarantine began."""

    COMMAND = "command"
    AUTO = "auto"


class Ended(StrEnum):
    """What ended a quarantine when no person did (its `ended_by`; else their login)."""

    EXPIRED = "expiry"
    FIXED = "flaky-triage (its tracking issue closed as fixed)"


class Quarantine(BaseModel):
    repo: str
    test_key: str  # the test's match key
    test_id: str  # as people read it
    issue_number: int | None  # the tracking issue that shows it
    by: str  # who quarantined it (the bot's name for an automatic one)
    owner: str  # who answers for it: CODEOWNERS' first owner, else `by`
    since: float
    expires_at: float
    source: Source = Source.COMMAND
    reason: str = ""
    ended_at: float | None = None
    ended_by: str | None = None
    reminded_at: float | None = None  # when its owner was told it ends soon
    digested_at: float | None = None  # when its last weekly digest was posted


def split_expiry(argument: str) -> tuple[str, str | None]:
    """`/flaky quarantine`'s argument as (test id, expiry): the last word is the expiry when
    it reads as one (`7d`, `2w`, `2026-12-31`), so `tests/a.py::t 7d` and `7d` both work."""
    rest, _, last = argument.strip().rpartition(" ")
    if _RELATIVE.match(last) or _DATE.match(last):
        return _unquote(rest.strip()), last
    return argument.strip(), None


def _unquote(text: str) -> str:
    for mark in ("`", '"', "'"):
        if len(text) >= 2 and text[0] == mark and text[-1] == mark:
            return text[1:-1].strip()
    return text


def expiry(word: str | None, now: float, default_days: int = DEFAULT_DAYS) -> float | str:
    """When a quarantine given `word` ends (the end of a date's day, UTC), or why `word` is
    no expiry: no word gives `default_days`; past dates and more than MAX_DAYS are refused."""
    if not word:
        return now + default_days * DAY
    relative = _RELATIVE.match(word)
    if relative is not None:
        days = int(relative["count"]) * _UNIT_DAYS[relative["unit"].lower()]
        at = now + days * DAY
    elif _DATE.match(word):
        try:
            day = datetime.strptime(word, "%Y-%m-%d").replace(tzinfo=UTC)
        except ValueError:
            return f"{word} is not a date"
        at = day.timestamp() + DAY
        if at <= now:
            return f"{word} is in the past"
    else:
        return f"{word} is not an expiry (7d, 2w or a date such as 2026-12-31)"
    if at - now > MAX_DAYS * DAY:
        return f"{word} is more than {MAX_DAYS} days away"
    return at


def owner_for(codeowners: list[str], by: str) -> str:
    """The quarantine's owner: the test file's first CODEOWNERS owner, else who decided it."""
    return codeowners[0] if codeowners else by


def earns_auto_quarantine(rate: RunRate, prs_hit: int, *, min_rate: float, min_prs: int) -> bool:
    """Both required: the Wilson interval's lower bound of the failure rate reaches
    `min_rate` (the rate is surely at least that high, not a short run's luck), and the
    failures hit `min_prs` different pull requests (not one PR's own breakage)."""
    return rate.runs > 0 and rate.low >= min_rate and prs_hit >= min_prs
