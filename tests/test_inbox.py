"""The inbox worker with a real SQLite store: done, retried, dead-lettered, taken over."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from http import HTTPStatus
from typing import cast

import pytest
from gidgethub import GitHubBroken
from pydantic import BaseModel

from bot.github.errors import RateLimited, TransientError
from bot.inbox import RETRY_BASE_SECONDS, Dispatch, HandlerFailures, Worker, transient_reading
from bot.metrics import Metrics
from bot.store import Delivery, DeliveryState, Store
from bot.store.sqlite import SQLiteStore


class _Payload(BaseModel):
    number: int


async def _state(store: SQLiteStore, delivery_id: str) -> Delivery:
    (found,) = [d for d in await store.list_deliveries(100) if d.id == delivery_id]
    return found


async def _wait_for(
    store: SQLiteStore, delivery_id: str, state: DeliveryState, within: float = 5.0
) -> Delivery:
    deadline = time.monotonic() + within
    while True:
        current = await _state(store, delivery_id)
        if current.state == state:
            return current
        if time.monotonic() > deadline:
            raise AssertionError(f"{delivery_id} stayed {current.state}, never {state}")
        await asyncio.sleep(0.02)


async def _claim(store: SQLiteStore, now: float | None = None) -> Delivery:
    (claimed,) = await store.claim(time.time() if now is None else now, 300.0, 1)
    return claimed


class _Counting:
    """The real store, with a note of how many rows each claim and each completion took."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.claims: list[int] = []
        self.completions: list[int] = []

    def __getattr__(self, name: str) -> object:
        return getattr(self._store, name)

    async def claim(self, now: float, lease_seconds: float, limit: int) -> list[Delivery]:
        claimed = await self._store.claim(now, lease_seconds, limit)
        self.claims.append(len(claimed))
        return claimed

    async def complete_many(self, claims: Sequence[tuple[str, str]], now: float) -> None:
        self.completions.append(len(claims))
        await self._store.complete_many(claims, now)


async def _drained(store: Store, within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while (await store.inbox_depth())[0]:
        if time.monotonic() > deadline:
            raise AssertionError(f"{(await store.inbox_depth())[0]} deliveries still waiting")
        await asyncio.sleep(0.02)


def _raising(exc: Exception) -> Dispatch:
    async def dispatch(delivery: Delivery) -> None:
        raise exc

    return dispatch


async def test_started_worker_handles_a_delivery(store: SQLiteStore, metrics: Metrics) -> None:
    seen: list[str] = []

    async def dispatch(delivery: Delivery) -> None:
        seen.append(delivery.id)

    worker = Worker(store, dispatch, metrics, poll_seconds=0.05)
    worker.start()
    try:
        await store.put_delivery("d1", "check_run", "completed", b"{}", time.time())
        worker.notify()
        done = await _wait_for(store, "d1", DeliveryState.DONE)
    finally:
        await worker.stop()
    assert seen == ["d1"]
    assert done.attempts == 1
    assert metrics.registry.get_sample_value(
        "flakybot_deliveries_total", {"event": "check_run", "outcome": "done"}
    ) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "exc",
    [GitHubBroken(HTTPStatus.BAD_GATEWAY), TransientError("connection reset")],
    ids=["github-502", "transient"],
)
async def test_transient_failure_retries_then_dead_letters(
    store: SQLiteStore, metrics: Metrics, exc: Exception
) -> None:
    worker = Worker(store, _raising(exc), metrics, max_attempts=3)
    await store.put_delivery("d1", "check_run", "completed", b"{}", time.time())
    for attempt in (1, 2):
        before = time.time()
        claimed = await _claim(store, now=before + 10_000 * attempt)
        assert claimed.attempts == attempt
        await worker.process(claimed)
        waiting = await _state(store, "d1")
        assert waiting.state == DeliveryState.PENDING
        assert waiting.next_attempt_at >= before + RETRY_BASE_SECONDS
        assert waiting.last_error is not None
        assert type(exc).__name__ in waiting.last_error
    last = await _claim(store, now=time.time() + 100_000)
    assert last.attempts == 3
    await worker.process(last)
    dead = await _state(store, "d1")
    assert dead.state == DeliveryState.DEAD
    assert dead.last_error is not None and type(exc).__name__ in dead.last_error
    assert metrics.registry.get_sample_value(
        "flakybot_deliveries_total", {"event": "check_run", "outcome": "retried"}
    ) == pytest.approx(2.0)


