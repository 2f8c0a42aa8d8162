"""Automatic closing end to end: the real bot against the simulator over HTTP.

tests/scenarios/tracking-auto-close*.yml hold the final states (closed; quiet and locked
issues left open); here each step is checked, then the recurrence that reopens the issue.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from bot.demo import running, settle
from bot.runtime import Bot
from bot.sim.scenario import Scenario, load_scenario
from bot.sim.server import Simulator
from bot.sim.state import Issue

SCENARIO = Path(__file__).parent / "scenarios" / "tracking-auto-close.yml"
LOG = (Path(__file__).parents[1] / "bot/sim/scenarios/demo-attempt-1.log").read_text()
KEY = "tests.bus.test_core.test_publish_waits_for_ack"


def scenario(**update: Any) -> Scenario:
    raw = load_scenario(SCENARIO).model_dump(mode="json", exclude_none=True)
    raw.pop("expect")
    for name, value in update.items():
        raw[name] = raw[name] + value if isinstance(value, list) else value
    return Scenario.model_validate(raw)


async def run_check(sim: Simulator, bot: Bot, name: str) -> None:
    await sim.complete_check(sim.world.queue_run(name))
    await settle(sim, bot)


def tracking_issue(sim: Simulator) -> Issue:
    (issue,) = sim.issues_created
    return issue


def bot_comments(sim: Simulator, issue: Issue) -> list[str]:
    return [c.body for c in sim.world.comments_on(issue.number) if c.user.endswith("[bot]")]


async def test_closed_once_enough_passes_over_enough_days_then_reopened_on_failure(
    tmp_path: Path,
) -> None:
    later_failure = {
        "number": 8,
        "title": "Tidy the README",
        "author": "bob",
        "head_sha": "8" * 40,
        "base_sha": "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d",
        "head_ref": "readme",
        "files": ["README.md"],
    }
    world = scenario(
        pull_requests=[later_failure],
        checks=[{"name": "tests #8", "check_name": "tests (3.12)", "pr": 8,
                 "attempts": [{"conclusion": "failure", "log": LOG}]}],
    )  # fmt: skip
    async with running(world, tmp_path) as (sim, bot):
        await run_check(sim, bot, "tests (3.12)")  # fails 3 days ago, passes on rerun
        issue = tracking_issue(sim)
        assert issue.state == "open"

        # 2 passes, half a day after the failure; then 3 passes, 1.5 days after: not yet.
        for name in ("main 1", "main 2"):
            await run_check(sim, bot, name)
            assert issue.state == "open"
            assert bot_comments(sim, issue) == []

        await run_check(sim, bot, "main 3")  # 4 passes over 3 days: closed
        assert (issue.state, issue.state_reason) == ("closed", "completed")
        (why,) = bot_comments(sim, issue)
        assert why.startswith(
            "No failure of this test in 4 runs of `tests (3.12)` over the 3 days since it "
            "last failed ("
        )
        assert "4 of them passed. Closing, as `auto_close` asks (4 passing runs over 2 days)" in why
        record = await bot.store.tracking_issue("acme/bus", KEY)
        assert record is not None and record.closed_at is not None

        # Later passes cost no GitHub write: the store knows the issue is closed.
        writes = len(sim.writes)
        await run_check(sim, bot, "main 3")
        assert len(sim.writes) == writes

        # GitHub's times are whole seconds: the recurrence must come after the close.
        await asyncio.sleep(1.1)
        await run_check(sim, bot, "tests #8")
        assert issue.state == "open"
        assert len(sim.issues_created) == 1
        closing, reopening = bot_comments(sim, issue)
        assert closing == why
        assert reopening.startswith("Failed again on #8")
        record = await bot.store.tracking_issue("acme/bus", KEY)
        assert record is not None and record.closed_at is None


async def test_off_by_default_the_issue_stays_open(tmp_path: Path) -> None:
    default = load_scenario(SCENARIO).files
    code = {path: text for path, text in default.items() if path != ".github/flaky.yml"}
    async with running(scenario(files=code), tmp_path) as (sim, bot):
        await sim.play(after_each=lambda: settle(sim, bot))
        await settle(sim, bot)
        issue = tracking_issue(sim)

    assert issue.state == "open"
    assert bot_comments(sim, issue) == []
