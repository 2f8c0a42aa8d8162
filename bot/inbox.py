"""The durable delivery inbox's worker: claim, dispatch, retry with backoff, dead-letter."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence

from gidgethub import HTTPException

from bot.config import DEFAULT_DELIVERY_RETENTION_DAYS
from bot.github.client import backoff
from bot.github.errors import RateLimited, TransientError, classify
from bot.logs import bind
from bot.metrics import Metrics
from bot.store import Delivery, Store

log = logging.getLogger(__name__)

Dispatch = Callable[[Delivery], Awaitable[None]]
# Whether any handler takes an (event, action); False lets ingest store the delivery done.
Wants = Callable[[str, str | None], bool]


def wants_everything(event: str, action: str | None) -> bool:
    return True


# The bot's own work queued in the inbox (GitHub's event names never hold a dot): ingest
# refuses a delivery that claims such a name, whoever signed it.
INTERNAL_EVENT_PREFIX = "flakybot."

# Retry delays grow from this base; GitHub's Retry-After wins when longer.
RETRY_BASE_SECONDS = 2.0
RETRY_CAP_SECONDS = 900.0
# Finished deliveries are pruned at start and then at most this often.
PRUNE_EVERY_SECONDS = 3600.0
# Handlers faster than this on average (a moving mean) let one claim take a whole batch:
# the claims and completions, not the handlers, are then what limits the worker.
QUICK_HANDLER_SECONDS = 0.05


class HandlerFailures(Exception):
    """Several handlers of one delivery failed; it is retried only if all may succeed later."""

    def __init__(self, failures: list[Exception]) -> None:
        super().__init__("; ".join(f"{type(e).__name__}: {e}" for e in failures))
        self.failures = failures


def describe_failure(exc: BaseException) -> str:
    """What went wrong, as a dead letter and a log line say it: the errors inside a group
    (a TaskGroup's "unhandled errors" says nothing), with GitHub's status when it answered."""
    inner: Sequence[BaseException] | None = None
    if isinstance(exc, HandlerFailures):
        inner = exc.failures
    elif isinstance(exc, BaseExceptionGroup):
        inner = exc.exceptions
    if inner is not None:
        return "; ".join(describe_failure(e) for e in inner)
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, HTTPException):
        text += f" (GitHub answered {int(exc.status_code)})"
    return text


def transient_reading(exc: BaseException) -> TransientError | None:
    """Transient only when every failure inside is: one permanent error makes retries useless."""
    inner: list[BaseException] | None = None
    if isinstance(exc, HandlerFailures):
        inner = list(exc.failures)
    elif isinstance(exc, BaseExceptionGroup):  # from asyncio.TaskGroup in a handler
        inner = list(exc.exceptions)
    if inner is None:
        return classify(exc)
    readings = [transient_reading(e) for e in inner]
    if any(r is None for r in readings):
        return None
    limits = [r for r in readings if isinstance(r, RateLimited)]
    if len(limits) == len(readings):
        return RateLimited(str(exc), max(r.until for r in limits))
    waits = [r.retry_after for r in readings if r is not None and r.retry_after is not None]
    return TransientError(str(exc), max(waits, default=None))


class _Completions:
    """Deliveries whose handlers finished, marked done together: one write for all of them.

    Whatever finishes while one batch is being written goes into the next, so no timer holds
    a delivery back; each caller returns once its own delivery is recorded done.
    """

    def __init__(self, store: Store) -> None:
        self._store = store
        self._queue: list[tuple[tuple[str, str], asyncio.Future[None]]] = []
        self._writer: asyncio.Task[None] | None = None

    async def done(self, delivery_id: str, claim_token: str) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append(((delivery_id, claim_token), future))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._drain(), name="inbox-completions")
        await future

    async def close(self) -> None:
        """Let the write in hand finish, so it does not outlive the store."""
        if self._writer is not None:
            await asyncio.gather(self._writer, return_exceptions=True)

    async def _drain(self) -> None:
        while self._queue:
            batch, self._queue = self._queue, []
            try:
                await self._store.complete_many([item for item, _ in batch], time.time())
            except Exception as exc:
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for _, future in batch:
                if not future.done():
                    future.set_result(None)


class Worker:
    """Takes due deliveries from the store and dispatches them, `concurrency` at a time.

    A delivery is claimed with a lease: if this process dies, the lease ends and any
    worker (this process restarted, or another replica) takes the delivery again. While
    handlers finish quickly, one claim takes up to `claim_batch` deliveries, the ones
    beyond the free slots waiting here under leases kept like the running ones; when
    handlers are slow, it takes only as many as there are free slots, so other replicas
    are left the rest.
    """

    def __init__(
        self,
        store: Store,
        dispatch: Dispatch,
        metrics: Metrics,
        *,
        concurrency: int = 4,
        lease_seconds: float = 300.0,
        max_attempts: int = 6,
        poll_seconds: float = 1.0,
        retention_days: float = DEFAULT_DELIVERY_RETENTION_DAYS,
        wants: Wants = wants_everything,
        claim_batch: int = 64,
    ) -> None:
        self.store = store
        self.dispatch = dispatch
        self.wants = wants
        self.metrics = metrics
        self.concurrency = concurrency
        self.lease_seconds = lease_seconds
        self.max_attempts = max_attempts
        self.poll_seconds = poll_seconds
        self.retention_days = retention_days
        self.claim_batch = max(claim_batch, concurrency)
        self._next_prune = 0.0
        self._wake = asyncio.Event()
        self._slots = asyncio.Semaphore(concurrency)
        self._running: set[asyncio.Task[None]] = set()
        # Claimed by the loop, handler not started yet: waiting for a slot.
        self._queued: set[str] = set()
        self._dispatching = 0
        # Until handlers have shown they are quick, claim only what the free slots can take.
        self._recent_handler_seconds = QUICK_HANDLER_SECONDS
        self._held: dict[str, str] = {}  # claimed here, by id: claim token
        self._keeper: asyncio.Task[None] | None = None
        self._completions = _Completions(store)
        self._loop_task: asyncio.Task[None] | None = None
        self._stopping = False

    def notify(self) -> None:
        """A delivery was stored: look now instead of at the next poll."""
        self._wake.set()

    def start(self) -> None:
        self._loop_task = asyncio.create_task(self._loop(), name="inbox-worker")

    async def stop(self, grace_seconds: float = 10.0) -> None:
        """Stop claiming; let deliveries in hand finish (their leases cover a hard stop)."""
        if self._loop_task is not None:
            # Asked, not cancelled: a cancellation that lands as the loop's wait ends can be
            # lost (Python 3.11's waits), and stopping then waited for the loop forever.
            self._stopping = True
            self._wake.set()
            await self._loop_task
        if self._running:
            _, pending = await asyncio.wait(self._running, timeout=grace_seconds)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        await self._completions.close()
        if self._keeper is not None:
            self._keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._keeper

    def _claim_limit(self) -> int:
        """How many to claim now: none while claimed ones still wait for a slot."""
        free = self.concurrency - self._dispatching
        if self._queued or free <= 0:
            return 0
        if self._recent_handler_seconds < QUICK_HANDLER_SECONDS:
            return self.claim_batch
        return free

    async def _loop(self) -> None:
        while not self._stopping:
            if time.monotonic() >= self._next_prune:
                await self._prune()
            limit = self._claim_limit()
            claimed: list[Delivery] = []
            if limit:
                try:
                    claimed = await self.store.claim(time.time(), self.lease_seconds, limit)
                except Exception:
                    log.exception("could not claim deliveries; retrying")
            for delivery in claimed:
                self._queued.add(delivery.id)
                task = asyncio.create_task(self.process(delivery), name=f"delivery-{delivery.id}")
                self._running.add(task)
                task.add_done_callback(self._running.discard)
            if claimed and self._claim_limit():
                continue
            if self._stopping:
                return
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.poll_seconds):
                    await self._wake.wait()

    async def _prune(self) -> None:
        """Delete deliveries finished, and sources read, longer ago than the retention period."""
        self._next_prune = time.monotonic() + PRUNE_EVERY_SECONDS
        older_than = time.time() - self.retention_days * 86400.0
        try:
            pruned = await self.store.prune_deliveries(older_than)
            # Read sources are kept as long as deliveries: a bound on the database, not a
            # staleness (bot/store/sources.py).
            await self.store.prune_sources(older_than)
        except Exception:
            log.exception("could not prune finished deliveries; trying again in an hour")
            return
        if pruned:
            log.info(
                "pruned %d deliveries finished more than %g days ago", pruned, self.retention_days
            )

    async def process(self, delivery: Delivery) -> None:
        assert delivery.claim_token is not None
        bind(delivery=delivery.id, event=delivery.event)  # this task's lines, and its children's
        self._held[delivery.id] = delivery.claim_token
        if self._keeper is None or self._keeper.done():
            self._keeper = asyncio.create_task(self._keep_leases(), name="inbox-leases")
        try:
            async with self._slots:
                self._queued.discard(delivery.id)
                self._dispatching += 1
                started = time.monotonic()
                try:
                    await self.dispatch(delivery)
                finally:
                    self._dispatching -= 1
                    elapsed = time.monotonic() - started
                    self._recent_handler_seconds += 0.2 * (elapsed - self._recent_handler_seconds)
                    self.metrics.handler_seconds.labels(delivery.event).observe(elapsed)
                    if not self._queued:
                        self._wake.set()  # a slot is free and nothing claimed waits for it
        except Exception as exc:
            await self._failed(delivery, exc)
        else:
            # Outside the slot: the next handler starts while this one is recorded done.
            await self._completions.done(delivery.id, delivery.claim_token)
            self.metrics.deliveries.labels(delivery.event, "done").inc()
            log.debug("delivery %s (%s) handled", delivery.id, delivery.event)
        finally:
            self._queued.discard(delivery.id)  # cancelled while waiting for a slot
            if self._held.get(delivery.id) == delivery.claim_token:
                del self._held[delivery.id]

    async def _keep_leases(self) -> None:
        """Renew the leases of every delivery held here, so a slow one is not taken twice."""
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            for delivery_id, claim_token in list(self._held.items()):
                try:
                    await self.store.extend_lease(
                        delivery_id, claim_token, time.time() + self.lease_seconds
                    )
                except Exception:
                    log.warning("delivery %s: could not renew its lease", delivery_id)

    async def _failed(self, delivery: Delivery, exc: Exception) -> None:
        assert delivery.claim_token is not None
        transient = transient_reading(exc)
        error = describe_failure(exc)[:2000]
        if isinstance(transient, RateLimited):
            await self._wait_out(delivery, transient, error)
            return
        if transient is not None and delivery.attempts < self.max_attempts:
            delay = max(
                transient.retry_after or 0.0,
                RETRY_BASE_SECONDS
                + backoff(delivery.attempts, RETRY_BASE_SECONDS, RETRY_CAP_SECONDS),
            )
            await self.store.retry_later(
                delivery.id, delivery.claim_token, error, time.time() + delay
            )
            self.metrics.deliveries.labels(delivery.event, "retried").inc()
            log.warning(
                "delivery %s (%s) attempt %d failed, retrying in %.1fs: %s",
                delivery.id,
                delivery.event,
                delivery.attempts,
                delay,
                error,
            )
            return
        await self.store.dead_letter(delivery.id, delivery.claim_token, error, time.time())
        self.metrics.deliveries.labels(delivery.event, "dead").inc()
        log.error(
            "delivery %s (%s) dead-lettered after %d attempt(s): %s",
            delivery.id,
            delivery.event,
            delivery.attempts,
            error,
            exc_info=transient is None,
        )

    async def _wait_out(self, delivery: Delivery, limit: RateLimited, error: str) -> None:
        """Queue the delivery again for when GitHub's rate limit ends, its slot and lease
        given back meanwhile; the try is not counted toward `max_attempts`.

        A rate limit says nothing about the delivery: it is GitHub's budget, shared by every
        delivery of the installation, and it ends. Counting it would dead-letter good work
        in a busy hour. Each such try waits as long as GitHub asked, and a retried handler
        finds what earlier tries did, so the waits cannot spin or repeat work.
        """
        assert delivery.claim_token is not None
        await self.store.retry_later(
            delivery.id,
            delivery.claim_token,
            error,
            max(limit.until, time.time()),
            attempts=delivery.attempts - 1,
        )
        self.metrics.deliveries.labels(delivery.event, "rate_limited").inc()
        log.warning(
            "delivery %s (%s) waits out GitHub's rate limit, again in %.1fs: %s",
            delivery.id,
            delivery.event,
            max(limit.until - time.time(), 0.0),
            error,
        )
