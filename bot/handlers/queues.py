"""Merge queue runs, recognised from what GitHub says, never from a branch's name alone.

GitHub runs a merge queue's checks on a temporary branch,
`gh-readonly-queue/{base}/pr-{n}-{sha}`, for the `merge_group` event; such a check run lists
no pull request. Anyone who can push a branch can give it that name, so the name only says
which runs to ask about: a run is a queue's when it lists no pull request and GitHub says
its Actions workflow run was started by `merge_group` on that branch (one call, for runs
whose branch has the shape only). A run of another CI app cannot be asked about this way:
it is triaged as an ordinary run.
"""

from __future__ import annotations

from bot.events import CheckRun
from bot.github import api
from bot.handlers.scope import Scope
from bot.triage.history import queue_branch

MERGE_GROUP_EVENT = "merge_group"


async def merge_queue_of(scope: Scope, run: CheckRun) -> str | None:
    """The queue whose group the run tested (`gh-readonly-queue/main`), or None when GitHub
    does not say it is a queue's run (module doc)."""
    base = run.queue_base
    if base is None or run.pull_requests or run.run_id is None or not run.is_actions:
        return None
    started = await api.workflow_event(scope.gh, scope.repo, run.run_id)
    branch = run.check_suite.head_branch if run.check_suite else None
    if started is None or started.event != MERGE_GROUP_EVENT or started.head_branch != branch:
        return None
    return queue_branch(base)
