"""A rate limit is never a refusal: the real bot against the simulator over real HTTP, GitHub's
rate-limit answers in its own shapes on the rerun request.

A secondary limit whose wait is longer than the bot waits in place sends the delivery back to
the inbox for GitHub's time (its slot and lease given back, the try not counted); retried then,
the job is rerun and the comment says so. A real 403 stays a refusal.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from bot.demo import running, settle
from bot.runtime import Bot
from bot.sim.scenario import FaultRule, Faults, Scenario, builtin_scenario
from bot.sim.server import Simulator
from bot.sim.webhooks import issue_comment_created
from bot.store import Delivery, DeliveryState

REPO = "acme/bus"
CHECK = "tests (3.12)"
RERUN_PATH = r"/actions/jobs/\d+/rerun$"
COMMENT_PATH = r"/issues/7/comments$"
WAIT_LIMIT_S = 30.0  # generous: what each step is given before the test gives up


def failing_then_passing(rule: FaultRule) -> Scenario:
    """The demo's PR #7: its check fails, then passes on rerun; automatic reruns on."""
    data = builtin_scenario().model_dump()
    data["expect"] = {}
    data["faults"] = Faults(rules=[rule]).model_dump()
    return Scenario.model_validate(data)


def sticky(sim: Simulator) -> str:
    (comment,) = [c for c in sim.bot_comments(7) if "flaky-triage:sticky-comment" in c.body]
    return comment.body


def rerun_posts(sim: Simulator) -> list[tuple[int, float]]:
    """Every rerun request the bot made: (status, when), faulted ones too."""
    return [
        (entry.status, entry.at)
        for entry in sim.timeline
        if entry.kind == "api" and entry.method == "POST" and "/rerun" in (entry.path or "")
    ]


async def until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    deadline = time.monotonic() + WAIT_LIMIT_S
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"never: {what}")
        await asyncio.sleep(0.02)


async def delivery(bot: Bot, event: str, index: int = 0) -> Delivery:
    """The `index`-th delivery of `event` the bot received, as its inbox holds it now."""
    found = [d for d in await bot.store.list_deliveries(1000) if d.event == event]
    return sorted(found, key=lambda d: d.received_at)[index]


async def test_a_secondary_limit_on_the_rerun_is_waited_out_and_the_job_rerun(
    tmp_path: Path,
) -> None:
    # GitHub asks for more than the bot waits in place (MAX_INLINE_WAIT, 10 s), so the
    # delivery goes back to the inbox: the reported case (30 s) in less than half the time.
    limit = FaultRule(
        method="POST", path=RERUN_PATH, status=403, rate_limit="secondary", retry_after=12
    )
    async with running(failing_then_passing(limit), tmp_path) as (sim, bot):
        sim.rerun_delay_s = 1e9  # the rerun stays queued: the comment while it runs is read
        await sim.complete_check(sim.world.queue_run(CHECK))

        async def handled() -> bool:
            return (await delivery(bot, "check_run")).state == DeliveryState.DONE

        await until(handled, "the failed attempt's delivery was handled")
        first = await delivery(bot, "check_run")
        head = sim.world.pulls[7].spec.head_sha
        stored = await bot.store.reruns_for(REPO, head, CHECK)
        (attempt,) = await bot.store.check_attempts_for_pr(REPO, 7)
        rerun = sim.world.latest_run(CHECK)

    (limited, limited_at), (accepted, accepted_at) = rerun_posts(sim)
    assert (limited, accepted) == (403, 201)
    assert accepted_at - limited_at >= 12 - 0.1, "asked again before GitHub's Retry-After"
    assert [(r.endpoint, r.checks, r.status) for r in sim.reruns] == [("job", (CHECK,), 201)]
    assert rerun is not None and rerun.completed_at is None, "the job is running again"
    assert stored == [201], "the rerun is on record as requested, not refused"
    # The delivery was handled on its second try, which alone counted.
    assert (first.state, first.attempts) == (DeliveryState.DONE, 1)
    assert attempt.rerun_note == "rerun requested (attempt 2)"
    assert "rerun requested (attempt 2)" in sticky(sim)
    assert "refused" not in sticky(sim)


async def test_a_real_403_on_the_rerun_stays_a_refusal(tmp_path: Path) -> None:
    refusal = FaultRule(
        method="POST",
        path=RERUN_PATH,
        status=403,
        message="Resource not accessible by integration",
    )
    async with running(failing_then_passing(refusal), tmp_path) as (sim, bot):
        await sim.complete_check(sim.world.queue_run(CHECK))
        await settle(sim, bot)
        first = await delivery(bot, "check_run")
        stored = await bot.store.reruns_for(REPO, sim.world.pulls[7].spec.head_sha, CHECK)

    assert [status for status, _ in rerun_posts(sim)] == [403]
    assert stored == [403]
    assert (first.state, first.attempts) == (DeliveryState.DONE, 1)
    assert "not rerun: GitHub refused (403): no permission" in sticky(sim)


