"""What anyone who may comment on a PR can make the bot do with `/flaky` comments, end to end.

Refusals cost writes that anyone can cause: they are capped per person and per PR, and their
writes never queue ahead of triage. Text the bot echoes never carries its own marker, and the
triage comment is found by marker, author and the id the store kept, never by a reply that
quotes the marker.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.commands import (
    REFUSAL_ANSWERS_PER_PERSON,
    REFUSAL_ANSWERS_PER_PR,
    REFUSAL_REPLIES_PER_PR,
    Answer,
    refusal_answer,
)
from bot.demo import running, settle
from bot.report.comment import MARKER
from bot.runtime import Bot
from bot.sim.scenario import Scenario, builtin_scenario
from bot.sim.server import Simulator
from bot.sim.webhooks import issue_comment_created

REPO = "acme/bus"
AUTHOR = "octo-dev"
NOT_PERMITTED = (
    "Not done: `/flaky` commands are for the PR's author and people with write access "
    "to the repository."
)


def two_prs(*more: int, more_by: str | None = None) -> Scenario:
    """The demo's PR #7 and a PR #8 like it, each with a failing check, and PRs numbered
    `more` with none, opened by `more_by` (each by stranger-N when "each"); no automatic
    rerun."""
    data = builtin_scenario().model_dump()
    pr7 = data["pull_requests"][0]

    def author(number: int) -> str:
        if number == 8 or more_by is None:
            return str(pr7["author"])
        return f"stranger-{number}" if more_by == "each" else more_by

    others = [
        {
            **pr7,
            "number": number,
            "head_sha": f"{number:040d}",
            "head_ref": f"branch-{number}",
            "author": author(number),
        }
        for number in (8, *more)
    ]
    check7 = {**data["checks"][0], "attempts": data["checks"][0]["attempts"][:1]}
    check8 = {**check7, "name": "tests (3.13)", "pr": 8}
    data.update(
        pull_requests=[pr7, *others],
        checks=[check7, check8],
        files={**data["files"], ".github/flaky.yml": "rerun: false\n"},
        expect={},
    )
    return Scenario.model_validate(data)


async def fail(sim: Simulator, bot: Bot, check: str) -> None:
    await sim.complete_check(sim.world.queue_run(check))
    await settle(sim, bot)


async def comment(sim: Simulator, user: str, body: str, issue: int = 7) -> int:
    """Post a comment as `user` and deliver it, without waiting for the bot."""
    posted = sim.world.add_comment(issue, user, body)
    await sim.send_webhook("issue_comment", issue_comment_created(sim.shapes, posted))
    return posted.id


def reactions(sim: Simulator, comment_id: int) -> list[str]:
    return [reaction.content for reaction in sim.reactions(comment_id)]


def replies(sim: Simulator, issue: int = 7) -> list[str]:
    return [c.body for c in sim.bot_comments(issue) if not c.body.startswith(MARKER)]


def triage_comments(sim: Simulator, issue: int) -> list[str]:
    return [c.body for c in sim.bot_comments(issue) if c.body.startswith(MARKER)]


# --- refusals: capped, and never ahead of triage ---------------------------------------------


@pytest.mark.parametrize(
    ("by_login", "on_pr", "answer"),
    [
        (0, 0, Answer.REPLY),
        (0, REFUSAL_REPLIES_PER_PR - 1, Answer.REPLY),
        (0, REFUSAL_REPLIES_PER_PR, Answer.REACTION),  # many people refused: 😕 only
        (1, 1, Answer.REACTION),  # one reply per person
        (REFUSAL_ANSWERS_PER_PERSON - 1, 5, Answer.REACTION),
        (REFUSAL_ANSWERS_PER_PERSON, 5, Answer.NOTHING),
        (0, REFUSAL_ANSWERS_PER_PR - 1, Answer.REACTION),
        (0, REFUSAL_ANSWERS_PER_PR, Answer.NOTHING),
        (40, 400, Answer.NOTHING),
    ],
)
def test_refusals_are_answered_once_in_words_then_with_a_reaction_then_not(
    by_login: int, on_pr: int, answer: Answer
) -> None:
    assert refusal_answer(by_login, on_pr) is answer


async def test_a_stranger_repeating_commands_gets_one_reply_then_reactions_then_nothing(
    tmp_path: Path,
) -> None:
    async with running(two_prs(), tmp_path) as (sim, bot):
        await fail(sim, bot, "tests (3.12)")
        writes_before = len(sim.writes)
        ids = []
        for _ in range(REFUSAL_ANSWERS_PER_PERSON + 2):
            ids.append(await comment(sim, "passer-by", "/flaky rerun"))
            await settle(sim, bot)
        writes = sim.writes[writes_before:]

    assert [reactions(sim, i) for i in ids] == [["confused"]] * REFUSAL_ANSWERS_PER_PERSON + [
        [],
        [],
    ]
    assert replies(sim) == [NOT_PERMITTED]
    assert len(writes) == 1 + REFUSAL_ANSWERS_PER_PERSON
    assert sim.reruns == []


async def test_a_flood_of_strangers_commands_costs_few_writes_and_never_delays_triage(
    tmp_path: Path,
) -> None:
    """20 people without access comment `/flaky rerun` on PR #7 at once, and then PR #8's
    check fails: its triage comment is not queued behind the answers to the refusals."""
    strangers = [f"stranger-{n}" for n in range(20)]
    async with running(two_prs(), tmp_path, write_interval=0.05) as (sim, bot):
        await fail(sim, bot, "tests (3.12)")
        writes_before = len(sim.writes)
        ids = [await comment(sim, login, "/flaky rerun") for login in strangers]
        await sim.complete_check(sim.world.queue_run("tests (3.13)"))
        await settle(sim, bot)
        writes = sim.writes[writes_before:]

    on_pr8 = [n for n, w in enumerate(writes) if w.path == f"/repos/{REPO}/issues/8/comments"]
    assert len(on_pr8) == 1 and triage_comments(sim, 8)
    refusal_writes = [w for w in writes if "/issues/8/" not in w.path]
    # Each refusal, without the caps, cost three writes (👀, a reply, 😕) and the triage
    # comment waited for them all.
    assert len(replies(sim)) <= REFUSAL_REPLIES_PER_PR
    assert sum(bool(reactions(sim, i)) for i in ids) <= REFUSAL_ANSWERS_PER_PR
    assert all(reactions(sim, i) in ([], ["confused"]) for i in ids)
    assert len(refusal_writes) <= REFUSAL_REPLIES_PER_PR + REFUSAL_ANSWERS_PER_PR
    assert on_pr8[0] <= REFUSAL_REPLIES_PER_PR + REFUSAL_ANSWERS_PER_PR
    assert sim.reruns == []


async def test_strangers_commands_on_many_prs_do_not_queue_ahead_of_triage(
    tmp_path: Path,
) -> None:
    """One comment each on 20 PRs is within every cap: what keeps PR #8's triage comment from
    waiting for the answers is that they are spare writes, made only when no other waits."""
    prs = range(10, 30)
    async with running(two_prs(*prs), tmp_path, write_interval=0.2) as (sim, bot):
        await fail(sim, bot, "tests (3.12)")
        writes_before = len(sim.writes)
        for number in prs:
            await comment(sim, f"stranger-{number}", "/flaky rerun", issue=number)
        await sim.complete_check(sim.world.queue_run("tests (3.13)"))
        await settle(sim, bot)
        writes = sim.writes[writes_before:]

    (triage,) = [n for n, w in enumerate(writes) if w.path == f"/repos/{REPO}/issues/8/comments"]
    # Paced first come first served, the 20 refusals (a reply and 😕 each) came before it: the
    # triage delivery waited for a handler slot behind 16 of them at least, 32 writes.
    assert triage < len(prs)
    assert all(reactions(sim, c.id) in ([], ["confused"]) for c in sim.world.comments.values())


async def test_a_backlog_of_strangers_command_replies_never_delays_a_triage(
    tmp_path: Path,
) -> None:
    """30 people each ask `/flaky help` on their own PR (within every budget: each is
    answered), and then PR #8's check fails: its triage comment is written before most of
    the 30 replies. Command deliveries are claimed after the check's, and their writes wait
    while a triage's write waits."""
    prs = range(10, 40)
    async with running(two_prs(*prs, more_by="each"), tmp_path, write_interval=0.1) as (sim, bot):
        for number in prs:
            await comment(sim, f"stranger-{number}", "/flaky help", issue=number)
        await sim.complete_check(sim.world.queue_run("tests (3.13)"))
        await settle(sim, bot)
        writes = sim.writes

    answered = [w.path for w in writes if w.method == "POST" and w.path.endswith("/comments")]
    assert sum(f"/issues/{n}/comments" in path for path in answered for n in prs) == len(prs)
    triage = answered.index(f"/repos/{REPO}/issues/8/comments")
    # First come first served, it came after all 30 (a handler slot freed only as they
    # finished, and each write waited its turn behind theirs). Now only the replies of the
    # few handlers already running, and those written while the triage read, come first.
    assert triage < len(prs) // 3, f"written after {triage} of {len(prs)} replies"


