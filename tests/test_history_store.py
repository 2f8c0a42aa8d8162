"""Run history on both stores: every completed run, the failed tests in it, and the lookups
that verdicts (history, base branch, rates) and tracking issues read."""

from __future__ import annotations

import asyncio

from bot.store import Store
from bot.triage.models import Occurrence, RunRecord

T0 = 1_700_000_000.0
REPO = "acme/bus"
DAY = 86_400.0


def _run(
    run_id: int,
    *,
    at: float = T0,
    check: str = "tests",
    sha: str = "a" * 40,
    conclusion: str = "failure",
    pr: int | None = 7,
    branch: str | None = "feature",
    attempt: int = 1,
) -> RunRecord:
    return RunRecord(
        repo=REPO,
        check_run_id=run_id,
        check_name=check,
        head_sha=sha,
        branch=branch,
        pr_number=pr,
        author="alice" if pr is not None else None,
        attempt=attempt,
        conclusion=conclusion,
        completed_at=at,
        html_url=f"https://github.com/{REPO}/runs/{run_id}",
    )


def _occurrence(run: RunRecord, key: str, signature: str = "AssertionError: boom") -> Occurrence:
    return Occurrence(
        repo=run.repo,
        check_run_id=run.check_run_id,
        check_name=run.check_name,
        test_key=key,
        test_id=key.replace(".", "/", 1) + "::t",
        signature=signature,
        generic=False,
        location="tests/test_a.py:3",
        message=signature,
        head_sha=run.head_sha,
        branch=run.branch,
        pr_number=run.pr_number,
        author=run.author,
        attempt=run.attempt,
        at=run.completed_at,
        verdict="unrelated",
        html_url=run.html_url,
    )


async def test_a_run_and_its_failures_read_back_as_recorded(store: Store) -> None:
    run = _run(1)
    failed = [_occurrence(run, "tests.test_a.t"), _occurrence(run, "tests.test_b.t", "Timeout")]
    await store.record_run(run, failed)

    assert await store.runs(REPO, "tests", T0) == [run]
    assert await store.runs_at(REPO, run.head_sha) == [run]
    found = await store.occurrences(REPO, ["tests.test_a.t", "tests.test_b.t"], T0)
    assert sorted(found, key=lambda o: o.test_key) == failed


async def test_recording_the_same_run_again_changes_nothing(store: Store) -> None:
    run = _run(1)
    await store.record_run(run, [_occurrence(run, "tests.test_a.t")])
    again = run.model_copy(update={"conclusion": "success", "completed_at": T0 + 60})
    await store.record_run(again, [_occurrence(again, "tests.test_other.t")])
    # Concurrent redeliveries too.
    await asyncio.gather(*(store.record_run(run, [_occurrence(run, "x.y")]) for _ in range(5)))

    assert await store.runs(REPO, "tests", 0) == [run]
    assert [o.test_key for o in await store.occurrences(REPO, ["tests.test_a.t", "x.y"], 0)] == [
        "tests.test_a.t"
    ]
    assert await store.occurrences(REPO, ["tests.test_other.t"], 0) == []


async def test_a_successful_run_is_kept_without_failures(store: Store) -> None:
    await store.record_run(_run(1, conclusion="success"), [])

    assert [r.conclusion for r in await store.runs(REPO, "tests", 0)] == ["success"]


async def test_occurrences_are_filtered_by_repo_key_and_window_newest_first(
    store: Store,
) -> None:
    old, mid, new = _run(1, at=T0 - 40 * DAY), _run(2, at=T0 - DAY), _run(3, at=T0)
    other_repo = _run(4).model_copy(update={"repo": "acme/other"})
    for run in (old, mid, new, other_repo):
        await store.record_run(run, [_occurrence(run, "k.a"), _occurrence(run, "k.b")])

    found = await store.occurrences(REPO, ["k.a", "k.a"], T0 - 30 * DAY)
    assert [(o.check_run_id, o.test_key) for o in found] == [(3, "k.a"), (2, "k.a")]
    assert await store.occurrences(REPO, [], 0) == []
    assert await store.occurrences(REPO, ["k.missing"], 0) == []


async def test_runs_are_per_check_and_window_newest_first(store: Store) -> None:
    runs = [
        _run(1, at=T0 - 2 * DAY),
        _run(2, at=T0, conclusion="success"),
        _run(3, at=T0 - DAY, check="lint"),
        _run(4, at=T0 - 90 * DAY),
    ]
    for run in runs:
        await store.record_run(run, [])

    assert [r.check_run_id for r in await store.runs(REPO, "tests", T0 - 30 * DAY)] == [2, 1]
    assert [r.check_run_id for r in await store.runs(REPO, "lint", 0)] == [3]


async def test_runs_at_lists_every_check_and_attempt_of_one_commit(store: Store) -> None:
    sha = "b" * 40
    await store.record_run(_run(1, sha=sha, at=T0), [])
    await store.record_run(_run(2, sha=sha, at=T0 + 60, attempt=2, conclusion="success"), [])
    await store.record_run(_run(3, sha=sha, at=T0 + 30, check="lint"), [])
    await store.record_run(_run(4, at=T0 + 90), [])

    assert [r.check_run_id for r in await store.runs_at(REPO, sha)] == [2, 3, 1]
    assert await store.runs_at(REPO, "c" * 40) == []


async def test_latest_branch_run_ignores_pull_request_runs_and_other_branches(
    store: Store,
) -> None:
    assert await store.latest_branch_run(REPO, "tests", "main") is None
    on_main = [_run(1, pr=None, branch="main", at=T0), _run(2, pr=None, branch="main", at=T0 + 5)]
    for run in on_main:
        await store.record_run(run, [])
    # Newer, but a PR's run (whose head branch happens to be called main), another branch,
    # another check.
    await store.record_run(_run(3, pr=9, branch="main", at=T0 + 10), [])
    await store.record_run(_run(4, pr=None, branch="release", at=T0 + 10), [])
    await store.record_run(_run(5, pr=None, branch="main", check="lint", at=T0 + 10), [])

    latest = await store.latest_branch_run(REPO, "tests", "main")
    assert latest == on_main[1]
