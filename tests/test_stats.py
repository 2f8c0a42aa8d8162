"""Failure rates: Wilson intervals, flips between attempts, and the wording with denominators."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.triage.models import RunRate
from bot.triage.stats import Outcome, describe_flips, describe_rate, run_rate, wilson_interval


def test_twelve_of_twenty_reads_as_the_issue_says() -> None:
    outcomes = [Outcome(f"sha{i}", 1, i < 12, i) for i in range(20)]

    rate = run_rate(outcomes)

    assert (rate.failures, rate.runs) == (12, 20)
    assert describe_rate(rate) == "failed 12 of 20 runs (60 %, 95 % CI 39\u201378 %)"


@pytest.mark.parametrize(
    ("failures", "runs", "low", "high"),
    [(0, 10, 0.0, 0.2775), (10, 10, 0.7225, 1.0), (1, 2, 0.0945, 0.9055), (5, 100, 0.0215, 0.1118)],
)
def test_wilson_interval_matches_published_values(
    failures: int, runs: int, low: float, high: float
) -> None:
    assert wilson_interval(failures, runs) == pytest.approx((low, high), abs=5e-4)


def test_no_runs_is_no_knowledge() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize(("failures", "runs"), [(-1, 3), (4, 3), (0, -1)])
def test_impossible_counts_are_refused(failures: int, runs: int) -> None:
    with pytest.raises(ValueError, match="failures <= runs"):
        wilson_interval(failures, runs)


@given(st.integers(min_value=1, max_value=5000).flatmap(
    lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))
))  # fmt: skip
def test_the_interval_holds_the_observed_rate_inside_zero_one(counts: tuple[int, int]) -> None:
    failures, runs = counts
    low, high = wilson_interval(failures, runs)

    assert 0.0 <= low <= failures / runs <= high <= 1.0


def test_few_runs_give_counts_only_never_a_bare_percentage() -> None:
    rate = run_rate([Outcome("a", 1, True, 1), Outcome("b", 1, False, 2), Outcome("c", 1, True, 3)])

    assert describe_rate(rate) == "failed 2 of 3 runs"
    assert "%" not in describe_rate(rate)
    assert describe_rate(run_rate([Outcome("a", 1, True, 1)])) == "failed 1 of 1 run"


def test_each_run_counts_once_by_id() -> None:
    rate = run_rate([Outcome("a", 1, True, 7), Outcome("a", 1, True, 7), Outcome("b", 1, False, 8)])

    assert (rate.failures, rate.runs) == (1, 2)


def test_flips_count_pass_fail_changes_between_attempts_of_one_commit() -> None:
    outcomes = [
        # Commit a: fail, pass, fail -> 2 flips (given out of order).
        Outcome("a", 3, True, 3),
        Outcome("a", 1, True, 1),
        Outcome("a", 2, False, 2),
        # Commit b: fail, fail -> no flip, but it was run more than once.
        Outcome("b", 1, True, 4),
        Outcome("b", 2, True, 5),
        # Commit c: once -> not a denominator of flips.
        Outcome("c", 1, False, 6),
    ]

    rate = run_rate(outcomes)

    assert (rate.flips, rate.flip_commits) == (2, 2)
    assert describe_flips(rate) == (
        "flipped between pass and fail 2 times on 2 commits run more than once"
    )


def test_no_commit_run_twice_says_nothing_about_flips() -> None:
    assert describe_flips(RunRate(failures=1, runs=3, low=0.0, high=1.0)) is None
