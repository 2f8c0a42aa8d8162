"""Commands against triage, and a triage interrupted by a rate limit: the real bot against the
simulator over HTTP, in three runs. Prints JSON.

- `backlog`: 30 people each ask `/flaky help` on their own PR, then another PR's check fails:
  how many of the 30 replies were written before its triage comment, and the seconds from the
  check's completion to that comment (at --write-interval between writes).
- `one_person`: one person opens 3 PRs and comments `/flaky help` 10 times on each: replies
  answered, and the bot's writes in all.
- `resumed`: a failed check's triage whose comment meets GitHub's secondary rate limit (a
  Retry-After longer than the bot waits in place): log downloads and API calls, against the
  same triage uninterrupted.

    python bench/pacing_resume.py [--write-interval 0.1]

Never asserts timings.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from bot.demo import running, settle
from bot.report.comment import MARKER
from bot.sim.scenario import FaultRule
from bot.sim.server import Simulator
from bot.store import DeliveryState
from tests.test_hostile_commands import comment, two_prs
from tests.test_rate_limits_e2e import CHECK, COMMENT_PATH, failing_then_passing, log_downloads


def comment_posts(sim: Simulator) -> list[tuple[str, float]]:
    return [
        (w.path, w.at) for w in sim.writes if w.method == "POST" and w.path.endswith("/comments")
    ]


async def backlog(workdir: Path, write_interval: float) -> dict[str, Any]:
    prs = range(10, 40)
    async with running(two_prs(*prs, more_by="each"), workdir, write_interval=write_interval) as (
        sim,
        bot,
    ):
        for number in prs:
            await comment(sim, f"stranger-{number}", "/flaky help", issue=number)
        failed_at = time.monotonic()
        await sim.complete_check(sim.world.queue_run("tests (3.13)"))
        await settle(sim, bot)
    posts = comment_posts(sim)
    triage = next(n for n, (path, _) in enumerate(posts) if path.endswith("/issues/8/comments"))
    return {
        "replies": len(posts) - 1,
        "replies_before_triage": triage,
        "triage_comment_after_s": round(posts[triage][1] - failed_at, 2),
        "writes": len(sim.writes),
    }


async def one_person(workdir: Path) -> dict[str, Any]:
    async with running(two_prs(10, 11, 12, more_by="stranger"), workdir) as (sim, bot):
        for number in (10, 11, 12):
            for _ in range(10):
                await comment(sim, "stranger", "/flaky help", issue=number)
        await settle(sim, bot)
    helps = [
        c
        for number in (10, 11, 12)
        for c in sim.bot_comments(number)
        if c.body.startswith("`/flaky` commands")
    ]
    return {"comments": 30, "help_replies": len(helps), "writes": len(sim.writes)}


async def triage(workdir: Path, interrupted: bool) -> dict[str, Any]:
    scenario = failing_then_passing(
        FaultRule(
            method="POST",
            path=COMMENT_PATH if interrupted else "^/nothing-the-bot-calls$",
            status=403,
            rate_limit="secondary",
            retry_after=11,
        )
    )
    async with running(scenario, workdir) as (sim, bot):
        sim.rerun_delay_s = 1e9  # the rerun stays queued
        await sim.complete_check(sim.world.queue_run(CHECK))
        # Not settle: the rerun stays queued in the simulator. A delivery sent back by the
        # limit waits in the inbox until it is handled again.
        while True:
            handled = all(d.state == DeliveryState.DONE for d in await bot.store.list_deliveries(9))
            if handled and any(c.body.startswith(MARKER) for c in sim.bot_comments(7)):
                break
            await asyncio.sleep(0.1)
    calls = {call: n for call, n in sim.calls.items() if "access_tokens" not in call}
    return {
        "log_downloads": log_downloads(sim),
        "api_calls": sum(calls.values()),
        "reads": sum(n for call, n in calls.items() if call.startswith("GET ")),
    }


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write-interval", type=float, default=0.1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name in ("a", "b", "c", "d"):
            (root / name).mkdir()
        result = {
            "write_interval_s": args.write_interval,
            "backlog": await backlog(root / "a", args.write_interval),
            "one_person": await one_person(root / "b"),
            "resumed": {
                "uninterrupted": await triage(root / "c", interrupted=False),
                "interrupted_by_secondary_limit": await triage(root / "d", interrupted=True),
            },
        }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
