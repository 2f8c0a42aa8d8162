"""What a test's failed runs have in common: each run's comparability, where the failures
concentrate and the suspected cause, decided at once from the same record.

The tracking issue, the dashboard's test page and the PR comment all show this, so it is
decided here once (pure), not once per page.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from bot.triage.comparable import Peers, not_comparable
from bot.triage.concentration import Where, where_failures
from bot.triage.run_context import RunContext, UsualDuration
from bot.triage.suspected_cause import FailureText, SuspectedCause, suspect


class FailedRun(BaseModel):
    """One failed job run of the test (one row of its record)."""

    check_name: str
    message: str = ""
    context: RunContext | None = None  # None: not recorded


class Explanation(BaseModel):
    not_comparable: list[str | None]  # per failed run, in order: why it is not comparable
    where: Where
    cause: SuspectedCause


def explain(
    failed: Sequence[FailedRun], runs: Sequence[RunContext], usual: Sequence[UsualDuration]
) -> Explanation:
    """`runs`: every recorded run of the checks, failed and passed; `usual`: each check's
    usual duration on the base branch. A run that does not name its check is taken as a run
    of the failures' check when they all failed in one; otherwise it is compared with none."""
    checks = {f.check_name for f in failed}
    if len(checks) == 1:
        (only,) = checks
        runs = [r if r.check_name else r.model_copy(update={"check_name": only}) for r in runs]
    usual_of = {u.check_name: u for u in usual}
    by_check: dict[str | None, list[RunContext]] = {}
    for r in runs:
        by_check.setdefault(r.check_name, []).append(r)
    peers = {check: Peers.of(of_check) for check, of_check in by_check.items()}
    nobody = Peers.of(())
    contexts = [_of_check(f) for f in failed]
    flags = [
        None
        if context is None
        else not_comparable(context, usual_of.get(f.check_name), peers.get(f.check_name, nobody))
        for f, context in zip(failed, contexts, strict=True)
    ]
    where = where_failures([c for c in contexts if c is not None], runs, usual)
    texts = [
        FailureText(message=f.message, comparable=flag is None)
        for f, flag in zip(failed, flags, strict=True)
    ]
    return Explanation(not_comparable=flags, where=where, cause=suspect(texts, where))


def _of_check(failed: FailedRun) -> RunContext | None:
    """The run's context, naming its check when the record left that to the occurrence."""
    context = failed.context
    if context is None or context.check_name:
        return context
    return context.model_copy(update={"check_name": failed.check_name})
