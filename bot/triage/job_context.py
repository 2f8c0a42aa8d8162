"""The context of one run, put together from what the bot kept of it: the check run it
recorded (its times, and the runner its failed job's log named) and the `workflow_job`
webhook GitHub sent for the same job (its runner, labels, attempt). Pure: the one place
that decides which source wins, whichever database the rows come from."""

from __future__ import annotations

from pydantic import BaseModel, Field

from bot.triage.models import RunRecord
from bot.triage.run_context import RunContext
from bot.triage.runner_header import os_of_labels

# How far a `workflow_job` delivery got: a later stage's fields are never replaced by an
# earlier one's, whatever order the deliveries are handled in.
STAGES = {"queued": 0, "waiting": 0, "in_progress": 1, "completed": 2}


class JobRecord(BaseModel):
    """One GitHub Actions job as its `workflow_job` webhooks described it."""

    repo: str
    check_run_id: int  # the check run of the job (on GitHub, the job's own id)
    run_id: int  # the workflow run
    run_attempt: int = 1  # absent from the oldest payloads: their runs had one attempt
    workflow_name: str | None = None
    job_name: str
    runner_name: str | None = None
    runner_group_name: str | None = None
    labels: list[str] = Field(default_factory=list)
    started_at: float | None = None
    completed_at: float | None = None
    conclusion: str | None = None
    stage: int = 0  # STAGES

    @property
    def seconds(self) -> float | None:
        if self.started_at is None or self.completed_at is None:
            return None
        return max(0.0, self.completed_at - self.started_at)


def run_context(run: RunRecord, job: JobRecord | None, jobs_in_run: int | None) -> RunContext:
    """Where and how long `run` ran. The job's webhook names the runner and labels of every
    run, passed ones too; the failed job's log adds the image and the system (and the name,
    when no webhook came); the system is read from the labels when the log said nothing.

    The attempt is the bot's count of the check's runs on the commit (`RunRecord.attempt`),
    never the webhook's `run_attempt`: it is the number every page shows (the PR comment's,
    the issue's and the dashboard's attempt columns) and the one that tells a pass on rerun,
    and it exists for every run, whichever CI made it and whether or not its `workflow_job`
    delivery came. The two agree wherever the bot saw each attempt of the check; they part
    when two workflow runs of one commit hold a job of the same name (a `push` and a
    `pull_request` run), or when the bot missed earlier attempts."""
    labels = job.labels if job is not None else []
    job_seconds = job.seconds if job is not None else None
    if job_seconds is None and run.started_at is not None:
        job_seconds = max(0.0, run.completed_at - run.started_at)
    return RunContext(
        runner_name=(job.runner_name if job is not None else None) or run.runner_name,
        runner_os=run.runner_os or os_of_labels(labels),
        runner_image=run.runner_image,
        labels=labels,
        job_seconds=job_seconds,
        attempt=run.attempt,
        jobs_in_run=jobs_in_run if job is not None else None,
        at=run.completed_at,
        check_name=run.check_name,
    )
