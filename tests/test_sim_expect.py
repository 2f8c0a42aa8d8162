"""check_expectations: what the bot did in the simulator against the scenario's `expect`."""

from __future__ import annotations

from bot.sim import Simulator, builtin_scenario, check_expectations
from bot.sim.state import RerunRequest

FLAKY = {"tests/bus/test_core.py::test_publish_waits_for_ack": "flaky"}


async def test_all_met_when_the_bot_did_what_the_demo_expects() -> None:
    scenario = builtin_scenario()
    async with Simulator(scenario, webhook_secret="s") as sim:
        sim.world.add_comment(7, sim.bot_login, "Failure is likely flaky, unrelated to this PR.")
        sim.world.reruns.append(RerunRequest("job", 1, ("tests (3.12)",), 201))
        assert check_expectations(scenario, sim, FLAKY) == []


async def test_each_unmet_expectation_is_reported() -> None:
    scenario = builtin_scenario()
    scenario.expect.issues_created = 1
    scenario.expect.comments[0].not_contains = ["related to this PR"]
    async with Simulator(scenario, webhook_secret="s") as sim:
        # A human's comment does not count as the bot's.
        sim.world.add_comment(7, "octo-dev", "likely flaky, unrelated to this PR")
        sim.world.add_comment(7, sim.bot_login, "This failure is related to this PR.")
        sim.world.add_comment(7, sim.bot_login, "Second comment instead of an edit.")
        problems = check_expectations(scenario, sim, {})
    assert problems == [
        "PR #7: expected 1 bot comment(s), found 2",
        "PR #7: no bot comment contains 'likely flaky, unrelated to this PR'",
        "PR #7: a bot comment contains 'related to this PR'",
        "expected 1 rerun request(s), found 0",
        "expected 1 issue(s) created, found 0",
        "tests/bus/test_core.py::test_publish_waits_for_ack: expected verdict 'flaky', "
        "the bot gave none",
    ]


async def test_a_wrong_verdict_names_both() -> None:
    scenario = builtin_scenario()
    scenario.expect.comments = []
    scenario.expect.reruns = None
    async with Simulator(scenario, webhook_secret="s") as sim:
        wrong = {"tests/bus/test_core.py::test_publish_waits_for_ack": "unrelated"}
        assert check_expectations(scenario, sim, wrong) == [
            "tests/bus/test_core.py::test_publish_waits_for_ack: expected verdict 'flaky', "
            "the bot said 'unrelated'"
        ]
