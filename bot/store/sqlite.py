"""SQLite backend: the embedded default, one file, zero setup."""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite

from bot.store.group_commit import GroupCommit, NewDelivery
from bot.store.lifecycle import DeliveryLifecycle
from bot.store.migrations import migration_files
from bot.store.models import CheckAttempt, Delivery, DeliveryState, StickyComment
from bot.triage.models import Decision

# One multi-row INSERT per group commit, 8 bound values a row: well under SQLite's limit of
# 32766 variables.
MAX_INGEST_BATCH = 512

PAGE_SIZE = 16384
# Claims marked done by one UPDATE, 2 bound values each.
MAX_COMPLETE_BATCH = 4096

_DELIVERY_COLUMNS = (
    "id, event, action, payload, state, attempts, received_at, next_attempt_at, "
    "last_error, claim_token"
)


def sqlite_path(database_url: str) -> str:
    """`sqlite:///relative.db`, `sqlite:////abs/path.db` or `sqlite://:memory:`."""
    rest = database_url.removeprefix("sqlite:")
    if rest in ("//:memory:", ":memory:"):
        return ":memory:"
    if rest.startswith("///"):
        return rest[3:]
    raise ValueError(f"cannot read a SQLite path from {database_url!r}")


def _delivery(row: Any) -> Delivery:
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
    )


def _attempt(row: Any) -> CheckAttempt:
    return CheckAttempt(
        repo=row[0],
        check_run_id=row[1],
        pr_number=row[2],
        head_sha=row[3],
        check_name=row[4],
        html_url=row[5],
        attempt=row[6],
        conclusion=row[7],
        decisions=[Decision.model_validate(d) for d in json.loads(row[8])],
        rerun_note=row[9],
        recorded_at=row[10],
    )


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


