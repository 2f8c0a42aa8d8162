"""Where a test's failures concentrate, measured against every recorded run of its checks.

"9 of 9 failures on windows-latest" says little if 118 of the 120 runs were on
windows-latest too. So each candidate (a runner platform, runs slower than the check's 90th
percentile, the first attempt or a rerun, large workflow runs) is tested against all runs,
failed and passed: the one-sided Fisher exact test of the 2-by-2 table (failed or not, has the
value or not) asks how likely so many failures would share the value if failures fell on
runs at random. A concentration is said only when

- at least MIN_FAILURES failures and MIN_OTHER_RUNS other runs recorded their context (with
  fewer, any split is chance: "not enough runs to say"),
- at least MOST of the failures share the value, and
- the test's p-value is at most ALPHA.

Fisher's test is exact at the small counts a flaky test has, where a chi-squared test is not
valid; a share threshold alone would call any value most runs have a "concentration".
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel, Field

from bot.triage.comparable import MIN_USUAL_RUNS, image_name
from bot.triage.run_context import RunContext, UsualDuration

MIN_FAILURES = 3
MIN_OTHER_RUNS = 3
MOST = 0.75
ALPHA = 0.05


class Dimension(StrEnum):
    PLATFORM = "platform"
    SLOW = "slow"
    ATTEMPT = "attempt"
    JOBS = "jobs"


class Concentration(BaseModel):
    dimension: Dimension
    value: str  # the shared value, as the runner recorded it where it is one
    phrase: str  # "on windows-latest", "in runs slower than the check's 90th percentile"
    failures: int  # failures with the value
    of_failures: int  # failures whose run recorded this dimension
    runs: int  # runs with the value, failed and passed
    of_runs: int
    p_value: float

    @property
    def text(self) -> str:
        share = (
            f"all {self.failures:,} failures"
            if self.failures == self.of_failures
            else f"{self.failures:,} of {self.of_failures:,} failures"
        )
        return f"{share} {self.phrase} ({self.runs:,} of {self.of_runs:,} runs)"


class Where(BaseModel):
    """Where the failures concentrate; `note` says why nothing can be said, when so."""

    found: list[Concentration] = Field(default_factory=list)
    note: str = ""
    failures: int = 0  # failures whose run's context was recorded
    runs: int = 0


@dataclass(frozen=True)
class _Split:
    dimension: Dimension
    value_of: Callable[[RunContext], str | None]
    phrase: Callable[[str], str]


def where_failures(
    failed: Sequence[RunContext], runs: Sequence[RunContext], usual: Sequence[UsualDuration]
) -> Where:
    """Where `failed` (the failed runs' contexts) concentrate among `runs` (all of them)."""
    total = max(len(runs), len(failed))
    if len(failed) < MIN_FAILURES:
        return Where(
            note=f"not enough runs to say: {len(failed):,} failed "
            f"run{'' if len(failed) == 1 else 's'} with its context recorded, "
            f"{MIN_FAILURES} needed",
            failures=len(failed),
            runs=total,
        )
    if total - len(failed) < MIN_OTHER_RUNS:
        return Where(
            note=f"not enough runs to say: {total - len(failed):,} other runs recorded to "
            f"compare with, {MIN_OTHER_RUNS} needed",
            failures=len(failed),
            runs=total,
        )
    found: list[Concentration] = []
    for family in _families(runs, usual):
        candidates = [c for split in family for c in _concentrations(split, failed, runs)]
        if candidates:
            found.append(min(candidates, key=lambda c: (c.p_value, -c.failures)))
    return Where(found=found, failures=len(failed), runs=total)


def _families(runs: Sequence[RunContext], usual: Sequence[UsualDuration]) -> list[list[_Split]]:
    """The splits, grouped so that one family says one thing: a platform concentrates by its
    labels, its image and its OS at once, and is named once, by the most telling."""
    p90 = {u.check_name: u.p90 for u in usual if u.runs >= MIN_USUAL_RUNS}

    def slow(run: RunContext) -> str | None:
        limit = p90.get(run.check_name or "")
        if limit is None or run.job_seconds is None:
            return None
        return "slow" if run.job_seconds > limit else "usual"

    sizes = sorted(r.jobs_in_run for r in runs if r.jobs_in_run is not None)
    middle = sizes[len(sizes) // 2] if sizes else None

    def jobs(run: RunContext) -> str | None:
        if middle is None or run.jobs_in_run is None or middle == sizes[-1]:
            return None
        return "large" if run.jobs_in_run > middle else "small"

    return [
        [
            _Split(Dimension.PLATFORM, lambda r: ", ".join(r.labels) or None, "on {}".format),
            _Split(Dimension.PLATFORM, image_name, "on image {}".format),
            _Split(Dimension.PLATFORM, lambda r: r.runner_os, "on {}".format),
        ],
        [
            _Split(
                Dimension.SLOW,
                slow,
                lambda v: (
                    "in runs slower than the check's 90th percentile"
                    if v == "slow"
                    else "in runs no slower than the check's 90th percentile"
                ),
            )
        ],
        [
            _Split(
                Dimension.ATTEMPT,
                lambda r: "1" if r.attempt == 1 else "2+",
                lambda v: "on attempt 1" if v == "1" else "on reruns (attempt 2 or later)",
            )
        ],
        [
            _Split(
                Dimension.JOBS,
                jobs,
                lambda v: (
                    f"in workflow runs of more than {middle} jobs"
                    if v == "large"
                    else f"in workflow runs of {middle} jobs or fewer"
                ),
            )
        ],
    ]


def _concentrations(
    split: _Split, failed: Sequence[RunContext], runs: Sequence[RunContext]
) -> list[Concentration]:
    failing = [v for v in map(split.value_of, failed) if v is not None]
    every = Counter(v for v in map(split.value_of, runs) if v is not None)
    if len(failing) < MIN_FAILURES:
        return []
    of_runs = max(sum(every.values()), len(failing))
    if of_runs - len(failing) < MIN_OTHER_RUNS:
        return []
    found = []
    for value, count in Counter(failing).items():
        with_value = max(every[value], count)
        if count < MOST * len(failing) or with_value == of_runs:
            continue
        p = fisher_greater(count, len(failing), with_value, of_runs)
        if p <= ALPHA:
            found.append(
                Concentration(
                    dimension=split.dimension,
                    value=value,
                    phrase=split.phrase(value),
                    failures=count,
                    of_failures=len(failing),
                    runs=with_value,
                    of_runs=of_runs,
                    p_value=p,
                )
            )
    return found


def fisher_greater(hits: int, draws: int, successes: int, population: int) -> float:
    """P(X >= hits) for X hypergeometric: `draws` taken from `population` holding
    `successes`: the one-sided Fisher exact test's p-value."""
    top = min(draws, successes)
    if hits > top:
        return 0.0
    denominator = _log_comb(population, draws)
    return min(
        1.0,
        sum(
            math.exp(
                _log_comb(successes, k) + _log_comb(population - successes, draws - k) - denominator
            )
            for k in range(hits, top + 1)
            if draws - k <= population - successes
        ),
    )


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
