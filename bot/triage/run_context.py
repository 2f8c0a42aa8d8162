"""The context of one run of a test (issue 28): where, how long and in which attempt it ran.

Kept with every occurrence, failed and passed alike, so a tracking issue can say where
failures concentrate and flag a run that is not comparable with the others.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, Field


class RunContext(BaseModel):
    """What CI recorded about one job run; every field is None when it was not recorded."""

    runner_name: str | None = None  # "GitHub Actions 12", a self-hosted runner's name
    runner_os: str | None = None  # "Linux", "Windows", "macOS"
    runner_image: str | None = None  # "ubuntu-22.04 20240422.1.0", from the log's header
    labels: list[str] = Field(default_factory=list)  # the job's `runs-on` labels
    job_seconds: float | None = None  # the job's (check run's) duration
    # The bot's count of its check's runs on the commit, the attempt every page shows and
    # "all on attempt 1" counts; not GitHub's `run_attempt` (job_context.run_context says why).
    attempt: int = 1
    jobs_in_run: int | None = None  # jobs of the same workflow run (attempt) seen
    test_seconds: float | None = None  # the test's own duration, where a report gives it
    at: float | None = None  # when it completed (epoch seconds)
    # The check (job) it is a run of: a run is compared with the other runs of its own check.
    check_name: str | None = None


class UsualDuration(BaseModel):
    """How long a check's jobs usually take on the base branch: what "not comparable" is
    measured against."""

    check_name: str
    runs: int  # how many durations the figures come from
    median: float
    p90: float


def usual_duration(check_name: str, seconds: list[float]) -> UsualDuration | None:
    """The median and 90th percentile (nearest rank) of `seconds`; None without any."""
    if not seconds:
        return None
    ordered = sorted(seconds)

    def rank(q: float) -> float:
        return ordered[max(0, math.ceil(q * len(ordered)) - 1)]

    return UsualDuration(check_name=check_name, runs=len(ordered), median=rank(0.5), p90=rank(0.9))
