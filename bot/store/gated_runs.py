"""The CI time the gate saved by the quarantines on: the failed pull-request runs of their
tests, each run's recorded attempt (every failure in it, not only the quarantined test's) and
its job's duration, weighed by gate_savings. Store reads only: no call to GitHub."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import NamedTuple

from bot.store.base import Store
from bot.store.models import CheckAttempt
from bot.triage.gate import Triaged
from bot.triage.gate_savings import FailedAttempt, Savings, gate_savings
from bot.triage.quarantine import Quarantine

# The newest failed runs read: one query per (commit, check) among them, then one for all
# their durations.
MAX_GATED_RUNS = 200
# A failure is stored at its job's completion (GitHub's time, whole seconds) and weighed at
# the bot's triage, later: runs completed this long before `since` are read too, and
# gate_savings keeps those the bot recorded after it.
TRIAGE_DELAY = 86_400.0


class GatedRuns(NamedTuple):
    attempts: list[FailedAttempt]
    job_seconds: dict[int, float | None]  # by check run id: the job's duration, if recorded


def triaged(attempt: CheckAttempt) -> Triaged:
    """A recorded attempt as the gate weighs it."""
    return Triaged(
        check_name=attempt.check_name,
        check_run_id=attempt.check_run_id,
        attempt=attempt.attempt,
        conclusion=attempt.conclusion,
        decisions=attempt.decisions,
    )


async def saved_by_gate(store: Store, repo: str, on: Sequence[Quarantine], now: float) -> Savings:
    """The reruns the gate made unnecessary since each of these quarantines began."""
    since = min((q.since for q in on), default=now)
    runs = await gated_runs(store, repo, [q.test_key for q in on], since)
    return gate_savings(runs.attempts, on, runs.job_seconds)


async def gated_runs(store: Store, repo: str, test_keys: Sequence[str], since: float) -> GatedRuns:
    """The failed runs on pull requests of these tests since `since`, newest first (at most
    MAX_GATED_RUNS), with the attempts the bot recorded for them."""
    read = await store.occurrences(repo, test_keys, since - TRIAGE_DELAY)
    found = [o for o in read if o.pr_number]
    run_ids = list(dict.fromkeys(o.check_run_id for o in found))[:MAX_GATED_RUNS]
    heads = list(
        dict.fromkeys((o.head_sha, o.check_name) for o in found if o.check_run_id in run_ids)
    )
    async with asyncio.TaskGroup() as tg:
        contexts = tg.create_task(store.contexts_of_runs(repo, run_ids))
        recorded = await asyncio.gather(
            *(store.check_attempts_for(repo, sha, name) for sha, name in heads)
        )
    wanted = set(run_ids)
    attempts = [
        FailedAttempt(triaged=triaged(a), at=a.recorded_at)
        for each in recorded
        for a in each
        if a.check_run_id in wanted
    ]
    seconds = {run_id: c.job_seconds for run_id, c in contexts.result().items()}
    return GatedRuns(attempts, seconds)
