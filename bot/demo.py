"""`flakybot demo`: the real bot against the GitHub simulator, end to end over HTTP."""

from __future__ import annotations

import asyncio
import json
import secrets
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from bot.config import Settings
from bot.logs import configure
from bot.report.footprint import footprint_record
from bot.runtime import Bot
from bot.sim.expect import check_expectations
from bot.sim.scenario import Scenario, ScenarioError, builtin_scenario, load_scenario
from bot.sim.server import Simulator
from bot.store import Store
from bot.triage.models import Decision


class DemoResult:
    def __init__(
        self,
        sim: Simulator,
        decisions: dict[str, Decision],
        problems: list[str],
    ) -> None:
        self.sim = sim
        self.decisions = decisions
        self.verdicts = verdicts_of(decisions)
        self.problems = problems


async def final_verdicts(store: Store, repo: str, pr_numbers: list[int]) -> dict[str, str]:
    """The verdict of each failed test in the latest attempt of each check."""
    return verdicts_of(await final_decisions(store, repo, pr_numbers))


def verdicts_of(decisions: dict[str, Decision]) -> dict[str, str]:
    return {key: str(decision.verdict) for key, decision in decisions.items()}


async def final_decisions(store: Store, repo: str, pr_numbers: list[int]) -> dict[str, Decision]:
    """The decision on each failed test in the latest attempt of each check."""
    verdicts: dict[str, Decision] = {}
    for number in pr_numbers:
        latest: dict[tuple[str, str], Any] = {}
        attempts = await store.check_attempts_for_pr(repo, number)
        # The latest attempt, not the latest recorded: a retried delivery records late.
        for attempt in sorted(attempts, key=lambda a: (a.attempt, a.recorded_at)):
            latest[(attempt.head_sha, attempt.check_name)] = attempt
        for attempt in latest.values():
            for decision in attempt.decisions:
                key = decision.failure.test_id if decision.failure else attempt.check_name
                verdicts[key] = decision
    return verdicts


DASHBOARD_HINT = "closed with the demo; `flakybot demo --serve` keeps it open to browse"


@asynccontextmanager
async def running(
    scenario: Scenario, workdir: Path, *, port: int = 0, **overrides: Any
) -> AsyncIterator[tuple[Simulator, Bot]]:
    """The simulator and the real bot, wired to each other over HTTP on 127.0.0.1."""
    secret = secrets.token_hex(20)
    async with Simulator(scenario, webhook_secret=secret) as sim:
        values: dict[str, Any] = {
            "app_id": sim.app_id,
            "private_key": sim.private_key_pem,
            "webhook_secret": secret,
            "github_api_url": sim.url,
            "database_url": f"sqlite:///{workdir / 'demo.sqlite3'}",
            # The simulator has no secondary rate limit: a short pace keeps demos quick.
            "write_interval": 0.01,
            # Tallies are written a moment after the failures they count, not a minute.
            "tracking_refresh_seconds": 0.05,
            **overrides,
        }
        bot = await Bot.create(
            Settings(_env_file=None, **values), poll_seconds=0.05, open_dashboard=True
        )
        try:
            url = await bot.start("127.0.0.1", port)
            sim.set_webhook_target(url + bot.settings.webhook_path)
            yield sim, bot
        finally:
            await bot.close()


@asynccontextmanager
async def another_bot(sim: Simulator, bot: Bot, database: Path) -> AsyncIterator[Bot]:
    """A second bot like `bot` on an empty database at `database` (a lost volume), taking
    the simulator's webhooks from now on."""
    settings = bot.settings.model_copy(update={"database_url": f"sqlite:///{database}"})
    second = await Bot.create(settings, poll_seconds=0.05)
    try:
        url = await second.start("127.0.0.1", 0)
        sim.set_webhook_target(url + settings.webhook_path)
        yield second
    finally:
        await second.close()


async def settle(sim: Simulator, bot: Bot) -> None:
    """Wait until both sides rest: reruns make new webhooks, which make new work."""
    while True:
        await bot.wait_idle()
        if sim.pending == 0:
            return
        await sim.drain()


async def run_scenario(scenario: Scenario, workdir: Path) -> DemoResult:
    """Play the scenario to its end against the real bot and check its `expect` block."""
    async with running(scenario, workdir) as (sim, bot):
        return await _play(scenario, sim, bot)


async def _play(scenario: Scenario, sim: Simulator, bot: Bot) -> DemoResult:
    await sim.play(after_each=lambda: settle(sim, bot))
    await settle(sim, bot)
    decisions = await final_decisions(
        bot.store, scenario.repo.full_name, [pr.number for pr in scenario.pull_requests]
    )
    problems = check_expectations(scenario, sim, verdicts_of(decisions))
    return DemoResult(sim, decisions, problems)


def _record(result: DemoResult) -> dict[str, Any]:
    return {
        "verdicts": result.verdicts,
        "footprints": {
            key: footprint_record(decision)
            for key, decision in result.decisions.items()
            if decision.failure is not None
        },
        "writes": [
            {"method": w.method, "path": w.path, "body": w.body, "status": w.status}
            for w in result.sim.writes
        ],
        "expectations_failed": result.problems,
        "github_calls": dict(result.sim.calls),
    }


def _print_timeline(scenario: Scenario, result: DemoResult) -> None:
    sim = result.sim
    start = sim.timeline[0].at if sim.timeline else time.monotonic()
    print(f"scenario: {scenario.name}")
    if scenario.description:
        print(f"  {scenario.description.strip()}")
    print()
    for entry in sim.timeline:
        print(f"  {entry.at - start:7.3f}s  {entry.describe()}")
    for test_id, verdict in sorted(result.verdicts.items()):
        print(f"verdict: {test_id}: {verdict}")
    if result.problems:
        print("expectations not met:")
        for problem in result.problems:
            print(f"  - {problem}")
    else:
        print("all expectations met")
    for number in sorted({pr.number for pr in scenario.pull_requests}):
        for comment in sim.bot_comments(number):
            print(f"\nthe comment by {comment.user} on #{number}, as it stands:\n")
            print(comment.body)
    for issue in sim.issues_created:
        print(f"\nissue #{issue.number} opened by {issue.user}, as it stands ({issue.state}):\n")
        print(f"# {issue.title}\n")
        print(issue.body)


async def run_demo(
    scenario_path: Path | None, *, as_json: bool = False, serve: bool = False, port: int = 0
) -> int:
    configure("text", "WARNING")
    try:
        scenario = builtin_scenario() if scenario_path is None else load_scenario(scenario_path)
    except (ScenarioError, OSError) as exc:
        print(f"flakybot demo: {exc}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="flakybot-demo-") as tmp:
        async with running(scenario, Path(tmp), port=port) as (sim, bot):
            result = await _play(scenario, sim, bot)
            # The dashboard closes with the demo: its address only when it stays open.
            dashboard = f"{bot.url}/{scenario.repo.full_name}" if serve else None
            if as_json:
                print(json.dumps({**_record(result), "dashboard": dashboard}, indent=2))
            else:
                _print_timeline(scenario, result)
                print(f"\ndashboard: {dashboard or DASHBOARD_HINT}")
            if serve:
                print("serving the dashboard until interrupted (Ctrl-C)", flush=True)
                await asyncio.Event().wait()
    return 1 if result.problems else 0