class SQLiteStore(DeliveryLifecycle):
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
        self._pr_locks: dict[tuple[str, int], asyncio.Lock] = {}
        self._group_commit = GroupCommit(self._insert_deliveries, MAX_INGEST_BATCH)

    @classmethod
    async def open(cls, database_url: str) -> SQLiteStore:
        path = sqlite_path(database_url)
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        db = await _connect(path, synchronous="NORMAL")
        try:
            ingest = None if path == ":memory:" else await _connect(path, synchronous="FULL")
        except BaseException:
            await db.close()
            raise
        store = cls(db, ingest)
        try:
            await store.migrate()
        except BaseException:
            await store.close()
            raise
        return store

    async def migrate(self) -> list[str]:
        """Apply the migrations not applied yet; returns their names."""
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
                    for statement in sql.split(";"):
                        if statement.strip():
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

    async def _write(self, sql: str, params: Sequence[Any] = ()) -> aiosqlite.Cursor:
        async with self._write_lock:
            return await self._db.execute(sql, params)

    async def close(self) -> None:
        await self._group_commit.close()
        if self._ingest is not self._db:
            await self._ingest.close()
        await self._db.close()

    async def ping(self) -> None:
        await self._db.execute_fetchall("SELECT 1")

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
            rows = await self._ingest.execute_fetchall(
                "INSERT INTO deliveries (id, event, action, payload, state, received_at, "
                f"next_attempt_at, finished_at) VALUES {values} "
                "ON CONFLICT (id) DO NOTHING RETURNING id",
                params,
            )
        return {str(row[0]) for row in rows}

    async def claim(self, now: float, lease_seconds: float, limit: int) -> list[Delivery]:
        token = secrets.token_hex(8)
        async with self._write_lock:
            rows = await self._db.execute_fetchall(
                f"UPDATE deliveries SET state = 'claimed', claim_token = ?, lease_until = ?, "
                f"attempts = attempts + 1 WHERE id IN ("
                f"  SELECT id FROM deliveries WHERE"
                f"  (state = 'pending' AND next_attempt_at <= ?) OR"
                f"  (state = 'claimed' AND lease_until <= ?)"
                f"  ORDER BY next_attempt_at LIMIT ?"
                f") RETURNING {_DELIVERY_COLUMNS}",
                (token, now + lease_seconds, now, now, limit),
            )
        return sorted((_delivery(r) for r in rows), key=lambda d: d.next_attempt_at)

    async def _finish(
        self, delivery_id: str, claim_token: str, state: DeliveryState, **values: Any
    ) -> None:
        sets = ", ".join(f"{column} = ?" for column in values)
        await self._write(
            f"UPDATE deliveries SET state = ?, claim_token = NULL, lease_until = NULL, {sets} "
            f"WHERE id = ? AND claim_token = ?",
            (state, *values.values(), delivery_id, claim_token),
        )

    async def extend_lease(self, delivery_id: str, claim_token: str, lease_until: float) -> bool:
        cursor = await self._write(
            "UPDATE deliveries SET lease_until = ? WHERE id = ? AND claim_token = ? "
            "AND state = 'claimed'",
            (lease_until, delivery_id, claim_token),
        )
        return cursor.rowcount == 1

    async def complete_many(self, claims: Sequence[tuple[str, str]], now: float) -> None:
        for start in range(0, len(claims), MAX_COMPLETE_BATCH):
            chunk = claims[start : start + MAX_COMPLETE_BATCH]
            pairs = ", ".join("(?, ?)" for _ in chunk)
            await self._write(
                "UPDATE deliveries SET state = 'done', claim_token = NULL, lease_until = NULL, "
                f"finished_at = ?, last_error = NULL FROM (VALUES {pairs}) AS c "
                # A join rather than `(id, claim_token) IN (...)`, which scans the table.
                "WHERE deliveries.id = c.column1 AND deliveries.claim_token = c.column2",
                [now, *(value for claim in chunk for value in claim)],
            )

    async def list_deliveries(
        self, limit: int, states: Sequence[DeliveryState] | None = None
    ) -> list[Delivery]:
        where, params = "", []
        if states:
            where = f"WHERE state IN ({', '.join('?' for _ in states)})"
            params = [str(s) for s in states]
        rows = await self._db.execute_fetchall(
            f"SELECT {_DELIVERY_COLUMNS} FROM deliveries {where} "
            f"ORDER BY received_at DESC, id LIMIT ?",
            (*params, limit),
        )
        return [_delivery(r) for r in rows]

    async def replay(self, delivery_id: str, now: float) -> bool:
        cursor = await self._write(
            "UPDATE deliveries SET state = 'pending', attempts = 0, next_attempt_at = ?, "
            "claim_token = NULL, lease_until = NULL, finished_at = NULL WHERE id = ?",
            (now, delivery_id),
        )
        return cursor.rowcount == 1

    async def inbox_depth(self) -> tuple[int, float | None]:
        rows = list(
            await self._db.execute_fetchall(
                "SELECT count(*), min(received_at) FROM deliveries "
                "WHERE state IN ('pending', 'claimed')"
            )
        )
        return int(rows[0][0]), rows[0][1]

    async def prune_deliveries(self, older_than: float) -> int:
        cursor = await self._write(
            "DELETE FROM deliveries WHERE state IN ('done', 'dead') AND finished_at < ?",
            (older_than,),
        )
        return cursor.rowcount

    # --- triage record ---------------------------------------------------------------------
    async def record_check_attempt(self, attempt: CheckAttempt) -> None:
        decisions = json.dumps([d.model_dump(mode="json") for d in attempt.decisions])
        await self._write(
            "INSERT INTO check_attempts (repo, check_run_id, pr_number, head_sha, check_name, "
            "html_url, attempt, conclusion, decisions, rerun_note, recorded_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (repo, check_run_id) DO UPDATE "
            "SET attempt = excluded.attempt, conclusion = excluded.conclusion, "
            "decisions = excluded.decisions, rerun_note = excluded.rerun_note, "
            "recorded_at = excluded.recorded_at",
            (
                attempt.repo,
                attempt.check_run_id,
                attempt.pr_number,
                attempt.head_sha,
                attempt.check_name,
                attempt.html_url,
                attempt.attempt,
                attempt.conclusion,
                decisions,
                attempt.rerun_note,
                attempt.recorded_at,
            ),
        )

    _ATTEMPT_COLUMNS = (
        "repo, check_run_id, pr_number, head_sha, check_name, html_url, attempt, conclusion, "
        "decisions, rerun_note, recorded_at"
    )

    async def check_attempts_for_pr(self, repo: str, pr_number: int) -> list[CheckAttempt]:
        rows = await self._db.execute_fetchall(
            f"SELECT {self._ATTEMPT_COLUMNS} FROM check_attempts WHERE repo = ? AND "
            f"pr_number = ? ORDER BY recorded_at, check_run_id",
            (repo, pr_number),
        )
        return [_attempt(r) for r in rows]

    async def check_attempts_for(
        self, repo: str, head_sha: str, check_name: str
    ) -> list[CheckAttempt]:
        rows = await self._db.execute_fetchall(
            f"SELECT {self._ATTEMPT_COLUMNS} FROM check_attempts WHERE repo = ? AND "
            f"head_sha = ? AND check_name = ? ORDER BY attempt, check_run_id",
            (repo, head_sha, check_name),
        )
        return [_attempt(r) for r in rows]

    async def reserve_rerun(
        self, repo: str, head_sha: str, check_name: str, job_id: int, budget: int, now: float
    ) -> bool:
        # One statement, so concurrent tasks and processes cannot both take the last rerun.
        await self._write(
            "INSERT INTO reruns (repo, head_sha, check_name, job_id, status, requested_at) "
            "SELECT ?, ?, ?, ?, 0, ? WHERE (SELECT count(*) FROM reruns WHERE repo = ? "
            "AND head_sha = ? AND check_name = ?) < ? ON CONFLICT (repo, job_id) DO NOTHING",
            (repo, head_sha, check_name, job_id, now, repo, head_sha, check_name, budget),
        )
        rows = list(
            await self._db.execute_fetchall(
                "SELECT status FROM reruns WHERE repo = ? AND job_id = ?", (repo, job_id)
            )
        )
        return bool(rows) and rows[0][0] == 0

    async def finish_rerun(self, repo: str, job_id: int, status: int) -> None:
        await self._write(
            "UPDATE reruns SET status = ? WHERE repo = ? AND job_id = ?", (status, repo, job_id)
        )

    async def reruns_for(self, repo: str, head_sha: str, check_name: str) -> list[int]:
        rows = await self._db.execute_fetchall(
            "SELECT status FROM reruns WHERE repo = ? AND head_sha = ? AND check_name = ? "
            "ORDER BY requested_at, rowid",
            (repo, head_sha, check_name),
        )
        return [int(r[0]) for r in rows]

    # --- sticky comment ------------------------------------------------------------------
    @asynccontextmanager
    async def pr_lock(self, repo: str, pr_number: int) -> AsyncIterator[None]:
        lock = self._pr_locks.setdefault((repo, pr_number), asyncio.Lock())
        async with lock:
            yield

    async def get_sticky_comment(self, repo: str, pr_number: int) -> StickyComment | None:
        rows = list(
            await self._db.execute_fetchall(
                "SELECT comment_id, body_sha FROM sticky_comments WHERE repo = ? AND pr_number = ?",
                (repo, pr_number),
            )
        )
        if not rows:
            return None
        return StickyComment(
            repo=repo, pr_number=pr_number, comment_id=rows[0][0], body_sha=rows[0][1]
        )

    async def save_sticky_comment(self, comment: StickyComment) -> None:
        await self._write(
            "INSERT INTO sticky_comments (repo, pr_number, comment_id, body_sha) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (repo, pr_number) DO UPDATE "
            "SET comment_id = excluded.comment_id, body_sha = excluded.body_sha",
            (comment.repo, comment.pr_number, comment.comment_id, comment.body_sha),
        )

    # --- installations -------------------------------------------------------------------
    async def set_installation(
        self, installation_id: int, account: str, active: bool, now: float
    ) -> None:
        await self._write(
            "INSERT INTO installations (id, account, active, updated_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (id) DO UPDATE SET account = excluded.account, "
            "active = excluded.active, updated_at = excluded.updated_at",
            (installation_id, account, int(active), now),
        )

    async def installations(self) -> list[tuple[int, str, bool]]:
        rows = await self._db.execute_fetchall(
            "SELECT id, account, active FROM installations ORDER BY id"
        )
        return [(int(r[0]), str(r[1]), bool(r[2])) for r in rows]
