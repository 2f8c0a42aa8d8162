"""What the store answers about reruns and `/flaky` commands."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel

DAY_SECONDS = 24 * 3600.0
HOUR_SECONDS = 3600.0


class RerunLimit(StrEnum):
    PER_CHECK = "per-check"  # max_reruns per (head SHA, check) reached
    PER_PR_DAY = "per-pr-day"  # max_reruns_per_pr_per_day reached


class RerunGrant(BaseModel):
    """The answer to a rerun reservation.

    Granted: a new reservation, or an earlier one for the same job whose request never got an
    answer (a crash between asking GitHub and recording its answer). Not granted: a budget is
    spent (`limit`), or this job's rerun was already asked for and answered (`status`).
    """

    granted: bool
    limit: RerunLimit | None = None
    status: int = 0  # GitHub's answer to the earlier request for this job
    # Granted again: an earlier request for this job has no recorded answer, so it may have
    # reached GitHub before the process died. Look before asking twice.
    resumed: bool = False


class CommandClaim(StrEnum):
    ACT = "act"  # a new comment, or this delivery's retry of one it has not finished
    LIMITED = "limited"  # the same, but over the person's commands per hour on this PR
    LIMITED_IN_REPO = "limited-in-repo"  # over the person's per hour on all the repo's PRs
    HANDLED = "handled"  # finished, or taken by another delivery of the same comment


class Refusals(BaseModel):
    """How many `/flaky` comments were refused in the hour before one more was."""

    by_login: int  # given by the same person, on any PR of the repository
    on_pr: int  # given by anyone
