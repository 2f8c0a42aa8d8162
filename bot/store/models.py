"""Rows the store hands out."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field

from bot.report.models import RunHint
from bot.triage.models import Decision
from bot.triage.tracking import CLUSTER_PREFIX


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


class PullSummary(BaseModel):
    """A pull request as triage reads it: from GitHub's REST answer or a pull_request event."""

    number: int
    state: str
    author: str
    head_sha: str
    base_sha: str
    base_ref: str
    changed_files: int
    updated_at: float = 0.0  # GitHub's, in epoch seconds: orders what the store keeps


class StickyComment(BaseModel):
    repo: str
    pr_number: int
    comment_id: int
    body_sha: str  # hash of the last body we wrote, to skip identical edits


class RunRecord(BaseModel):
    """One completed check run, whatever its conclusion: the denominator of failure rates."""

    repo: str
    check_run_id: int
    check_name: str
    head_sha: str
    branch: str | None = None  # the head branch (the default branch for runs on it)
    pr_number: int | None = None  # None: not on a pull request (e.g. a push to main)
    author: str | None = None  # the PR's author
    attempt: int = 1
    conclusion: str
    completed_at: float
    html_url: str = ""


class Occurrence(BaseModel):
    """One failed test in one completed run."""

    repo: str
    check_run_id: int
    check_name: str
    test_key: str  # bot.triage.failures.match_key(test_id)
    test_id: str
    signature: str
    generic: bool  # a signature too generic to match failures on by itself
    location: str | None = None
    message: str = ""
    head_sha: str
    branch: str | None = None
    pr_number: int | None = None
    author: str | None = None
    attempt: int = 1
    at: float
    verdict: str  # the Verdict given at the time
    html_url: str = ""


class TrackingIssue(BaseModel):
    """The GitHub issue that tracks one flaky test, or one failure shared by many tests."""

    repo: str
    key: str  # the test's match key, or "cluster:<hash of the signature>"
    issue_number: int
    title: str  # the title the bot last gave it
    tests: list[str]  # test ids: one for a test, the members of a cluster
    signature: str = ""  # a cluster's shared signature
    checks: list[str] = Field(default_factory=list)  # checks it failed in
    hint: RunHint | None = None
    created_at: float  # when the issue was opened: the hourly cap counts the recent ones
    body_sha: str = ""  # hash of the bot's section last written, to skip identical edits
    closed_at: float | None = None  # when the bot last saw the issue closed; None: open

    @property
    def is_cluster(self) -> bool:
        return self.key.startswith(CLUSTER_PREFIX)
