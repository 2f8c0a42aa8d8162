"""One write GitHub refuses (422) loses only itself: the delivery's other writes (the comment,
the other tracking issues, the check run) still happen, and numbers read from a log are
brought into the ranges GitHub takes before they are sent."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.demo import running, settle
from bot.sim import Simulator
from bot.sim.scenario import FaultRule, Faults, Scenario, load_scenario
from bot.store import DeliveryState
from tests.test_hostile_sizes import DEMO, _refused

HUGE = "12345678901234567890123"  # 23 digits: no 32-bit (or 64-bit) integer holds it


def _with(
    scenario: Scenario, *, log: str | None = None, faults: tuple[FaultRule, ...] = ()
) -> Scenario:
    [check] = scenario.checks
    failed, passed = check.attempts
    if log is not None:
        failed = failed.model_copy(update={"log": log})
    return scenario.model_copy(
        update={
            "checks": [check.model_copy(update={"attempts": [failed, passed]})],
            "files": {**scenario.files, ".github/flaky.yml": "check_run: true\n"},
            "faults": Faults(rules=list(faults)),
        }
    )


async def _play(scenario: Scenario, workdir: Path) -> tuple[Simulator, list[str]]:
    async with running(scenario, workdir) as (sim, bot):
        await sim.play(after_each=lambda: settle(sim, bot))
        await settle(sim, bot)
        dead = [d.id for d in await bot.store.list_deliveries(100, [DeliveryState.DEAD])]
    return sim, dead


async def test_a_line_number_no_integer_holds_is_sent_as_the_first_line(tmp_path: Path) -> None:
    scenario = load_scenario(DEMO)
    log = (scenario.checks[0].attempts[0].log or "").replace(":58: ", f":{HUGE}: ")
    log = log.replace("src/bus/core.py:112:", f"src/bus/core.py:{HUGE}:")
    sim, dead = await _play(_with(scenario, log=log), tmp_path)

    assert (_refused(sim), dead) == ([], [])
    [run] = sim.world.app_runs.values()
    [note] = run.annotations
    assert (note["start_line"], note["end_line"]) == (1, 1)
    assert len(sim.world.issues_created) == 1
    [comment] = sim.world.comments.values()
    assert "passed on rerun" in comment.body


@pytest.mark.parametrize(
    ("refused", "method", "path"),
    [
        ("the tracking issue", "POST", r"/issues$"),
        ("the comment", "POST", r"/issues/\d+/comments$"),
        ("the check run's annotations", "POST", r"/check-runs$"),
    ],
)
async def test_one_refused_write_loses_only_itself(
    tmp_path: Path, refused: str, method: str, path: str
) -> None:
    rule = FaultRule(method=method, path=path, status=422, message="Validation Failed")
    sim, dead = await _play(_with(load_scenario(DEMO), faults=(rule,)), tmp_path)

    assert dead == []
    assert len(_refused(sim)) == 1
    issues = sim.world.issues_created
    comments = list(sim.world.comments.values())
    [run] = sim.world.app_runs.values()
    assert run.conclusion is not None
    if refused == "the tracking issue":
        assert (issues, len(comments), len(run.annotations)) == ([], 1, 1)
    elif refused == "the comment":
        # Refused when first posted; the rerun's pass writes it.
        assert (len(issues), len(comments), len(run.annotations)) == (1, 1, 1)
    else:
        # Created without its annotation (which is kept as sent: not refused again).
        assert (len(issues), len(comments), run.annotations) == (1, 1, [])
