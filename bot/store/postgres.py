"""PostgreSQL backend: several replicas share one database.

Claims use `FOR UPDATE SKIP LOCKED`, so replicas never take the same delivery; the rerun
budget and each PR's comment are serialised with advisory locks, so they hold across
processes too. Advisory lock keys are hashed with the schema name, so two installations
sharing one database in different schemas (`?search_path=...` in DATABASE_URL, which
asyncpg sends as a server setting) never wait on each other.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import asyncpg

from bot.store.core import StoreCore
from bot.store.dialect import Dialect, Row, Session
from bot.store.group_commit import GroupCommit, NewDelivery
from bot.store.migrations import migration_files
from bot.store.models import DeliveryState

# A 64-bit advisory lock key, distinct per schema and per purpose.
_LOCK_KEY = "hashtextextended(coalesce(current_schema(), '') || ':' || $1::text, 0)"

# Queries are short; pr_lock holds its connection for a whole handler, so it draws from a
# pool of its own: a handler inside the lock can always get a query connection.
QUERY_POOL_SIZE = 10
LOCK_POOL_SIZE = 10
# Deliveries stored by one group commit at most (one INSERT over arrays).
MAX_INGEST_BATCH = 512


def _rows_touched(status: str) -> int:
    """asyncpg's command tag, e.g. `UPDATE 3` or `INSERT 0 1`: the last number is the count."""
    return int(status.rsplit(" ", 1)[-1])


class _Executor(Session):
    """Statements on a pool (each on whichever connection is free) or on one connection:
    asyncpg gives both the same methods."""

    def __init__(self, executor: asyncpg.Pool | asyncpg.Connection) -> None:
        self._executor = executor

    async def fetch(self, sql: str, *args: Any) -> list[Row]:
        rows: list[Row] = await self._executor.fetch(sql, *args)
        return rows

    async def fetchrow(self, sql: str, *args: Any) -> Row | None:
        row: Row | None = await self._executor.fetchrow(sql, *args)
        return row

    async def fetchval(self, sql: str, *args: Any) -> Any:
        return await self._executor.fetchval(sql, *args)

    async def execute(self, sql: str, *args: Any) -> int:
        return _rows_touched(await self._executor.execute(sql, *args))

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        await self._executor.executemany(sql, rows)

    async def returning(self, sql: str, *args: Any) -> list[Row]:
        return await self.fetch(sql, *args)


class PostgresDialect(_Executor, Dialect):
    """A pool for queries; session locks draw on a pool of their own (see LOCK_POOL_SIZE)."""

    # Rows requested in the same instant, by the order they were taken.
    insertion_order = "seq"
    skip_locked = "FOR UPDATE SKIP LOCKED"

    def __init__(self, pool: asyncpg.Pool, lock_pool: asyncpg.Pool) -> None:
        super().__init__(pool)
        self._pool = pool
        self._lock_pool = lock_pool
        self._local_locks: dict[str, asyncio.Lock] = {}

    def any_of(self, column: str, n: int) -> str:
        return f"{column} = ANY(${n}::text[])"

    def listed(self, values: Sequence[str]) -> list[str]:
        return list(values)

    def json(self, n: int) -> str:
        return f"${n}::jsonb"

    def json_has(self, column: str, n: int) -> str:
        return f"{column} ? ${n}"

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Session]:
        async with self._pool.acquire() as conn, conn.transaction():
            yield _Executor(conn)

    @asynccontextmanager
    async def exclusive(self, *keys: str) -> AsyncIterator[Session]:
        # Under READ COMMITTED two replicas could both count and both write; transaction
        # locks, released at commit, make each count and its write one step.
        async with self._pool.acquire() as conn, conn.transaction():
            for key in keys:
                await conn.execute(f"SELECT pg_advisory_xact_lock({_LOCK_KEY})", key)
            yield _Executor(conn)

    @asynccontextmanager
    async def lock(self, key: str) -> AsyncIterator[None]:
        # Tasks of this process queue on an asyncio lock, so at most one connection per key
        # waits on the database lock; other replicas queue on the session advisory lock.
        async with (
            self._local_locks.setdefault(key, asyncio.Lock()),
            self._lock_pool.acquire() as conn,
        ):
            await conn.execute(f"SELECT pg_advisory_lock({_LOCK_KEY})", key)
            try:
                yield
            finally:
                # If this is cancelled, the pool's reset on release unlocks all the same.
                await conn.execute(f"SELECT pg_advisory_unlock({_LOCK_KEY})", key)


