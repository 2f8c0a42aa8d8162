"""The recorded runs a test's failures are explained against (flake_context.explain), read
the same bounded way for the tracking issue, the dashboard's test page and the PR comment,
so that each weighs the same runs. Store reads only: no call to GitHub."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import NamedTuple

from bot.store.base import Store
from bot.triage.run_context import RunContext, UsualDuration, usual_duration

# The runs of a test's checks in the window, newest first, and the base-branch runs each
# check's usual duration comes from: one query each, however many runs there are.
MAX_RUN_CONTEXTS = 2000
MAX_USUAL_RUNS = 200
# The failed jobs whose runs a PR's comment describes: a PR's own, so few; bounded all the same.
MAX_JOBS_DESCRIBED = 200


class RecordedRuns(NamedTuple):
    contexts: dict[int, RunContext]  # by check run id, newest first
    usual: list[UsualDuration]  # per check with a passing run on the default branch


async def recorded_runs(
    store: Store, repo: str, checks: Sequence[str], since: float
) -> RecordedRuns:
    """Every recorded run of `checks` since `since` (at most MAX_RUN_CONTEXTS) and each
    check's usual duration."""
    async with asyncio.TaskGroup() as tg:
        contexts = tg.create_task(store.run_contexts(repo, checks, since, MAX_RUN_CONTEXTS))
        usual = await usual_durations(store, repo, checks, since)
    return RecordedRuns(contexts.result(), usual)


async def runs_of_jobs(
    store: Store, repo: str, jobs: Sequence[tuple[int, str]], since: float
) -> RecordedRuns:
    """The recorded runs of `jobs` (check run id and check name; the newest
    MAX_JOBS_DESCRIBED) and the usual duration of their checks."""
    jobs = list(jobs)[-MAX_JOBS_DESCRIBED:]
    async with asyncio.TaskGroup() as tg:
        contexts = tg.create_task(store.contexts_of_runs(repo, [run_id for run_id, _ in jobs]))
        usual = await usual_durations(store, repo, [name for _, name in jobs], since)
    return RecordedRuns(contexts.result(), usual)


async def usual_durations(
    store: Store, repo: str, checks: Sequence[str], since: float
) -> list[UsualDuration]:
    """Each check's usual duration on the default branch (none for a check without a
    passing run there), one query per check, concurrently."""
    names = list(dict.fromkeys(checks))
    seconds = await asyncio.gather(
        *(store.usual_durations(repo, name, since, MAX_USUAL_RUNS) for name in names)
    )
    return [
        found
        for name, durations in zip(names, seconds, strict=True)
        if (found := usual_duration(name, durations)) is not None
    ]