async def test_a_person_has_one_command_budget_for_all_the_repositorys_prs(
    tmp_path: Path,
) -> None:
    """One stranger opens 3 PRs and comments `/flaky help` 10 times on each: within the
    per-PR budget every time, but not the budget on the repository's PRs together; past it,
    one reply says so, then reactions, then nothing."""
    prs = (10, 11, 12)
    async with running(two_prs(*prs, more_by="stranger"), tmp_path) as (sim, bot):
        ids = []
        for number in prs:
            for _ in range(10):
                ids.append(await comment(sim, "stranger", "/flaky help", issue=number))
        await settle(sim, bot)

    bodies = [body for number in prs for body in replies(sim, number)]
    helps = [body for body in bodies if body.startswith("`/flaky` commands")]
    refused = [body for body in bodies if body not in helps]
    assert len(helps) == 20  # commands_per_repo_hour's default
    assert refused == [
        "Not done: one person may give 20 `/flaky` comments on this repository's PRs in an "
        "hour; try again later."
    ]
    not_acted = [i for i in ids if "eyes" not in reactions(sim, i)]
    assert len(not_acted) == 10
    answers = [reactions(sim, i) for i in not_acted]
    # Spare writes: one arriving while another waits is skipped, so some may go unanswered.
    assert all(answer in ([], ["confused"]) for answer in answers)
    assert 1 <= answers.count(["confused"]) <= REFUSAL_ANSWERS_PER_PERSON


