"""What the sticky PR comment is rendered from."""

from __future__ import annotations

from pydantic import BaseModel, Field

from bot.triage.models import Decision


class CheckReport(BaseModel):
    """The triage of one failed check run (one job) and what the bot did about it."""

    check_name: str
    html_url: str
    head_sha: str
    attempt: int = 1  # the Actions run attempt this result comes from
    conclusion: str  # "failure", "timed_out", "success" (a rerun that passed)
    decisions: list[Decision] = Field(default_factory=list)
    rerun_note: str | None = None  # e.g. "rerun requested (attempt 2)", "passed on rerun"


class CommentInput(BaseModel):
    repo: str  # "owner/name"
    pr_number: int
    head_sha: str
    checks: list[CheckReport]  # results for the current head
    outdated: list[CheckReport] = Field(default_factory=list)  # results for older heads
