"""check_expectations: what the bot did in the simulator against the scenario's `expect`."""

from __future__ import annotations

from bot.sim import Simulator, builtin_scenario, check_expectations
from bot.sim.expect import Accuracy
from bot.sim.state import Issue, RerunRequest, now

FLAKY = {"tests/bus/test_core.py::test_publish_waits_for_ack": "flaky"}


async def test_all_met_when_the_bot_did_what_the_demo_expects() -> None:
    scenario = builtin_scenario()
    async with Simulator(scenario, webhook_secret="s") as sim:
        sim.world.add_comment(
            7, sim.bot_login, "Failure is likely flaky, unrelated to this PR. | #8 |"
        )
        sim.world.reruns.append(RerunRequest("job", 1, ("tests (3.12)",), 201))
        _bot_issue(sim, TITLE, "Failed 1 of 2 runs | #7 | `3f1c2a9` | passed on rerun")
        assert check_expectations(scenario, sim, FLAKY) == []


TITLE = "Flaky test: tests/bus/test_core.py::test_publish_waits_for_ack"


def _bot_issue(sim: Simulator, title: str, body: str, state: str = "open") -> Issue:
    moment = now()
    issue = Issue(
        number=sim.world.next_issue_number(),
        id=sim.world.new_id("issue"),
        title=title,
        body=body,
        state=state,
        user=sim.bot_login,
        labels=[],
        created_at=moment,
        updated_at=moment,
    )
    sim.world.issues[issue.number] = issue
    sim.world.issues_created.append(issue.number)
    return issue


async def test_issue_expectations_name_title_state_text_and_comments() -> None:
    scenario = builtin_scenario()
    async with Simulator(scenario, webhook_secret="s") as sim:
        issue = _bot_issue(sim, TITLE, "Failed 1 of 2 runs", state="closed")
        sim.world.add_comment(issue.number, sim.bot_login, "reopened")
        problems = check_expectations(scenario, sim, FLAKY)
        _bot_issue(sim, TITLE, "another")
        twice = check_expectations(scenario, sim, FLAKY)
    name = f"issue #{issue.number} ({TITLE!r})"
    assert [p for p in problems if p.startswith("issue #")] == [
        f"{name}: its body lacks '| #7 | `3f1c2a9` |'",
        f"{name}: its body lacks 'passed on rerun'",
        f"{name}: expected open, found closed",
        f"{name}: expected 0 bot comment(s), found 1",
    ]
    assert f"expected one issue titled {TITLE!r}, found 2" in twice


async def test_each_unmet_expectation_is_reported() -> None:
    scenario = builtin_scenario()
    scenario.expect.issues = []
    scenario.expect.comments[0].contains = ["likely flaky, unrelated to this PR"]
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
    scenario.expect.issues, scenario.expect.issues_created = [], None
    async with Simulator(scenario, webhook_secret="s") as sim:
        wrong = {"tests/bus/test_core.py::test_publish_waits_for_ack": "unrelated"}
        assert check_expectations(scenario, sim, wrong) == [
            "tests/bus/test_core.py::test_publish_waits_for_ack: expected verdict 'flaky', "
            "the bot said 'unrelated'"
        ]


def test_accuracy_counts_wrong_unrelated_against_precision_missed_flake_against_recall() -> None:
    accuracy = Accuracy()
    accuracy.add("a", {"t1": "flaky", "t2": "related"}, {"t1": "flaky", "t2": "unrelated"})
    accuracy.add("b", {"t3": "unrelated", "t4": "unknown"}, {"t3": "unknown", "t4": "unknown"})

    assert (accuracy.true_positives, accuracy.false_positives, accuracy.false_negatives) == (
        1,
        1,
        1,
    )
    assert accuracy.precision == 0.5
    assert accuracy.recall == 0.5
    assert accuracy.labelled == 4
    assert accuracy.misjudged == [
        "a: t2: labelled related, said unrelated",
        "b: t3: labelled unrelated, said unknown",
    ]


def test_accuracy_without_positives_has_no_precision_nor_recall() -> None:
    accuracy = Accuracy()
    accuracy.add("a", {"t": "related"}, {})

    assert accuracy.precision is None
    assert accuracy.recall is None
    assert accuracy.misjudged == ["a: t: labelled related, said none"]
