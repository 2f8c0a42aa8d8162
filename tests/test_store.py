"""Both stores, SQLite and PostgreSQL, held to one behaviour: inbox claims and leases,
retention, rerun budget, sticky comments, migrations.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Sequence

import asyncpg

from bot.inbox import Worker
from bot.metrics import Metrics
from bot.store import (
    CheckAttempt,
    Delivery,
    DeliveryState,
    StickyComment,
    Store,
    TriageCheckRun,
    open_store,
)
from bot.store.group_commit import GroupCommit, NewDelivery
from bot.store.migrations import migration_files
from bot.store.postgres import PostgresStore
from bot.store.sqlite import SQLiteStore, sqlite_path
from bot.triage.models import Decision, Failure, FootprintEntry, Verdict

T0 = 1_700_000_000.0
LEASE = 60.0


async def _put(store: Store, delivery_id: str, now: float = T0) -> bool:
    return await store.put_delivery(delivery_id, "check_run", "completed", b'{"a": 1}', now)


async def _get(store: Store, delivery_id: str) -> Delivery:
    found = [d for d in await store.list_deliveries(1000) if d.id == delivery_id]
    assert len(found) == 1, f"{delivery_id} stored {len(found)} times"
    return found[0]


async def _claim_one(store: Store, now: float) -> Delivery:
    claimed = await store.claim(now, LEASE, 10)
    assert len(claimed) == 1
    assert claimed[0].claim_token is not None
    return claimed[0]


async def test_put_delivery_dedupes_by_id(store: Store) -> None:
    assert await _put(store, "d1") is True
    assert await store.put_delivery("d1", "issues", "opened", b"{}", T0 + 5) is False
    rows = await store.list_deliveries(10)
    assert [(d.id, d.event, d.payload) for d in rows] == [("d1", "check_run", b'{"a": 1}')]
    assert rows[0].state == DeliveryState.PENDING
    assert rows[0].attempts == 0


async def test_concurrent_puts_answer_new_once_per_id_even_within_one_batch(
    store: Store,
) -> None:
    ids = [f"d{i % 40}" for i in range(100)]  # 40 ids, most sent two or three times
    answers = await asyncio.gather(
        *(
            store.put_delivery(d, "check_run", "completed", f"body {n}".encode(), T0 + n)
            for n, d in enumerate(ids)
        )
    )
    assert answers == [n < 40 for n in range(100)]
    rows = {d.id: d for d in await store.list_deliveries(1000)}
    assert sorted(rows) == sorted(set(ids))
    # The first delivery of each id is the one kept.
    assert all(rows[f"d{i}"].payload == f"body {i}".encode() for i in range(40))
    assert all(rows[f"d{i}"].received_at == T0 + i for i in range(40))
    assert await _put(store, "d7") is False


async def test_a_put_delivery_is_committed_before_it_returns(store_url: str) -> None:
    writer = await open_store(store_url)
    reader = await open_store(store_url)
    try:
        answers = await asyncio.gather(*(_put(writer, f"d{i}") for i in range(30)))
        assert all(answers)
        # Another connection sees every row the moment the callers have their answers.
        assert len(await reader.list_deliveries(100)) == 30
    finally:
        await writer.close()
        await reader.close()


def _new(delivery_id: str) -> NewDelivery:
    return NewDelivery(delivery_id, "check_run", None, b"{}", T0)


async def test_group_commit_writes_what_queued_meanwhile_in_batches_up_to_the_cap() -> None:
    batches: list[list[str]] = []
    stored: set[str] = set()

    async def write(batch: Sequence[NewDelivery]) -> set[str]:
        batches.append([d.id for d in batch])
        await asyncio.sleep(0)
        new = {d.id for d in batch} - stored
        stored.update(new)
        return new

    group = GroupCommit(write, max_batch=30)
    answers = await asyncio.gather(*(group.put(_new(f"d{i}")) for i in range(100)))
    assert all(answers)
    assert [len(b) for b in batches] == [30, 30, 30, 10]
    assert [d for b in batches for d in b] == [f"d{i}" for i in range(100)]
    assert await group.put(_new("d5")) is False
    assert batches[-1] == ["d5"]


async def test_group_commit_failure_reaches_every_caller_of_that_batch_only() -> None:
    calls = 0

    async def write(batch: Sequence[NewDelivery]) -> set[str]:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise OSError("disk full")
        return {d.id for d in batch}

    group = GroupCommit(write, max_batch=3)
    answers = await asyncio.gather(
        *(group.put(_new(f"d{i}")) for i in range(5)), return_exceptions=True
    )
    assert [type(a) for a in answers[:3]] == [OSError] * 3
    assert answers[3:] == [True, True]
    assert await group.put(_new("d0")) is True
    await group.close()


async def test_claim_takes_only_due_pending_deliveries_up_to_limit(store: Store) -> None:
    for i in range(5):
        await _put(store, f"d{i}", now=T0 + i)
    assert await store.claim(T0 - 1, LEASE, 10) == []
    first = await store.claim(T0 + 10, LEASE, 2)
    assert [d.id for d in first] == ["d0", "d1"]
    assert all(d.state == DeliveryState.CLAIMED and d.attempts == 1 for d in first)
    rest = await store.claim(T0 + 10, LEASE, 10)
    assert [d.id for d in rest] == ["d2", "d3", "d4"]
    assert await store.claim(T0 + 10, LEASE, 10) == []


async def test_comment_deliveries_are_claimed_after_every_other_due_one(store: Store) -> None:
    """`/flaky` comments, which anyone may send in floods, never hold a check's triage back."""
    for i in range(3):
        await store.put_delivery(f"c{i}", "issue_comment", "created", b"{}", T0 + i)
    await _put(store, "check", now=T0 + 5)
    first = await store.claim(T0 + 10, LEASE, 2)
    assert [d.id for d in first] == ["check", "c0"]
    assert [d.id for d in await store.claim(T0 + 10, LEASE, 10)] == ["c1", "c2"]


