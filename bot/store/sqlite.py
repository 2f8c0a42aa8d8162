"""SQLite backend: the embedded default, one file, zero setup."""

from __future__ import annotations

import asyncio
import functools
import json
import re
import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite

from bot.store.core import StoreCore
from bot.store.dialect import Dialect, Row, Session
from bot.store.group_commit import GroupCommit, NewDelivery
from bot.store.migrations import migration_files
from bot.store.models import DeliveryState

# One multi-row INSERT per group commit, 8 bound values a row: well under SQLite's limit of
# 32766 variables.
MAX_INGEST_BATCH = 512
# The ingest connection checkpoints (copies the WAL into the database file and syncs it)
# inside the commit that takes the WAL past this many pages, and the deliveries of that
# commit wait for it: the p99 of ingest. Larger checkpoints copy an index page that many
# commits changed once rather than once per checkpoint. In bench/ingest_bench.py at 50
# connections, p99 was 21-40 ms at SQLite's default of 1000, 14-26 ms at 500 and 11-16 ms at
# 100; deliveries/s were within one run's noise of each other (medians a few percent lower
# at 100).
INGEST_WAL_AUTOCHECKPOINT = 500

PAGE_SIZE = 16384
# Claims marked done by one UPDATE, 2 bound values each.
MAX_COMPLETE_BATCH = 4096


def sqlite_path(database_url: str) -> str:
    """`sqlite:///relative.db`, `sqlite:////abs/path.db` or `sqlite://:memory:`."""
    rest = database_url.removeprefix("sqlite:")
    if rest in ("//:memory:", ":memory:"):
        return ":memory:"
    if rest.startswith("///"):
        return rest[3:]
    raise ValueError(f"cannot read a SQLite path from {database_url!r}")


def _statements(script: str) -> list[str]:
    """A migration's statements, split where SQLite says one ends (so a `;` inside a comment
    or a string literal does not cut one in two)."""
    statements: list[str] = []
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            statements.append(pending)
            pending = ""
    if pending.strip() and not all(
        part.strip().startswith("--") or not part.strip() for part in pending.splitlines()
    ):
        raise ValueError(f"incomplete statement at the end of a migration: {pending.strip()!r}")
    return statements


async def _connect(path: str, *, synchronous: str) -> aiosqlite.Connection:
    # Autocommit: every statement below is atomic on its own, so any number of
    # processes can share the file (a CLI reading while `serve` writes).
    db = await aiosqlite.connect(path, isolation_level=None)
    try:
        # Takes effect only in a file not yet written to. Webhook payloads run to tens of KB:
        # in 16 KB pages a typical one fits in a single page instead of a chain of overflow
        # pages, which costs about a third less CPU to insert and to update.
        await db.execute(f"PRAGMA page_size={PAGE_SIZE}")
        await db.execute("PRAGMA journal_mode=WAL")
        await db.execute("PRAGMA busy_timeout=10000")
        await db.execute(f"PRAGMA synchronous={synchronous}")
    except BaseException:
        await db.close()
        raise
    return db


_NUMBERED = re.compile(r"\$(\d+)")


@functools.lru_cache(maxsize=256)
def _sqlite_sql(sql: str) -> tuple[str, tuple[int, ...]]:
    """PostgreSQL's `$n` as SQLite's plain `?`, and which argument each `?` takes.

    Not SQLite's numbered `?n`: Python 3.12.0 to 3.12.3 took it for a named placeholder and
    warned (a DeprecationWarning) on every statement given a sequence of arguments."""
    order: list[int] = []

    def plain(match: re.Match[str]) -> str:
        order.append(int(match[1]) - 1)
        return "?"

    return _NUMBERED.sub(plain, sql), tuple(order)


def _bound(sql: str, args: Sequence[Any]) -> tuple[str, tuple[Any, ...]]:
    """The statement for sqlite3 and its arguments, one per `?` in order."""
    text, order = _sqlite_sql(sql)
    return text, tuple(args[n] for n in order)


