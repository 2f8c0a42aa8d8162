"""Actions jobs as `workflow_job` webhooks describe them, passed or failed: the runner, its
labels and the attempt of every run, kept for the run's context (issue 28). No API call:
GitHub sends these to an App subscribed to the event (`app.yml`); without it a run's context
holds what the check run and the failed job's log say."""

from __future__ import annotations

import time

from gidgethub import routing, sansio

from bot.events import WorkflowJobEvent
from bot.github import api
from bot.github.client import GitHubClient
from bot.handlers.context import BotContext
from bot.triage.job_context import STAGES, JobRecord

router = routing.Router()


@router.register("workflow_job")
async def on_workflow_job(event: sansio.Event, gh: GitHubClient | None, ctx: BotContext) -> None:
    payload = WorkflowJobEvent.model_validate(event.data)
    job = payload.workflow_job
    stage = STAGES.get(job.status)
    if stage is None:
        return  # a status GitHub may add later: nothing known to keep
    await ctx.store.save_job(
        JobRecord(
            repo=payload.repository.full_name,
            check_run_id=job.check_run_id,
            run_id=job.run_id,
            run_attempt=job.run_attempt,
            workflow_name=job.workflow_name,
            job_name=job.name,
            runner_name=job.runner_name or None,
            runner_group_name=job.runner_group_name or None,
            labels=job.labels,
            started_at=api.epoch(job.started_at) or None,
            completed_at=api.epoch(job.completed_at) or None,
            conclusion=job.conclusion,
            stage=stage,
        ),
        time.time(),
    )