async def test_retry_waits_at_least_as_long_as_github_asked(
    store: SQLiteStore, metrics: Metrics
) -> None:
    worker = Worker(store, _raising(TransientError("rate limited", retry_after=600)), metrics)
    await store.put_delivery("d1", "check_run", "completed", b"{}", time.time())
    before = time.time()
    await worker.process(await _claim(store))
    assert (await _state(store, "d1")).next_attempt_at >= before + 600


async def test_a_rate_limit_waits_for_githubs_time_and_is_not_counted(
    store: SQLiteStore, metrics: Metrics
) -> None:
    worker = Worker(store, _raising(RateLimited("limited", time.time() + 900)), metrics)
    await store.put_delivery("d1", "check_run", "completed", b"{}", time.time())
    # The last attempt MAX_ATTEMPTS allows: a counted failure would be dead-lettered now.
    for attempt in range(1, 7):
        claimed = await _claim(store, now=time.time() + 1000 * attempt)
        assert claimed.attempts == 1, "a rate-limited try is given back"
        before = time.time()
        await worker.process(claimed)
        waiting = await _state(store, "d1")
        assert waiting.state == DeliveryState.PENDING
        assert waiting.next_attempt_at >= before + 900 - 1
        assert waiting.last_error is not None and "limited" in waiting.last_error
    assert metrics.registry.get_sample_value(
        "flakybot_deliveries_total", {"event": "check_run", "outcome": "rate_limited"}
    ) == pytest.approx(6.0)
    assert (
        metrics.registry.get_sample_value(
            "flakybot_deliveries_total", {"event": "check_run", "outcome": "retried"}
        )
        is None
    )


def test_handlers_all_rate_limited_wait_for_the_latest_limit_and_others_count() -> None:
    soon, later = RateLimited("a", time.time() + 30), RateLimited("b", time.time() + 90)
    both = transient_reading(HandlerFailures([soon, later]))
    with_5xx = transient_reading(HandlerFailures([later, GitHubBroken(HTTPStatus.BAD_GATEWAY)]))

    assert isinstance(both, RateLimited) and both.until == later.until
    assert with_5xx is not None and not isinstance(with_5xx, RateLimited)
    assert with_5xx.retry_after is not None and with_5xx.retry_after > 80


def _validation_error() -> Exception:
    try:
        _Payload.model_validate({"number": "not a number"})
    except Exception as exc:
        return exc
    raise AssertionError("the payload validated")


@pytest.mark.parametrize(
    "exc",
    [
        ValueError("bad payload"),
        _validation_error(),
        HandlerFailures([ValueError("bad"), GitHubBroken(HTTPStatus.BAD_GATEWAY)]),
    ],
    ids=["value-error", "validation-error", "mixed-handler-failures"],
)
async def test_permanent_failure_is_dead_lettered_at_once(
    store: SQLiteStore, metrics: Metrics, exc: Exception
) -> None:
    worker = Worker(store, _raising(exc), metrics, max_attempts=6)
    await store.put_delivery("d1", "check_run", "completed", b"{}", time.time())
    await worker.process(await _claim(store))
    dead = await _state(store, "d1")
    assert (dead.state, dead.attempts) == (DeliveryState.DEAD, 1)
    assert dead.last_error is not None
    # A group is described by what failed inside it, with GitHub's status when it answered.
    inner = exc.failures if isinstance(exc, HandlerFailures) else [exc]
    assert all(type(e).__name__ in dead.last_error for e in inner)
    if isinstance(exc, HandlerFailures):
        assert dead.last_error.endswith("GitHubBroken: Bad Gateway (GitHub answered 502)")


async def test_handler_failures_all_transient_are_retried_after_the_longest_wait(
    store: SQLiteStore, metrics: Metrics
) -> None:
    failures = HandlerFailures(
        [GitHubBroken(HTTPStatus.BAD_GATEWAY), TransientError("rate limited", retry_after=300)]
    )
    worker = Worker(store, _raising(failures), metrics)
    await store.put_delivery("d1", "check_run", "completed", b"{}", time.time())
    before = time.time()
    await worker.process(await _claim(store))
    retried = await _state(store, "d1")
    assert retried.state == DeliveryState.PENDING
    assert retried.next_attempt_at >= before + 300


