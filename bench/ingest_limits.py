"""Reference ingest targets: what a durable acknowledgement costs, apart from the bot's code.

Each is an aiohttp handler on uvloop that does what the bot does before it stores a delivery,
with code of its own: read the body, check X-Hub-Signature-256 (HMAC-SHA256,
`hmac.compare_digest`; 401 on a mismatch), check the body is a JSON object and read its
`action` (pydantic-core, which checks every byte is JSON but builds only that field; 400
otherwise), and answer 202 with a small JSON body.

Variants:
  limit-ack      stores nothing: what ingest costs before any storage
  limit-row      answers only once a small row per delivery (id, event, action, received
                 time; not the payload) is committed to SQLite (WAL, synchronous=FULL,
                 page_size 16384, wal_autocheckpoint 500) by a group commit: the event loop
                 gathers the rows of one loop iteration and hands them through a queue to
                 a writer thread owning one plain `sqlite3` connection, which commits all
                 it finds queued with one multi-row INSERT and wakes their requests with
                 one `call_soon_threadsafe`
  limit-payload  the same with the whole body in a BLOB column too: the least any durable
                 inbox in SQLite must do
  limit-nosync   limit-payload with synchronous=OFF: NOT durable (a power cut can lose
                 acknowledged rows, a killed process cannot); its gap to limit-payload is
                 the fsync's share
  limit-segment  the payloads appended to a file beside the database (DBPATH.payloads) and
                 synced, then the limit-row rows committed: payloads outside SQLite, at
                 the price of two fsyncs a batch

The table is the targets' own (`inbox`), not the bot's schema, in the file DBPATH.
ingest_bench.py starts them (`--targets limit-...`) with WEBHOOK_SECRET in the environment:

    WEBHOOK_SECRET=... python bench/ingest_limits.py PORT VARIANT DBPATH
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import hmac
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson
import uvloop
from aiohttp import web
from pydantic_core import SchemaValidator, ValidationError, core_schema


@dataclass(frozen=True)
class Storage:
    keep_payload: bool
    synchronous: str
    # The payloads appended to a file beside the database and synced before the rows commit,
    # the rows keeping none: two fsyncs a batch, and small rows.
    payload_file: bool = False


VARIANTS: dict[str, Storage | None] = {
    "limit-ack": None,
    "limit-row": Storage(keep_payload=False, synchronous="FULL"),
    "limit-payload": Storage(keep_payload=True, synchronous="FULL"),
    "limit-nosync": Storage(keep_payload=True, synchronous="OFF"),
    "limit-segment": Storage(keep_payload=True, synchronous="FULL", payload_file=True),
}
# os.writev takes at most IOV_MAX (1024 on Linux) buffers a call.
BUFFERS_PER_WRITE = 1024
PATH = "/api/github/webhooks"  # the bot's route

SCHEMA = """
CREATE TABLE IF NOT EXISTS inbox (
    id TEXT PRIMARY KEY,
    event TEXT NOT NULL,
    action TEXT,
    payload BLOB,
    received_at REAL NOT NULL
)
"""
COLUMNS = ("id", "event", "action", "payload", "received_at")

Row = tuple[str, str, str | None, bytes | None, float]  # in the order of COLUMNS
Batch = list[tuple[Row, asyncio.Future[None]]]
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# Any JSON object; only `action` becomes a Python object.
HEAD = SchemaValidator(
    core_schema.typed_dict_schema(
        {"action": core_schema.typed_dict_field(core_schema.any_schema(), required=False)},
        extra_behavior="ignore",
    )
)


def open_inbox(path: str, synchronous: str) -> sqlite3.Connection:
    # Made here, then used only by the writer thread: one thread at a time.
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    # The page size is fixed once the file has pages, and WAL mode keeps it: set it first.
    db.execute("PRAGMA page_size = 16384")
    db.execute("PRAGMA journal_mode = WAL")
    db.execute(f"PRAGMA synchronous = {synchronous}")
    db.execute("PRAGMA wal_autocheckpoint = 500")
    db.execute(SCHEMA)
    return db


def rows_per_insert(db: sqlite3.Connection) -> int:
    return db.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // len(COLUMNS)


def insert(db: sqlite3.Connection, rows: list[Row], per_statement: int) -> None:
    """Commit the rows, each INSERT autocommitted.

    One INSERT, unless the rows need more parameters than SQLite binds in one statement (a
    batch holds at most one row per request in flight, so only a huge load splits one).
    """
    placeholder = "(" + ", ".join("?" * len(COLUMNS)) + ")"
    for start in range(0, len(rows), per_statement):
        chunk = rows[start : start + per_statement]
        db.execute(
            f"INSERT INTO inbox ({', '.join(COLUMNS)}) VALUES "
            f"{', '.join([placeholder] * len(chunk))} ON CONFLICT (id) DO NOTHING",
            [value for row in chunk for value in row],
        )


def settle(batch: Batch, error: Exception | None) -> None:
    for _, future in batch:
        if future.done():  # its request was cancelled
            continue
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)


class GroupCommit:
    """Rows from the event loop, committed in batches by one writer thread."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, db: sqlite3.Connection, payloads: int | None
    ) -> None:
        self._loop = loop
        self._db = db
        self._payloads = payloads
        self._per_statement = rows_per_insert(db)
        self._pending: Batch = []
        self._batches: queue.SimpleQueue[Batch] = queue.SimpleQueue()
        threading.Thread(target=self._write, name="inbox-writer", daemon=True).start()

    async def put(self, row: Row) -> None:
        """Return once the row is committed (or raise what the commit raised)."""
        future: asyncio.Future[None] = self._loop.create_future()
        if not self._pending:
            # After this loop iteration, so every request it parsed shares the commit.
            self._loop.call_soon(self._hand_over)
        self._pending.append((row, future))
        await future

    def _hand_over(self) -> None:
        batch, self._pending = self._pending, []
        self._batches.put(batch)

    def _stored_rows(self, batch: Batch) -> list[Row]:
        rows = [row for row, _ in batch]
        if self._payloads is None:
            return rows
        _append(self._payloads, [row[3] for row in rows if row[3] is not None])
        os.fdatasync(self._payloads)
        return [(id_, event, action, None, at) for id_, event, action, _, at in rows]

    def _write(self) -> None:
        while True:
            batch = self._batches.get()
            # Batches handed over while the last commit ran join this one.
            with contextlib.suppress(queue.Empty):
                while True:
                    batch += self._batches.get_nowait()
            error: Exception | None = None
            try:
                insert(self._db, self._stored_rows(batch), self._per_statement)
            except Exception as exc:  # the waiting requests fail instead of hanging
                error = exc
            self._loop.call_soon_threadsafe(settle, batch, error)


