"""Store rows turned into what a verdict knows about each failed test (pure)."""

from __future__ import annotations

from bot.triage.failures import match_key
from bot.triage.history import ThisRun, contexts_for
from bot.triage.models import Failure, Occurrence, RunRecord

T0 = 1_700_000_000.0
TEST_ID = "tests/bus/test_core.py::test_publish"
KEY = match_key(TEST_ID)
BASE_SHA = "0" * 40
THIS = ThisRun(
    check_run_id=100,
    check_name="tests",
    head_sha="h" * 40,
    attempt=1,
    failed=True,
    pr_number=7,
    author="alice",
    base_sha=BASE_SHA,
    base_branch="main",
)


def failed(message: str = "AssertionError: no ack", signature: str | None = None) -> Failure:
    return Failure(
        test_id=TEST_ID,
        name="test_publish",
        framework="pytest",
        message=message,
        signature=message if signature is None else signature,
    )


def run(run_id: int, *, sha: str = "s" * 40, attempt: int = 1, conclusion: str = "failure",
        pr: int | None = 12, branch: str = "feature") -> RunRecord:  # fmt: skip
    return RunRecord(
        repo="acme/bus",
        check_run_id=run_id,
        check_name="tests",
        head_sha=sha,
        branch=branch,
        pr_number=pr,
        attempt=attempt,
        conclusion=conclusion,
        completed_at=T0 - run_id,
    )


def occurrence(
    of: RunRecord,
    *,
    author: str | None = "bob",
    signature: str = "AssertionError: no ack",
    generic: bool = False,
    verdict: str = "unrelated",
) -> Occurrence:
    return Occurrence(
        repo=of.repo,
        check_run_id=of.check_run_id,
        check_name=of.check_name,
        test_key=KEY,
        test_id=TEST_ID,
        signature=signature,
        generic=generic,
        head_sha=of.head_sha,
        branch=of.branch,
        pr_number=of.pr_number,
        author=author if of.pr_number is not None else None,
        attempt=of.attempt,
        at=of.completed_at,
        verdict=verdict,
    )


def test_history_counts_other_prs_by_other_authors_and_the_base_branch_only() -> None:
    other_pr, own_pr, same_author = run(1, pr=12), run(2, pr=7), run(3, pr=15)
    on_main, on_branch = run(4, pr=None, branch="main"), run(5, pr=None, branch="wip")
    rows = [
        occurrence(other_pr),
        occurrence(own_pr, author="alice"),
        occurrence(same_author, author="alice"),
        occurrence(on_main),
        occurrence(on_branch),
    ]

    (context,) = contexts_for(
        [failed()], THIS, occurrences=rows, runs=[], latest_base_run=None, disputes={}
    ).values()

    assert [(p.pr_number, p.branch) for p in context.history] == [(12, "feature"), (None, "main")]
    assert all(p.same_signature for p in context.history)


def test_a_different_signature_is_kept_but_not_the_same_failure() -> None:
    (context,) = contexts_for(
        [failed()],
        THIS,
        occurrences=[occurrence(run(1), signature="TimeoutError: 5 s")],
        runs=[],
        latest_base_run=None,
        disputes={},
    ).values()

    assert [p.same_signature for p in context.history] == [False]


def test_generic_signatures_never_match_on_their_own() -> None:
    generic_now = failed("Process completed with exit code 1.")
    rows = [occurrence(run(1), signature=generic_now.signature, generic=True)]

    (context,) = contexts_for(
        [generic_now], THIS, occurrences=rows, runs=[], latest_base_run=None, disputes={}
    ).values()
    (stored_generic,) = contexts_for(
        [failed()],
        THIS,
        occurrences=[occurrence(run(1), generic=True)],
        runs=[],
        latest_base_run=None,
        disputes={},
    ).values()

    assert [p.same_signature for p in context.history] == [False]
    assert [p.same_signature for p in stored_generic.history] == [False]


def test_failures_judged_related_at_the_time_are_not_history() -> None:
    (context,) = contexts_for(
        [failed()],
        THIS,
        occurrences=[occurrence(run(1), verdict="related")],
        runs=[],
        latest_base_run=None,
        disputes={},
    ).values()

    assert context.history == []


def test_rerun_outcomes_of_past_failures_come_from_later_attempts() -> None:
    first, rerun = run(1, sha="p" * 40), run(2, sha="p" * 40, attempt=2, conclusion="success")
    unrerun = run(3, sha="q" * 40)

    (context,) = contexts_for(
        [failed()],
        THIS,
        occurrences=[occurrence(first), occurrence(unrerun)],
        runs=[first, rerun, unrerun],
        latest_base_run=None,
        disputes={},
    ).values()

    assert {p.head_sha[0]: p.passed_on_rerun for p in context.history} == {"p": True, "q": None}


def test_the_same_failure_on_the_base_commit_or_latest_base_run_is_the_base_result() -> None:
    at_base = run(1, sha=BASE_SHA, pr=None, branch="main")
    latest = run(2, sha="m" * 40, pr=None, branch="main")

    (on_commit,) = contexts_for(
        [failed()], THIS, occurrences=[occurrence(at_base)], runs=[], latest_base_run=None,
        disputes={},
    ).values()  # fmt: skip
    (on_latest,) = contexts_for(
        [failed()], THIS, occurrences=[occurrence(latest)], runs=[], latest_base_run=latest,
        disputes={},
    ).values()  # fmt: skip
    (passing_latest,) = contexts_for(
        [failed()], THIS, occurrences=[occurrence(latest)], runs=[],
        latest_base_run=run(3, sha="n" * 40, pr=None, branch="main", conclusion="success"),
        disputes={},
    ).values()  # fmt: skip

    assert on_commit.base is not None
    assert (on_commit.base.where, on_commit.base.same_signature) == (
        "the base commit 0000000",
        True,
    )
    assert on_latest.base is not None
    assert on_latest.base.where == "the latest run of tests on main"
    assert passing_latest.base is None


def test_the_rate_counts_this_run_and_the_checks_recorded_runs() -> None:
    runs = [run(n, sha=f"{n}" * 40, conclusion="success") for n in range(1, 5)]
    runs += [run(5), run(6, conclusion="cancelled")]

    (context,) = contexts_for(
        [failed()],
        THIS,
        occurrences=[occurrence(runs[4])],
        runs=runs,
        latest_base_run=None,
        disputes={},
    ).values()
    (alone,) = contexts_for(
        [failed()], THIS, occurrences=[], runs=[], latest_base_run=None, disputes={}
    ).values()

    assert context.rate is not None
    assert (context.rate.failures, context.rate.runs) == (2, 6)
    assert alone.rate is None


def test_disputes_on_the_test_or_the_whole_pr_reach_it() -> None:
    (context,) = contexts_for(
        [failed()],
        THIS,
        occurrences=[],
        runs=[],
        latest_base_run=None,
        disputes={TEST_ID: ["carol"], "*": ["alice", "carol"], "other.test": ["dave"]},
    ).values()

    assert context.disputed_by == ["alice", "carol"]


def test_contexts_are_keyed_by_match_key() -> None:
    found = contexts_for(
        [failed()], THIS, occurrences=[], runs=[], latest_base_run=None, disputes={}
    )

    assert list(found) == [KEY] == ["tests.bus.test_core.test_publish"]
