"""Signed JSON of the wrong shape, end to end: stored, dead-lettered at once with the
validation error that names the field, nothing written to GitHub, and the bot carries on.

A signature proves a delivery came from someone holding the secret, not that its payload is
what GitHub sends; ingress checks only that the body is a JSON object, so a payload the
handlers cannot read is kept (listed by `flakybot deliveries --failed`, replayable) rather
than refused at the door.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from bot.demo import final_verdicts, running, settle
from bot.sim.scenario import builtin_scenario
from bot.sim.webhooks import issue_comment_created
from bot.store import DeliveryState

TEST_ID = "tests/bus/test_core.py::test_publish_waits_for_ack"


def _broken(payload: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """The payload with the value at a dotted path replaced (or removed, for `...`)."""
    broken = copy.deepcopy(payload)
    *parents, last = path.split(".")
    node = broken
    for key in parents:
        node = node[key]
    if value is ...:
        del node[last]
    else:
        node[last] = value
    return broken


CHECK_RUN_BREAKAGES = [
    ("check_run", ...),
    ("check_run", "completed"),
    ("check_run.id", "forty-two"),
    ("check_run.head_sha", None),
    ("check_run.pull_requests", {"number": 7}),
    ("check_run.conclusion", ["failure"]),
    ("repository", 7),
    ("installation", "one"),
    ("installation", [1]),
    ("installation.id", "one"),
    ("installation.id", 1.5),
]


@pytest.mark.parametrize(("path", "value"), CHECK_RUN_BREAKAGES, ids=lambda v: repr(v)[:20])
async def test_a_check_run_of_the_wrong_shape_is_dead_lettered_with_a_clear_error(
    tmp_path: Path, path: str, value: Any
) -> None:
    async with running(builtin_scenario(), tmp_path) as (sim, bot):
        good = sim.next_completion("tests (3.12)")
        bad = _broken(good, path, value)
        assert await sim.send_webhook("check_run", bad, delivery_id="bad") == 202
        await settle(sim, bot)
        (stored,) = await bot.store.list_deliveries(10)
        writes_after_bad = list(sim.writes)

        # The same check run, well formed: triaged as usual.
        assert await sim.send_webhook("check_run", good, delivery_id="good") == 202
        await settle(sim, bot)
        verdicts = await final_verdicts(bot.store, "acme/bus", [7])
        states = {d.id: d.state for d in await bot.store.list_deliveries(10)}

    assert (stored.id, stored.state, stored.attempts) == ("bad", DeliveryState.DEAD, 1)
    assert stored.last_error is not None
    assert stored.last_error.startswith("ValidationError: "), stored.last_error
    assert path.split(".")[-1] in stored.last_error
    assert writes_after_bad == []
    # The good one, and the rerun it asked for, handled as usual.
    assert states.pop("bad") == DeliveryState.DEAD
    assert set(states.values()) == {DeliveryState.DONE} and "good" in states
    assert verdicts == {TEST_ID: "flaky"}


COMMENT_BREAKAGES = [
    ("comment", ...),
    ("comment.body", 12),
    ("comment.user", "octo-dev"),
    ("comment.id", None),
    ("issue.number", "seven"),
    ("issue.pull_request", "yes"),
]


@pytest.mark.parametrize(("path", "value"), COMMENT_BREAKAGES, ids=lambda v: repr(v)[:20])
async def test_a_comment_of_the_wrong_shape_runs_no_command(
    tmp_path: Path, path: str, value: Any
) -> None:
    async with running(builtin_scenario(), tmp_path) as (sim, bot):
        comment = sim.world.add_comment(7, "octo-dev", "/flaky rerun")
        payload = _broken(issue_comment_created(sim.shapes, comment), path, value)
        assert await sim.send_webhook("issue_comment", payload, delivery_id="bad") == 202
        await settle(sim, bot)
        (stored,) = await bot.store.list_deliveries(10)

    assert (stored.state, stored.attempts) == (DeliveryState.DEAD, 1)
    assert stored.last_error is not None
    assert stored.last_error.startswith("ValidationError: "), stored.last_error
    assert sim.writes == []
    assert sim.reruns == []
