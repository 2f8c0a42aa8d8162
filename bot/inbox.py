"""The durable delivery inbox's worker: claim, dispatch, retry with backoff, dead-letter."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from bot.config import DEFAULT_DELIVERY_RETENTION_DAYS
from bot.github.client import backoff
from bot.github.errors import TransientError, classify
from bot.metrics import Metrics
from bot.store import Delivery, Store

log = logging.getLogger(__name__)

Dispatch = Callable[[Delivery], Awaitable[None]]

# Retry delays grow from this base; GitHub's Retry-After wins when longer.
RETRY_BASE_SECONDS = 2.0
RETRY_CAP_SECONDS = 900.0
# Finished deliveries are pruned at start and then at most this often.
PRUNE_EVERY_SECONDS = 3600.0


class HandlerFailures(Exception):
    """Several handlers of one delivery failed; it is retried only if all may succeed later."""

    def __init__(self, failures: list[Exception]) -> None:
        super().__init__("; ".join(f"{type(e).__name__}: {e}" for e in failures))
        self.failures = failures


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
    waits = [r.retry_after for r in readings if r is not None and r.retry_after is not None]
    return TransientError(str(exc), max(waits, default=None))


class Worker:
    """Takes due deliveries from the store and dispatches them, `concurrency` at a time.

    A delivery is claimed with a lease: if this process dies, the lease ends and any
    worker (this process restarted, or another replica) takes the delivery again.
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
    ) -> None:
        self.store = store
        self.dispatch = dispatch
        self.metrics = metrics
        self.concurrency = concurrency
        self.lease_seconds = lease_seconds
        self.max_attempts = max_attempts
        self.poll_seconds = poll_seconds
        self.retention_days = retention_days
        self._next_prune = 0.0
        self._wake = asyncio.Event()
        self._running: set[asyncio.Task[None]] = set()
        self._loop_task: asyncio.Task[None] | None = None

    def notify(self) -> None:
        """A delivery was stored: look now instead of at the next poll."""
        self._wake.set()

    def start(self) -> None:
        self._loop_task = asyncio.create_task(self._loop(), name="inbox-worker")

    async def stop(self, grace_seconds: float = 10.0) -> None:
        """Stop claiming; let deliveries in hand finish (their leases cover a hard stop)."""
        if self._loop_task is not None:
            self._loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop_task
        if self._running:
            _, pending = await asyncio.wait(self._running, timeout=grace_seconds)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

    async def _loop(self) -> None:
        while True:
            if time.monotonic() >= self._next_prune:
                await self._prune()
            free = self.concurrency - len(self._running)
            claimed: list[Delivery] = []
            if free > 0:
                try:
                    claimed = await self.store.claim(time.time(), self.lease_seconds, free)
                except Exception:
                    log.exception("could not claim deliveries; retrying")
            for delivery in claimed:
                task = asyncio.create_task(self.process(delivery), name=f"delivery-{delivery.id}")
                self._running.add(task)
                task.add_done_callback(self._finished)
            if claimed and len(self._running) < self.concurrency:
                continue
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll_seconds)

    async def _prune(self) -> None:
        """Delete deliveries finished longer ago than the retention period."""
        self._next_prune = time.monotonic() + PRUNE_EVERY_SECONDS
        try:
            pruned = await self.store.prune_deliveries(time.time() - self.retention_days * 86400.0)
        except Exception:
            log.exception("could not prune finished deliveries; trying again in an hour")
            return
        if pruned:
            log.info(
                "pruned %d deliveries finished more than %g days ago", pruned, self.retention_days
            )

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._running.discard(task)
        self._wake.set()

    async def process(self, delivery: Delivery) -> None:
        assert delivery.claim_token is not None
        started = time.monotonic()
        heartbeat = asyncio.create_task(self._keep_lease(delivery))
        try:
            try:
                await self.dispatch(delivery)
            finally:
                heartbeat.cancel()
        except Exception as exc:
            await self._failed(delivery, exc)
        else:
            await self.store.complete(delivery.id, delivery.claim_token, time.time())
            self.metrics.deliveries.labels(delivery.event, "done").inc()
            log.debug("delivery %s (%s) handled", delivery.id, delivery.event)
        finally:
            self.metrics.handler_seconds.labels(delivery.event).observe(time.monotonic() - started)

    async def _keep_lease(self, delivery: Delivery) -> None:
        """Renew the lease while the handler runs, so a slow handler is not taken twice."""
        assert delivery.claim_token is not None
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            try:
                await self.store.extend_lease(
                    delivery.id, delivery.claim_token, time.time() + self.lease_seconds
                )
            except Exception:
                log.warning("delivery %s: could not renew its lease", delivery.id)

    async def _failed(self, delivery: Delivery, exc: Exception) -> None:
        assert delivery.claim_token is not None
        transient = transient_reading(exc)
        error = f"{type(exc).__name__}: {exc}"[:2000]
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
