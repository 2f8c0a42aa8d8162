"""`flakybot triage` prints the cause a failure's message suggests (issue 28), end to end: the
real try-out recipe against the simulator serving a scenario whose job timed out in jest."""

from __future__ import annotations

import json
from pathlib import Path

from bot.sim.scenario import load_scenario
from bot.sim.server import Simulator
from bot.tryout import Target, describe, record, run_tryout

SCENARIOS = Path(__file__).parent / "scenarios"
CAUSE = (
    "Suspected cause: timing and asynchronous waits (confidence: low); signals: Jest test "
    "timeout in 1 of 1 failure (timing and asynchronous waits)"
)


async def test_the_try_out_prints_the_suspected_cause_with_its_signal() -> None:
    scenario = load_scenario(SCENARIOS / "js-package-json-exports-changed.yml")
    async with Simulator(scenario, webhook_secret="-") as sim:
        sim.next_completion(scenario.checks[0].name)
        result = await run_tryout(
            Target("acme/formik", 21), token=sim.personal_token(), api_url=sim.url
        )

    text = describe(result)
    assert f"\n    {CAUSE}\n" in text
    assert result.comment is not None
    assert (
        "- **Suspected cause:** timing and asynchronous waits (confidence: low)" in result.comment
    )
    (check,) = json.loads(json.dumps(record(result)))["failed_checks"]  # as --json prints it
    (verdict,) = check["verdicts"]
    cause = verdict["suspected_cause"]
    assert (cause["category"], cause["confidence"], cause["text"]) == (
        "timing",
        "low",
        CAUSE.removeprefix("Suspected cause: "),
    )
    assert [s["name"] for s in cause["signals"]] == ["Jest test timeout"]
