"""Tracking-issue records on both stores: one per key, members linked, the hourly count."""

from __future__ import annotations

import asyncio

from bot.store import Store
from bot.store.models import TrackingIssue
from bot.triage.models import RunHint

T0 = 1_700_000_000.0
REPO = "acme/bus"


def record(
    key: str, number: int, *, tests: list[str] | None = None, at: float = T0
) -> TrackingIssue:
    return TrackingIssue(
        repo=REPO,
        key=key,
        issue_number=number,
        title=f"Flaky test: {key}",
        tests=tests or [key],
        checks=["tests (3.12)"],
        hint=RunHint(
            framework="pytest",
            file="tests/test_a.py",
            name="test_a",
            test_id="tests/test_a.py::test_a",
        ),
        created_at=at,
        body_sha="abc",
    )


async def test_saved_record_reads_back_by_key_and_by_number(store: Store) -> None:
    saved = record("tests.test_a.test_a", 12)
    await store.save_tracking_issue(saved)

    assert await store.tracking_issue(REPO, "tests.test_a.test_a") == saved
    assert await store.tracking_issue_numbered(REPO, 12) == saved
    assert await store.tracking_issue(REPO, "tests.test_b.test_b") is None
    assert await store.tracking_issue("other/repo", "tests.test_a.test_a") is None
    assert await store.tracking_issue_numbered(REPO, 13) is None


async def test_saving_the_same_key_again_replaces_the_record(store: Store) -> None:
    await store.save_tracking_issue(record("k", 12))
    newer = record("k", 20, at=T0 + 100).model_copy(update={"body_sha": "def", "hint": None})
    await store.save_tracking_issue(newer)

    assert await store.tracking_issue(REPO, "k") == newer
    assert await store.tracking_numbers(REPO, ["k"]) == {"k": 20}


async def test_a_cluster_links_each_member_test_and_follows_its_members(store: Store) -> None:
    tests = ["tests/a.py::test_one", "tests/a.py::test_two", "tests/b.py::test_three"]
    await store.save_tracking_issue(record("cluster:1a2b", 30, tests=tests))
    await store.save_tracking_issue(record("tests.c.test_four", 31))

    numbers = await store.tracking_numbers(
        REPO, ["tests.a.test_one", "tests.b.test_three", "tests.c.test_four", "unknown"]
    )
    assert numbers == {"tests.a.test_one": 30, "tests.b.test_three": 30, "tests.c.test_four": 31}

    # The cluster narrows: the test that left it is no longer linked to it.
    await store.save_tracking_issue(record("cluster:1a2b", 30, tests=tests[:2]))
    assert await store.tracking_numbers(REPO, ["tests.b.test_three", "tests.a.test_two"]) == {
        "tests.a.test_two": 30
    }
    assert await store.tracking_numbers(REPO, []) == {}


async def test_created_since_counts_recent_records_of_the_repository(store: Store) -> None:
    for n, at in enumerate([T0 - 4000, T0 - 3000, T0 - 10, T0]):
        await store.save_tracking_issue(record(f"k{n}", 40 + n, at=at))
    await store.save_tracking_issue(record("k9", 50, at=T0).model_copy(update={"repo": "x/y"}))

    assert await store.tracking_created_since(REPO, T0 - 3600) == 3
    assert await store.tracking_created_since(REPO, T0 + 1) == 0


async def test_tracking_lock_lets_one_holder_in_at_a_time(store: Store) -> None:
    inside = 0
    most = 0

    async def hold() -> None:
        nonlocal inside, most
        async with store.tracking_lock(REPO):
            inside += 1
            most = max(most, inside)
            await asyncio.sleep(0.02)
            inside -= 1

    await asyncio.gather(*(hold() for _ in range(4)))

    assert most == 1


async def test_open_records_of_a_check_are_listed_for_auto_close(store: Store) -> None:
    await store.save_tracking_issue(record("k.late", 40))
    await store.save_tracking_issue(record("k.early", 12))
    await store.save_tracking_issue(record("k.closed", 13).model_copy(update={"closed_at": T0}))
    other_check = record("k.lint", 14).model_copy(update={"checks": ["lint", "tests (3.11)"]})
    await store.save_tracking_issue(other_check)
    both = record("k.both", 15).model_copy(update={"checks": ["lint", "tests (3.12)"]})
    await store.save_tracking_issue(both)
    await store.save_tracking_issue(record("k.x", 16).model_copy(update={"repo": "other/repo"}))

    listed = await store.open_tracking_issues(REPO, "tests (3.12)")
    assert [r.issue_number for r in listed] == [12, 15, 40]
    assert listed[0] == record("k.early", 12)
    assert [r.key for r in await store.open_tracking_issues(REPO, "lint")] == ["k.lint", "k.both"]
    assert await store.open_tracking_issues(REPO, "tests") == []
    assert (await store.tracking_issue(REPO, "k.closed")) == record("k.closed", 13).model_copy(
        update={"closed_at": T0}
    )

    # Reopened (the recurrence logic saves it open again): listed again.
    await store.save_tracking_issue(record("k.closed", 13))
    assert [r.issue_number for r in await store.open_tracking_issues(REPO, "tests (3.12)")] == [
        12,
        13,
        15,
        40,
    ]


async def test_a_repository_label_is_synced_once_and_an_opening_note_is_kept_until_done(
    store: Store,
) -> None:
    assert await store.tracking_synced("acme/bus", "flaky-test") is False
    await store.mark_tracking_synced("acme/bus", "flaky-test", 1.0)
    await store.mark_tracking_synced("acme/bus", "flaky-test", 2.0)
    assert await store.tracking_synced("acme/bus", "flaky-test") is True
    assert await store.tracking_synced("acme/bus", "flaky") is False
    assert await store.tracking_synced("acme/other", "flaky-test") is False

    assert await store.tracking_issue_opening("acme/bus", "k") is False
    await store.opening_tracking_issue("acme/bus", "k", 1.0)
    await store.opening_tracking_issue("acme/bus", "k", 2.0)  # a retry notes it again
    assert await store.tracking_issue_opening("acme/bus", "k") is True
    assert await store.tracking_issue_opening("acme/bus", "other") is False
    await store.opened_tracking_issue("acme/bus", "k")
    assert await store.tracking_issue_opening("acme/bus", "k") is False


async def test_owners_are_kept_on_the_record_and_read_per_member_test(store: Store) -> None:
    owned = record("tests.test_a.test_a", 12).model_copy(
        update={"owners": ["@octocat", "@acme/bus-team", "ops@acme.example"]}
    )
    await store.save_tracking_issue(owned)
    await store.save_tracking_issue(record("tests.test_b.test_b", 13))  # no owners

    assert await store.tracking_issue(REPO, "tests.test_a.test_a") == owned
    found = await store.tracking_owners(REPO, ["tests.test_a.test_a", "tests.test_b.test_b", "x"])
    assert found == {"tests.test_a.test_a": ["@octocat", "@acme/bus-team", "ops@acme.example"]}
    assert await store.tracking_owners(REPO, []) == {}
