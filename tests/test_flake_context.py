"""Not-comparable runs, where failures concentrate and the suspected cause (issue 28).

The failure messages are real (tests/fixtures/flake_messages/INDEX.md); the run records are
built here, shaped as the jobs API and the log's header give them.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from bot.triage.comparable import Peers
from bot.triage.comparable import not_comparable as flag_of
from bot.triage.concentration import Dimension, fisher_greater, where_failures
from bot.triage.flake_context import FailedRun, explain
from bot.triage.flake_rules import Category
from bot.triage.models import Confidence
from bot.triage.run_context import RunContext, UsualDuration, usual_duration
from bot.triage.suspected_cause import FailureText, suspect

MESSAGES = Path(__file__).parent / "fixtures" / "flake_messages"
CHECK = "test (3.12)"
USUAL = UsualDuration(check_name=CHECK, runs=40, median=540.0, p90=600.0)


def not_comparable(
    mine: RunContext, usual: UsualDuration | None, peers: list[RunContext]
) -> str | None:
    return flag_of(mine, usual, Peers.of(peers))


def message(name: str) -> str:
    return (MESSAGES / name).read_text(encoding="utf-8")


def run(
    *,
    os: str = "Linux",
    label: str = "ubuntu-latest",
    image: str = "ubuntu-22.04 20240422.1.0",
    seconds: float = 540.0,
    attempt: int = 1,
    jobs: int | None = None,
) -> RunContext:
    return RunContext(
        runner_name="GitHub Actions 12",
        runner_os=os,
        runner_image=image,
        labels=[label],
        job_seconds=seconds,
        attempt=attempt,
        jobs_in_run=jobs,
        check_name=CHECK,
    )


def windows() -> RunContext:
    return run(os="Windows", label="windows-latest", image="windows-2022 20240421.1")


# --- not comparable ------------------------------------------------------------------------


def test_a_job_three_times_its_usual_length_is_not_comparable() -> None:
    peers = [run() for _ in range(10)]
    reason = not_comparable(run(seconds=1_860.0), USUAL, peers)
    assert reason == "took 31 min, 3.4 times the check's usual 9 min"
    assert not_comparable(run(seconds=1_600.0), USUAL, peers) is None


def test_a_usual_duration_from_few_runs_is_no_baseline() -> None:
    few = usual_duration(CHECK, [540.0, 560.0])
    assert few is not None
    assert not_comparable(run(seconds=5_000.0), few, []) is None


def test_another_runner_image_than_most_runs_is_not_comparable() -> None:
    peers = [run() for _ in range(9)] + [run(image="ubuntu-20.04 20240422.1.0")]
    reason = not_comparable(run(image="ubuntu-20.04 20240422.1.0"), USUAL, peers)
    assert reason == (
        "ran on runner image ubuntu-20.04, as 1 of 10 runs of the check did; 9 ran on ubuntu-22.04"
    )


def test_a_platform_a_quarter_of_the_runs_have_is_part_of_the_check_not_an_outlier() -> None:
    peers = [run() for _ in range(90)] + [windows() for _ in range(30)]
    assert not_comparable(windows(), USUAL, peers) is None


def test_a_newer_version_of_the_same_image_is_comparable() -> None:
    peers = [run() for _ in range(9)]
    assert not_comparable(run(image="ubuntu-22.04 20240501.2.0"), USUAL, peers) is None


def test_a_self_hosted_runner_among_hosted_ones_is_not_comparable() -> None:
    peers = [run() for _ in range(10)]
    mine = run().model_copy(update={"labels": ["self-hosted", "linux", "x64"]})
    reason = not_comparable(mine, USUAL, [*peers, mine])
    assert reason is not None
    assert reason == (
        "ran on kind of runner self-hosted, as 1 of 11 runs of the check did; 10 ran on "
        "GitHub-hosted"
    )


def test_without_enough_runs_to_say_what_most_run_on_nothing_is_flagged() -> None:
    peers = [run() for _ in range(3)]
    assert not_comparable(windows(), USUAL, peers) is None
    mixed = [run() for _ in range(5)] + [windows() for _ in range(5)]
    assert not_comparable(windows(), USUAL, mixed) is None  # no majority


# --- where failures concentrate ------------------------------------------------------------


def test_failures_all_on_one_platform_are_said_with_the_runs_beside_them() -> None:
    runs = [windows() for _ in range(30)] + [run() for _ in range(90)]
    failed = runs[:9]
    where = where_failures(failed, runs, [USUAL])
    platform = [c for c in where.found if c.dimension is Dimension.PLATFORM]
    assert [c.text for c in platform] == ["all 9 failures on windows-latest (30 of 120 runs)"]


def test_failures_in_slow_runs_are_said_against_the_checks_90th_percentile() -> None:
    slow = [run(seconds=700.0) for _ in range(12)]
    runs = slow + [run() for _ in range(108)]
    failed = slow[:7] + runs[-2:]
    where = where_failures(failed, runs, [USUAL])
    assert [c.text for c in where.found if c.dimension is Dimension.SLOW] == [
        "7 of 9 failures in runs slower than the check's 90th percentile (12 of 120 runs)"
    ]


def test_failures_all_on_the_first_attempt_are_said() -> None:
    firsts = [run() for _ in range(40)]
    runs = firsts + [run(attempt=2) for _ in range(40)]
    where = where_failures(firsts[:9], runs, [USUAL])
    assert [c.text for c in where.found if c.dimension is Dimension.ATTEMPT] == [
        "all 9 failures on attempt 1 (40 of 80 runs)"
    ]


def test_all_on_the_first_attempt_is_not_said_when_most_runs_are_first_attempts() -> None:
    # P = C(100,9) / C(130,9) = 0.09: nine first attempts out of these runs is no pattern.
    firsts = [run() for _ in range(100)]
    runs = firsts + [run(attempt=2) for _ in range(30)]
    assert where_failures(firsts[:9], runs, [USUAL]).found == []


def test_failures_in_large_workflow_runs_are_said() -> None:
    large = [run(jobs=24) for _ in range(20)]
    runs = large + [run(jobs=6) for _ in range(60)]
    where = where_failures(large[:6], runs, [USUAL])
    assert [c.text for c in where.found if c.dimension is Dimension.JOBS] == [
        "all 6 failures in workflow runs of more than 6 jobs (20 of 80 runs)"
    ]


def test_failures_spread_like_the_runs_concentrate_nowhere() -> None:
    runs = [windows() for _ in range(40)] + [run() for _ in range(80)]
    failed = runs[:3] + runs[40:46]  # 3 on Windows, 6 on Linux: as the runs are
    assert where_failures(failed, runs, [USUAL]).found == []


def test_most_failures_on_the_value_most_runs_have_is_no_concentration() -> None:
    runs = [run() for _ in range(118)] + [windows() for _ in range(2)]
    assert where_failures(runs[:9], runs, [USUAL]).found == []


def test_with_too_few_failures_there_are_not_enough_runs_to_say() -> None:
    runs = [windows() for _ in range(2)] + [run() for _ in range(100)]
    where = where_failures(runs[:2], runs, [USUAL])
    assert where.found == []
    assert where.note.startswith("not enough runs to say: 2 failed runs")


def test_without_other_runs_there_are_not_enough_runs_to_say() -> None:
    failed = [windows() for _ in range(5)]
    where = where_failures(failed, failed, [USUAL])
    assert where.note.startswith("not enough runs to say: 0 other runs")


def test_fisher_matches_the_hypergeometric_tail_by_hand() -> None:
    # 3 of 3 failures among the 30 Windows runs of 120: C(30,3) / C(120,3).
    assert abs(fisher_greater(3, 3, 30, 120) - 4060 / 280_840) < 1e-12
    assert abs(fisher_greater(0, 3, 30, 120) - 1) < 1e-9


# --- suspected cause -----------------------------------------------------------------------


def test_timeouts_in_every_failure_suspect_timing_with_high_confidence() -> None:
    texts = [FailureText(message=message("go_timeout_gocql.txt")) for _ in range(9)]
    cause = suspect(texts)
    assert cause.category is Category.TIMING
    assert cause.confidence is Confidence.HIGH
    assert cause.text == (
        "timing and asynchronous waits (confidence: high); signals: Go test timeout in "
        "9 of 9 failures (timing and asynchronous waits)"
    )


def test_races_and_refused_connections_together_are_unclear_with_both_counted() -> None:
    texts = [FailureText(message=message("go_race_apm_server.txt")) for _ in range(3)] + [
        FailureText(message=message("econnrefused_metamask.txt")) for _ in range(3)
    ]
    cause = suspect(texts)
    assert cause.category is None
    assert cause.text == (
        "unclear (the signals point to different causes); signals: data race detected in "
        "3 of 6 failures (concurrency (races, deadlocks)); connection refused in 3 of 6 "
        "failures (network)"
    )


def test_one_weak_hint_among_real_failures_is_unclear() -> None:
    texts = [
        FailureText(message=message("timestamp_sanctuary.txt")),
        FailureText(message="org.opentest4j.AssertionFailedError: expected: <1> but was: <28801>"),
    ]
    cause = suspect(texts)
    assert cause.category is None
    assert cause.why_unclear == "the signals are too weak"
    assert "timestamp in the assertion in 1 of 2 failures" in cause.text


def test_no_marker_at_all_is_unclear_and_says_so() -> None:
    cause = suspect([FailureText(message="AssertionError: assert 2 == 3")])
    assert cause.text == "unclear (no marker of a known cause in 1 failure message)"


def test_a_failure_from_a_run_not_comparable_weighs_half() -> None:
    timeout = message("go_timeout_gocql.txt")
    assert suspect([FailureText(message=timeout)]).category is Category.TIMING
    weighed = suspect([FailureText(message=timeout, comparable=False)])
    assert weighed.category is None
    assert weighed.why_unclear == "the signals are too weak"


def test_the_order_seed_and_a_reordered_list_in_one_failure_suspect_unordered_collections() -> None:
    cause = suspect([FailureText(message=message("rspec_seed_unordered_pie.txt"))] * 2)
    assert cause.category is Category.UNORDERED
    assert [s.name for s in cause.signals] == ["same items, other order", "shuffled order seed"]


def test_failures_on_one_platform_only_suspect_the_platform() -> None:
    runs = [windows() for _ in range(30)] + [run() for _ in range(90)]
    failed = [FailedRun(check_name=CHECK, message="AssertionError", context=r) for r in runs[:9]]
    explained = explain(failed, runs, [USUAL])
    assert explained.cause.category is Category.PLATFORM
    assert explained.cause.text == (
        "one platform only (confidence: high); signals: all 9 failures on windows-latest "
        "(30 of 120 runs)"
    )


def test_explain_flags_each_failed_run_against_its_own_checks_runs() -> None:
    other = "lint"
    runs = [run() for _ in range(20)] + [
        run().model_copy(update={"check_name": other, "runner_os": "macOS"}) for _ in range(20)
    ]
    slow = run(seconds=2_000.0).model_copy(update={"check_name": None})
    failed = [
        FailedRun(check_name=CHECK, message=message("go_timeout_gocql.txt"), context=slow),
        FailedRun(check_name=CHECK, message="", context=None),
    ]
    explained = explain(failed, runs, [USUAL])
    assert explained.not_comparable == ["took 33 min 20 s, 3.7 times the check's usual 9 min", None]
    assert explained.where.note.startswith("not enough runs to say: 1 failed run ")
    assert explained.cause.category is None  # its one timeout came from a run unlike the rest


@given(
    population=st.integers(1, 60),
    data=st.data(),
)
def test_fisher_is_the_exact_hypergeometric_tail(population: int, data: st.DataObject) -> None:
    successes = data.draw(st.integers(0, population))
    draws = data.draw(st.integers(0, population))
    hits = data.draw(st.integers(0, draws))
    exact = Fraction(
        sum(
            comb(successes, k) * comb(population - successes, draws - k)
            for k in range(hits, min(draws, successes) + 1)
        ),
        comb(population, draws),
    )
    assert abs(fisher_greater(hits, draws, successes, population) - float(exact)) < 1e-9


def test_runs_that_do_not_name_their_check_are_the_only_checks_runs() -> None:
    unnamed = [r.model_copy(update={"check_name": None}) for r in [run() for _ in range(40)]]
    odd = run(image="ubuntu-20.04 20240422.1.0").model_copy(update={"check_name": None})
    failed = [FailedRun(check_name=CHECK, message="", context=odd)]
    explained = explain(failed, [*unnamed, odd], [USUAL])
    assert explained.not_comparable == [
        "ran on runner image ubuntu-20.04, as 1 of 41 runs of the check did; 40 ran on ubuntu-22.04"
    ]
    two_checks = [*failed, FailedRun(check_name="lint", message="", context=None)]
    assert explain(two_checks, [*unnamed, odd], [USUAL]).not_comparable == [None, None]