async def test_claim_respects_next_attempt_at(store: Store) -> None:
    await _put(store, "d1")
    claimed = await _claim_one(store, T0)
    assert claimed.claim_token is not None
    await store.retry_later("d1", claimed.claim_token, "boom", T0 + 100)
    assert await store.claim(T0 + 99, LEASE, 10) == []
    again = await _claim_one(store, T0 + 100)
    assert again.attempts == 2
    assert again.last_error == "boom"


async def test_expired_claim_is_taken_again_and_old_token_is_void(store: Store) -> None:
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


async def test_finishing_needs_the_right_claim_token(store: Store) -> None:
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


async def test_replay_requeues_a_finished_delivery(store: Store) -> None:
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


async def test_inbox_depth_counts_pending_and_claimed(store: Store) -> None:
    assert await store.inbox_depth() == (0, None)
    await _put(store, "old", now=T0)
    await _put(store, "new", now=T0 + 30)
    await _put(store, "finished", now=T0 - 30)
    claimed = {d.id: d for d in await store.claim(T0 + 60, LEASE, 10)}
    await store.complete("finished", str(claimed["finished"].claim_token), T0 + 61)
    assert await store.inbox_depth() == (2, T0)


async def test_reserve_rerun_budget_per_head_sha_and_check(store: Store) -> None:
    repo, sha = "octo/repo", "a" * 40

    async def reserve(job_id: int, check: str = "tests", head: str = sha) -> bool:
        grant = await store.reserve_rerun(
            repo, 7, head, check, job_id, per_check=2, per_pr_day=10, now=T0
        )
        return grant.granted

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


async def test_reserve_rerun_concurrently_never_exceeds_budget(store: Store) -> None:
    grants = await asyncio.gather(
        *(
            store.reserve_rerun(
                "o/r", 7, "c" * 40, "tests", job, per_check=3, per_pr_day=10, now=T0
            )
            for job in range(20)
        )
    )
    assert sum(grant.granted for grant in grants) == 3
    assert len(await store.reruns_for("o/r", "c" * 40, "tests")) == 3


async def test_sticky_comment_save_and_get(store: Store) -> None:
    assert await store.get_sticky_comment("o/r", 7) is None
    posting = StickyComment(repo="o/r", pr_number=7, comment_id=None, body_sha="")
    await store.save_sticky_comment(posting)  # set out to post it, its id not known yet
    assert await store.get_sticky_comment("o/r", 7) == posting
    first = StickyComment(repo="o/r", pr_number=7, comment_id=100, body_sha="aa")
    await store.save_sticky_comment(first)
    assert await store.get_sticky_comment("o/r", 7) == first
    edited = first.model_copy(update={"comment_id": 101, "body_sha": "bb"})
    await store.save_sticky_comment(edited)
    assert await store.get_sticky_comment("o/r", 7) == edited
    assert await store.get_sticky_comment("o/r", 8) is None
    assert await store.get_sticky_comment("o/other", 7) is None