def log_downloads(sim: Simulator) -> int:
    return sum(n for call, n in sim.calls.items() if call.startswith("GET ") and "/logs" in call)


@pytest.mark.parametrize(
    "interruption",
    [
        FaultRule(
            method="POST", path=COMMENT_PATH, status=403, rate_limit="secondary", retry_after=11
        ),
        FaultRule(method="POST", path=COMMENT_PATH, status=502),
    ],
    ids=["secondary-limit", "fault"],
)
async def test_a_triage_interrupted_after_reading_the_log_resumes_without_reading_it_again(
    tmp_path: Path, interruption: FaultRule
) -> None:
    """The triage comment's write is refused (GitHub's secondary limit, longer than the bot
    waits in place; or a 502): the delivery goes back to the inbox, and its next try finds
    what the job said in the store instead of downloading the log again."""
    async with running(failing_then_passing(interruption), tmp_path) as (sim, bot):
        sim.rerun_delay_s = 1e9  # the rerun stays queued
        await sim.complete_check(sim.world.queue_run(CHECK))

        async def handled() -> bool:
            return (await delivery(bot, "check_run")).state == DeliveryState.DONE

        await until(handled, "the failed attempt's delivery was handled")

    comment_posts = [
        entry.status
        for entry in sim.timeline
        if entry.kind == "api" and entry.method == "POST" and entry.path.endswith("/7/comments")
    ]
    assert comment_posts == [interruption.status, 201], "interrupted once, then written"
    assert "flaky-triage:sticky-comment" in sticky(sim)
    assert log_downloads(sim) == 1
    assert [(r.endpoint, r.status) for r in sim.reruns] == [("job", 201)], "rerun once"


def installation_created(sim: Simulator, installation_id: int) -> dict[str, Any]:
    """Another account installs the App: a delivery that needs no GitHub call."""
    return {
        "action": "created",
        "installation": {
            "id": installation_id,
            "account": sim.shapes.user("other-org"),
            "repository_selection": "selected",
        },
        "repositories": [],
        "sender": sim.shapes.user("other-admin"),
    }


async def test_deliveries_waiting_out_a_limit_give_their_worker_slot_to_others(
    tmp_path: Path,
) -> None:
    # One worker slot. GitHub's limit on the rerun asks for ten minutes: every later write of
    # the installation is held back as long, and none may hold the slot meanwhile.
    limit = FaultRule(
        method="POST", path=RERUN_PATH, status=403, rate_limit="secondary", retry_after=600
    )
    async with running(failing_then_passing(limit), tmp_path, worker_concurrency=1) as (sim, bot):
        asked = time.time()
        await sim.complete_check(sim.world.queue_run(CHECK))

        async def failed_attempt_waits() -> bool:
            first = await delivery(bot, "check_run")
            return first.state == DeliveryState.PENDING and first.last_error is not None

        await until(failed_attempt_waits, "the failed attempt's delivery went back to the inbox")
        first = await delivery(bot, "check_run")
        assert first.attempts == 0, "a rate-limited try is not counted"
        assert first.next_attempt_at >= asked + 600 - 1
        assert first.last_error is not None and "rate limited by GitHub (403)" in first.last_error
        head = sim.world.pulls[7].spec.head_sha
        assert await bot.store.reruns_for(REPO, head, CHECK) == [0], "reserved, not refused"
        assert sim.reruns == []

        # The author asks for help: answering means writing (a reaction, a reply), which the
        # limit holds back, so this delivery too goes back to the inbox at once.
        comment = sim.world.add_comment(7, "octo-dev", "/flaky help")
        await sim.send_webhook("issue_comment", issue_comment_created(sim.shapes, comment))

        async def command_waits() -> bool:
            command = await delivery(bot, "issue_comment")
            return command.state == DeliveryState.PENDING and command.last_error is not None

        await until(command_waits, "the command's delivery went back to the inbox")

        # Another installation's delivery is handled meanwhile, in the one slot.
        await sim.send_webhook("installation", installation_created(sim, 2))

        async def other_installation_known() -> bool:
            return any(i == 2 for i, _, _ in await bot.store.installations())

        await until(other_installation_known, "the other installation's delivery was handled")
        command = await delivery(bot, "issue_comment")
        first = await delivery(bot, "check_run")

    assert command.state == first.state == DeliveryState.PENDING
    assert command.next_attempt_at >= asked + 600 - 1
    assert sim.reactions(comment.id) == [] and sim.bot_comments(7) == []
