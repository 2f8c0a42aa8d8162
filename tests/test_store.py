"""The SQLite store: inbox claims and leases, rerun budget, sticky comments, migrations."""

from __future__ import annotations

import asyncio
import sqlite3

from bot.store import Delivery, DeliveryState, StickyComment
from bot.store.migrations import migration_files
from bot.store.sqlite import SQLiteStore, sqlite_path

T0 = 1_700_000_000.0
LEASE = 60.0


async def _put(store: SQLiteStore, delivery_id: str, now: float = T0) -> bool:
    return await store.put_delivery(delivery_id, "check_run", "completed", b'{"a": 1}', now)


async def _get(store: SQLiteStore, delivery_id: str) -> Delivery:
    found = [d for d in await store.list_deliveries(1000) if d.id == delivery_id]
    assert len(found) == 1, f"{delivery_id} stored {len(found)} times"
    return found[0]


async def _claim_one(store: SQLiteStore, now: float) -> Delivery:
    claimed = await store.claim(now, LEASE, 10)
    assert len(claimed) == 1
    assert claimed[0].claim_token is not None
    return claimed[0]


async def test_put_delivery_dedupes_by_id(store: SQLiteStore) -> None:
    assert await _put(store, "d1") is True
    assert await store.put_delivery("d1", "issues", "opened", b"{}", T0 + 5) is False
    rows = await store.list_deliveries(10)
    assert [(d.id, d.event, d.payload) for d in rows] == [("d1", "check_run", b'{"a": 1}')]
    assert rows[0].state == DeliveryState.PENDING
    assert rows[0].attempts == 0


async def test_claim_takes_only_due_pending_deliveries_up_to_limit(store: SQLiteStore) -> None:
    for i in range(5):
        await _put(store, f"d{i}", now=T0 + i)
    assert await store.claim(T0 - 1, LEASE, 10) == []
    first = await store.claim(T0 + 10, LEASE, 2)
    assert [d.id for d in first] == ["d0", "d1"]
    assert all(d.state == DeliveryState.CLAIMED and d.attempts == 1 for d in first)
    rest = await store.claim(T0 + 10, LEASE, 10)
    assert [d.id for d in rest] == ["d2", "d3", "d4"]
    assert await store.claim(T0 + 10, LEASE, 10) == []


async def test_claim_respects_next_attempt_at(store: SQLiteStore) -> None:
    await _put(store, "d1")
    claimed = await _claim_one(store, T0)
    assert claimed.claim_token is not None
    await store.retry_later("d1", claimed.claim_token, "boom", T0 + 100)
    assert await store.claim(T0 + 99, LEASE, 10) == []
    again = await _claim_one(store, T0 + 100)
    assert again.attempts == 2
    assert again.last_error == "boom"


async def test_expired_claim_is_taken_again_and_old_token_is_void(store: SQLiteStore) -> None:
    await _put(store, "d1")
    dead_worker = await _claim_one(store, T0)
    assert await store.claim(T0 + LEASE - 1, LEASE, 10) == []
    second = await _claim_one(store, T0 + LEASE)
    assert second.claim_token != dead_worker.claim_token
    assert second.attempts == 2
    assert dead_worker.claim_token is not None
    await store.complete("d1", dead_worker.claim_token, T0 + LEASE + 1)
    assert (await _get(store, "d1")).state == DeliveryState.CLAIMED
    assert second.claim_token is not None
    await store.complete("d1", second.claim_token, T0 + LEASE + 2)
    assert (await _get(store, "d1")).state == DeliveryState.DONE


async def test_finishing_needs_the_right_claim_token(store: SQLiteStore) -> None:
    for name in ("done", "later", "dead"):
        await _put(store, name)
    claimed = {d.id: d for d in await store.claim(T0, LEASE, 10)}
    await store.complete("done", "not-the-token", T0)
    await store.retry_later("later", "not-the-token", "x", T0 + 5)
    await store.dead_letter("dead", "not-the-token", "x", T0)
    for name in claimed:
        assert (await _get(store, name)).state == DeliveryState.CLAIMED

    tokens = {name: d.claim_token for name, d in claimed.items()}
    assert all(tokens.values())
    await store.complete("done", str(tokens["done"]), T0)
    await store.retry_later("later", str(tokens["later"]), "GitHubBroken: 502", T0 + 5)
    await store.dead_letter("dead", str(tokens["dead"]), "ValueError: bad", T0)
    done, later, dead = [await _get(store, n) for n in ("done", "later", "dead")]
    assert (done.state, done.claim_token, done.last_error) == (DeliveryState.DONE, None, None)
    assert (later.state, later.next_attempt_at, later.last_error) == (
        DeliveryState.PENDING,
        T0 + 5,
        "GitHubBroken: 502",
    )
    assert (dead.state, dead.last_error) == (DeliveryState.DEAD, "ValueError: bad")
    assert await store.list_deliveries(10, [DeliveryState.DEAD]) == [dead]


