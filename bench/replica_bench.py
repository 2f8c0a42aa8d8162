"""Triage throughput with one and with two `flakybot serve` replicas on one PostgreSQL.

The GitHub simulator runs in this process and answers every API call after exactly
--latency-ms (default 50). Each run gets a fresh simulator and a fresh database; all
failed check runs are delivered at once (signed, as GitHub sends them, spread over the
replicas), and the clock stops when every delivery is done, i.e. every check has been
triaged and its PR's sticky comment written. Prints JSON: failed check runs triaged per
minute for one and two replicas, and the ratio.

    python bench/replica_bench.py [--prs 40] [--checks 5] [--latency-ms 50] [--concurrency 4]

Needs PostgreSQL (BENCH_DATABASE_URL, default postgresql://postgres@127.0.0.1:5432/test).
Never asserts timings.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg

from bot.sim.server import Simulator
from bot.sim.webhooks import delivery_headers
from bot.store import DeliveryState, open_store
from tests.fleet import check_name, free_port, many_prs, serve_env, start_serve, wait_listening

ROOT = Path(__file__).resolve().parents[1]
SECRET = "replica-bench-secret"
PG_URL = os.environ.get("BENCH_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")


async def run(replicas: int, args: argparse.Namespace) -> dict[str, Any]:
    name = f"flaky_replica_bench_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(PG_URL)
    await admin.execute(f'CREATE DATABASE "{name}"')
    database_url = PG_URL.rsplit("/", 1)[0] + f"/{name}"
    total = args.prs * args.checks
    try:
        async with Simulator(
            many_prs(args.prs, args.checks, latency_ms=args.latency_ms), webhook_secret=SECRET
        ) as sim:
            env = serve_env(
                sim,
                secret=SECRET,
                database_url=database_url,
                WORKER_CONCURRENCY=str(args.concurrency),
                LOG_LEVEL="WARNING",
                # The simulator has no secondary rate limit: measure the bot, not the pace.
                WRITE_INTERVAL="0",
            )
            ports = [free_port() for _ in range(replicas)]
            servers = [start_serve({**env, "PORT": str(port)}, ROOT) for port in ports]
            try:
                await asyncio.gather(*(wait_listening(port) for port in ports))
                deliveries = [
                    (f"d-{pr}-{shard}", sim.next_completion(check_name(pr, shard)))
                    for pr in range(1, args.prs + 1)
                    for shard in range(args.checks)
                ]
                started = time.monotonic()
                async with aiohttp.ClientSession() as session:

                    async def send(index: int, delivery_id: str, payload: dict[str, Any]) -> None:
                        body = json.dumps(payload).encode()
                        headers = delivery_headers(
                            "check_run", delivery_id, body, secret=SECRET, sign=True, app_id=1
                        )
                        url = f"http://127.0.0.1:{ports[index % replicas]}/api/github/webhooks"
                        async with session.post(url, data=body, headers=headers) as answer:
                            if answer.status != 202:
                                raise RuntimeError(f"{delivery_id}: HTTP {answer.status}")

                    await asyncio.gather(
                        *(send(i, d, payload) for i, (d, payload) in enumerate(deliveries))
                    )
                store = await open_store(database_url)
                try:
                    while True:
                        # The check runs sent; the bot's own work (tracking refreshes) and
                        # the webhooks of its comments are not the triages counted.
                        rows = [
                            d
                            for d in await store.list_deliveries(100_000)
                            if d.event == "check_run"
                        ]
                        done = sum(d.state == DeliveryState.DONE for d in rows)
                        if done == total or time.monotonic() - started > args.limit:
                            break
                        await asyncio.sleep(0.05)
                    elapsed = time.monotonic() - started
                    dead = sum(d.state == DeliveryState.DEAD for d in rows)
                finally:
                    await store.close()
            finally:
                for server in servers:
                    server.send_signal(signal.SIGTERM)
                for server in servers:
                    try:
                        server.wait(timeout=20)
                    except subprocess.TimeoutExpired:
                        server.kill()
            commented = sum(len(sim.bot_comments(pr)) == 1 for pr in range(1, args.prs + 1))
            api_calls = sum(1 for entry in sim.timeline if entry.kind == "api")
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()
    return {
        "replicas": replicas,
        "failed_checks": total,
        "triaged": done,
        "dead": dead,
        "prs_with_one_comment": commented,
        "seconds": round(elapsed, 2),
        "triaged_per_minute": round(done / elapsed * 60, 1),
        "github_calls": api_calls,
    }


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prs", type=int, default=40)
    parser.add_argument("--checks", type=int, default=5, help="failed check runs per PR")
    parser.add_argument("--latency-ms", type=int, default=50)
    parser.add_argument("--concurrency", type=int, default=4, help="WORKER_CONCURRENCY")
    parser.add_argument("--limit", type=float, default=300.0, help="give up after seconds")
    args = parser.parse_args()
    load_before = os.getloadavg()
    one = await run(1, args)
    two = await run(2, args)
    print(
        json.dumps(
            {
                "latency_ms_per_github_call": args.latency_ms,
                "worker_concurrency": args.concurrency,
                "cpus": os.cpu_count(),
                "loadavg_before": [round(x, 2) for x in load_before],
                "loadavg_after": [round(x, 2) for x in os.getloadavg()],
                "one_replica": one,
                "two_replicas": two,
                "ratio": round(two["triaged_per_minute"] / one["triaged_per_minute"], 2),
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
