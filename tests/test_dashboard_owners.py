"""The dashboard's owners: a column on the ranking, a filter by owner, a line on the test's
page, from the owners the tracking issue last named (real bot, simulator, real HTTP)."""

from __future__ import annotations

from pathlib import Path

import aiohttp

from bot.demo import running, settle
from bot.sim.scenario import load_scenario
from bot.triage.failures import match_key

SCENARIOS = Path(__file__).parent / "scenarios"
TEST_KEY = match_key("tests/bus/test_core.py::test_publish_waits_for_ack")


async def test_owners_column_filter_and_test_page(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    async with running(load_scenario(SCENARIOS / "tracking-owners.yml"), tmp_path) as (sim, bot):
        await sim.play(after_each=lambda: settle(sim, bot))
        await settle(sim, bot)
        pages = {
            name: await (await session.get(bot.url + path)).text()
            for name, path in {
                "all": "/acme/bus",
                "user": "/acme/bus?owner=%40octo-dev",
                "team": "/acme/bus?owner=ACME/bus-team",  # logins and slugs ignore case
                "other": "/acme/bus?owner=@writer",
                "test": "/acme/bus/tests/" + TEST_KEY,
            }.items()
        }

    link = '<a href="/acme/bus?owner=octo-dev"><code>octo-dev</code></a>'
    assert "<th>Owners</th>" in pages["all"]
    assert link in pages["all"]
    assert (
        '<a href="/acme/bus?owner=acme%2Fbus-team"><code>acme/bus-team</code></a>' in (pages["all"])
    )
    for name in ("user", "team"):
        assert "test_publish_waits_for_ack" in pages[name], name
    assert "owned by <code>octo-dev</code>" in pages["user"]
    assert "test_publish_waits_for_ack" not in pages["other"]
    assert "No test owned by <code>writer</code> (" in pages["other"]
    assert f'<p id="owners">Owners (CODEOWNERS): {link}' in pages["test"]
    assert "@octo-dev" not in pages["all"] + pages["test"]
