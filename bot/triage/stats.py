"""Failure rates with honest uncertainty: Wilson intervals, flips between attempts, wording.

A rate from three runs says little, so below MIN_RUNS_FOR_RATE runs only the counts are
given. The Wilson score interval is used rather than the normal approximation because it
stays inside 0..1 and behaves at 0 and n failures, where flaky tests live.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Container, Iterable
from typing import NamedTuple

from bot.triage.models import RunRate, RunRecord

Z_95 = 1.959963984540054  # the standard normal quantile for a two-sided 95 % interval
MIN_RUNS_FOR_RATE = 5
EN_DASH = "\u2013"


class Outcome(NamedTuple):
    """One run of a check as seen by one test: did the test fail in it?"""

    head_sha: str
    attempt: int
    failed: bool
    run_id: int


def outcomes_of(runs: Iterable[RunRecord], failed_run_ids: Container[int]) -> list[Outcome]:
    """Each recorded run as one test saw it: failed when its id is among `failed_run_ids`."""
    return [
        Outcome(run.head_sha, run.attempt, run.check_run_id in failed_run_ids, run.check_run_id)
        for run in runs
    ]


def wilson_interval(failures: int, runs: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval for `failures` out of `runs`; (0, 1) when there are none."""
    if runs < 0 or not 0 <= failures <= runs:
        raise ValueError(f"need 0 <= failures <= runs, got {failures} of {runs}")
    if runs == 0:
        return 0.0, 1.0
    p = failures / runs
    z2 = z * z
    denominator = 1 + z2 / runs
    centre = (p + z2 / (2 * runs)) / denominator
    half = z * math.sqrt(p * (1 - p) / runs + z2 / (4 * runs * runs)) / denominator
    # Rounding must not push the observed rate outside its own interval (0 or n failures).
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))


def run_rate(outcomes: Iterable[Outcome]) -> RunRate:
    """Failures over runs (each run once, by id), with flips between attempts of one commit.

    A flip is a change between failed and passed from one attempt of a commit to the next:
    the same code giving both answers.
    """
    unique = {outcome.run_id: outcome for outcome in outcomes}.values()
    failures = sum(1 for outcome in unique if outcome.failed)
    low, high = wilson_interval(failures, len(unique))
    by_commit: dict[str, list[Outcome]] = {}
    for outcome in unique:
        by_commit.setdefault(outcome.head_sha, []).append(outcome)
    flips = 0
    flip_commits = 0
    for attempts in by_commit.values():
        if len(attempts) < 2:
            continue
        flip_commits += 1
        ordered = sorted(attempts, key=lambda o: (o.attempt, o.run_id))
        flips += sum(1 for a, b in itertools.pairwise(ordered) if a.failed != b.failed)
    return RunRate(
        failures=failures,
        runs=len(unique),
        low=low,
        high=high,
        flips=flips,
        flip_commits=flip_commits,
    )


def describe_rate(rate: RunRate) -> str:
    """ "failed 12 of 20 runs (60 %, 95 % CI 39 to 78 %)" with an en dash for "to"; counts
    only below MIN_RUNS_FOR_RATE."""
    counts = f"failed {rate.failures:,} of {rate.runs:,} {_plural(rate.runs, 'run')}"
    if rate.runs < MIN_RUNS_FOR_RATE:
        return counts
    share = _percent(rate.failures / rate.runs)
    return f"{counts} ({share} %, 95 % CI {_percent(rate.low)}{EN_DASH}{_percent(rate.high)} %)"


def describe_flips(rate: RunRate) -> str | None:
    """ "flipped between pass and fail 3 times on 2 commits run more than once", or None."""
    if rate.flip_commits == 0:
        return None
    return (
        f"flipped between pass and fail {rate.flips:,} {_plural(rate.flips, 'time')} "
        f"on {rate.flip_commits:,} {_plural(rate.flip_commits, 'commit')} run more than once"
    )


def _percent(share: float) -> str:
    return f"{round(share * 100):d}"


def _plural(count: int, word: str) -> str:
    return word if count == 1 else word + "s"
