"""Writes GitHub carried out whose answers never came back: the bot retries the delivery and
must not do any of them twice (a second comment, a second rerun, a second issue)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.demo import final_verdicts, running, settle
from bot.sim.scenario import FaultRule, Faults, Scenario, builtin_scenario
from bot.store import DeliveryState

TEST_ID = "tests/bus/test_core.py::test_publish_waits_for_ack"


def demo_losing(method: str, path: str) -> Scenario:
    """The demo, with the first answer to one kind of write dropped after the write was made."""
    rule = FaultRule(method=method, path=path, drop_connection=True, after_applying=True)
    return builtin_scenario().model_copy(update={"faults": Faults(rules=[rule])})


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", r"/issues/7/comments$"),  # the sticky comment
        ("POST", r"/actions/jobs/\d+/rerun$"),  # the rerun
        ("POST", r"/repos/acme/bus/issues$"),  # the tracking issue
        ("PATCH", r"/issues/comments/\d+$"),  # the comment's edit
    ],
    ids=["comment", "rerun", "issue", "edit"],
)
async def test_a_write_whose_answer_was_lost_is_not_done_twice(
    method: str, path: str, tmp_path: Path
) -> None:
    async with running(demo_losing(method, path), tmp_path) as (sim, bot):
        await sim.play()
        await settle(sim, bot)
        verdicts = await final_verdicts(bot.store, "acme/bus", [7])
        deliveries = await bot.store.list_deliveries(100)
    dropped = [e for e in sim.timeline if e.kind == "api" and e.status == 0]

    assert dropped, "the fault never fired: the test would prove nothing"
    assert all(d.state is DeliveryState.DONE for d in deliveries)
    assert verdicts == {TEST_ID: "flaky"}
    (comment,) = sim.bot_comments(7)
    assert "likely flaky, unrelated to this PR" in comment.body
    assert len(sim.reruns) == 1
    assert len(sim.issues_created) == 1
