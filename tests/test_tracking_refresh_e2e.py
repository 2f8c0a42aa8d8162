"""A tracking issue's tally is written by one refresh for every failure of its test in a
window, not by each failure: a burst of failing jobs costs one read and one edit."""

from __future__ import annotations

import math
import time
from pathlib import Path

from bot.demo import running
from bot.handlers.tracking import REFRESH_EVENT
from bot.runtime import Bot
from bot.sim.scenario import Scenario
from bot.sim.server import Simulator
from bot.store import Delivery, DeliveryState
from tests.fleet import check_name, failing_log, many_prs

WINDOW = 3600.0
ISSUE = "/repos/{owner}/{repo}/issues/{issue_number}"
TEST_ID = "tests/shard0/test_io.py::test_reads_back"


def one_test_failing_everywhere(prs: int, jobs: int) -> Scenario:
    """Every job of every PR fails the same test; PRs by different authors; reruns on."""
    world = many_prs(prs, jobs).model_dump()
    world["files"] = {}
    for check in world["checks"]:
        check["attempts"] = [{"conclusion": "failure", "log": failing_log(0)}]
    return Scenario.model_validate(world)


async def fail(sim: Simulator, bot: Bot, pr: int, job: int) -> None:
    await sim.send_webhook("check_run", sim.next_completion(check_name(pr, job)))
    # Scheduled refreshes stay in the inbox until their window ends: wait for the triage.
    await bot.wait_handled("check_run")


async def refreshes(bot: Bot, state: DeliveryState) -> list[Delivery]:
    return [d for d in await bot.store.list_deliveries(1000, [state]) if d.event == REFRESH_EVENT]


async def test_a_burst_of_failures_updates_the_issue_once(tmp_path: Path) -> None:
    async with running(
        one_test_failing_everywhere(2, 4), tmp_path, tracking_refresh_seconds=WINDOW
    ) as (sim, bot):
        sim.rerun_delay_s = 1e9
        await fail(sim, bot, 1, 0)
        await fail(sim, bot, 2, 0)  # a second author: the issue is opened, at once
        (issue,) = [i for i in sim.world.issues.values() if not i.is_pull_request]
        opened_with = issue.body
        started = time.time()
        for pr, job in [(2, 1), (2, 2), (2, 3), (1, 1), (1, 2)]:
            await fail(sim, bot, pr, job)
        ended = time.time()
        assert issue.body == opened_with  # nothing written yet
        assert sim.calls[f"PATCH {ISSUE}"] == sim.calls[f"GET {ISSUE}"] == 0

        # One refresh per window the five failures fell in: one, unless an hour turned.
        waiting = await refreshes(bot, DeliveryState.PENDING)
        windows = math.floor(ended / WINDOW) - math.floor(started / WINDOW) + 1
        assert len(waiting) == windows
        assert all(d.next_attempt_at > ended for d in waiting[-1:])

        # The window ends: the worker takes it like any delivery.
        for claimed in await bot.store.claim(waiting[-1].next_attempt_at, 60.0, 10):
            await bot.worker.process(claimed)
        assert len(await refreshes(bot, DeliveryState.DONE)) == windows
        body = issue.body

    assert sim.calls[f"PATCH {ISSUE}"] == sim.calls[f"GET {ISSUE}"] == windows
    assert body != opened_with
    # All seven failures are in the tally, each with its check.
    for pr, job in [(1, 0), (2, 0), (2, 1), (2, 2), (2, 3), (1, 1), (1, 2)]:
        assert check_name(pr, job) in body
