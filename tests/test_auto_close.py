"""When a tracking issue's test has been quiet long enough to close (pure), and what the
closing comment says."""

from __future__ import annotations

from bot.report.auto_close import close_comment
from bot.triage.auto_close import DAY, Quiet, lookback, quiet_enough
from bot.triage.models import Occurrence, RunRecord

NOW = 1_800_000_000.0
SINCE = NOW - 30 * DAY


def failure(days_ago: float) -> Occurrence:
    return Occurrence(
        repo="acme/bus",
        check_run_id=int(days_ago * 1000),
        check_name="tests",
        test_key="tests.a.test_a",
        test_id="tests/a.py::test_a",
        signature="AssertionError",
        generic=False,
        head_sha="a" * 40,
        at=NOW - days_ago * DAY,
        verdict="flaky",
    )


def run(days_ago: float, conclusion: str = "success") -> RunRecord:
    return RunRecord(
        repo="acme/bus",
        check_run_id=int(days_ago * 1000) + 1,
        check_name="tests",
        head_sha="b" * 40,
        conclusion=conclusion,
        completed_at=NOW - days_ago * DAY,
    )


def quiet(failures: list[Occurrence], runs: list[RunRecord], passes: int = 3) -> Quiet | None:
    return quiet_enough(passes=passes, days=7, failures=failures, runs=runs, since=SINCE, now=NOW)


def test_enough_passes_over_enough_days_since_the_last_failure_close() -> None:
    found = quiet([failure(10), failure(20)], [run(9), run(5), run(1), run(15)])

    assert found == Quiet(
        passes=3, runs=3, since=NOW - 10 * DAY, last_failure=NOW - 10 * DAY, now=NOW
    )
    assert round(found.days) == 10


def test_too_few_passes_or_too_few_days_keep_it_open() -> None:
    assert quiet([failure(10)], [run(9), run(5)]) is None  # 2 of 3 passes
    assert quiet([failure(6)], [run(5), run(4), run(3), run(2)]) is None  # 6 of 7 days


def test_only_whole_passes_after_the_last_failure_count() -> None:
    runs = [run(9), run(8, "failure"), run(7, "cancelled"), run(6), run(12), run(11)]
    assert quiet([failure(10)], runs) is None  # 2 passes after the failure, not 4

    found = quiet([failure(10)], [*runs, run(2)])
    assert found is not None and (found.passes, found.runs) == (3, 5)


def test_a_failure_or_a_run_after_now_is_not_seen_yet() -> None:
    # A delivery handled late decides as of its own time.
    found = quiet([failure(10), failure(-1)], [run(9), run(5), run(1), run(-2)])

    assert found is not None and found.last_failure == NOW - 10 * DAY and found.passes == 3


def test_with_no_failure_in_the_rows_passes_count_from_their_start() -> None:
    found = quiet([], [run(29), run(20), run(1), run(31)])

    assert found is not None
    assert (found.passes, found.since, found.last_failure) == (3, SINCE, None)


def test_lookback_covers_the_rule_or_the_history_window_whichever_is_longer() -> None:
    assert lookback(14, 30, NOW) == NOW - 30 * DAY
    assert lookback(60, 30, NOW) == NOW - 60 * DAY


def test_the_comment_gives_the_counts_the_rule_and_what_happens_next() -> None:
    found = quiet([failure(10)], [run(9), run(8, "failure"), run(5), run(1)])
    assert found is not None

    text = close_comment(found, ["tests (3.12)", "lint"], passes=3, days=7, reopen_days=14)

    assert text == (
        "No failure of this test in 4 runs of `tests (3.12)`, `lint` over the 10 days since "
        "it last failed (2027-01-05); 3 of them passed. Closing, as `auto_close` asks (3 "
        "passing runs over 7 days). If it fails again within 14 days, this issue is reopened."
    )
    assert "!" not in text


def test_the_comment_says_when_no_failure_was_in_the_rows_read() -> None:
    found = quiet([], [run(1)], passes=1)
    assert found is not None

    text = close_comment(found, ["tests"], passes=1, days=7, reopen_days=0)

    assert "over the 30 days since 2026-12-16 (no failure recorded since then); 1 of them" in text
    assert "1 run of" in text
    assert text.endswith("If it fails again, a new issue links this one.")
