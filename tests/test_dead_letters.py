"""Dead letters: shown with their error by `flakybot deliveries --failed` and on the
dashboard's /deliveries, and replayed with `--replay` until they are handled."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import aiohttp
from aiohttp import web

from bot import dashboard
from bot.demo import running, settle
from bot.sim.scenario import FaultRule, Faults, builtin_scenario
from bot.store import DeliveryState, Store
from tests.conftest import Serve

TOKEN = "dead-letters-dashboard-token-0123456789abcdef"


async def flakybot(*args: str, database_url: str) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot.cli",
        *args,
        env=os.environ | {"DATABASE_URL": database_url},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    return process.returncode, out.decode()


async def test_a_dead_delivery_is_listed_shown_and_replayed_to_the_end(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    # GitHub refuses the pull request once (a 403 that is no rate limit: permanent), so the
    # first delivery is dead-lettered at once; the replay then finds GitHub answering again.
    refused = FaultRule(method="GET", path=r"/pulls/7$", status=403, times=1)
    scenario = builtin_scenario().model_copy(update={"faults": Faults(rules=[refused])})
    database_url = f"sqlite:///{tmp_path / 'demo.sqlite3'}"
    async with running(scenario, tmp_path) as (sim, bot):
        await sim.play()
        await settle(sim, bot)
        (dead,) = await bot.store.list_deliveries(10, [DeliveryState.DEAD])
        assert sim.bot_comments(7) == []

        listed_status, listed = await flakybot("deliveries", "--failed", database_url=database_url)
        page = await session.get(bot.url + "/deliveries")
        page_html = await page.text()

        replay_status, replayed = await flakybot(
            "deliveries", "--replay", dead.id, database_url=database_url
        )
        bot.worker.notify()
        await settle(sim, bot)
        after = await (await session.get(bot.url + "/deliveries")).text()
        (handled,) = [d for d in await bot.store.list_deliveries(50) if d.id == dead.id]
        comments = sim.bot_comments(7)

    assert dead.event == "check_run" and dead.attempts == 1
    assert dead.last_error is not None and "403" in dead.last_error
    assert dead.finished_at is not None and dead.finished_at >= dead.received_at
    assert listed_status == 0
    (line,) = [line for line in listed.splitlines() if dead.id in line]
    assert "check_run.completed" in line and "dead" in line and dead.last_error in line
    assert page.status == 200
    assert dead.id in page_html and "check_run.completed" in page_html
    assert "acme/bus" in page_html and "403" in page_html
    assert replay_status == 0 and f"delivery {dead.id} queued again" in replayed
    assert handled.state == DeliveryState.DONE
    assert len(comments) == 1 and "likely flaky" in comments[0].body
    assert dead.id not in after and "None: every delivery was handled" in after


async def _dead(store: Store, delivery_id: str, payload: dict[str, object], error: str) -> None:
    await store.put_delivery(
        delivery_id, "check_run", "completed", json.dumps(payload).encode(), 1_700_000_000.0
    )
    (claimed,) = await store.claim(1_700_000_001.0, 300.0, 1)
    assert claimed.claim_token is not None
    await store.dead_letter(claimed.id, claimed.claim_token, error, 1_700_000_060.0)


async def test_without_the_token_only_public_repositories_dead_letters_show(
    store: Store, serve: Serve, session: aiohttp.ClientSession
) -> None:
    await store.set_repository("acme/public", False, 1.0)
    await store.set_repository("acme/secret", True, 1.0)
    await _dead(store, "d-public", {"repository": {"full_name": "acme/public"}}, "boom <b>")
    await _dead(store, "d-secret", {"repository": {"full_name": "acme/secret"}}, "hidden")
    await _dead(store, "d-install", {"installation": {"id": 1}}, "no repo")
    demo, served = web.Application(), web.Application()
    dashboard.install(demo, store, dashboard.Access(token=None, open_public=True))
    dashboard.install(served, store, dashboard.Access(token=TOKEN))
    demo_url, served_url = await serve(demo), await serve(served)

    anonymous = await (await session.get(demo_url + "/deliveries")).text()
    refused = await session.get(served_url + "/deliveries", allow_redirects=False)
    signed_in = await (
        await session.get(served_url + "/deliveries", headers={"Authorization": f"Bearer {TOKEN}"})
    ).text()

    assert "d-public" in anonymous and "boom &lt;b&gt;" in anonymous
    assert "2023-11-14 22:14 UTC" in anonymous  # when it was dead-lettered
    assert "acme/secret" not in anonymous and "d-secret" not in anonymous
    assert "d-install" not in anonymous
    assert "2 more (of private repositories, or about the installation)" in anonymous
    assert (refused.status, refused.headers["Location"]) == (303, "/login")
    assert all(d in signed_in for d in ("d-public", "d-secret", "d-install"))
    assert "need the dashboard token" not in signed_in


async def test_the_page_is_off_like_the_rest_without_a_token(
    store: Store, serve: Serve, session: aiohttp.ClientSession
) -> None:
    app = web.Application()
    dashboard.install(app, store, dashboard.Access(token=None))
    url = await serve(app)

    assert (await session.get(url + "/deliveries")).status == 404