class PostgresStore(StoreCore):
    def __init__(self, pool: asyncpg.Pool, lock_pool: asyncpg.Pool) -> None:
        self._pool = pool
        self._lock_pool = lock_pool
        self._group_commit = GroupCommit(self._insert_deliveries, MAX_INGEST_BATCH)
        self._sql = PostgresDialect(pool, lock_pool)

    @classmethod
    async def open(cls, database_url: str) -> PostgresStore:
        pool = await asyncpg.create_pool(database_url, min_size=1, max_size=QUERY_POOL_SIZE)
        try:
            lock_pool = await asyncpg.create_pool(database_url, min_size=0, max_size=LOCK_POOL_SIZE)
        except BaseException:
            await pool.close()
            raise
        return await cls(pool, lock_pool)._migrated()

    async def migrate(self) -> list[str]:
        """Applied under a session advisory lock, so replicas starting together apply each
        file once: the second waits, then finds everything recorded."""
        applied = []
        async with self._pool.acquire() as conn:
            await conn.execute(f"SELECT pg_advisory_lock({_LOCK_KEY})", "migrations")
            try:
                await conn.execute(
                    "CREATE TABLE IF NOT EXISTS schema_migrations "
                    "(version integer PRIMARY KEY, name text NOT NULL)"
                )
                done = {
                    r["version"] for r in await conn.fetch("SELECT version FROM schema_migrations")
                }
                for version, name, sql in migration_files("postgres"):
                    if version in done:
                        continue
                    async with conn.transaction():
                        await conn.execute(sql)
                        await conn.execute(
                            "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                            version,
                            name,
                        )
                    applied.append(name)
            finally:
                await conn.execute(f"SELECT pg_advisory_unlock({_LOCK_KEY})", "migrations")
        return applied

    async def close(self) -> None:
        await self._group_commit.close()
        await self._lock_pool.close()
        await self._pool.close()

    # --- inbox ---------------------------------------------------------------------------
    async def _insert_deliveries(self, batch: Sequence[NewDelivery]) -> set[str]:
        # One statement, so one transaction and one commit for the whole batch.
        rows = await self._pool.fetch(
            "INSERT INTO deliveries (id, event, action, payload, state, received_at, "
            "next_attempt_at, finished_at) SELECT id, event, action, payload, "
            "CASE WHEN done THEN $6 ELSE $5 END, received_at, received_at, "
            "CASE WHEN done THEN received_at END "
            "FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[], $7::float8[], "
            "$8::bool[]) AS t (id, event, action, payload, received_at, done) "
            "ON CONFLICT (id) DO NOTHING RETURNING id",
            [d.id for d in batch],
            [d.event for d in batch],
            [d.action for d in batch],
            [d.payload for d in batch],
            str(DeliveryState.PENDING),
            str(DeliveryState.DONE),
            [d.received_at for d in batch],
            [d.done for d in batch],
        )
        return {str(row["id"]) for row in rows}

    async def complete_many(self, claims: Sequence[tuple[str, str]], now: float) -> None:
        await self._pool.execute(
            "UPDATE deliveries AS d SET state = 'done', claim_token = NULL, lease_until = NULL, "
            "finished_at = $3, last_error = NULL "
            "FROM unnest($1::text[], $2::text[]) AS c (id, claim_token) "
            "WHERE d.id = c.id AND d.claim_token = c.claim_token",
            [delivery_id for delivery_id, _ in claims],
            [claim_token for _, claim_token in claims],
            now,
        )

    # --- write pacing ------------------------------------------------------------------------
    def write_schedule(self) -> PostgresStore:
        return self

    async def reserve_write(
        self, installation_id: int, interval: float, not_before: float, max_wait: float
    ) -> float:
        # One statement, one round trip: the row lock orders replicas taking slots at once,
        # and the database's clock is the one clock they share. The pacer asks only with
        # `not_before` <= `max_wait`, so a new row's slot is always taken.
        wait = await self._pool.fetchval(
            "WITH clock AS (SELECT extract(epoch FROM clock_timestamp())::float8 AS now) "
            "INSERT INTO write_pace AS p (installation_id, next_at) "
            "SELECT $1, now + $3 + $2 FROM clock "
            "ON CONFLICT (installation_id) DO UPDATE "
            "SET next_at = greatest(p.next_at, (SELECT now FROM clock) + $3) + $2 "
            "WHERE greatest(p.next_at, (SELECT now FROM clock) + $3) "
            "<= (SELECT now FROM clock) + $4 "
            "RETURNING p.next_at - $2 - (SELECT now FROM clock)",
            installation_id,
            interval,
            not_before,
            max_wait,
        )
        if wait is not None:
            return float(wait)
        # Held back past `max_wait`: nothing taken. A second round trip, on this rare path
        # only, says for how long (never less than past `max_wait`, as promised).
        held = await self._pool.fetchval(
            "SELECT next_at - extract(epoch FROM clock_timestamp())::float8 "
            "FROM write_pace WHERE installation_id = $1",
            installation_id,
        )
        return max(float(held or 0.0), math.nextafter(max_wait, math.inf))

    async def defer_writes(self, installation_id: int, seconds: float) -> None:
        await self._pool.execute(
            "INSERT INTO write_pace AS p (installation_id, next_at) "
            "VALUES ($1, extract(epoch FROM clock_timestamp())::float8 + $2) "
            "ON CONFLICT (installation_id) DO UPDATE "
            "SET next_at = greatest(p.next_at, excluded.next_at)",
            installation_id,
            seconds,
        )