class _Connection(Session):
    """Statements sent on the connection as they come (by a holder of the write lock)."""

    def __init__(self, db: aiosqlite.Connection) -> None:
        self._db = db

    async def fetch(self, sql: str, *args: Any) -> list[Row]:
        return list(await self._db.execute_fetchall(*_bound(sql, args)))

    async def fetchrow(self, sql: str, *args: Any) -> Row | None:
        # One trip to the connection's thread, where a cursor's fetchone would take two.
        return next(iter(await self._db.execute_fetchall(*_bound(sql, args))), None)

    async def execute(self, sql: str, *args: Any) -> int:
        cursor = await self._db.execute(*_bound(sql, args))
        return cursor.rowcount

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        text, order = _sqlite_sql(sql)
        await self._db.executemany(text, [tuple(row[n] for n in order) for row in rows])

    async def returning(self, sql: str, *args: Any) -> list[Row]:
        return await self.fetch(sql, *args)


class SQLiteDialect(_Connection, Dialect):
    """One connection; its writes take turns on the store's write lock.

    Statements run in autocommit mode, each atomic on its own, and SQLite lets one writer in
    at a time: a decision that is one statement needs no other lock.
    """

    insertion_order = "rowid"
    # One writer at a time: a claim never meets another one's rows half taken.
    skip_locked = ""

    def __init__(self, db: aiosqlite.Connection, write_lock: asyncio.Lock) -> None:
        super().__init__(db)
        self._write_lock = write_lock
        self._locks: dict[str, asyncio.Lock] = {}

    async def execute(self, sql: str, *args: Any) -> int:
        async with self._write_lock:
            return await super().execute(sql, *args)

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        async with self._write_lock:
            await super().executemany(sql, rows)

    async def returning(self, sql: str, *args: Any) -> list[Row]:
        async with self._write_lock:
            return await super().returning(sql, *args)

    def any_of(self, column: str, n: int) -> str:
        return f"{column} IN (SELECT value FROM json_each(${n}))"

    def listed(self, values: Sequence[str]) -> str:
        return json.dumps(list(values))

    def json(self, n: int) -> str:
        return f"${n}"

    def json_has(self, column: str, n: int) -> str:
        return f"EXISTS (SELECT 1 FROM json_each({column}) WHERE value = ${n})"

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Session]:
        async with self._write_lock:
            await self._db.execute("BEGIN IMMEDIATE")
            try:
                yield _Connection(self._db)
                await self._db.execute("COMMIT")
            except BaseException:
                await self._db.execute("ROLLBACK")
                raise

    @asynccontextmanager
    async def exclusive(self, *keys: str) -> AsyncIterator[Session]:
        # Every writer of this process waits for the write lock, whatever its keys.
        async with self._write_lock:
            yield _Connection(self._db)

    @asynccontextmanager
    async def lock(self, key: str) -> AsyncIterator[None]:
        async with self._locks.setdefault(key, asyncio.Lock()):
            yield


