"""Rows the store hands out."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field

from bot.triage.models import Decision
from bot.triage.tracking import TrackingIssue as TrackingIssue  # the tracking decision reads it


class DeliveryState(StrEnum):
    PENDING = "pending"  # waiting (new, or retrying after a transient failure)
    CLAIMED = "claimed"  # a worker holds it until its lease ends
    DONE = "done"
    DEAD = "dead"  # dead-lettered after too many attempts or a permanent error


class Delivery(BaseModel):
    id: str  # X-GitHub-Delivery
    event: str
    action: str | None
    payload: bytes
    state: DeliveryState
    attempts: int
    received_at: float
    next_attempt_at: float
    last_error: str | None = None
    claim_token: str | None = None
    finished_at: float | None = None  # when it was done or dead-lettered


class CheckAttempt(BaseModel):
    """One completed attempt of one check run that the bot looked at."""

    repo: str
    pr_number: int
    head_sha: str
    check_name: str
    check_run_id: int
    html_url: str
    attempt: int
    conclusion: str
    decisions: list[Decision] = Field(default_factory=list)
    rerun_note: str | None = None
    recorded_at: float


class StickyComment(BaseModel):
    repo: str
    pr_number: int
    # None: written just before posting it, so that a crash between the post and saving its
    # id leaves a trace (GitHub is then searched for it), its id not known yet.
    comment_id: int | None
    body_sha: str  # hash of the last body we wrote, to skip identical edits


class TriageCheckRun(BaseModel):
    """The bot's own check run on one head, as last written."""

    repo: str
    head_sha: str
    pr_number: int
    check_run_id: int
    output_sha: str  # hash of the last title, summary and conclusion sent
    annotations: list[str] = Field(default_factory=list)  # keys of the annotations sent
