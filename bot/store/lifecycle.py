"""What both backends do the same way on top of their own SQL: the delivery's life."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from bot.store.group_commit import GroupCommit, NewDelivery
from bot.store.models import DeliveryState


class DeliveryLifecycle(ABC):
    """Ingest through a group commit; finish a claim through one `_finish` per backend."""

    _group_commit: GroupCommit

    @abstractmethod
    async def _finish(
        self, delivery_id: str, claim_token: str, state: DeliveryState, **values: Any
    ) -> None:
        """Leave the claim in `state`, setting `values`, only if `claim_token` still holds it."""

    @abstractmethod
    async def complete_many(self, claims: Sequence[tuple[str, str]], now: float) -> None: ...

    async def put_delivery(
        self,
        delivery_id: str,
        event: str,
        action: str | None,
        payload: bytes,
        now: float,
        *,
        done: bool = False,
    ) -> bool:
        return await self._group_commit.put(
            NewDelivery(delivery_id, event, action, payload, now, done)
        )

    async def complete(self, delivery_id: str, claim_token: str, now: float) -> None:
        await self.complete_many([(delivery_id, claim_token)], now)

    async def retry_later(
        self,
        delivery_id: str,
        claim_token: str,
        error: str,
        next_attempt_at: float,
        *,
        attempts: int | None = None,
    ) -> None:
        counted = {} if attempts is None else {"attempts": attempts}
        await self._finish(
            delivery_id,
            claim_token,
            DeliveryState.PENDING,
            last_error=error,
            next_attempt_at=next_attempt_at,
            **counted,
        )

    async def dead_letter(self, delivery_id: str, claim_token: str, error: str, now: float) -> None:
        await self._finish(
            delivery_id, claim_token, DeliveryState.DEAD, last_error=error, finished_at=now
        )
