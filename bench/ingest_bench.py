"""Webhook ingest: signed deliveries per second into `flakybot serve`, against a bare handler.

The payload is the largest real `check_run.created` example in tests/fixtures/corpus/webhooks
(about 14.8 KB). The bot registers no handler for `check_run.created`, so the worker claims,
dispatches and completes each delivery without a GitHub call: no simulator is needed, and
the worker still competes with ingest for the event loop and the database (when the bot
knows which events its handlers take, such a delivery is stored already done instead).

Targets, each a subprocess on 127.0.0.1:
  bare          aiohttp handler that only calls gidgethub's `Event.from_http(headers, body,
                secret=...)` and answers 202, storing nothing (default asyncio loop)
  bare-uvloop   the same handler on uvloop, for reference
  sqlite        `flakybot serve` on a fresh SQLite file
  postgres      `flakybot serve` on a fresh PostgreSQL database (BENCH_DATABASE_URL, default
                postgresql://postgres@127.0.0.1:5432/test; skipped when unreachable)

Reference targets, not run unless named: what a durable acknowledgement costs on this machine
apart from the bot's code (bench/ingest_limits.py). Each is an aiohttp handler on uvloop that
checks the signature and that the body is JSON, reads its action, and answers 202:
  limit-ack      storing nothing
  limit-row      once a small row per delivery (no payload) is committed to SQLite
                 (synchronous=FULL) by a writer thread's group commit
  limit-payload  the same with the whole body too: the least any durable SQLite inbox does
  limit-nosync   limit-payload with synchronous=OFF: not durable; shows the fsync's share
  limit-segment  the payloads appended to a synced file of their own, then limit-row's rows

The load generator is a separate process: plain asyncio streams over keep-alive connections,
each request pre-built apart from its unique X-GitHub-Delivery. Per cell (target x
connections) it prints deliveries/s, p50/p99 ack latency, failures, the ratio to the bare
handler, and for the bot and the storing limit targets whether every delivery acknowledged
2xx is in the store (counted after the server is killed with SIGKILL, so only committed rows
count); for the bot also how many stored deliveries are in each state then: a `pending`
count means the worker fell behind ingest.
It also prints how busy the machine's CPUs were during the load (everything running on it,
the load generator included) and those busy CPU-microseconds per acknowledged delivery.

    python bench/ingest_bench.py [--duration 10] [--connections 10 50] [--targets ...]

Prints JSON; never asserts timings.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import hmac
import json
import os
import secrets
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.fleet import free_port, wait_listening

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fixtures" / "corpus"
SECRET = "ingest-bench-secret"
PATH = "/api/github/webhooks"
WARMUP_SECONDS = 1.0
PG_URL = os.environ.get("BENCH_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
# Started as a script, not imported: mypy would name the module differently when given the
# bench files than when checking the bench package, and one of the two would fail.
LIMITS = Path(__file__).with_name("ingest_limits.py")
LIMIT_TARGETS = ("limit-ack", "limit-row", "limit-payload", "limit-nosync", "limit-segment")


def payload() -> bytes:
    examples = sorted(
        (CORPUS / "webhooks").glob("check_run.created.*.json"), key=lambda p: p.stat().st_size
    )
    if not examples:
        raise SystemExit(f"no check_run.created example under {CORPUS / 'webhooks'}")
    return examples[-1].read_bytes()


# --- the bare handler (run as `ingest_bench.py --bare PORT [--uvloop]`) ----------------------


def run_bare(port: int, use_uvloop: bool) -> None:
    from aiohttp import web
    from gidgethub import sansio

    async def receive(request: web.Request) -> web.Response:
        body = await request.read()
        sansio.Event.from_http(request.headers, body, secret=SECRET)
        return web.json_response({"queued": True}, status=202)

    app = web.Application(client_max_size=25 * 1024 * 1024)
    app.router.add_post(PATH, receive)
    loop = None
    if use_uvloop:
        import uvloop

        loop = uvloop.new_event_loop()
    web.run_app(app, host="127.0.0.1", port=port, access_log=None, print=None, loop=loop)


# --- the load generator (run as `ingest_bench.py --load PORT CONNECTIONS SECONDS PREFIX`) ----


async def _one_connection(
    port: int,
    head: bytes,
    tail: bytes,
    prefix: str,
    worker: int,
    warm_until: float,
    stop_at: float,
    out: dict[str, Any],
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    n = 0
    try:
        while time.monotonic() < stop_at:
            delivery = f"{prefix}-{worker}-{n}"
            n += 1
            started = time.monotonic()
            writer.write(head + delivery.encode() + tail)
            status_line = await reader.readline()
            length = 0
            while True:
                line = await reader.readline()
                if line in (b"\r\n", b""):
                    break
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if length:
                await reader.readexactly(length)
            elapsed = time.monotonic() - started
            status = int(status_line.split()[1]) if status_line else 0
            if 200 <= status < 300:
                out["acked"].append(delivery)
                if started >= warm_until:
                    out["latencies"].append(elapsed)
            elif started >= warm_until:
                out["failures"] += 1
            if not status_line:
                break
    finally:
        writer.close()


async def run_load(port: int, connections: int, seconds: float, prefix: str) -> dict[str, Any]:
    body = payload()
    signature = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    head = (
        f"POST {PATH} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        "Content-Type: application/json\r\nUser-Agent: GitHub-Hookshot/bench\r\n"
        f"X-GitHub-Event: check_run\r\nX-Hub-Signature-256: {signature}\r\n"
        f"Content-Length: {len(body)}\r\nX-GitHub-Delivery: "
    ).encode()
    tail = b"\r\n\r\n" + body
    out: dict[str, Any] = {"acked": [], "latencies": [], "failures": 0}
    start = time.monotonic()
    warm_until = start + WARMUP_SECONDS
    stop_at = warm_until + seconds
    results = await asyncio.gather(
        *(
            _one_connection(port, head, tail, prefix, i, warm_until, stop_at, out)
            for i in range(connections)
        ),
        return_exceptions=True,
    )
    errors = [f"{type(r).__name__}: {r}" for r in results if isinstance(r, BaseException)]
    latencies = sorted(out["latencies"])
    measured = len(latencies)

    def pct(q: float) -> float | None:
        return (
            round(latencies[min(measured - 1, int(q * measured))] * 1000, 2) if measured else None
        )

    return {
        "deliveries_per_s": round(measured / seconds, 1),
        "p50_ms": pct(0.50),
        "p99_ms": pct(0.99),
        "failures": out["failures"] + len(errors),
        "connection_errors": errors[:3],
        "acked_ids": out["acked"],
        "payload_bytes": len(body),
    }


# --- orchestration ---------------------------------------------------------------------------


def bot_env(database_url: str, port: int) -> dict[str, str]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    env = {k: v for k, v in os.environ.items() if k not in ("PRIVATE_KEY_PATH",)}
    env.update(
        APP_ID="1",
        PRIVATE_KEY=pem,
        WEBHOOK_SECRET=SECRET,
        DATABASE_URL=database_url,
        # Never called: no handler is registered for check_run.created.
        GITHUB_API_URL="http://127.0.0.1:9",
        HOST="127.0.0.1",
        PORT=str(port),
    )
    return env


def stored(database_url: str) -> tuple[set[str], dict[str, int]]:
    """The ids in `deliveries`, and how many are in each state."""
    query = "SELECT id, state FROM deliveries"
    if database_url.startswith("sqlite:"):
        # Closed, not only committed (all `with sqlite3.connect()` does): left open, it kept
        # the cell's database (about a gigabyte) alive in this process after it was deleted,
        # and the next SQLite cell ran a quarter slower.
        with contextlib.closing(sqlite3.connect(database_url.removeprefix("sqlite:///"))) as db:
            rows = [(str(r[0]), str(r[1])) for r in db.execute(query)]
    else:

        async def fetch() -> list[tuple[str, str]]:
            import asyncpg

            conn = await asyncpg.connect(database_url)
            try:
                return [(str(r["id"]), str(r["state"])) for r in await conn.fetch(query)]
            finally:
                await conn.close()

        rows = asyncio.run(fetch())
    states: dict[str, int] = {}
    for _, state in rows:
        states[state] = states.get(state, 0) + 1
    return {delivery_id for delivery_id, _ in rows}, dict(sorted(states.items()))


def load(port: int, connections: int, seconds: float, prefix: str) -> dict[str, Any]:
    process = subprocess.run(
        [sys.executable, __file__, "--load", str(port), str(connections), str(seconds), prefix],
        capture_output=True,
        check=True,
        cwd=ROOT,
    )
    result: dict[str, Any] = json.loads(process.stdout)
    return result


def cpu_ticks() -> tuple[int, int] | None:
    """(busy, all) clock ticks of every CPU since boot, from /proc/stat; None without it."""
    try:
        with open("/proc/stat") as stat:
            ticks = [int(field) for field in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = ticks[3] + ticks[4]  # idle and iowait
    return sum(ticks) - idle, sum(ticks)


def stop(server: subprocess.Popen[bytes], how: signal.Signals) -> None:
    if server.poll() is None:
        server.send_signal(how)
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def remove_sqlite(path: str) -> None:
    """Delete a cell's database at once: the kernel drops its dirty pages rather than
    writing them back."""
    for suffix in ("", "-wal", "-shm", ".payloads"):
        Path(path + suffix).unlink(missing_ok=True)


def inbox_ids(path: str) -> set[str]:
    """The ids in a limit target's `inbox`."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        return {str(r[0]) for r in db.execute("SELECT id FROM inbox")}


