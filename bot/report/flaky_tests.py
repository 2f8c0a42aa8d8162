"""What the dashboard shows, computed from the recorded history: a pure function of it.

A test's failure rate is taken over the runs of the checks it failed in (a test that only
runs in `tests (3.12)` is not diluted by the lint job), counted once per run.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from pydantic import BaseModel, Field

from bot.triage.models import Occurrence, RunRate, RunRecord
from bot.triage.stats import Outcome, outcomes_of, run_rate

DAY = 86_400.0


class FailureMode(BaseModel):
    signature: str
    location: str | None
    message: str
    count: int
    last_seen: float


class TestSummary(BaseModel):
    """One test that failed in the window, with what ranks it."""

    test_key: str
    test_id: str  # the newest spelling seen
    failures: int
    prs: int  # distinct pull requests it failed on
    branches: list[str]  # branches outside PRs it failed on (e.g. main)
    first_seen: float
    last_seen: float
    rate: RunRate
    daily: list[int]  # failures per day over the window, oldest first
    modes: list[FailureMode] = Field(default_factory=list)
    tracking_issue: int | None = None
    # Its owners by CODEOWNERS as its tracking issue last named them (`@user`, `@org/team`,
    # an email); none without a tracking issue.
    owners: list[str] = Field(default_factory=list)


class RepoSummary(BaseModel):
    repo: str
    runs: int
    failed_tests: int
    last_run: float


def day_label(when: float) -> str:
    return datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%d")


def daily_counts(times: Sequence[float], now: float, days: int) -> list[int]:
    """How many of `times` fall on each of the last `days` days (UTC), oldest first."""
    today = _day_start(now)
    counts = [0] * days
    for when in times:
        back = int((today - _day_start(when)) // DAY)
        if 0 <= back < days:
            counts[days - 1 - back] += 1
    return counts


def summarise_tests(
    occurrences: Sequence[Occurrence],
    runs: Sequence[RunRecord],
    *,
    now: float,
    days: int = 30,
    tracking: dict[str, int] | None = None,
) -> list[TestSummary]:
    """Every test that failed since `now - days`, most harmful first: PRs hit, then failures,
    then the most recent."""
    since = now - days * DAY
    by_test: dict[str, list[Occurrence]] = {}
    for occurrence in occurrences:
        if occurrence.at >= since:
            by_test.setdefault(occurrence.test_key, []).append(occurrence)
    recent_runs = [run for run in runs if run.completed_at >= since]
    summaries = [
        _summary(key, found, recent_runs, now, days, (tracking or {}).get(key))
        for key, found in by_test.items()
    ]
    return sorted(summaries, key=lambda s: (-s.prs, -s.failures, -s.last_seen, s.test_id))


def owner_name(owner: str) -> str:
    """How an owner is shown and filtered by: without `@` (GitHub logins ignore case)."""
    return owner.removeprefix("@")


def owned_by(tests: Sequence[TestSummary], owner: str) -> list[TestSummary]:
    """The tests `owner` owns (`@octocat`, `octocat` or `@org/team`), in the same order."""
    wanted = owner_name(owner.strip()).casefold()
    return [t for t in tests if any(owner_name(o).casefold() == wanted for o in t.owners)]


def summarise_repos(
    runs: Sequence[RunRecord], occurrences: Sequence[Occurrence]
) -> list[RepoSummary]:
    repos: dict[str, RepoSummary] = {}
    for run in runs:
        known = repos.get(run.repo)
        repos[run.repo] = RepoSummary(
            repo=run.repo,
            runs=(known.runs if known else 0) + 1,
            failed_tests=0,
            last_run=max(run.completed_at, known.last_run if known else 0.0),
        )
    for repo in repos.values():
        repo.failed_tests = len({o.test_key for o in occurrences if o.repo == repo.repo})
    return sorted(repos.values(), key=lambda r: r.repo)


def _summary(
    key: str,
    found: list[Occurrence],
    runs: Sequence[RunRecord],
    now: float,
    days: int,
    tracking_issue: int | None,
) -> TestSummary:
    found.sort(key=lambda o: o.at, reverse=True)
    checks = {o.check_name for o in found}
    failed_runs = {o.check_run_id for o in found}
    outcomes = outcomes_of((run for run in runs if run.check_name in checks), failed_runs)
    # A failure whose run was not recorded (history kept from before) still counts.
    known_runs = {run.check_run_id for run in runs}
    outcomes += [
        Outcome(o.head_sha, o.attempt, True, o.check_run_id)
        for o in found
        if o.check_run_id not in known_runs
    ]
    return TestSummary(
        test_key=key,
        test_id=found[0].test_id,
        failures=len(failed_runs),
        prs=len({o.pr_number for o in found if o.pr_number is not None}),
        branches=sorted({o.branch for o in found if o.pr_number is None and o.branch}),
        first_seen=found[-1].at,
        last_seen=found[0].at,
        rate=run_rate(outcomes),
        daily=daily_counts([o.at for o in found], now, days),
        modes=_modes(found),
        tracking_issue=tracking_issue,
    )


def _modes(found: list[Occurrence]) -> list[FailureMode]:
    modes: dict[str, FailureMode] = {}
    for occurrence in found:  # newest first: the first seen of a mode is its latest
        mode = modes.get(occurrence.signature)
        if mode is None:
            modes[occurrence.signature] = FailureMode(
                signature=occurrence.signature,
                location=occurrence.location,
                message=occurrence.message,
                count=1,
                last_seen=occurrence.at,
            )
        else:
            mode.count += 1
    return sorted(modes.values(), key=lambda m: (-m.count, -m.last_seen))


def _day_start(when: float) -> float:
    return when - when % DAY
