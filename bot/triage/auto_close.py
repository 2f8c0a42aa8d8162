"""When a tracking issue's test has been quiet long enough to close the issue (`auto_close`).

Pure: the handler reads the rows, this decides. A pass counts only when the whole check
passed (conclusion `success`): a run that failed on other tests may have stopped before
this one ran. Any failure of the tracked tests counts against them, whatever its signature:
closing is the one thing the bot does that hides a test, so it errs towards keeping it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from bot.shared import GitHubIssue
from bot.triage.models import Occurrence, RunRecord

DAY = 86_400.0


@dataclass(frozen=True)
class Quiet:
    """The tracked tests' record since their last failure: enough to close the issue."""

    passes: int  # passing runs of the issue's checks since the last failure
    runs: int  # completed runs of those checks since then, whatever their conclusion
    since: float  # the last failure, or the start of the rows read when none is in them
    last_failure: float | None
    now: float

    @property
    def days(self) -> float:
        return (self.now - self.since) / DAY


def lookback(days: int, history_days: int, now: float) -> float:
    """How far back to read failures and runs: the rule's days, or the history window when
    it is longer, so that passes since a failure older than the rule's days still count."""
    return now - max(days, history_days) * DAY


def quiet_enough(
    *,
    passes: int,
    days: int,
    failures: Sequence[Occurrence],
    runs: Sequence[RunRecord],
    since: float,
    now: float,
) -> Quiet | None:
    """Whether `passes` passing runs over at least `days` days followed the last failure.

    `failures` and `runs` are the rows read from `since` on (runs of the issue's checks);
    rows after `now` (a delivery handled late) are left out.
    """
    last = max((o.at for o in failures if o.at <= now), default=None)
    start = since if last is None else last
    if now - start < days * DAY:
        return None
    after = [r for r in runs if start < r.completed_at <= now]
    passed = sum(1 for r in after if r.conclusion == "success")
    if passed < passes:
        return None
    return Quiet(passes=passed, runs=len(after), since=start, last_failure=last, now=now)


class Kept(StrEnum):
    """Why a quiet tracking issue is not closed."""

    GONE = "gone"  # deleted or transferred: the test's next failure starts a new issue
    CLOSED = "closed"  # people closed it already
    LOCKED = "locked"  # people who locked it have taken it in hand
    QUIETED = "quieted"  # people who gave it the quiet label have, too


def kept_open(issue: GitHubIssue | None, quiet_label: str) -> Kept | None:
    """Why the quiet issue, as GitHub shows it, is not to be closed; None when it is.
    Closing needs a comment saying why, which a locked or quieted issue is spared."""
    if issue is None:
        return Kept.GONE
    if issue.state == "closed":
        return Kept.CLOSED
    if issue.locked:
        return Kept.LOCKED
    if quiet_label in issue.labels:
        return Kept.QUIETED
    return None