# --- the bot's own marker ----------------------------------------------------------------------


async def test_a_marker_in_a_command_is_not_echoed_nor_its_reply_taken_for_the_triage_comment(
    tmp_path: Path,
) -> None:
    async with running(two_prs(), tmp_path) as (sim, bot):
        await comment(sim, AUTHOR, f"/flaky wrong {MARKER}")
        await settle(sim, bot)
        (echo,) = replies(sim)
        await fail(sim, bot, "tests (3.12)")

    assert "<!--" not in echo
    assert echo.startswith("Not recorded: `<\u200b!-- flaky-triage:sticky-comment -->`")
    # The reply is left as it was, and the triage comment is a comment of its own.
    assert sim.bot_comments(7)[0].body == echo
    assert len(triage_comments(sim, 7)) == 1


async def test_a_deleted_triage_comment_is_written_again_not_over_a_reply_quoting_the_marker(
    tmp_path: Path,
) -> None:
    """A reply that carries the marker (as an earlier version echoed it) is the bot's own
    comment with the marker in it: only a comment that begins with it is the triage comment."""
    async with running(two_prs(), tmp_path) as (sim, bot):
        await fail(sim, bot, "tests (3.12)")
        (first,) = [c for c in sim.bot_comments(7) if c.body.startswith(MARKER)]
        old_echo = f"Not recorded: `{MARKER}` has not failed on this PR."
        quoting = sim.world.add_comment(7, sim.bot_login, old_echo)
        del sim.world.comments[first.id]  # someone deleted the triage comment
        await fail(sim, bot, "tests (3.12)")  # its second attempt fails too

    assert sim.world.comments[quoting.id].body == old_echo
    (again,) = [c for c in sim.bot_comments(7) if c.body.startswith(MARKER)]
    assert again.id not in (first.id, quoting.id)
