"""A further failure of the same head is triaged with the pull the bot kept, and a head that
moved on is never rerun, whether its push was already handled or still waits in the inbox."""

from __future__ import annotations

import json
import time
from pathlib import Path

from bot.demo import running
from bot.handlers.context import BotContext
from bot.handlers.scope import Scope
from bot.handlers.sticky import update_sticky_comment
from bot.runtime import Bot
from bot.sim.scenario import Scenario
from bot.sim.server import Simulator
from bot.store import CheckAttempt
from tests.fleet import check_name, failing_log, many_prs

PULL = "GET /repos/{owner}/{repo}/pulls/{pull_number}"
NEW_HEAD = "5" * 40


def one_pr_two_jobs() -> Scenario:
    """PR 1 changes only docs; both its jobs fail a test of their own; reruns on."""
    world = many_prs(1, 2).model_dump()
    world["files"] = {}
    for check in world["checks"]:
        shard = int(check["name"].split()[2])
        check["attempts"] = [{"conclusion": "failure", "log": failing_log(shard)}]
    return Scenario.model_validate(world)


async def deliver(sim: Simulator, bot: Bot, event: str, payload: dict[str, object]) -> None:
    await sim.send_webhook(event, payload)
    await bot.wait_idle(settle_seconds=0.05)


async def attempt_of(bot: Bot, check: str) -> CheckAttempt:
    (found,) = [
        a for a in await bot.store.check_attempts_for_pr("acme/bus", 1) if a.check_name == check
    ]
    return found


async def test_a_further_failure_of_the_same_head_reads_no_pull(tmp_path: Path) -> None:
    async with running(one_pr_two_jobs(), tmp_path) as (sim, bot):
        sim.rerun_delay_s = 1e9  # accepted, never completed
        await deliver(sim, bot, "check_run", sim.next_completion(check_name(1, 0)))
        await deliver(sim, bot, "check_run", sim.next_completion(check_name(1, 1)))
    assert sim.calls[PULL] == 1
    assert len(sim.reruns) == 2


async def test_a_failure_of_a_head_whose_push_was_handled_is_not_rerun(tmp_path: Path) -> None:
    async with running(one_pr_two_jobs(), tmp_path) as (sim, bot):
        sim.rerun_delay_s = 1e9
        old_head = sim.world.pulls[1].spec.head_sha
        await deliver(sim, bot, "check_run", sim.next_completion(check_name(1, 0)))
        late = sim.next_completion(check_name(1, 1))  # failed on the old head...
        await deliver(sim, bot, "pull_request", sim.push(1, NEW_HEAD))  # ...then a push
        await deliver(sim, bot, "check_run", late)  # delivered after the push was handled
        stale = await attempt_of(bot, check_name(1, 1))
        kept = await bot.store.pull("acme/bus", 1)

    assert len(sim.reruns) == 1  # only the first job's, while its commit was the head
    assert (
        stale.rerun_note == f"not rerun: {old_head[:7]} is no longer the head of the pull request"
    )
    assert kept is not None and kept.head_sha == NEW_HEAD
    # The first triage read the pull; the event kept the new head, so the late failure's
    # head did not match and the pull was read again.
    assert sim.calls[PULL] == 2


async def test_a_failure_handled_while_a_push_waits_in_the_inbox_reads_the_pull(
    tmp_path: Path,
) -> None:
    async with running(one_pr_two_jobs(), tmp_path) as (sim, bot):
        sim.rerun_delay_s = 1e9
        old_head = sim.world.pulls[1].spec.head_sha
        await deliver(sim, bot, "check_run", sim.next_completion(check_name(1, 0)))
        late = sim.next_completion(check_name(1, 1))
        synchronize = sim.push(1, NEW_HEAD)
        # The push's delivery is in the inbox but not handled yet (it waits for a retry):
        # the kept pull still shows the old head as current.
        await bot.store.put_delivery(
            "push-1",
            "pull_request",
            "synchronize",
            json.dumps(synchronize).encode(),
            time.time() + 3600,
        )
        kept = await bot.store.pull("acme/bus", 1)
        assert kept is not None and kept.head_sha == old_head
        await sim.send_webhook("check_run", late)
        # The inbox is never empty here (the push waits): wait for the check run alone.
        await bot.wait_handled("check_run")
        stale = await attempt_of(bot, check_name(1, 1))

    assert len(sim.reruns) == 1
    assert (
        stale.rerun_note == f"not rerun: {old_head[:7]} is no longer the head of the pull request"
    )
    assert sim.calls[PULL] == 2