async def test_triage_check_run_save_and_get(store: Store) -> None:
    # Check run ids pass 2**31 on GitHub (and in the simulator): the column must hold them.
    assert await store.get_triage_check_run("o/r", "a" * 40) is None
    first = TriageCheckRun(
        repo="o/r", head_sha="a" * 40, pr_number=7, check_run_id=40_000_000_003, output_sha="s1"
    )
    await store.save_triage_check_run(first)
    assert await store.get_triage_check_run("o/r", "a" * 40) == first
    updated = first.model_copy(update={"output_sha": "s2", "annotations": ["k1", "k2"]})
    await store.save_triage_check_run(updated)
    assert await store.get_triage_check_run("o/r", "a" * 40) == updated
    assert await store.get_triage_check_run("o/r", "b" * 40) is None
    assert await store.get_triage_check_run("o/other", "a" * 40) is None


async def test_prune_deletes_only_deliveries_finished_before_the_cutoff(store: Store) -> None:
    names = ("old-done", "old-dead", "new-done", "retrying", "replayed", "in-hand")
    for name in names:
        await _put(store, name)
    tokens = {d.id: str(d.claim_token) for d in await store.claim(T0, LEASE, 10)}
    await store.complete("old-done", tokens["old-done"], T0 + 10)
    await store.dead_letter("old-dead", tokens["old-dead"], "ValueError: bad", T0 + 20)
    await store.complete("new-done", tokens["new-done"], T0 + 100)
    await store.retry_later("retrying", tokens["retrying"], "GitHubBroken: 502", T0 + 30)
    await store.dead_letter("replayed", tokens["replayed"], "ValueError: bad", T0 + 5)
    assert await store.replay("replayed", T0 + 6) is True

    assert await store.prune_deliveries(T0 + 50) == 2
    remaining = {d.id: d.state for d in await store.list_deliveries(100)}
    assert remaining == {
        "new-done": DeliveryState.DONE,
        "retrying": DeliveryState.PENDING,
        "replayed": DeliveryState.PENDING,
        "in-hand": DeliveryState.CLAIMED,
    }
    assert await store.prune_deliveries(T0 + 50) == 0
    assert await store.prune_deliveries(T0 + 101) == 1


async def _finished_at(store: Store, delivery_id: str, at: float, *, due: float) -> None:
    """Store a delivery due at `due` and mark it done as if at `at`."""
    await store.put_delivery(delivery_id, "check_run", "completed", b"{}", due)
    (claimed,) = await store.claim(due, LEASE, 1)
    assert claimed.id == delivery_id
    await store.complete(delivery_id, str(claimed.claim_token), at)


async def test_worker_prunes_at_start_then_not_again_within_the_hour(
    store: Store, metrics: Metrics
) -> None:
    now = time.time()
    await _finished_at(store, "expired", now - 15 * 86400, due=now - 16 * 86400)
    await _finished_at(store, "recent", now - 13 * 86400, due=now - 14 * 86400)

    async def dispatch(delivery: Delivery) -> None:
        raise AssertionError(f"nothing was due, yet {delivery.id} was dispatched")

    worker = Worker(store, dispatch, metrics, poll_seconds=0.01, retention_days=14)
    worker.start()
    try:
        deadline = time.monotonic() + 5
        while "expired" in {d.id for d in await store.list_deliveries(10)}:
            assert time.monotonic() < deadline, "the worker did not prune at start"
            await asyncio.sleep(0.02)
        # Due only in an hour, so the worker cannot take it; finished long ago by the test.
        await _finished_at(store, "expired-later", now - 30 * 86400, due=now + 3600)
        await asyncio.sleep(0.3)  # some thirty polls of the worker's loop
    finally:
        await worker.stop()
    assert sorted(d.id for d in await store.list_deliveries(10)) == ["expired-later", "recent"]


# GitHub's ids outgrow 32 bits; both stores must keep them whole.
BIG_ID = 31_234_567_890


def _attempt(check_run_id: int, attempt: int, verdict: Verdict, at: float) -> CheckAttempt:
    failure = Failure(
        test_id="tests/test_bus.py::test_ack",
        name="test_ack",
        file="tests/test_bus.py",
        framework="pytest",
        message="AssertionError: ack not received within 5s",
        trace_paths=["tests/test_bus.py", "bus/core.py"],
    )
    decision = Decision(
        failure=failure,
        verdict=verdict,
        evidence="not in the PR's footprint (0/3 changed paths)",
        footprint=[FootprintEntry(path="bus/", reason="package directory")],
    )
    return CheckAttempt(
        repo="o/r",
        pr_number=7,
        head_sha="a" * 40,
        check_name="tests (3.12)",
        check_run_id=check_run_id,
        html_url=f"https://github.com/o/r/runs/{check_run_id}",
        attempt=attempt,
        conclusion="failure",
        decisions=[decision],
        rerun_note=None,
        recorded_at=at,
    )