def run_cell(
    target: str,
    connections: int,
    seconds: float,
    database_url: str | None,
    inbox: str | None = None,
) -> dict[str, Any]:
    """One target under load. The bot needs `database_url`; a storing limit target, `inbox`."""
    # Each cell starts with nothing left for the disk to write from the ones before.
    os.sync()
    port = free_port()
    if target.startswith("bare"):
        argv = [sys.executable, __file__, "--bare", str(port)]
        if target == "bare-uvloop":
            argv.append("--uvloop")
        server = subprocess.Popen(argv, cwd=ROOT)
    elif target in LIMIT_TARGETS:
        server = subprocess.Popen(
            [sys.executable, str(LIMITS), str(port), target, inbox or os.devnull],
            cwd=ROOT,
            env={**os.environ, "WEBHOOK_SECRET": SECRET},
        )
    else:
        assert database_url is not None
        server = subprocess.Popen(
            [sys.executable, "-m", "bot.cli", "serve"],
            cwd=ROOT,
            env=bot_env(database_url, port),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    try:
        asyncio.run(wait_listening(port))
        before = cpu_ticks()
        result = load(port, connections, seconds, f"{target}-{connections}-{secrets.token_hex(3)}")
        after = cpu_ticks()
    finally:
        # SIGKILL: the count below sees only what was committed before each answer.
        stop(server, signal.SIGKILL if database_url or inbox else signal.SIGTERM)
    acked = result.pop("acked_ids")
    cell: dict[str, Any] = {"target": target, "connections": connections, **result}
    cell["acked"] = len(acked)
    if before is not None and after is not None and acked:
        busy, every = after[0] - before[0], after[1] - before[1]
        cell["machine_cpu_busy"] = round(busy / every, 2)
        cell["cpu_us_per_delivery"] = round(busy / os.sysconf("SC_CLK_TCK") / len(acked) * 1e6)
    if database_url is not None:
        ids, states = stored(database_url)
        cell["acked_missing_from_store"] = len(set(acked) - ids)
        cell["stored_by_state"] = states
    if inbox is not None:
        cell["acked_missing_from_store"] = len(set(acked) - inbox_ids(inbox))
    return cell


async def fresh_pg_database() -> str | None:
    import asyncpg

    try:
        admin = await asyncpg.connect(PG_URL, timeout=5)
    except (OSError, TimeoutError, asyncpg.PostgresError):
        return None
    name = f"flaky_ingest_{secrets.token_hex(4)}"
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    return PG_URL.rsplit("/", 1)[0] + f"/{name}"


async def drop_pg_database(url: str) -> None:
    import asyncpg

    admin = await asyncpg.connect(PG_URL)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{url.rsplit("/", 1)[1]}" WITH (FORCE)')
    finally:
        await admin.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per cell")
    parser.add_argument("--connections", type=int, nargs="+", default=[10, 50])
    parser.add_argument(
        "--targets",
        nargs="+",
        default=["bare", "bare-uvloop", "sqlite", "postgres"],
        choices=["bare", "bare-uvloop", "sqlite", "postgres", *LIMIT_TARGETS],
    )
    parser.add_argument("--bare", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--uvloop", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--load", nargs=4, metavar="ARG", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare is not None:
        run_bare(args.bare, args.uvloop)
        return 0
    if args.load is not None:
        port, connections, seconds, prefix = args.load
        result = asyncio.run(run_load(int(port), int(connections), float(seconds), prefix))
        print(json.dumps(result))
        return 0

    cells: list[dict[str, Any]] = []
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        for target in args.targets:
            for connections in args.connections:
                url: str | None = None
                inbox: str | None = None
                sqlite_file: str | None = None
                if target in LIMIT_TARGETS and target != "limit-ack":
                    inbox = f"{tmp}/{target}-{connections}.sqlite3"
                elif target == "sqlite":
                    sqlite_file = f"{tmp}/ingest-{connections}.sqlite3"
                    url = f"sqlite:///{sqlite_file}"
                elif target == "postgres":
                    url = asyncio.run(fresh_pg_database())
                    if url is None:
                        cells.append(
                            {"target": target, "connections": connections, "skipped": PG_URL}
                        )
                        continue
                try:
                    cells.append(run_cell(target, connections, args.duration, url, inbox))
                finally:
                    if target == "postgres" and url is not None:
                        asyncio.run(drop_pg_database(url))
                    for path in (inbox, sqlite_file):
                        if path is not None:
                            remove_sqlite(path)
    bare = {c["connections"]: c for c in cells if c["target"] == "bare" and "skipped" not in c}
    for cell in cells:
        reference = bare.get(cell["connections"])
        if reference and reference["deliveries_per_s"] and "deliveries_per_s" in cell:
            cell["ratio_to_bare"] = round(
                cell["deliveries_per_s"] / reference["deliveries_per_s"], 2
            )
    print(
        json.dumps(
            {
                "payload": "largest check_run.created in the corpus (no handler: no GitHub call)",
                "duration_s": args.duration,
                "warmup_s": WARMUP_SECONDS,
                "cpus": os.cpu_count(),
                "loadavg_before": [round(x, 2) for x in load_before],
                "loadavg_after": [round(x, 2) for x in os.getloadavg()],
                "cells": cells,
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
