"""SIGKILL a real `flakybot serve` (SQLite) again and again while it handles 300 deliveries.

Every webhook goes through a relay that, like a GitHub App's redelivery, sends it again until
the bot answers 202, so a delivery the dead process never acknowledged is not lost on the
wire. At the end every delivery is done exactly once in the store and every effect exists
once in the simulator's record: one comment per PR, one rerun per failed job, one tracking
issue per test. The focused tests below pin the one window a kill can leave open: a rerun
asked for whose answer was never recorded.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.test_utils import TestServer

from bot.demo import running, settle
from bot.handlers.tracking import REFRESH_EVENT
from bot.sim.scenario import builtin_scenario
from bot.sim.server import Simulator
from bot.store import DeliveryState, open_store
from tests.fleet import check_name, flaky_prs, free_port, serve_env, wait_listening
from tests.leaks import leaks, secrets_of, written_by_the_bot

# 30 PRs x 5 checks: 150 failures, 150 passes on rerun, 300 check_run deliveries.
PRS = int(os.environ.get("CRASH_PRS", "30"))
CHECKS_PER_PR = 5
KILLS = int(os.environ.get("CRASH_KILLS", "8"))
SECRET = "crash-test-webhook-secret"


class Relay:
    """Takes the simulator's webhooks (202 at once) and hands each to the bot until it
    answers 202: the bot may be dead or starting when one arrives."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.ids: list[str] = []
        self._queue: asyncio.Queue[tuple[dict[str, str], bytes]] = asyncio.Queue()
        self._server: TestServer | None = None
        self._workers: list[asyncio.Task[None]] = []
        self._session: aiohttp.ClientSession | None = None

    async def start(self) -> str:
        app = web.Application()
        app.router.add_post("/hook", self._take)
        self._server = TestServer(app, host="127.0.0.1")
        await self._server.start_server()
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10))
        self._workers = [asyncio.create_task(self._forward()) for _ in range(8)]
        return str(self._server.make_url("/hook"))

    async def close(self) -> None:
        for worker in self._workers:
            worker.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        if self._session is not None:
            await self._session.close()
        if self._server is not None:
            await self._server.close()

    async def drained(self) -> None:
        await self._queue.join()

    async def _take(self, request: web.Request) -> web.Response:
        headers = {
            name: value
            for name, value in request.headers.items()
            if name.lower().startswith("x-") or name.lower() in {"content-type", "user-agent"}
        }
        self.ids.append(headers["X-GitHub-Delivery"])
        self._queue.put_nowait((headers, await request.read()))
        return web.Response(status=202)

    async def _forward(self) -> None:
        assert self._session is not None
        while True:
            headers, body = await self._queue.get()
            try:
                while True:
                    try:
                        async with self._session.post(
                            self.target, data=body, headers=headers
                        ) as answer:
                            if answer.status == 202:
                                break
                    except (aiohttp.ClientError, TimeoutError):
                        pass
                    await asyncio.sleep(0.1)
            finally:
                self._queue.task_done()


def bot_env(sim: Simulator, database_url: str, port: int) -> dict[str, str]:
    return serve_env(
        sim,
        secret=SECRET,
        database_url=database_url,
        PORT=str(port),
        CLAIM_LEASE_SECONDS="2",
        WORKER_CONCURRENCY="8",
        LOG_LEVEL="INFO",
        # The simulator has no secondary rate limit; GitHub's pace would take minutes.
        WRITE_INTERVAL="0",
    )


