"""`/flaky` commands and the rerun policy, end to end: the real bot against the simulator over
real HTTP (signed webhooks, App JWT, installation token), each side's state read afterwards."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.demo import final_verdicts, running, settle
from bot.runtime import Bot
from bot.sim.scenario import Scenario, builtin_scenario
from bot.sim.server import Simulator
from bot.sim.webhooks import issue_comment_created
from bot.store import CheckAttempt
from bot.triage.failures import match_key

REPO = "acme/bus"
CHECK = "tests (3.12)"
TEST_ID = "tests/bus/test_core.py::test_publish_waits_for_ack"
AUTHOR = "octo-dev"
MAINTAINER = "maintainer-mo"
NO_AUTO_RERUN = {".github/flaky.yml": "rerun: false\n"}


def world(*outcomes: str, files: dict[str, str] | None = None, **check: Any) -> Scenario:
    """The built-in demo's PR #7 and its check, with these attempt outcomes in turn:
    "fail" (the demo's failing log), "pass", or "other" (a different failure)."""
    demo = builtin_scenario()
    failing, passing = demo.checks[0].attempts
    other = failing.model_copy(
        update={"log": (failing.log or "").replace("ack not received", "broker connection reset")}
    )
    attempts = {"fail": failing, "pass": passing, "other": other}
    data = demo.model_dump()
    data["checks"] = [
        {
            **data["checks"][0],
            "attempts": [attempts[o].model_dump() for o in outcomes],
            **check,
        }
    ]
    data["files"] = {**data["files"], **(files or {})}
    data["expect"] = {}
    return Scenario.model_validate(data)


async def fail(sim: Simulator, bot: Bot, check: str = CHECK) -> None:
    """Complete the check's next attempt, and wait for everything it sets off."""
    await sim.complete_check(sim.world.queue_run(check))
    await settle(sim, bot)


async def say(sim: Simulator, bot: Bot, user: str, body: str, issue: int = 7) -> int:
    """Post a comment as `user` and wait for everything it sets off; the comment's id."""
    comment = sim.world.add_comment(issue, user, body)
    await sim.send_webhook("issue_comment", issue_comment_created(sim.shapes, comment))
    await settle(sim, bot)
    return comment.id


def reactions(sim: Simulator, comment_id: int) -> list[str]:
    return [reaction.content for reaction in sim.reactions(comment_id)]


def replies(sim: Simulator) -> list[str]:
    """The bot's comments on PR #7 other than the sticky triage comment."""
    return [c.body for c in sim.bot_comments(7) if "flaky-triage:sticky-comment" not in c.body]


def sticky(sim: Simulator) -> str:
    (comment,) = [c for c in sim.bot_comments(7) if "flaky-triage:sticky-comment" in c.body]
    return comment.body


async def attempts(bot: Bot) -> list[CheckAttempt]:
    return await bot.store.check_attempts_for_pr(REPO, 7)


# --- who may ---------------------------------------------------------------------------------


async def test_the_author_reruns_a_failed_job_and_the_pass_flips_the_verdict_to_flaky(
    tmp_path: Path,
) -> None:
    async with running(world("fail", "pass", files=NO_AUTO_RERUN), tmp_path) as (sim, bot):
        await fail(sim, bot)
        assert sim.reruns == []  # automatic reruns are off in this repository
        assert "likely flaky" not in sticky(sim)

        comment_id = await say(sim, bot, AUTHOR, "CI is red again.\n/flaky rerun")
        verdicts = await final_verdicts(bot.store, REPO, [7])

    assert [(r.endpoint, r.checks, r.status) for r in sim.reruns] == [("job", (CHECK,), 201)]
    assert reactions(sim, comment_id) == ["eyes", "rocket"]
    (reply,) = replies(sim)
    assert f"`{CHECK}`: rerun requested (attempt 2)" in reply
    assert verdicts == {TEST_ID: "flaky"}
    assert "likely flaky, unrelated to this PR" in sticky(sim)


async def test_someone_with_write_access_may_use_commands(tmp_path: Path) -> None:
    async with running(world("fail", "pass", files=NO_AUTO_RERUN), tmp_path) as (sim, bot):
        await fail(sim, bot)
        comment_id = await say(sim, bot, MAINTAINER, "/flaky rerun")

    assert reactions(sim, comment_id) == ["eyes", "rocket"]
    assert len(sim.reruns) == 1
    assert sim.calls["GET /repos/{owner}/{repo}/collaborators/{username}/permission"] == 1


async def test_a_stranger_is_refused_in_one_line_and_nothing_is_rerun(tmp_path: Path) -> None:
    async with running(world("fail", "pass", files=NO_AUTO_RERUN), tmp_path) as (sim, bot):
        await fail(sim, bot)
        comment_id = await say(sim, bot, "passer-by", "/flaky rerun")

    assert reactions(sim, comment_id) == ["confused"]
    assert replies(sim) == [
        "Not done: `/flaky` commands are for the PR's author and people with write access "
        "to the repository."
    ]
    assert sim.reruns == []


async def test_read_and_triage_access_is_not_enough(tmp_path: Path) -> None:
    scenario = world("fail", files=NO_AUTO_RERUN)
    scenario.collaborators.update({"reader": "read", "triager": "triage"})
    async with running(scenario, tmp_path) as (sim, bot):
        first = await say(sim, bot, "reader", "/flaky help")
        second = await say(sim, bot, "triager", "/flaky help")

    assert reactions(sim, first) == reactions(sim, second) == ["confused"]


async def test_bots_and_the_app_itself_are_ignored(tmp_path: Path) -> None:
    async with running(world("fail", "pass", files=NO_AUTO_RERUN), tmp_path) as (sim, bot):
        await fail(sim, bot)
        other_bot = await say(sim, bot, "dependabot[bot]", "/flaky rerun")
        itself = await say(sim, bot, sim.bot_login, "/flaky rerun")
        help_id = await say(sim, bot, AUTHOR, "/flaky help")
        stored = await bot.store.list_deliveries(100)

    assert reactions(sim, other_bot) == reactions(sim, itself) == []
    assert sim.reruns == []
    # GitHub tells the App about its own comments (the triage comment, the help reply): the
    # simulator sent them, the bot took them in and did nothing.
    own = [
        entry
        for entry in sim.timeline
        if entry.kind == "webhook" and entry.event == "issue_comment" and entry.status == 202
    ]
    assert len(own) == 3 + 2  # three comments above, the sticky comment and the reply
    assert sum(d.event == "issue_comment" for d in stored) == 5
    assert reactions(sim, help_id) == ["eyes", "rocket"]
    for comment in sim.bot_comments(7):
        assert reactions(sim, comment.id) == []
    # The App's own "/flaky rerun" above, and the one reply: to the author's help.
    assert [reply.split("\n")[0] for reply in replies(sim)] == [
        "/flaky rerun",
        "`/flaky` commands, one per line at the start of a line:",
    ]


async def test_quoted_and_code_commands_are_ignored(tmp_path: Path) -> None:
    async with running(world("fail", "pass", files=NO_AUTO_RERUN), tmp_path) as (sim, bot):
        await fail(sim, bot)
        quoted = await say(sim, bot, AUTHOR, "> /flaky rerun\n\nDid you try that?")
        fenced = await say(sim, bot, AUTHOR, "Type this:\n```\n/flaky rerun\n```")
        inline = await say(sim, bot, AUTHOR, "Type `/flaky rerun` on a line of its own.")

    for comment_id in (quoted, fenced, inline):
        assert reactions(sim, comment_id) == []
    assert sim.reruns == []
    assert replies(sim) == []


async def test_comments_on_issues_are_not_commands(tmp_path: Path) -> None:
    scenario = world("fail")
    data = scenario.model_dump()
    data["issues"] = [{"number": 3, "title": "Flaky ack test", "user": MAINTAINER}]
    async with running(Scenario.model_validate(data), tmp_path) as (sim, bot):
        comment_id = await say(sim, bot, MAINTAINER, "/flaky help", issue=3)

    assert reactions(sim, comment_id) == []
    assert sim.bot_comments(3) == []


async def test_one_person_is_limited_per_pr_and_hour(tmp_path: Path) -> None:
    files = {".github/flaky.yml": "rerun: false\ncommands_per_hour: 2\n"}
    async with running(world("fail", files=files), tmp_path) as (sim, bot):
        ids = [await say(sim, bot, AUTHOR, "/flaky help") for _ in range(3)]
        maintainer = await say(sim, bot, MAINTAINER, "/flaky help")

    assert [reactions(sim, i) for i in ids] == [
        ["eyes", "rocket"],
        ["eyes", "rocket"],
        ["confused"],
    ]
    assert reactions(sim, maintainer) == ["eyes", "rocket"]
    assert (
        "Not done: one person may give 2 `/flaky` comments on a PR in an hour; try again later."
        in replies(sim)
    )


async def test_a_redelivered_comment_is_acted_on_once(tmp_path: Path) -> None:
    async with running(world("fail", "pass", files=NO_AUTO_RERUN), tmp_path) as (sim, bot):
        await fail(sim, bot)
        comment = sim.world.add_comment(7, AUTHOR, "/flaky rerun")
        payload = issue_comment_created(sim.shapes, comment)
        for delivery in ("first", "redelivered-by-hand", "first"):
            await sim.send_webhook("issue_comment", payload, delivery_id=delivery)
        await settle(sim, bot)

    assert len(sim.reruns) == 1
    assert len(replies(sim)) == 1
    assert reactions(sim, comment.id) == ["eyes", "rocket"]


# --- the rerun policy ------------------------------------------------------------------------


async def test_the_budget_holds_when_the_rerun_fails_again_and_the_command_says_why(
    tmp_path: Path,
) -> None:
    async with running(world("fail"), tmp_path) as (sim, bot):
        await fail(sim, bot)  # fails, is rerun once, fails again, and stops there
        comment_id = await say(sim, bot, AUTHOR, "/flaky rerun")
        recorded = await attempts(bot)

    assert len(sim.reruns) == 1
    assert len(sim.world.runs) == 2
    assert [a.attempt for a in recorded] == [1, 2]
    assert recorded[1].rerun_note == (
        "not rerun: the limit of 1 rerun per commit and check is reached"
    )
    assert reactions(sim, comment_id) == ["eyes", "confused"]
    (reply,) = replies(sim)
    assert "the limit of 1 rerun per commit and check is reached" in reply


async def test_a_larger_budget_is_spent_and_then_the_reruns_stop(tmp_path: Path) -> None:
    files = {".github/flaky.yml": "max_reruns: 3\n"}
    async with running(world("fail", files=files), tmp_path) as (sim, bot):
        await fail(sim, bot)

    assert [r.status for r in sim.reruns] == [201, 201, 201]
    assert len(sim.world.runs) == 4


async def test_a_rerun_failing_with_the_same_signature_is_reproduced(tmp_path: Path) -> None:
    async with running(world("fail"), tmp_path) as (sim, bot):
        await fail(sim, bot)
        recorded = await attempts(bot)

    (decision,) = recorded[1].decisions
    assert str(decision.verdict) == "unrelated"
    assert decision.evidence.startswith("failed again on rerun of the same commit")
    assert "failed again on rerun" in sticky(sim)


async def test_a_rerun_failing_differently_is_triaged_as_new(tmp_path: Path) -> None:
    async with running(world("fail", "other"), tmp_path) as (sim, bot):
        await fail(sim, bot)
        recorded = await attempts(bot)

    (decision,) = recorded[1].decisions
    assert decision.failure is not None
    assert "broker connection reset" in decision.failure.message
    assert not decision.evidence.startswith("failed again on rerun")


async def test_a_refused_rerun_is_explained_and_never_asked_again(tmp_path: Path) -> None:
    async with running(world("fail", rerun_status=403), tmp_path) as (sim, bot):
        await fail(sim, bot)
        comment_id = await say(sim, bot, AUTHOR, "/flaky rerun")
        recorded = await attempts(bot)

    assert [r.status for r in sim.reruns] == [403]
    note = "not rerun: GitHub refused (403): no permission, a run over 30 days old, or 50 reruns"
    assert (recorded[0].rerun_note or "").startswith(note)
    assert note in sticky(sim)
    assert "rerun pending" not in sticky(sim)
    assert reactions(sim, comment_id) == ["eyes", "confused"]
    assert note in replies(sim)[0]


async def test_a_commit_that_is_no_longer_the_head_is_not_rerun(tmp_path: Path) -> None:
    async with running(world("fail"), tmp_path) as (sim, bot):
        payload = sim.next_completion(CHECK)
        sim.world.push(7, "5" * 40)  # pushed before the bot read the failure
        await sim.send_webhook("check_run", payload)
        await settle(sim, bot)
        (recorded,) = await attempts(bot)

    assert sim.reruns == []
    old = payload["check_run"]["head_sha"][:7]
    assert recorded.rerun_note == f"not rerun: {old} is no longer the head of the pull request"


async def test_a_check_from_another_ci_app_is_not_rerun_and_the_comment_says_why(
    tmp_path: Path,
) -> None:
    # Another CI app publishes no Actions log: its annotations name the failed test.
    note = {
        "path": "tests/bus/test_core.py",
        "start_line": 58,
        "end_line": 58,
        "title": "test_publish_waits_for_ack",
        "message": "TimeoutError: ack not received within 2.0s",
    }
    data = world("fail", app="circleci-checks").model_dump()
    data["checks"][0]["attempts"] = [{"conclusion": "failure", "annotations": [note]}]
    async with running(Scenario.model_validate(data), tmp_path) as (sim, bot):
        await fail(sim, bot)
        verdicts = await final_verdicts(bot.store, REPO, [7])

    assert list(verdicts.values()) == ["unrelated"]
    assert sim.reruns == []
    assert (
        f"not rerun: {CHECK} is not a GitHub Actions check, so only the app that created it "
        "can rerun it" in sticky(sim)
    )


async def test_the_daily_cap_of_a_pr_holds_across_its_checks(tmp_path: Path) -> None:
    scenario = world("fail", "pass", files={".github/flaky.yml": "max_reruns_per_pr_per_day: 1\n"})
    data = scenario.model_dump()
    data["checks"].append({**data["checks"][0], "name": "tests (3.13)"})
    async with running(Scenario.model_validate(data), tmp_path) as (sim, bot):
        await fail(sim, bot, CHECK)
        await fail(sim, bot, "tests (3.13)")
        recorded = await attempts(bot)

    assert [r.checks for r in sim.reruns] == [(CHECK,)]
    capped = [a for a in recorded if a.check_name == "tests (3.13)"]
    assert capped[0].rerun_note == "not rerun: this PR reached its limit of 1 rerun in 24 hours"


# --- the other commands ----------------------------------------------------------------------


async def test_rerun_of_a_named_check_and_of_a_name_that_did_not_fail(tmp_path: Path) -> None:
    async with running(world("fail", "pass", files=NO_AUTO_RERUN), tmp_path) as (sim, bot):
        await fail(sim, bot)
        wrong_name = await say(sim, bot, AUTHOR, "/flaky rerun lint")
        right_name = await say(sim, bot, AUTHOR, "/flaky rerun `TESTS (3.12)`")

    assert reactions(sim, wrong_name) == ["eyes", "confused"]
    assert reactions(sim, right_name) == ["eyes", "rocket"]
    first, second = replies(sim)
    assert first.startswith("No failed check of `3f1c2a9` is named `lint`.")
    assert f"Failed checks: `{CHECK}`." in first
    assert "rerun requested (attempt 2)" in second
    assert len(sim.reruns) == 1


async def test_help_and_unknown_subcommands(tmp_path: Path) -> None:
    async with running(world("fail"), tmp_path) as (sim, bot):
        asked = await say(sim, bot, AUTHOR, "/flaky help")
        unknown = await say(sim, bot, AUTHOR, "/flaky retry @someone")

    assert reactions(sim, asked) == ["eyes", "rocket"]
    assert reactions(sim, unknown) == ["eyes", "confused"]
    help_reply, unknown_reply = replies(sim)
    assert "- `/flaky rerun [check]`" in help_reply
    assert "at most 10 commands per person and PR in an hour" in help_reply
    assert unknown_reply.startswith("unknown command /flaky retry.")
    assert "@someone" not in unknown_reply


async def test_status_triages_the_head_again_and_refreshes_the_comment(tmp_path: Path) -> None:
    async with running(world("fail", files=NO_AUTO_RERUN), tmp_path) as (sim, bot):
        empty = await say(sim, bot, AUTHOR, "/flaky status")
        assert replies(sim) == ["No check of `3f1c2a9` has failed: nothing to triage."]
        # A failure whose webhook never arrived: /flaky status finds it on the head.
        sim.world.complete_run(sim.world.queue_run(CHECK))
        asked = await say(sim, bot, AUTHOR, "/flaky status")
        verdicts = await final_verdicts(bot.store, REPO, [7])

    assert reactions(sim, empty) == ["eyes", "confused"]
    assert reactions(sim, asked) == ["eyes", "rocket"]
    assert verdicts == {TEST_ID: "unrelated"}
    assert "unrelated to this PR" in sticky(sim)
    assert len(replies(sim)) == 1  # the refreshed comment is the answer


async def test_wrong_records_feedback_and_stops_the_unrelated_claim(tmp_path: Path) -> None:
    async with running(world("fail", files=NO_AUTO_RERUN), tmp_path) as (sim, bot):
        await fail(sim, bot)
        assert await final_verdicts(bot.store, REPO, [7]) == {TEST_ID: "unrelated"}
        typo = await say(sim, bot, MAINTAINER, "/flaky wrong tests/bus/test_core.py::nope")
        disputed = await say(sim, bot, MAINTAINER, f"/flaky wrong {TEST_ID}")
        again = await say(sim, bot, MAINTAINER, f"/flaky wrong {TEST_ID}")
        verdicts = await final_verdicts(bot.store, REPO, [7])
        feedback = await bot.store.feedback_for_pr(REPO, 7)
        counted = bot.metrics.feedback.labels("test")._value.get()

    assert reactions(sim, typo) == ["eyes", "confused"]
    assert reactions(sim, disputed) == reactions(sim, again) == ["eyes", "rocket"]
    first, second, third = replies(sim)
    assert first.startswith("Not recorded: `tests/bus/test_core.py::nope` has not failed")
    assert second == (
        f"Recorded: you dispute the verdict on `{TEST_ID}`; it is no longer called "
        "unrelated on this PR."
    )
    assert third.startswith("Already recorded")
    assert feedback == {match_key(TEST_ID): [MAINTAINER]}
    assert counted == 1
    assert verdicts == {TEST_ID: "unknown"}
    assert "unrelated to this PR" not in sticky(sim)
    assert "said this verdict was wrong" in sticky(sim)


async def test_track_adopts_an_issue_people_wrote(tmp_path: Path) -> None:
    data = world("fail", files=NO_AUTO_RERUN).model_dump()
    data["issues"] = [
        {"number": 3, "title": "ack test flaky??", "body": "Seen twice.", "user": MAINTAINER}
    ]
    async with running(Scenario.model_validate(data), tmp_path) as (sim, bot):
        await fail(sim, bot)
        missing = await say(sim, bot, MAINTAINER, f"/flaky track #99 {TEST_ID}")
        adopted = await say(sim, bot, MAINTAINER, f"/flaky track #3 {TEST_ID}")

    assert reactions(sim, missing) == ["eyes", "confused"]
    assert reactions(sim, adopted) == ["eyes", "rocket"]
    not_found, done = replies(sim)
    assert not_found.startswith("Not tracked: issue #99 does not exist")
    assert done == (
        f"Now tracking `{TEST_ID}` in #3: retitled from “ack test flaky??”; labelled "
        "`flaky-test`; the bot's section (1 recorded failure) put on top of the body. "
        "The text people wrote is kept."
    )
    (issue,) = [issue for issue in sim.issues if issue.number == 3]
    assert issue.title != "ack test flaky??"
    assert "Seen twice." in issue.body
