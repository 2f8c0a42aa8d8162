"""The comment the bot leaves when it closes a quiet tracking issue (`auto_close`)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.report.issue import day
from bot.report.markdown import code_span, shorten
from bot.triage.auto_close import Quiet


def close_comment(
    quiet: Quiet, checks: Sequence[str], *, passes: int, days: int, reopen_days: int
) -> str:
    """Why the issue is being closed, with the counts that show it, and what happens next."""
    names = ", ".join(code_span(shorten(name, 100)) for name in checks)
    when = (
        f"since it last failed ({day(quiet.since)})"
        if quiet.last_failure is not None
        else f"since {day(quiet.since)} (no failure recorded since then)"
    )
    runs = "run" if quiet.runs == 1 else "runs"
    span = int(quiet.days)
    reopen = (
        f"If it fails again within {reopen_days} days, this issue is reopened."
        if reopen_days
        else "If it fails again, a new issue links this one."
    )
    return (
        f"No failure of this test in {quiet.runs:,} {runs} of {names} over the "
        f"{span} {'day' if span == 1 else 'days'} {when}; {quiet.passes:,} of them passed. "
        f"Closing, as `auto_close` asks ({passes:,} passing runs over {days} days). {reopen}"
    )