def _append(fd: int, payloads: list[bytes]) -> None:
    for start in range(0, len(payloads), BUFFERS_PER_WRITE):
        chunk = payloads[start : start + BUFFERS_PER_WRITE]
        written = os.writev(fd, chunk)
        if written < sum(map(len, chunk)):  # a short write: rare, but writev may stop early
            rest = b"".join(chunk)[written:]
            while rest:
                rest = rest[os.write(fd, rest) :]


def signed(secret: bytes, body: bytes, header: str) -> bool:
    expected = f"sha256={hmac.new(secret, body, hashlib.sha256).hexdigest()}".encode()
    # As bytes: a header that is not ASCII is then a mismatch, not compare_digest's TypeError.
    return hmac.compare_digest(expected, header.encode("utf-8", "surrogateescape"))


def answer(data: dict[str, Any], status: int) -> web.Response:
    return web.Response(body=orjson.dumps(data), status=status, content_type="application/json")


def receiver(secret: bytes, writer: GroupCommit | None, keep_payload: bool) -> Handler:
    async def receive(request: web.Request) -> web.Response:
        delivery = request.headers.get("X-GitHub-Delivery")
        event = request.headers.get("X-GitHub-Event")
        if not delivery or not event:
            return answer({"error": "missing X-GitHub-Event or X-GitHub-Delivery"}, 400)
        body = await request.read()
        if not signed(secret, body, request.headers.get("X-Hub-Signature-256", "")):
            return answer({"error": "signature does not match"}, 401)
        try:
            action = HEAD.validate_json(body).get("action")
        except ValidationError:
            return answer({"error": "body is not a JSON object"}, 400)
        if writer is not None:
            action = action if isinstance(action, str) else None
            await writer.put((delivery, event, action, body if keep_payload else None, time.time()))
        return answer({"queued": True, "delivery": delivery}, 202)

    return receive


def run_limit(port: int, variant: str, db_path: str, secret: str) -> None:
    """Serve VARIANT on 127.0.0.1:PORT until killed."""
    storage = VARIANTS[variant]
    loop = uvloop.new_event_loop()
    writer = None
    if storage is not None:
        payloads = None
        if storage.payload_file:
            flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
            payloads = os.open(f"{db_path}.payloads", flags, 0o600)
        writer = GroupCommit(loop, open_inbox(db_path, storage.synchronous), payloads)
    keep_payload = storage is not None and storage.keep_payload
    app = web.Application(client_max_size=25 * 1024 * 1024)
    app.router.add_post(PATH, receiver(secret.encode(), writer, keep_payload))
    web.run_app(app, host="127.0.0.1", port=port, access_log=None, print=None, loop=loop)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("port", type=int)
    parser.add_argument("variant", choices=VARIANTS)
    parser.add_argument("db_path", help="the SQLite file (limit-ack stores nothing)")
    args = parser.parse_args()
    run_limit(args.port, args.variant, args.db_path, os.environ["WEBHOOK_SECRET"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
