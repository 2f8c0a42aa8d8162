"""The inbox: deliveries and the bot's own scheduled work, from ingest to done or dead."""

from __future__ import annotations

import secrets
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from bot.store.dialect import Dialect, Row
from bot.store.group_commit import GroupCommit, NewDelivery
from bot.store.models import Delivery, DeliveryState

DELIVERY_COLUMNS = (
    "id, event, action, payload, state, attempts, received_at, next_attempt_at, "
    "last_error, claim_token, finished_at"
)


# Comments (`/flaky` commands, which anyone who may comment can send) are claimed after every
# other due delivery: a flood of them never holds a failed check's triage back for a slot.
LATER_EVENTS = ("issue_comment",)
_LATER = ", ".join(f"'{event}'" for event in LATER_EVENTS)
CLAIM_ORDER = f"CASE WHEN event IN ({_LATER}) THEN 1 ELSE 0 END, next_attempt_at, id"


def claim_order(delivery: Delivery) -> tuple[bool, float, str]:
    return (delivery.event in LATER_EVENTS, delivery.next_attempt_at, delivery.id)


def delivery_from_row(row: Row) -> Delivery:
    return Delivery(
        id=row[0],
        event=row[1],
        action=row[2],
        payload=bytes(row[3]),
        state=DeliveryState(row[4]),
        attempts=row[5],
        received_at=row[6],
        next_attempt_at=row[7],
        last_error=row[8],
        claim_token=row[9],
        finished_at=row[10],
    )


class Deliveries(ABC):
    """Ingest through a group commit (each backend writes a batch its fastest way); every
    other step of a delivery's life is one statement, the same on both."""

    _sql: Dialect
    _group_commit: GroupCommit

    @abstractmethod
    async def complete_many(self, claims: Sequence[tuple[str, str]], now: float) -> None:
        """Mark done, in one write, every (delivery id, claim token) whose claim still holds."""

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

    async def claim(self, now: float, lease_seconds: float, limit: int) -> list[Delivery]:
        # SKIP LOCKED (PostgreSQL): a replica claiming at the same moment passes over the rows
        # this one is taking instead of waiting for them, and the two never take the same row.
        rows = await self._sql.returning(
            "UPDATE deliveries SET state = 'claimed', claim_token = $1, lease_until = $2, "
            "attempts = attempts + 1 WHERE id IN ("
            "  SELECT id FROM deliveries WHERE"
            "  (state = 'pending' AND next_attempt_at <= $3) OR"
            "  (state = 'claimed' AND lease_until <= $3)"
            f"  ORDER BY {CLAIM_ORDER} LIMIT $4 {self._sql.skip_locked}"
            f") RETURNING {DELIVERY_COLUMNS}",
            secrets.token_hex(8),
            now + lease_seconds,
            now,
            limit,
        )
        return sorted(map(delivery_from_row, rows), key=claim_order)

    async def extend_lease(self, delivery_id: str, claim_token: str, lease_until: float) -> bool:
        touched = await self._sql.execute(
            "UPDATE deliveries SET lease_until = $1 WHERE id = $2 AND claim_token = $3 "
            "AND state = 'claimed'",
            lease_until,
            delivery_id,
            claim_token,
        )
        return touched == 1

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

    async def _finish(
        self, delivery_id: str, claim_token: str, state: DeliveryState, **values: Any
    ) -> None:
        """Leave the claim in `state`, setting `values`, only if `claim_token` still holds it."""
        sets = ", ".join(f"{column} = ${n}" for n, column in enumerate(values, start=4))
        await self._sql.execute(
            f"UPDATE deliveries SET state = $1, claim_token = NULL, lease_until = NULL, {sets} "
            "WHERE id = $2 AND claim_token = $3",
            str(state),
            delivery_id,
            claim_token,
            *values.values(),
        )

    async def list_deliveries(
        self, limit: int, states: Sequence[DeliveryState] | None = None
    ) -> list[Delivery]:
        where, args = "", []
        if states:
            where = f"WHERE {self._sql.any_of('state', 1)}"
            args = [self._sql.listed([str(s) for s in states])]
        rows = await self._sql.fetch(
            f"SELECT {DELIVERY_COLUMNS} FROM deliveries {where} "
            f"ORDER BY received_at DESC, id LIMIT ${len(args) + 1}",
            *args,
            limit,
        )
        return [delivery_from_row(r) for r in rows]

    async def replay(self, delivery_id: str, now: float) -> bool:
        touched = await self._sql.execute(
            "UPDATE deliveries SET state = 'pending', attempts = 0, next_attempt_at = $1, "
            "claim_token = NULL, lease_until = NULL, finished_at = NULL WHERE id = $2",
            now,
            delivery_id,
        )
        return touched == 1

    async def schedule(
        self, delivery_id: str, event: str, payload: bytes, now: float, due: float
    ) -> bool:
        touched = await self._sql.execute(
            "INSERT INTO deliveries (id, event, action, payload, state, attempts, received_at, "
            "next_attempt_at) VALUES ($1, $2, NULL, $3, 'pending', 0, $4, $5) "
            "ON CONFLICT (id) DO NOTHING",
            delivery_id,
            event,
            payload,
            now,
            due,
        )
        return touched == 1

    async def inbox_depth(self) -> tuple[int, float | None]:
        row = await self._sql.fetchrow(
            "SELECT count(*), min(received_at) FROM deliveries "
            "WHERE state IN ('pending', 'claimed')"
        )
        assert row is not None  # an aggregate always gives its row
        return int(row[0]), row[1]

    async def prune_deliveries(self, older_than: float) -> int:
        return await self._sql.execute(
            "DELETE FROM deliveries WHERE state IN ('done', 'dead') AND finished_at < $1",
            older_than,
        )

    async def waiting(self, event: str) -> bool:
        return bool(
            await self._sql.fetchval(
                "SELECT EXISTS (SELECT 1 FROM deliveries WHERE event = $1 "
                "AND state IN ('pending', 'claimed'))",
                event,
            )
        )
