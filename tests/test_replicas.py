"""Two real `flakybot serve` replicas on one PostgreSQL: nothing doubled, nothing lost."""

from __future__ import annotations

import asyncio
import json
import os
import random
import secrets
import signal
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest

from bot.handlers.tracking import REFRESH_EVENT
from bot.report.comment import ROWS_SHOWN
from bot.sim.server import Simulator
from bot.sim.webhooks import delivery_headers
from bot.store import DeliveryState, open_store
from tests.fleet import check_name, free_port, many_prs, serve_env, start_serve, wait_listening

Send = tuple[str, dict[str, Any]]  # a delivery id and its payload

PRS = int(os.environ.get("REPLICA_PRS", "50"))
CHECKS_PER_PR = 10
REDELIVERED = 0.2
SECRET = "replica-test-secret"
ADMIN_URL = os.environ.get("TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")


@pytest.fixture
async def database_url() -> AsyncIterator[str]:
    """A fresh database for the two replicas, dropped afterwards."""
    name = f"flaky_replicas_{secrets.token_hex(4)}"
    try:
        admin = await asyncpg.connect(ADMIN_URL)
    except (OSError, asyncpg.PostgresError) as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"optional tool: PostgreSQL not reachable at {ADMIN_URL}: {exc}")
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        yield ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


async def test_two_replicas_process_every_delivery_once_even_when_one_is_killed(
    database_url: str, tmp_path: Path
) -> None:
    scenario = many_prs(PRS, CHECKS_PER_PR)
    ports = [free_port(), free_port()]
    async with Simulator(scenario, webhook_secret=SECRET) as sim:
        base_env = serve_env(
            sim,
            secret=SECRET,
            database_url=database_url,
            CLAIM_LEASE_SECONDS="3",
            WORKER_CONCURRENCY="4",
            LOG_LEVEL="WARNING",
            # The simulator has no secondary rate limit; GitHub's pace would take minutes.
            WRITE_INTERVAL="0.01",
        )
        replicas = [start_serve({**base_env, "PORT": str(port)}, tmp_path) for port in ports]
        try:
            await asyncio.gather(*(wait_listening(port) for port in ports))
            deliveries = [
                (f"delivery-{pr}-{shard}", sim.next_completion(check_name(pr, shard)))
                for pr in range(1, PRS + 1)
                for shard in range(CHECKS_PER_PR)
            ]
            rng = random.Random(7)
            sends = deliveries + rng.sample(deliveries, int(len(deliveries) * REDELIVERED))
            rng.shuffle(sends)
            alive = [True, True]
            sent = 0
            kill_now = asyncio.Event()

            async def deliver(
                session: aiohttp.ClientSession, item: tuple[str, dict[str, Any]]
            ) -> None:
                nonlocal sent
                delivery_id, payload = item
                body = json.dumps(payload).encode()
                headers = delivery_headers(
                    "check_run", delivery_id, body, secret=SECRET, sign=True, app_id=sim.app_id
                )
                # Like GitHub, keep trying until a replica answers 2xx.
                for attempt in range(50):
                    target = rng.randrange(2)
                    if not alive[target]:
                        target = 1 - target
                    url = f"http://127.0.0.1:{ports[target]}/api/github/webhooks"
                    try:
                        async with session.post(url, data=body, headers=headers) as answer:
                            if answer.status == 202:
                                sent += 1
                                if sent >= len(sends) * 0.4:
                                    kill_now.set()
                                return
                    except aiohttp.ClientError:
                        pass
                    await asyncio.sleep(0.05 * (attempt + 1))
                raise AssertionError(f"{delivery_id} was never accepted")

            gate = asyncio.Semaphore(20)

            async def bounded(
                session: aiohttp.ClientSession, item: tuple[str, dict[str, Any]]
            ) -> None:
                async with gate:
                    await deliver(session, item)

            async def killer() -> None:
                await kill_now.wait()
                alive[0] = False
                replicas[0].send_signal(signal.SIGKILL)
                replicas[0].wait(timeout=10)

            async with aiohttp.ClientSession() as session:
                await asyncio.gather(killer(), *(bounded(session, item) for item in sends))

            store = await open_store(database_url)
            try:
                deadline = time.monotonic() + 240
                while time.monotonic() < deadline:
                    rows = await store.list_deliveries(10_000)
                    from_github = [d for d in rows if d.event != REFRESH_EVENT]
                    if len(from_github) == len(deliveries) and all(
                        d.state == DeliveryState.DONE for d in rows
                    ):
                        break
                    await asyncio.sleep(0.25)
                rows = await store.list_deliveries(10_000)
                attempts = {
                    pr: await store.check_attempts_for_pr("acme/bus", pr)
                    for pr in range(1, PRS + 1)
                }
            finally:
                await store.close()
        finally:
            for replica in replicas:
                if replica.poll() is None:
                    replica.send_signal(signal.SIGTERM)
            for replica in replicas:
                try:
                    replica.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    replica.kill()

        # Every delivery sent, and the bot's own work (tracking issues' refreshes), done.
        from_github = [d for d in rows if d.event != REFRESH_EVENT]
        assert sorted(d.id for d in from_github) == sorted(d for d, _ in deliveries)
        assert {d.state for d in rows} == {DeliveryState.DONE}, {d.last_error for d in rows}
        for pr in range(1, PRS + 1):
            assert len(attempts[pr]) == CHECKS_PER_PR, f"PR {pr}"
            comments = sim.bot_comments(pr)
            assert len(comments) == 1, f"PR {pr} has {len(comments)} comments"
            posts = [
                w
                for w in sim.writes
                if w.method == "POST" and w.path == f"/repos/acme/bus/issues/{pr}/comments"
            ]
            assert len(posts) == 1, f"PR {pr} got {len(posts)} comment POSTs"
            # Every check's failure is counted in the one comment; its table names the first
            # ROWS_SHOWN checks and counts the rest.
            body = comments[0].body
            assert f"**{CHECKS_PER_PR} failures" in body
            shown = [s for s in range(CHECKS_PER_PR) if check_name(pr, s) in body]
            assert len(shown) == min(CHECKS_PER_PR, ROWS_SHOWN), body
