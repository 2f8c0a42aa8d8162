"""The dashboard's data and pages, as pure functions of the recorded history."""

from __future__ import annotations

from defusedxml import ElementTree

from bot.report.dashboard import chart_days, render_index, render_repo, render_test
from bot.report.flaky_tests import daily_counts, summarise_repos, summarise_tests
from bot.report.svg import sparkline
from bot.triage.models import Occurrence, RunRecord

DAY = 86_400.0
NOW = 1_796_000_000.0  # 2026-11-30
REPO = "acme/shop"


def run(
    run_id: int,
    *,
    at: float,
    check: str = "tests",
    sha: str = "a" * 40,
    attempt: int = 1,
    conclusion: str = "failure",
    pr: int | None = 1,
) -> RunRecord:
    return RunRecord(
        repo=REPO,
        check_run_id=run_id,
        check_name=check,
        head_sha=sha,
        pr_number=pr,
        attempt=attempt,
        conclusion=conclusion,
        completed_at=at,
    )


def failure(
    run_id: int,
    key: str,
    *,
    at: float,
    pr: int | None = 1,
    signature: str = "sig",
    check: str = "tests",
    sha: str = "a" * 40,
    branch: str | None = None,
) -> Occurrence:
    return Occurrence(
        repo=REPO,
        check_run_id=run_id,
        check_name=check,
        test_key=key,
        test_id=key.replace(".", "/", 1),
        signature=signature,
        generic=False,
        location="tests/x.py:3",
        head_sha=sha,
        branch=branch,
        pr_number=pr,
        at=at,
        verdict="flaky",
    )


def test_daily_counts_put_each_failure_on_its_utc_day_oldest_first() -> None:
    times = [NOW, NOW - 60, NOW - DAY, NOW - 29 * DAY, NOW - 31 * DAY]

    counts = daily_counts(times, NOW, 30)

    assert len(counts) == 30
    assert counts[-1] == 2
    assert counts[-2] == 1
    assert counts[0] == 1
    assert sum(counts) == 4  # the one 31 days back is outside the window


def test_tests_rank_by_pull_requests_hit_then_failures() -> None:
    runs = [run(i, at=NOW - i * 3600, pr=i % 3 + 1) for i in range(1, 11)]
    occurrences = [
        failure(1, "tests.a", at=NOW - 3600, pr=2),
        failure(2, "tests.a", at=NOW - 7200, pr=3),
        failure(3, "tests.b", at=NOW - 3 * 3600, pr=1),
        failure(4, "tests.b", at=NOW - 4 * 3600, pr=1),
        failure(5, "tests.b", at=NOW - 5 * 3600, pr=1),
        failure(6, "tests.c", at=NOW - 40 * DAY, pr=9),  # outside the window
    ]

    tests = summarise_tests(occurrences, runs, now=NOW, days=30, tracking={"tests.b": 12})

    assert [t.test_key for t in tests] == ["tests.a", "tests.b"]
    first, second = tests
    assert (first.prs, first.failures, first.rate.runs) == (2, 2, 10)
    assert (second.prs, second.failures, second.tracking_issue) == (1, 3, 12)
    assert second.modes[0].count == 3


def test_a_test_is_rated_over_the_runs_of_its_own_checks_only() -> None:
    runs = [run(1, at=NOW), run(2, at=NOW, check="lint"), run(3, at=NOW, check="lint")]

    (test,) = summarise_tests([failure(1, "tests.a", at=NOW)], runs, now=NOW)

    assert (test.rate.failures, test.rate.runs) == (1, 1)


def test_failures_on_a_branch_are_named_and_not_counted_as_pull_requests() -> None:
    occurrences = [failure(1, "tests.a", at=NOW, pr=None, branch="main")]

    (test,) = summarise_tests(occurrences, [run(1, at=NOW, pr=None)], now=NOW)

    assert test.prs == 0
    assert test.branches == ["main"]


def test_repo_summary_counts_runs_and_failed_tests() -> None:
    runs = [run(1, at=NOW - 10), run(2, at=NOW)]

    (repo,) = summarise_repos(runs, [failure(1, "tests.a", at=NOW)])

    assert (repo.repo, repo.runs, repo.failed_tests, repo.last_run) == (REPO, 2, 1, NOW)


def test_a_hostile_test_name_is_escaped_on_every_page() -> None:
    hostile = "tests.<script>alert(1)</script>"
    occurrences = [failure(1, hostile, at=NOW)]
    runs = [run(1, at=NOW)]
    (test,) = summarise_tests(occurrences, runs, now=NOW)

    pages = [
        render_repo(REPO, [test], days=30),
        render_test(REPO, test, occurrences, chart_days(occurrences, runs, NOW, 30)),
    ]

    for html in pages:
        assert "<script>" not in html
        assert "&lt;script&gt;" in html


def test_repo_page_lists_tests_in_rank_order_with_a_sparkline_each() -> None:
    occurrences = [failure(1, "tests.a", at=NOW), failure(2, "tests.b", at=NOW, pr=2)]
    tests = summarise_tests(occurrences, [run(1, at=NOW), run(2, at=NOW, pr=2)], now=NOW)

    html = render_repo(REPO, tests, days=30)

    assert html.count('class="sparkline"') == 2
    assert html.index("tests/a") < html.index("tests/b")
    assert 'href="/acme/shop/tests/tests.a"' in html


def test_index_without_history_says_so() -> None:
    assert "No check runs recorded yet" in render_index([])


def test_sparkline_is_well_formed_svg_with_one_bar_per_day_and_a_label() -> None:
    svg = sparkline([0, 2, 0, 5], label="7 failures & more")

    root = ElementTree.fromstring(svg)
    assert root.get("aria-label") == "7 failures & more"
    assert len(root.findall("{http://www.w3.org/2000/svg}rect")) == 4


def test_chart_days_counts_failed_and_passed_runs_of_the_tests_checks() -> None:
    occurrences = [failure(1, "tests.a", at=NOW)]
    runs = [
        run(1, at=NOW),
        run(2, at=NOW, conclusion="success"),
        run(3, at=NOW - DAY),
        run(4, at=NOW, check="lint"),
    ]

    days = chart_days(occurrences, runs, NOW, 3)

    assert [(failed, passed) for _, failed, passed in days] == [(0, 0), (0, 1), (1, 1)]