async def test_replay_requeues_a_finished_delivery(store: SQLiteStore) -> None:
    await _put(store, "d1")
    claimed = await _claim_one(store, T0)
    await store.dead_letter("d1", str(claimed.claim_token), "ValueError: bad", T0)
    assert await store.replay("unknown", T0 + 10) is False
    assert await store.replay("d1", T0 + 10) is True
    replayed = await _get(store, "d1")
    assert (replayed.state, replayed.attempts, replayed.next_attempt_at) == (
        DeliveryState.PENDING,
        0,
        T0 + 10,
    )
    assert [d.id for d in await store.claim(T0 + 10, LEASE, 10)] == ["d1"]


async def test_inbox_depth_counts_pending_and_claimed(store: SQLiteStore) -> None:
    assert await store.inbox_depth() == (0, None)
    await _put(store, "old", now=T0)
    await _put(store, "new", now=T0 + 30)
    await _put(store, "finished", now=T0 - 30)
    claimed = {d.id: d for d in await store.claim(T0 + 60, LEASE, 10)}
    await store.complete("finished", str(claimed["finished"].claim_token), T0 + 61)
    assert await store.inbox_depth() == (2, T0)


async def test_reserve_rerun_budget_per_head_sha_and_check(store: SQLiteStore) -> None:
    repo, sha = "octo/repo", "a" * 40

    async def reserve(job_id: int, check: str = "tests", head: str = sha) -> bool:
        return await store.reserve_rerun(repo, head, check, job_id, 2, T0)

    assert await reserve(1) is True
    assert await reserve(1) is True  # unanswered: the same job may ask again
    assert await reserve(2) is True
    assert await reserve(3) is False  # budget of 2 spent for (sha, "tests")
    assert await reserve(4, check="lint") is True
    assert await reserve(5, head="b" * 40) is True
    await store.finish_rerun(repo, 1, 201)
    assert await reserve(1) is False  # answered: never twice
    assert await store.reruns_for(repo, sha, "tests") == [201, 0]
    assert await store.reruns_for(repo, sha, "lint") == [0]


async def test_reserve_rerun_concurrently_never_exceeds_budget(store: SQLiteStore) -> None:
    granted = await asyncio.gather(
        *(store.reserve_rerun("o/r", "c" * 40, "tests", job, 3, T0) for job in range(20))
    )
    assert sum(granted) == 3
    assert len(await store.reruns_for("o/r", "c" * 40, "tests")) == 3


async def test_sticky_comment_save_and_get(store: SQLiteStore) -> None:
    assert await store.get_sticky_comment("o/r", 7) is None
    first = StickyComment(repo="o/r", pr_number=7, comment_id=100, body_sha="aa")
    await store.save_sticky_comment(first)
    assert await store.get_sticky_comment("o/r", 7) == first
    edited = first.model_copy(update={"comment_id": 101, "body_sha": "bb"})
    await store.save_sticky_comment(edited)
    assert await store.get_sticky_comment("o/r", 7) == edited
    assert await store.get_sticky_comment("o/r", 8) is None
    assert await store.get_sticky_comment("o/other", 7) is None


async def test_migrations_apply_once_and_are_recorded(database_url: str) -> None:
    expected = [(version, name) for version, name, _ in migration_files("sqlite")]
    assert expected, "no SQLite migrations found"
    first = await SQLiteStore.open(database_url)
    await _put(first, "kept")
    await first.close()
    second = await SQLiteStore.open(database_url)
    try:
        assert await second.migrate() == []
        assert [d.id for d in await second.list_deliveries(10)] == ["kept"]
    finally:
        await second.close()
    with sqlite3.connect(sqlite_path(database_url)) as db:
        recorded = db.execute("SELECT version, name FROM schema_migrations ORDER BY version")
        assert list(recorded) == expected


async def test_two_stores_on_one_file_never_share_a_claim(database_url: str) -> None:
    a = await SQLiteStore.open(database_url)
    b = await SQLiteStore.open(database_url)
    try:
        for i in range(60):
            await _put(a, f"d{i:02}")
        batches = await asyncio.gather(
            *((a if i % 2 else b).claim(T0, LEASE, 3) for i in range(40))
        )
        claimed = [d.id for batch in batches for d in batch]
        assert len(claimed) == len(set(claimed))
        assert sorted(claimed) == [f"d{i:02}" for i in range(60)]
        assert all(len(batch) <= 3 for batch in batches)
    finally:
        await a.close()
        await b.close()


def test_sqlite_path_reads_database_urls() -> None:
    assert sqlite_path("sqlite:///data/bot.db") == "data/bot.db"
    assert sqlite_path("sqlite:////var/lib/bot.db") == "/var/lib/bot.db"
    assert sqlite_path("sqlite://:memory:") == ":memory:"