async def test_check_attempts_round_trip_and_update_in_place(store: Store) -> None:
    first = _attempt(BIG_ID, 1, Verdict.UNRELATED, T0)
    second = _attempt(BIG_ID + 1, 2, Verdict.FLAKY, T0 + 60)
    await store.record_check_attempt(second)
    await store.record_check_attempt(first)
    assert await store.check_attempts_for_pr("o/r", 7) == [first, second]
    assert await store.check_attempts_for("o/r", "a" * 40, "tests (3.12)") == [first, second]

    confirmed = first.model_copy(
        update={
            "decisions": second.decisions,
            "rerun_note": "rerun requested",
            "recorded_at": T0 + 1,
        }
    )
    await store.record_check_attempt(confirmed)
    assert await store.check_attempts_for_pr("o/r", 7) == [confirmed, second]
    assert await store.check_attempts_for_pr("o/r", 8) == []
    assert await store.check_attempts_for("o/r", "a" * 40, "lint") == []


async def test_installations_upsert_and_keep_large_ids(store: Store) -> None:
    await store.set_installation(BIG_ID, "acme", True, T0)
    await store.set_installation(5, "octo", True, T0)
    await store.set_installation(BIG_ID, "acme-renamed", False, T0 + 1)
    assert await store.installations() == [(5, "octo", True), (BIG_ID, "acme-renamed", False)]


async def _recorded_migrations(database_url: str) -> list[tuple[int, str]]:
    if database_url.startswith("sqlite:"):
        with sqlite3.connect(sqlite_path(database_url)) as db:
            rows = db.execute("SELECT version, name FROM schema_migrations ORDER BY version")
            return [(int(v), str(n)) for v, n in rows]
    conn = await asyncpg.connect(database_url)
    try:
        records = await conn.fetch("SELECT version, name FROM schema_migrations ORDER BY version")
        return [(int(r["version"]), str(r["name"])) for r in records]
    finally:
        await conn.close()


async def test_migrations_apply_once_and_are_recorded(store_url: str) -> None:
    dialect = "sqlite" if store_url.startswith("sqlite:") else "postgres"
    expected = [(version, name) for version, name, _ in migration_files(dialect)]
    assert expected, f"no {dialect} migrations found"
    first = await open_store(store_url)
    await _put(first, "kept")
    await first.close()
    second = await open_store(store_url)
    try:
        assert isinstance(second, SQLiteStore | PostgresStore)
        assert await second.migrate() == []
        assert [d.id for d in await second.list_deliveries(10)] == ["kept"]
    finally:
        await second.close()
    assert await _recorded_migrations(store_url) == expected


async def test_two_stores_on_one_database_never_share_a_claim(store_url: str) -> None:
    a = await open_store(store_url)
    b = await open_store(store_url)
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


async def test_complete_many_finishes_only_the_claims_that_still_hold(store: Store) -> None:
    for n, name in enumerate(("expired", "b", "c", "d")):
        await _put(store, name, now=T0 + n)
    claimed = {d.id: str(d.claim_token) for d in await store.claim(T0 + 5, LEASE, 10)}
    # The oldest claim's lease ends first; another worker takes it over.
    (successor,) = await store.claim(T0 + 5 + LEASE, LEASE, 1)
    assert successor.id == "expired"
    await store.complete_many([*claimed.items(), ("unknown", "x")], T0 + LEASE + 6)
    for name in ("b", "c", "d"):
        found = await _get(store, name)
        assert (found.state, found.claim_token, found.last_error) == (
            DeliveryState.DONE,
            None,
            None,
        )
    taken_over = await _get(store, "expired")
    assert (taken_over.state, taken_over.claim_token) == (
        DeliveryState.CLAIMED,
        successor.claim_token,
    )
    assert await store.inbox_depth() == (1, T0)
    assert await store.prune_deliveries(T0 + LEASE + 6) == 0
    assert await store.prune_deliveries(T0 + LEASE + 7) == 3


async def test_a_delivery_no_handler_wants_is_stored_done_and_can_be_replayed(
    store: Store,
) -> None:
    assert await store.put_delivery("unrouted", "check_run", "created", b"{}", T0, done=True)
    assert await store.put_delivery("unrouted", "check_run", "created", b"{}", T0, done=True) is (
        False
    )
    stored = await _get(store, "unrouted")
    assert (stored.state, stored.attempts, stored.payload) == (DeliveryState.DONE, 0, b"{}")
    assert await store.claim(T0 + 1, LEASE, 10) == []
    assert await store.inbox_depth() == (0, None)
    # Finished when received: retention counts from then.
    assert await store.prune_deliveries(T0) == 0
    assert await store.replay("unrouted", T0 + 5) is True
    assert [d.id for d in await store.claim(T0 + 5, LEASE, 10)] == ["unrouted"]
