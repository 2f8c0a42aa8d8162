"""What one triage costs: GitHub calls per failed check run, throughput, delivery to comment.

The real bot (in this process, SQLite, the default repo settings: rerun on, tracking issues
on) against the simulator, every GitHub call answered after exactly --latency-ms. Each PR's
jobs fail with the same test on every PR, so tracking issues open and are kept up to date.
The reruns the bot asks for are accepted but never complete: every delivery is a failure.

Two phases, each with a fresh simulator and database:

- calls: --sample-prs PRs, one delivery at a time (each PR's `pull_request.opened` delivery
  first, as GitHub sends it when the PR opens, then each job's `workflow_job` delivery, both
  counted apart, then its `check_run`), waiting until the bot has handled it (and
  the webhooks of its own comments) after each, so the simulator's counter of rate-limited
  calls (304 answers, the installation token and the log's blob host excluded) is read per
  triage: the first failure of a PR head, and each further failure of the same head. Tracking
  issues' tallies are written by refreshes at the end of a window (an hour here, so none runs
  inside the phase); the bench then runs them and counts their calls apart.
- throughput: --prs x --checks failed check runs delivered at once, with the production
  window (60 s); triages per minute (first delivery sent to last failure triaged), calls per
  triage (mean, the refreshes included), and the time from a delivery's webhook to the first
  write of the PR's comment that names its check (p50, p99).

With --python-changes every PR changes `src/app/core.py` in a src-layout repository whose
tests import `app.io` (each shard's test file its own): the import walk runs on every triage
and finds nothing, so the calls it costs are counted with the rest, and the files it read
per triage are reported.

    python bench/triage_bench.py [--prs 100] [--checks 5] [--latency-ms 50] [--sample-prs 6]
                                 [--python-changes]

Prints JSON; never asserts a timing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bot.demo import final_decisions, running
from bot.handlers.tracking import REFRESH_EVENT
from bot.runtime import Bot
from bot.sim.scenario import ChangedFile
from bot.sim.server import Simulator
from bot.sim.webhooks import workflow_job_completed
from bot.store import Delivery, DeliveryState
from bot.triage.models import EvidenceKind
from tests.fleet import check_name, flaky_prs

REFRESH_WINDOW = 3600.0
FILES_READ = re.compile(r"([\d,]+) files? read")


def scenario(args: argparse.Namespace, prs: int) -> Any:
    faults = {"latency_ms": args.latency_ms, "latency": "fixed"}
    world = flaky_prs(prs, args.checks, faults=faults)
    world.files = {}  # the default settings: a repository without .github/flaky.yml
    if args.python_changes:
        world.files = python_repository(args.checks)
        for pr in world.pull_requests:
            pr.files = [ChangedFile(filename="src/app/core.py")]
    return world


def python_repository(checks: int) -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = {
        "pyproject.toml": '[tool.setuptools.packages.find]\nwhere = ["src"]\n',
        "src/app/__init__.py": "",
        "src/app/io.py": "def read():\n    return b''\n",
        "src/app/core.py": "",
        "tests/conftest.py": "import pytest\n",
    }
    for shard in range(checks):
        files[f"tests/shard{shard}/test_io.py"] = (
            f"from app.io import read\n\n\ndef test_reads_back():  # shard {shard}\n"
            "    assert read() == b'x'\n"
        )
    return files


async def files_read(bot: Bot, repo: str, prs: int) -> list[int]:
    """Files each triaged test's import walk read, from the decisions on record."""
    decisions = await final_decisions(bot.store, repo, list(range(1, prs + 1)))
    return [
        int(found.group(1).replace(",", ""))
        for decision in decisions.values()
        for item in decision.items
        if item.kind is EvidenceKind.IMPORTS and (found := FILES_READ.search(item.text))
    ]


async def idle(bot: Bot) -> None:
    await bot.wait_idle(settle_seconds=0.05, limit_seconds=600)


