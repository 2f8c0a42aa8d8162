"""Tracking issues end to end: the real bot against the simulator over HTTP.

The lifecycle cases that fit a scenario's `expect` block (reopen, quiet label, locked,
closed long ago, below the threshold) are scenarios in tests/scenarios/tracking-*.yml.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from bot.demo import running, settle
from bot.handlers.context import BotContext
from bot.handlers.scope import Scope
from bot.handlers.tracking import adopt_issue
from bot.report.issue import tracking_key
from bot.runtime import Bot
from bot.sim.scenario import Scenario, builtin_scenario
from bot.sim.server import Simulator

TEST_ID = "tests/bus/test_core.py::test_publish_waits_for_ack"
TITLE = f"Flaky test: {TEST_ID}"
LOG = (Path(__file__).parents[1] / "bot/sim/scenarios/demo-attempt-1.log").read_text()
PASS_LOG = (Path(__file__).parents[1] / "bot/sim/scenarios/demo-attempt-2.log").read_text()


def scenario_with(**update: Any) -> Scenario:
    raw = builtin_scenario().model_dump(mode="json", exclude_none=True)
    # The demo's repository files stay (the walk reads the test's imports); given files add.
    update["files"] = {**raw["files"], **update.get("files", {})}
    raw.update(update)
    raw.pop("expect", None)
    return Scenario.model_validate(raw)


def pull(number: int, author: str, sha_digit: str) -> dict[str, Any]:
    return {
        "number": number,
        "title": f"Change {number}",
        "author": author,
        "head_sha": sha_digit * 40,
        "base_sha": "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d",
        "head_ref": f"branch-{number}",
        "files": ["docs/usage.md"],
    }


def failing_check(name: str, pr: int, log: str = LOG) -> dict[str, Any]:
    return {"name": name, "pr": pr, "attempts": [{"conclusion": "failure", "log": log}]}


async def run_check(sim: Simulator, bot: Bot, name: str) -> None:
    await sim.complete_check(sim.world.queue_run(name))
    await settle(sim, bot)


def prose(text: str) -> str:
    """The text without fenced blocks and code spans: what GitHub reads as markdown."""
    text = re.sub(r"^(`{3,})\w*\n.*?\n\1$", "", text, flags=re.MULTILINE | re.DOTALL)
    return re.sub(r"(?<!\\)(`+)(?!`).*?(?<!`)\1(?!`)", "", text)


async def test_opened_at_the_threshold_not_before_then_updated_without_a_second_issue(
    tmp_path: Path,
) -> None:
    # Reruns off: flakiness shows only as the same failure on PRs of different authors.
    scenario = scenario_with(
        files={".github/flaky.yml": "rerun: false\n"},
        pull_requests=[pull(7, "ann", "a"), pull(8, "ann", "b"), pull(9, "bob", "c"),
                       pull(10, "cy", "d")],
        checks=[failing_check(f"tests #{n}", n) for n in (7, 8, 9, 10)],
    )  # fmt: skip
    async with running(scenario, tmp_path) as (sim, bot):
        await run_check(sim, bot, "tests #7")
        await run_check(sim, bot, "tests #8")  # the same author again: not yet
        assert sim.issues_created == []

        await run_check(sim, bot, "tests #9")  # a second author: the threshold
        (issue,) = sim.issues_created
        assert issue.title == TITLE
        assert issue.labels == ["flaky-test"]
        assert tracking_key(issue.body) == "tests.bus.test_core.test_publish_waits_for_ack"
        assert "3 failures recorded, on 3 pull requests (#7, #8, #9)" in issue.body
        assert _tally(issue.body) == 3

        await run_check(sim, bot, "tests #10")
        assert len(sim.issues_created) == 1
        assert "4 failures recorded, on 4 pull requests (#7, #8, #9, #10)" in issue.body
        assert _tally(issue.body) == 4
        assert issue.title == TITLE
        # Every PR from the threshold on links the issue.
        for number in (9, 10):
            (comment,) = sim.bot_comments(number)
            assert f"| #{issue.number} |" in comment.body
        label = sim.world.find_label("flaky-test")
        assert label is not None and label.color != "ededed" and label.description


def _tally(body: str) -> int:
    """The count of the failure mode row."""
    row = next(line for line in body.split("\n") if line.startswith("| `TimeoutError"))
    return int(row.split("|")[3])


async def test_nothing_is_written_again_when_nothing_changed(tmp_path: Path) -> None:
    async with running(builtin_scenario(), tmp_path) as (sim, bot):
        await sim.play()
        await settle(sim, bot)
        assert len(sim.issues_created) == 1
        writes = len(sim.writes)
        passing = sim.world.latest_run("tests (3.12)")
        assert passing is not None and passing.conclusion == "success"

        # The same pass delivered again (a redelivery with a new id): same text, no write.
        await sim.complete_check(passing)
        await settle(sim, bot)

    assert len(sim.writes) == writes
    assert len(sim.bot_comments(7)) == 1


async def test_adoption_retitles_the_issue_and_keeps_the_human_text(tmp_path: Path) -> None:
    human = "Fails a lot since the network change. cc @bob\n\n- [ ] pin the broker version"
    scenario = scenario_with(
        issues=[
            {
                "number": 20,
                "title": "CI broken by the network again??",
                "user": "maintainer-mo",
                "body": human,
                "labels": ["ci"],
            }
        ],
        files={".github/flaky.yml": "rerun: false\n"},
    )
    async with running(scenario, tmp_path) as (sim, bot):
        await sim.play()
        await settle(sim, bot)
        assert sim.issues_created == []
        ctx = BotContext(store=bot.store, github=bot.github, metrics=bot.metrics)
        gh = await bot.github.installation_client(scenario.app.installation_id)

        mo, scope = "maintainer-mo", Scope(ctx, gh, "acme/bus")
        adopted = await adopt_issue(scope, 20, TEST_ID, 7, mo)
        again = await adopt_issue(scope, 20, TEST_ID, 7, mo)
        refused = await adopt_issue(scope, 7, TEST_ID, 7, mo)
        other = await adopt_issue(scope, 20, "tests/test_other.py::test_x", 7, mo)

        # The check's next attempt (a pass: reruns are off, so we start it) updates the
        # adopted issue, and the PR comment links it.
        await sim.complete_check(sim.world.queue_run("tests (3.12)"))
        await settle(sim, bot)

    issue = sim.world.issues[20]
    assert issue.title == TITLE
    assert issue.body.endswith(human + "\n")
    assert tracking_key(issue.body) == "tests.bus.test_core.test_publish_waits_for_ack"
    assert "1 failure recorded, on 1 pull request (#7)" in issue.body
    assert "| 1 | passed on rerun |" in issue.body
    assert "python -m pytest tests/bus/test_core.py::test_publish_waits_for_ack" in issue.body
    assert sorted(issue.labels) == ["ci", "flaky-test"]
    assert sim.issues_created == []
    assert adopted == (
        True,
        f"Now tracking `{TEST_ID}` in #20: retitled from “CI broken by the network again??”; "
        "labelled `flaky-test`; the bot's section (1 recorded failure) put on top of the body. "
        "The text people wrote is kept.",
    )
    assert again == (
        True,
        f"Now tracking `{TEST_ID}` in #20: nothing needed changing. The text people wrote is kept.",
    )
    assert refused == (False, "Not tracked: #7 is a pull request, not an issue.")
    assert other == (False, "Not tracked: #20 already tracks another test.")
    (comment,) = sim.bot_comments(7)
    assert "| #20 |" in comment.body


async def test_a_log_line_with_a_mention_and_pipes_is_harmless_everywhere(tmp_path: Path) -> None:
    hostile = "E           AssertionError: @someone said | pipes | see #12 and <b>x</b>"
    log = LOG.replace("E           TimeoutError: ack not received within 2.0s", hostile)
    assert hostile in log
    scenario = scenario_with(
        checks=[
            {
                "name": "tests (3.12)",
                "pr": 7,
                "attempts": [
                    {"conclusion": "failure", "log": log},
                    {"conclusion": "success", "log": PASS_LOG},
                ],
            }
        ]
    )
    async with running(scenario, tmp_path) as (sim, bot):
        await sim.play()
        await settle(sim, bot)

    (comment,) = sim.bot_comments(7)
    (issue,) = sim.issues_created
    for body in (comment.body, issue.body):
        assert "@someone" not in body and "#12" not in body
        assert "@\u200bsomeone" in body
        assert "<b>" not in prose(body), "raw HTML outside code"
    (row,) = [line for line in issue.body.split("\n") if line.startswith("| `AssertionError")]
    assert len(re.findall(r"(?<!\\)\|", row)) == 5, "a pipe split the failure-mode row"


async def test_new_issues_per_hour_are_capped_per_repository(tmp_path: Path) -> None:
    other_log = LOG.replace("test_publish_waits_for_ack", "test_subscribe_waits_for_ack")
    scenario = scenario_with(
        files={".github/flaky.yml": "max_new_issues_per_hour: 1\n"},
        pull_requests=[pull(7, "ann", "a"), pull(8, "bob", "b")],
        checks=[
            {
                "name": f"tests #{number}",
                "pr": number,
                "attempts": [
                    {"conclusion": "failure", "log": log},
                    {"conclusion": "success", "log": PASS_LOG},
                ],
            }
            for number, log in ((7, LOG), (8, other_log))
        ],
    )
    async with running(scenario, tmp_path) as (sim, bot):
        await run_check(sim, bot, "tests #7")
        await run_check(sim, bot, "tests #8")
        verdicts = [d.verdict for a in await bot.store.check_attempts_for_pr("acme/bus", 8)
                    for d in a.decisions]  # fmt: skip

    assert "flaky" in verdicts, "the second test met the threshold too"
    assert [issue.title for issue in sim.issues_created] == [TITLE]
    (comment,) = sim.bot_comments(8)
    assert "| likely flaky |" in comment.body and "| #" not in comment.body.split("<details>")[0]