async def test_a_delivery_handled_again_after_a_push_keeps_the_rerun_it_asked_for(
    tmp_path: Path,
) -> None:
    async with running(one_pr_two_jobs(), tmp_path) as (sim, bot):
        sim.rerun_delay_s = 1e9
        failed = sim.next_completion(check_name(1, 0))
        await deliver(sim, bot, "check_run", failed)  # rerun asked for while it was the head
        asked = await attempt_of(bot, check_name(1, 0))
        await deliver(sim, bot, "pull_request", sim.push(1, NEW_HEAD))
        await deliver(sim, bot, "check_run", failed)  # the same failure, handled again
        again = await attempt_of(bot, check_name(1, 0))
        job_id = int(failed["check_run"]["id"])
        head_sha = str(failed["check_run"]["head_sha"])
        statuses = await bot.store.reruns_for("acme/bus", head_sha, check_name(1, 0))

    assert [(r.target_id, r.status) for r in sim.reruns] == [(job_id, 201)]
    assert asked.rerun_note is not None and asked.rerun_note.startswith("rerun requested")
    assert again.rerun_note == asked.rerun_note  # not "no longer the head": it was rerun
    assert statuses == [201]


async def test_a_reservation_left_unanswered_is_settled_after_a_push(tmp_path: Path) -> None:
    """A try reserved the rerun and died before asking GitHub; the PR moved on before the
    delivery was handled again: the reservation is given back, not left unanswered."""
    async with running(one_pr_two_jobs(), tmp_path) as (sim, bot):
        failed = sim.next_completion(check_name(1, 0))
        head_sha = str(failed["check_run"]["head_sha"])
        job_id = int(failed["check_run"]["id"])
        grant = await bot.store.reserve_rerun(
            "acme/bus", 1, head_sha, check_name(1, 0), job_id,
            per_check=1, per_pr_day=10, now=time.time(),
        )  # fmt: skip
        assert grant.granted
        await deliver(sim, bot, "pull_request", sim.push(1, NEW_HEAD))
        await deliver(sim, bot, "check_run", failed)
        statuses = await bot.store.reruns_for("acme/bus", head_sha, check_name(1, 0))
        stale = await attempt_of(bot, check_name(1, 0))

    assert sim.reruns == []
    assert statuses == []  # nothing left at 0 ("unanswered") for ever
    assert (
        stale.rerun_note == f"not rerun: {head_sha[:7]} is no longer the head of the pull request"
    )


async def test_a_stale_triage_never_rewrites_the_comment_of_a_newer_head(tmp_path: Path) -> None:
    """A triage of the old head that writes last (it read the pull before the push) renders
    the head the bot knows now, so the comment keeps describing the newer head."""
    async with running(one_pr_two_jobs(), tmp_path) as (sim, bot):
        sim.rerun_delay_s = 1e9
        await deliver(sim, bot, "check_run", sim.next_completion(check_name(1, 0)))
        stale = await bot.store.pull("acme/bus", 1)
        assert stale is not None
        await deliver(sim, bot, "pull_request", sim.push(1, NEW_HEAD))
        await deliver(sim, bot, "check_run", sim.next_completion(check_name(1, 1)))
        newer = sim.bot_comments(1)[0].body  # the comment is edited in place: keep its text
        ctx = BotContext(store=bot.store, github=bot.github, metrics=bot.metrics)
        gh = await bot.github.installation_client(sim.scenario.app.installation_id)
        await update_sticky_comment(Scope(ctx, gh, "acme/bus"), stale)
        after = sim.bot_comments(1)[0].body

    assert f"This comment describes {NEW_HEAD[:7]}." in newer
    assert after == newer
