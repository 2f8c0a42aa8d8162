"""The store reads GitHub's tracking issues once; after that, opening an issue needs no search
of GitHub, and a store that starts empty finds the issues opened before it."""

from __future__ import annotations

from pathlib import Path

from bot.demo import another_bot, running, settle
from bot.runtime import Bot
from bot.sim.scenario import Scenario
from bot.sim.server import Simulator
from tests.fleet import check_name, failing_log, many_prs

LISTING = "GET /repos/{owner}/{repo}/issues"


def every_pr_fails_each_jobs_own_test(prs: int, jobs: int) -> Scenario:
    """Job k of every PR fails test k; PRs by different authors; reruns off (no rerun
    pending keeps the run short), so a test meets the threshold on the second PR."""
    world = many_prs(prs, jobs).model_dump()
    world["files"] = {".github/flaky.yml": "rerun: false\n"}
    for check in world["checks"]:
        shard = int(check["name"].split()[2])
        check["attempts"] = [{"conclusion": "failure", "log": failing_log(shard)}]
    return Scenario.model_validate(world)


async def fail(sim: Simulator, bot: Bot, pr: int, job: int) -> None:
    await sim.send_webhook("check_run", sim.next_completion(check_name(pr, job)))
    await settle(sim, bot)


async def test_issues_are_searched_for_once_per_store_not_once_per_issue(tmp_path: Path) -> None:
    async with running(every_pr_fails_each_jobs_own_test(2, 3), tmp_path) as (sim, bot):
        for pr in (1, 2):
            for job in range(3):
                await fail(sim, bot, pr, job)
    assert len(sim.issues_created) == 3
    assert sim.calls[LISTING] == 1  # the first issue's: the store had never looked


async def test_a_new_store_reads_the_issues_on_github_and_opens_no_second_one(
    tmp_path: Path,
) -> None:
    async with running(every_pr_fails_each_jobs_own_test(4, 2), tmp_path) as (sim, bot):
        for pr in (1, 2):
            for job in range(2):
                await fail(sim, bot, pr, job)
        assert len(sim.issues_created) == 2
        first_bodies = {i.number: i.body for i in sim.issues_created}

        # Another bot with an empty database (a lost volume) sees PRs 3 and 4 fail: by two
        # authors, so the tests meet the threshold again in its own history.
        async with another_bot(sim, bot, tmp_path / "fresh.sqlite3") as second:
            for pr in (3, 4):
                for job in range(2):
                    await fail(sim, second, pr, job)
            kept = [
                await second.store.tracking_issue(
                    "acme/bus", f"tests.shard{job}.test_io.test_reads_back"
                )
                for job in range(2)
            ]
            numbers = {r.issue_number for r in kept if r is not None}

    assert len(sim.issues_created) == 2  # found, not opened again
    assert numbers == set(first_bodies)
    # Their tallies now count PR 4 too (the refreshes ran before the bot stopped).
    for issue in sim.issues_created:
        assert "#4" in issue.body and issue.body != first_bodies[issue.number]