async def test_crashed_worker_leaves_its_claim_for_the_next_worker(
    store: SQLiteStore, metrics: Metrics
) -> None:
    started = asyncio.Event()

    async def hang(delivery: Delivery) -> None:
        started.set()
        await asyncio.Event().wait()

    handled: list[str] = []

    async def succeed(delivery: Delivery) -> None:
        handled.append(delivery.id)

    crashing = Worker(store, hang, metrics, lease_seconds=0.2, poll_seconds=0.05)
    crashing.start()
    await store.put_delivery("d1", "check_run", "completed", b"{}", time.time())
    await asyncio.wait_for(started.wait(), 5)
    # A hard stop: the handler is cancelled mid-way, nothing is written back.
    await crashing.stop(grace_seconds=0)
    held = await _state(store, "d1")
    assert (held.state, held.attempts) == (DeliveryState.CLAIMED, 1)

    successor = Worker(store, succeed, metrics, lease_seconds=0.2, poll_seconds=0.05)
    successor.start()
    try:
        done = await _wait_for(store, "d1", DeliveryState.DONE)
    finally:
        await successor.stop()
    assert handled == ["d1"]
    assert done.attempts == 2


def test_an_exception_group_is_transient_only_when_all_its_errors_are() -> None:
    transient = GitHubBroken(HTTPStatus.BAD_GATEWAY)
    limited = TransientError("rate limited", retry_after=30.0)

    both = transient_reading(ExceptionGroup("gather", [transient, limited]))
    mixed = transient_reading(ExceptionGroup("gather", [transient, ValueError("bad")]))

    assert both is not None and both.retry_after == 30.0
    assert mixed is None


async def test_quick_handlers_are_claimed_and_recorded_done_in_batches(
    store: SQLiteStore, metrics: Metrics
) -> None:
    running, most = 0, 0

    async def dispatch(delivery: Delivery) -> None:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await asyncio.sleep(0)
        running -= 1

    now = time.time()
    for n in range(60):
        await store.put_delivery(f"d{n:02}", "check_run", "completed", b"{}", now)
    counting = _Counting(store)
    worker = Worker(cast(Store, counting), dispatch, metrics, concurrency=4, poll_seconds=0.05)
    worker.start()
    try:
        await _drained(store)
    finally:
        await worker.stop()
    finished = await store.list_deliveries(100)
    assert sorted(d.state for d in finished) == [DeliveryState.DONE] * 60
    assert most <= 4
    # The first claim takes only the free slots; once handlers prove quick, the rest at once.
    assert counting.claims[0] == 4
    assert max(counting.claims) > 4  # batches past the free slots once handlers prove quick
    assert sum(counting.completions) == 60
    assert max(counting.completions) > 1  # done in batches, not one UPDATE each
    assert metrics.registry.get_sample_value(
        "flakybot_deliveries_total", {"event": "check_run", "outcome": "done"}
    ) == pytest.approx(60.0)


async def test_slow_handlers_claim_no_more_than_the_free_slots(
    store: SQLiteStore, metrics: Metrics
) -> None:
    async def slow(delivery: Delivery) -> None:
        await asyncio.sleep(0.1)

    now = time.time()
    for n in range(6):
        await store.put_delivery(f"d{n}", "check_run", "completed", b"{}", now)
    counting = _Counting(store)
    worker = Worker(cast(Store, counting), slow, metrics, concurrency=2, poll_seconds=0.05)
    worker.start()
    try:
        await asyncio.sleep(0.05)
        held = [d for d in await store.list_deliveries(10) if d.state == DeliveryState.CLAIMED]
        assert len(held) == 2  # the other four are left for other replicas meanwhile
        await _drained(store)
    finally:
        await worker.stop()
    assert max(counting.claims) <= 2
    assert sum(counting.claims) == 6


async def test_stop_returns_even_when_a_wake_up_lands_with_it(
    store: SQLiteStore, metrics: Metrics
) -> None:
    """A delivery's wake-up and the stop in the same turn of the loop: the worker's wait ends
    and is cancelled at once. Stopping must not hang on it (on Python 3.11 a cancellation
    landing as a wait ends was lost, and `stop` waited for the loop forever)."""

    async def nothing(delivery: Delivery) -> None:
        return None

    for _ in range(50):
        worker = Worker(store, nothing, metrics, poll_seconds=30.0)
        worker.start()
        await asyncio.sleep(0.01)  # the loop is now waiting to be woken
        worker.notify()
        await asyncio.wait_for(worker.stop(), timeout=5)