class SQLiteStore(StoreCore):
    def __init__(
        self, db: aiosqlite.Connection, ingest: aiosqlite.Connection | None = None
    ) -> None:
        self._db = db
        # The inbox writes on a connection of its own with synchronous=FULL: a delivery is
        # answered 2xx only once its commit has reached the disk. The other connection keeps
        # synchronous=NORMAL (WAL: safe against a crash of the process) for the worker's
        # bookkeeping, which would otherwise pay an fsync per statement.
        self._ingest = ingest or db
        # Both connections write to one file, and SQLite lets one writer in at a time: a
        # writer that finds the lock taken sleeps in the busy handler (1 ms, then longer)
        # whatever the other needed. Taking turns here instead keeps ingest commits from
        # sleeping behind the worker's updates, and the worker's behind ingest.
        self._write_lock = asyncio.Lock()
        self._group_commit = GroupCommit(self._insert_deliveries, MAX_INGEST_BATCH)
        self._sql = SQLiteDialect(db, self._write_lock)

    @classmethod
    async def open(cls, database_url: str) -> SQLiteStore:
        path = sqlite_path(database_url)
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        db = await _connect(path, synchronous="NORMAL")
        try:
            ingest = None if path == ":memory:" else await _connect(path, synchronous="FULL")
            if ingest is not None:
                await ingest.execute(f"PRAGMA wal_autocheckpoint={INGEST_WAL_AUTOCHECKPOINT}")
        except BaseException:
            await db.close()
            raise
        return await cls(db, ingest)._migrated()

    async def migrate(self) -> list[str]:
        await self._db.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations "
            "(version INTEGER PRIMARY KEY, name TEXT NOT NULL)"
        )
        applied = []
        for version, name, sql in migration_files("sqlite"):
            await self._db.execute("BEGIN IMMEDIATE")
            try:
                rows = await self._db.execute_fetchall(
                    "SELECT 1 FROM schema_migrations WHERE version = ?", (version,)
                )
                if not list(rows):
                    for statement in _statements(sql):
                        await self._db.execute(statement)
                    await self._db.execute(
                        "INSERT INTO schema_migrations (version, name) VALUES (?, ?)",
                        (version, name),
                    )
                    applied.append(name)
                await self._db.execute("COMMIT")
            except BaseException:
                await self._db.execute("ROLLBACK")
                raise
        return applied

    async def close(self) -> None:
        await self._group_commit.close()
        if self._ingest is not self._db:
            await self._ingest.close()
        await self._db.close()

    # --- inbox ---------------------------------------------------------------------------
    async def _insert_deliveries(self, batch: Sequence[NewDelivery]) -> set[str]:
        # One statement is one transaction in autocommit mode, so nothing else sent on the
        # connection meanwhile can land inside it.
        values = ", ".join("(?, ?, ?, ?, ?, ?, ?, ?)" for _ in batch)
        pending, done = str(DeliveryState.PENDING), str(DeliveryState.DONE)
        params = [
            value
            for d in batch
            for value in (
                d.id,
                d.event,
                d.action,
                d.payload,
                done if d.done else pending,
                d.received_at,
                d.received_at,
                d.received_at if d.done else None,
            )
        ]
        async with self._write_lock:
            # No RETURNING: with it, sqlite3 steps the statement once per returned row and
            # commits at the last step, each step a trip out of and back into the GIL. In
            # `serve` under load a batch of 25 then took 2.3 ms in aiosqlite's thread (p50)
            # against 0.8 ms for the INSERT alone, and ingest took a quarter fewer deliveries
            # a second at 50 connections.
            cursor = await self._ingest.execute(
                "INSERT INTO deliveries (id, event, action, payload, state, received_at, "
                f"next_attempt_at, finished_at) VALUES {values} ON CONFLICT (id) DO NOTHING",
                params,
            )
            added, last = cursor.rowcount, cursor.lastrowid
            if added == len(batch):
                return {d.id for d in batch}
            if added <= 0 or last is None:
                return set()
            # Some were redeliveries (rare). `deliveries` has no INTEGER PRIMARY KEY, so each
            # row the INSERT added took the largest rowid plus one while it held the write
            # lock: the new rows are the last `added` rowids, up to the last one inserted.
            rows = await self._ingest.execute_fetchall(
                "SELECT id FROM deliveries WHERE rowid > ? AND rowid <= ?", (last - added, last)
            )
        return {str(row[0]) for row in rows}

    async def complete_many(self, claims: Sequence[tuple[str, str]], now: float) -> None:
        for start in range(0, len(claims), MAX_COMPLETE_BATCH):
            chunk = claims[start : start + MAX_COMPLETE_BATCH]
            pairs = ", ".join("(?, ?)" for _ in chunk)
            # Not through the dialect: one statement per chunk size would fill its cache.
            async with self._write_lock:
                await self._db.execute(
                    "UPDATE deliveries SET state = 'done', claim_token = NULL, lease_until = NULL, "
                    f"finished_at = ?, last_error = NULL FROM (VALUES {pairs}) AS c "
                    # A join rather than `(id, claim_token) IN (...)`, which scans the table.
                    "WHERE deliveries.id = c.column1 AND deliveries.claim_token = c.column2",
                    [now, *(value for claim in chunk for value in claim)],
                )

    # --- write pacing ------------------------------------------------------------------------
    def write_schedule(self) -> None:
        return None
