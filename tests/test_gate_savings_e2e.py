"""The CI time the gate saved, end to end: the real bot against the simulator over real HTTP
(signed webhooks with `workflow_job`, the dashboard read with its token), on both databases.
A failure before the quarantine began saved nothing; the failure the gate let through after
it saved one rerun of its job's duration."""

from __future__ import annotations

from pathlib import Path

import aiohttp

from bot.demo import running
from bot.sim.scenario import Scenario
from tests.test_commands_e2e import MAINTAINER, TEST_ID, fail, say
from tests.test_quarantine_e2e import ISSUE, QUARANTINE_ON, TOKEN, fail_and_track, gate, tracked


def twice_failing() -> Scenario:
    """The demo's PR #7 failing in its flaky test twice, each job 5 min 20 s, with the
    `workflow_job` events that tell the bot how long each job took."""
    data = tracked(QUARANTINE_ON).model_dump()
    data["app"] = {**data.get("app", {}), "workflow_job": True}
    failing = {**data["checks"][0]["attempts"][0], "seconds": 320}
    data["checks"][0]["attempts"] = [failing, failing]
    return Scenario.model_validate(data)


async def test_the_quarantined_page_counts_the_rerun_the_gate_saved(
    tmp_path: Path, store_url: str
) -> None:
    scenario = twice_failing()
    async with running(scenario, tmp_path, database_url=store_url, dashboard_token=TOKEN) as (
        sim,
        bot,
    ):
        await fail_and_track(sim, bot)
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as reader:
            await say(sim, bot, MAINTAINER, "/flaky quarantine 7d", issue=ISSUE)
            before = await (await reader.get(f"{bot.url}/acme/bus/quarantined")).text()
            await fail(sim, bot)  # the rerun fails again, now quarantined
            after = await (await reader.get(f"{bot.url}/acme/bus/quarantined")).text()
        status, conclusion, summary = gate(sim)

    assert (status, conclusion) == ("completed", "success")
    assert f"`{TEST_ID}`: quarantined until " in summary
    assert "CI time saved: 0 reruns." in before
    assert "CI time saved: 1 rerun, 5 min 20 s." in after
    assert "<td>1 rerun, 5 min 20 s</td></tr>" in after