async def calls_phase(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    first: list[int] = []
    further: list[int] = []
    job_calls: list[int] = []
    opened_calls: list[int] = []
    world = scenario(args, args.sample_prs)
    # Tallies wait for the window's end, as in production; an hour keeps every refresh out of
    # the per-triage counts, and the bench then brings them forward and counts them apart.
    async with running(
        world, workdir, write_interval=0.0, tracking_refresh_seconds=REFRESH_WINDOW
    ) as (sim, bot):
        sim.rerun_delay_s = 1e9
        sent: dict[tuple[int, int], float] = {}
        for pr in range(1, args.sample_prs + 1):
            # GitHub sends `pull_request.opened` when the PR opens, long before a job ends.
            before = sim.rate_limited_calls
            await sim.send_webhook("pull_request", sim.opened(pr))
            await bot.wait_handled("pull_request", limit_seconds=600)
            opened_calls.append(sim.rate_limited_calls - before)
            for shard in range(args.checks):
                payload = sim.next_completion(check_name(pr, shard))
                # The job's `workflow_job` delivery first (app.yml subscribes to it): counted
                # apart, as what the run context costs.
                before = sim.rate_limited_calls
                run = sim.world.runs[payload["check_run"]["id"]]
                await sim.send_webhook("workflow_job", workflow_job_completed(sim.shapes, run))
                await bot.wait_handled("workflow_job", limit_seconds=600)
                job_calls.append(sim.rate_limited_calls - before)
                before = sim.rate_limited_calls
                sent[(pr, shard)] = time.monotonic()
                await sim.send_webhook("check_run", payload)
                await handled(bot)
                (first if shard == 0 else further).append(sim.rate_limited_calls - before)
        early = await refreshes(bot, DeliveryState.DONE)
        before = sim.rate_limited_calls
        waiting = await refreshes(bot, DeliveryState.PENDING)
        due = max((d.next_attempt_at for d in waiting), default=time.time())
        for job in await bot.store.claim(due, 60.0, len(waiting) or 1):
            await bot.worker.process(job)
        refresh_calls = sim.rate_limited_calls - before
        by_route = dict(sorted(sim.calls.items(), key=lambda item: -item[1]))
        read = await files_read(bot, world.repo.full_name, args.sample_prs)
        latencies = sorted(commented_after(sim, sent))
    failures = len(first) + len(further)
    return {
        "first_failure_of_a_head": summary(first),
        "further_failure_of_the_same_head": summary(further),
        "workflow_job_delivery": summary(job_calls),
        "pull_request_opened_delivery": summary(opened_calls),
        "tracking_issue_refreshes": {
            "jobs": len(waiting),
            "calls": refresh_calls,
            "calls_per_failure": round(refresh_calls / max(failures, 1), 2),
            # Refreshes that ran inside the phase (an hour turned): their calls are in the
            # triages' counts above.
            "ran_during_the_phase": len(early),
        },
        # One delivery at a time: the bot's own latency, no queue.
        "delivery_to_comment_p50_s": round(percentile(latencies, 0.50), 3),
        "delivery_to_comment_p99_s": round(percentile(latencies, 0.99), 3),
        "calls_by_route": by_route,
        "import_walk_files_read_per_test": summary(read) if read else None,
    }


async def handled(bot: Bot) -> None:
    """The delivery and what it set off (the bot's own comments come back as webhooks)."""
    for event in ("check_run", "issue_comment"):
        await bot.wait_handled(event, limit_seconds=600)


async def refreshes(bot: Bot, state: DeliveryState) -> list[Delivery]:
    rows = await bot.store.list_deliveries(100_000, [state])
    return [d for d in rows if d.event == REFRESH_EVENT]


def summary(values: list[int]) -> dict[str, Any]:
    return {
        "triages": len(values),
        "mean": round(statistics.fmean(values), 2),
        "median": statistics.median(values),
        "max": max(values),
        "each": values,
    }


async def throughput_phase(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    total = args.prs * args.checks
    world = scenario(args, args.prs)
    # The production window for tallies (a minute): refreshes run during the burst.
    async with running(
        world,
        workdir,
        write_interval=0.0,
        worker_concurrency=args.concurrency,
        tracking_refresh_seconds=60.0,
        # The burst comes from 127.0.0.1 alone, standing for GitHub's many senders.
        max_connections_per_client=total,
    ) as (sim, bot):
        sim.rerun_delay_s = 1e9
        payloads = [
            (pr, shard, sim.next_completion(check_name(pr, shard)))
            for pr in range(1, args.prs + 1)
            for shard in range(args.checks)
        ]
        sent: dict[tuple[int, int], float] = {}
        started = time.monotonic()

        async def send(pr: int, shard: int, payload: dict[str, Any]) -> None:
            sent[(pr, shard)] = time.monotonic()
            status = await sim.send_webhook("check_run", payload)
            if status != 202:
                raise RuntimeError(f"check {pr}/{shard}: HTTP {status}")

        await asyncio.gather(*(send(*item) for item in payloads))
        await handled(bot)
        elapsed = time.monotonic() - started
        await idle(bot)  # the last window's tracking refreshes: their calls count too
        # The bot's own comments come back as deliveries too: list them all.
        rows = [d for d in await bot.store.list_deliveries(100_000) if d.event == "check_run"]
        done = sum(d.state == DeliveryState.DONE for d in rows)
        dead = sum(d.state == DeliveryState.DEAD for d in rows)
        latencies = commented_after(sim, sent)
        calls = sim.rate_limited_calls
    latencies.sort()
    return {
        "failed_check_runs": total,
        "triaged": done,
        "dead": dead,
        "seconds": round(elapsed, 2),
        "triages_per_minute": round(done / elapsed * 60, 1),
        "calls_per_triage_mean": round(calls / max(done, 1), 2),
        # All delivered at once: mostly the time spent waiting in the inbox.
        "delivery_to_comment_p50_s": round(percentile(latencies, 0.50), 3),
        "delivery_to_comment_p99_s": round(percentile(latencies, 0.99), 3),
        "commented": len(latencies),
    }


def commented_after(sim: Simulator, sent: dict[tuple[int, int], float]) -> list[float]:
    """Seconds from each delivery to the first write of its PR's comment that names its check."""
    comment_pr = {comment.id: comment.issue for comment in sim.world.comments.values()}
    seen: dict[tuple[int, int], float] = {}
    for write in sim.writes:
        parts = write.path.rstrip("/").split("/")
        if write.path.endswith("/comments") and parts[-3] == "issues":
            pr = int(parts[-2])
        elif parts[-2] == "comments" and write.method == "PATCH":
            pr = comment_pr.get(int(parts[-1]), 0)
        else:
            continue
        body = str(write.body.get("body", "")) if isinstance(write.body, dict) else ""
        for (number, shard), at in sent.items():
            if number == pr and (number, shard) not in seen and check_name(pr, shard) in body:
                seen[(number, shard)] = write.at - at
    return list(seen.values())


def percentile(values: list[float], share: float) -> float:
    if not values:
        return float("nan")
    return values[min(int(share * len(values)), len(values) - 1)]


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prs", type=int, default=100)
    parser.add_argument("--checks", type=int, default=5, help="failed check runs per PR")
    parser.add_argument("--latency-ms", type=int, default=50)
    parser.add_argument("--sample-prs", type=int, default=6, help="PRs in the calls phase")
    parser.add_argument("--concurrency", type=int, default=4, help="WORKER_CONCURRENCY")
    parser.add_argument(
        "--python-changes",
        action="store_true",
        help="PRs change Python code: the import walk runs on every triage",
    )
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="triage-bench-") as tmp:
        (Path(tmp) / "calls").mkdir()
        (Path(tmp) / "load").mkdir()
        calls = await calls_phase(args, Path(tmp) / "calls")
        load = await throughput_phase(args, Path(tmp) / "load")
    print(
        json.dumps(
            {
                "latency_ms_per_github_call": args.latency_ms,
                "worker_concurrency": args.concurrency,
                "python_changes": args.python_changes,
                "cpus": os.cpu_count(),
                "loadavg_before": [round(x, 2) for x in load_before],
                "loadavg_after": [round(x, 2) for x in os.getloadavg()],
                "calls_per_triage": calls,
                "throughput": load,
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
