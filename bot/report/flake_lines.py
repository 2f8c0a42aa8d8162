"""The run context, the not-comparable flag, where failures concentrate and the suspected
cause, in the words every page shows them (issue 28): plain text here; each page escapes it
for its own medium (markdown, HTML, a terminal).
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.report.markdown import escape_inline, shorten
from bot.report.models import IssueOccurrence
from bot.triage.comparable import duration, image_name
from bot.triage.concentration import Where
from bot.triage.flake_context import Explanation, FailedRun, explain
from bot.triage.run_context import RunContext, UsualDuration
from bot.triage.suspected_cause import SuspectedCause

FLAG = "\u26a0"  # ⚠, before a run that is not comparable
WHERE_LIMIT = 600
CAUSE_LIMIT = 1_200
_CELL_LIMIT = 240

JobKey = tuple[str, str, str, int]


def job_key(o: IssueOccurrence) -> JobKey:
    """The job run an occurrence failed in: a cluster's tests that failed in it are one row."""
    return (o.check_name, o.html_url, o.head_sha, o.attempt)


def explain_occurrences(
    occurrences: Sequence[IssueOccurrence],
    runs: Sequence[RunContext],
    usual: Sequence[UsualDuration],
) -> tuple[Explanation, dict[JobKey, str | None]]:
    """The explanation of a tracked test's failures, one failed run per job; with each job's
    not-comparable reason, by job."""
    jobs: dict[JobKey, IssueOccurrence] = {}
    for o in occurrences:
        jobs.setdefault(job_key(o), o)
    failed = [
        FailedRun(check_name=o.check_name, message=o.message, context=o.context)
        for o in jobs.values()
    ]
    explained = explain(failed, runs, usual)
    return explained, dict(zip(jobs, explained.not_comparable, strict=True))


def run_words(context: RunContext | None, usual: UsualDuration | None) -> str:
    """`Windows, windows-2022, 12 min (usual 9 min)`; "not recorded" without a context."""
    if context is None:
        return "not recorded"
    parts = [p for p in (context.runner_os, image_name(context)) if p]
    if not parts and context.labels:
        parts.append(", ".join(context.labels))
    if context.job_seconds is not None:
        took = duration(context.job_seconds)
        if usual is not None:
            took += f" (usual {duration(usual.median)})"
        parts.append(took)
    return ", ".join(parts) or "not recorded"


def flagged(words: str, reason: str | None) -> str:
    return f"{words} {FLAG} not comparable: {reason}" if reason else words


def run_cell(context: RunContext | None, usual: UsualDuration | None, reason: str | None) -> str:
    """The occurrence table's cell: the run, flagged when not comparable."""
    return escape_inline(shorten(flagged(run_words(context, usual), reason), _CELL_LIMIT))


def where_words(where: Where) -> str:
    if where.note:
        return where.note
    if not where.found:
        return (
            f"nowhere in particular: the {where.failures:,} failures spread like the "
            f"{where.runs:,} runs by platform, duration, attempt and workflow size"
        )
    return "; ".join(c.text for c in where.found)


def where_line(where: Where) -> str:
    words = escape_inline(shorten(where_words(where), WHERE_LIMIT))
    return f"**Where failures concentrate:** {words}."


def cause_words(cause: SuspectedCause) -> str:
    return f"Suspected cause: {cause.text}"


def cause_line(cause: SuspectedCause) -> str:
    """Named as suspected, with its confidence and every signal counted (or "unclear")."""
    return f"**Suspected cause:** {escape_inline(shorten(cause.text, CAUSE_LIMIT))}."


def usual_of(usual: Sequence[UsualDuration], check_name: str) -> UsualDuration | None:
    return next((u for u in usual if u.check_name == check_name), None)
