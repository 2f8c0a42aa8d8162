"""Every completed run lands in the history, through the real bot and the simulator: runs on
the default branch (no PR), a PR's failures with their verdicts, and passing reruns."""

from __future__ import annotations

from pathlib import Path

from bot.demo import running, settle
from bot.sim.scenario import Attempt, builtin_scenario, load_scenario
from bot.triage.failures import match_key

SCENARIOS = Path(__file__).parent / "scenarios"
REPO = "acme/bus"


async def test_a_run_on_the_base_commit_is_recorded_outside_any_pr(tmp_path: Path) -> None:
    scenario = load_scenario(SCENARIOS / "broken-base-commit.yml")
    pull = scenario.pull_requests[0]
    async with running(scenario, tmp_path) as (sim, bot):
        await sim.play(after_each=lambda: settle(sim, bot))
        await settle(sim, bot)
        on_base = await bot.store.runs_at(REPO, pull.base_sha)
        on_head = await bot.store.runs_at(REPO, pull.head_sha)
        failures = await bot.store.occurrences(
            REPO, [match_key("tests/net/test_pool.py::test_reuse")], 0
        )

    assert [(r.pr_number, r.branch, r.conclusion, r.attempt) for r in on_base] == [
        (None, "main", "failure", 1)
    ]
    assert [(r.pr_number, r.author, r.check_name) for r in on_head] == [
        (36, "alice", "tests (3.12)")
    ]
    assert [(o.pr_number, o.head_sha, o.verdict) for o in failures] == [
        (36, pull.head_sha, "broken-base"),
        (None, pull.base_sha, "unknown"),
    ]
    assert failures[0].signature == failures[1].signature != ""


async def test_a_passing_rerun_is_recorded_as_the_next_attempt(tmp_path: Path) -> None:
    async with running(builtin_scenario(), tmp_path) as (sim, bot):
        await sim.play(after_each=lambda: settle(sim, bot))
        await settle(sim, bot)
        runs = await bot.store.runs(REPO, "tests (3.12)", 0)

    assert [(r.attempt, r.conclusion, r.pr_number) for r in reversed(runs)] == [
        (1, "failure", 7),
        (2, "success", 7),
    ]


async def test_a_first_time_pass_is_recorded_too_without_a_comment(tmp_path: Path) -> None:
    demo = builtin_scenario()
    passing = [
        check.model_copy(update={"attempts": [Attempt(conclusion="success")]})
        for check in demo.checks
    ]
    async with running(demo.model_copy(update={"checks": passing}), tmp_path) as (sim, bot):
        await sim.play(after_each=lambda: settle(sim, bot))
        await settle(sim, bot)
        runs = await bot.store.runs(REPO, "tests (3.12)", 0)

    assert [(r.attempt, r.conclusion, r.pr_number, r.author) for r in runs] == [
        (1, "success", 7, None)
    ]
    assert sim.bot_comments(7) == []
