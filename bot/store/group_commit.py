"""Group commit for the inbox: concurrent deliveries share one write and one commit.

A webhook is answered 2xx only once its delivery is committed, so every request waits for a
commit. One commit per request makes the disk the bottleneck; here concurrent requests
queue, one writer task stores whatever has queued in a single statement, and each request
is answered from that statement's result. No timer holds a delivery back: while one batch
is being written the next one gathers on its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class NewDelivery:
    id: str
    event: str
    action: str | None
    payload: bytes
    received_at: float
    # No handler wants it: stored already done, so no worker has to touch it again.
    done: bool = False


# Stores the rows (ids are distinct) in one transaction; returns the ids that were new.
WriteBatch = Callable[[Sequence[NewDelivery]], Awaitable[set[str]]]


class GroupCommit:
    def __init__(self, write: WriteBatch, max_batch: int) -> None:
        self._write = write
        self._max_batch = max_batch
        self._queue: list[tuple[NewDelivery, asyncio.Future[bool]]] = []
        self._writer: asyncio.Task[None] | None = None

    async def put(self, delivery: NewDelivery) -> bool:
        """Store one delivery with whichever others are waiting; False if its id was stored."""
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._queue.append((delivery, future))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._drain(), name="inbox-group-commit")
        return await future

    async def close(self) -> None:
        """Let the batch in hand finish, so no caller is left without an answer."""
        if self._writer is not None:
            await asyncio.gather(self._writer, return_exceptions=True)

    async def _drain(self) -> None:
        try:
            while self._queue:
                batch = self._queue[: self._max_batch]
                del self._queue[: self._max_batch]
                await self._commit(batch)
        except asyncio.CancelledError:
            for _, future in self._queue:
                future.cancel()
            self._queue.clear()
            raise

    async def _commit(self, batch: list[tuple[NewDelivery, asyncio.Future[bool]]]) -> None:
        # A redelivery inside one batch: the first in the queue is the candidate, later ones
        # are duplicates whatever the database says.
        firsts: dict[str, NewDelivery] = {}
        for delivery, _ in batch:
            firsts.setdefault(delivery.id, delivery)
        try:
            new_ids = await self._write(list(firsts.values()))
        except asyncio.CancelledError:
            for _, future in batch:
                future.cancel()
            raise
        except Exception as exc:
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        for delivery, future in batch:
            if not future.done():
                future.set_result(delivery.id in new_ids and firsts[delivery.id] is delivery)