async def test_killed_again_and_again_every_delivery_is_done_once_and_every_effect_exists_once(
    tmp_path: Path,
) -> None:
    database_url = f"sqlite:///{tmp_path / 'bot.sqlite3'}"
    port = free_port()
    rng = random.Random(20261130)
    logs: list[Path] = []
    async with Simulator(
        flaky_prs(PRS, CHECKS_PER_PR, faults={"latency_ms": 40}), webhook_secret=SECRET
    ) as sim:
        relay = Relay(f"http://127.0.0.1:{port}/api/github/webhooks")
        sim.set_webhook_target(await relay.start())
        env = bot_env(sim, database_url, port)

        def start() -> subprocess.Popen[bytes]:
            path = tmp_path / f"serve-{len(logs)}.log"
            logs.append(path)
            with path.open("wb") as stderr:
                return subprocess.Popen(
                    [sys.executable, "-m", "bot.cli", "serve"],
                    cwd=tmp_path,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=stderr,
                )

        server = start()
        kills = 0
        try:
            await wait_listening(port)
            names = [check_name(pr, s) for pr in range(1, PRS + 1) for s in range(CHECKS_PER_PR)]
            sends = asyncio.gather(
                *(sim.send_webhook("check_run", sim.next_completion(name)) for name in names)
            )
            for _ in range(KILLS):
                # At a random moment of the work: mid-handler, mid-write, mid-ingest.
                await asyncio.sleep(rng.uniform(0.3, 2.0))
                server.send_signal(signal.SIGKILL)
                server.wait(timeout=10)
                kills += 1
                server = start()
                await wait_listening(port)
            await sends
            await _until_everything_is_done(sim, relay, database_url)
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
            await relay.close()

        store = await open_store(database_url)
        try:
            rows = await store.list_deliveries(10_000)
        finally:
            await store.close()
        secrets = secrets_of(sim)

    assert kills == KILLS
    # Every delivery GitHub sent is in the store once, done; so is the bot's own work (the
    # tracking issues' refreshes).
    sent = [d for d in rows if d.event != REFRESH_EVENT]
    assert sorted(d.id for d in sent) == sorted(set(relay.ids))
    assert {d.state for d in rows} == {DeliveryState.DONE}, [d.last_error for d in rows]
    check_runs = [d for d in rows if d.event == "check_run"]
    assert len(check_runs) == 2 * PRS * CHECKS_PER_PR
    # Every effect once: one comment per PR (one POST), one rerun per failed job, one issue
    # per test.
    for pr in range(1, PRS + 1):
        (comment,) = sim.bot_comments(pr)
        posts = [w for w in sim.writes if w.path == f"/repos/acme/bus/issues/{pr}/comments"]
        assert len(posts) == 1, f"PR {pr}: {len(posts)} comment POSTs"
        for shard in range(CHECKS_PER_PR):
            assert check_name(pr, shard) in comment.body
        assert "likely flaky, unrelated to this PR" in comment.body
    reruns = Counter(r.target_id for r in sim.reruns)
    assert len(reruns) == PRS * CHECKS_PER_PR
    assert set(reruns.values()) == {1}, [job for job, n in reruns.items() if n > 1]
    assert {r.status for r in sim.reruns} == {201}
    titles = Counter(issue.title for issue in sim.issues_created)
    assert len(titles) == CHECKS_PER_PR
    assert set(titles.values()) == {1}, titles
    # Nothing the processes logged (SIGKILL leaves no traceback of its own) shows a crash of
    # the code, and no secret is anywhere.
    texts = {path.name: path.read_text(errors="replace") for path in logs}
    for name, text in texts.items():
        assert "Traceback" not in text, f"{name}:\n{text[-3000:]}"
        assert "dead-lettered" not in text, name
    assert leaks(secrets, texts | written_by_the_bot(sim)) == []


async def _until_everything_is_done(sim: Simulator, relay: Relay, database_url: str) -> None:
    """Until no webhook is to be sent or relayed and every stored delivery is done: GitHub's,
    and the bot's own (a tracking issue's refresh falls due a moment after its triage)."""
    store = await open_store(database_url)
    deadline = time.monotonic() + 180

    async def all_done() -> bool:
        rows = await store.list_deliveries(10_000)
        everything_done = all(d.state == DeliveryState.DONE for d in rows)
        stored = {d.id for d in rows}
        return sim.pending == 0 and bool(relay.ids) and set(relay.ids) <= stored and everything_done

    try:
        while time.monotonic() < deadline:
            await sim.drain()
            await relay.drained()
            if await all_done():
                await asyncio.sleep(0.5)  # a write may still cause a webhook
                if await all_done():
                    return
            await asyncio.sleep(0.2)
        raise AssertionError("not everything done after 180 s")
    finally:
        await store.close()


# --- the one window a kill leaves open: a rerun asked for, its answer not recorded ----------


async def _unanswered_reservation(tmp_path: Path, *, reached_github: bool) -> Simulator:
    """A failure whose rerun was reserved by a try that died before recording GitHub's
    answer; `reached_github`: whether its request got there first. The delivery is then
    handled again."""
    async with running(builtin_scenario(), tmp_path) as (sim, bot):
        payload: dict[str, Any] = sim.next_completion("tests (3.12)")
        job_id = int(payload["check_run"]["id"])
        head_sha = str(payload["check_run"]["head_sha"])
        grant = await bot.store.reserve_rerun(
            "acme/bus",
            7,
            head_sha,
            "tests (3.12)",
            job_id,
            per_check=1,
            per_pr_day=10,
            now=time.time(),
        )
        assert grant.granted
        if reached_github:
            # Its rerun completes later than the bot takes to handle the failure again.
            sim.rerun_delay_s = 2.0
            token = await sim.installation_token()
            async with (
                aiohttp.ClientSession() as session,
                session.post(
                    f"{sim.url}/repos/acme/bus/actions/jobs/{job_id}/rerun",
                    headers={"Authorization": f"token {token}"},
                    json={},
                ) as answer,
            ):
                assert answer.status == 201
        assert await sim.send_webhook("check_run", payload) == 202
        await settle(sim, bot)
    return sim


async def test_a_rerun_that_reached_github_before_the_crash_is_not_asked_for_again(
    tmp_path: Path,
) -> None:
    sim = await _unanswered_reservation(tmp_path, reached_github=True)

    assert [r.status for r in sim.reruns] == [201]  # the dead try's, and no other
    (comment,) = sim.bot_comments(7)
    assert "likely flaky, unrelated to this PR" in comment.body


async def test_a_rerun_that_never_reached_github_is_asked_for_on_the_next_try(
    tmp_path: Path,
) -> None:
    sim = await _unanswered_reservation(tmp_path, reached_github=False)

    assert [r.status for r in sim.reruns] == [201]
    (comment,) = sim.bot_comments(7)
    assert "likely flaky, unrelated to this PR" in comment.body
