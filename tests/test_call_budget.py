"""What a triage costs in GitHub calls that count against the rate limit (the simulator's
counter: 304 answers, the installation token and the log's blob host are free)."""

from __future__ import annotations

from pathlib import Path

from bot.demo import running
from bot.sim.scenario import Scenario
from tests.fleet import check_name, failing_log, many_prs


def two_prs_without_settings() -> Scenario:
    """Two PRs by different authors, two failing jobs each, no test shared between them (no
    tracking issue is due), and no `.github/flaky.yml`: the default settings, reruns on."""
    world = many_prs(2, 2).model_dump()
    world["files"] = {}
    for check in world["checks"]:
        pr, shard = check["pr"], int(check["name"].split()[2])
        check["attempts"] = [{"conclusion": "failure", "log": failing_log(2 * (pr - 1) + shard)}]
    return Scenario.model_validate(world)


async def test_a_new_pr_costs_six_calls_and_each_further_failure_of_its_head_three(
    tmp_path: Path,
) -> None:
    async with running(two_prs_without_settings(), tmp_path) as (sim, bot):
        sim.rerun_delay_s = 1e9  # accepted, never completed: only failures are triaged
        spent: dict[tuple[int, int], int] = {}
        for pr in (1, 2):
            for shard in (0, 1):
                before = sim.rate_limited_calls
                await sim.send_webhook("check_run", sim.next_completion(check_name(pr, shard)))
                await bot.wait_idle(settle_seconds=0.05)
                spent[(pr, shard)] = sim.rate_limited_calls - before

    # The repository has no flaky.yml: GitHub is asked once, not on every triage.
    assert sim.calls["GET /repos/{owner}/{repo}/contents/{path}"] == 1
    # PR 2's head, once the App and the settings are known: the pull, its files, the job's
    # log, the rerun, the comments (is ours there already?), and the comment.
    assert spent[(2, 0)] == 6
    # Its second job: the log, the rerun, the comment's edit. The pull is the one kept from
    # the first triage (the head has not moved: no pull_request event came) and its files
    # are revalidated with their ETag (304, free).
    assert spent[(1, 1)] == spent[(2, 1)] == 3
    assert sim.calls["GET /repos/{owner}/{repo}/pulls/{pull_number}"] == 2
    assert len(sim.bot_comments(1)) == len(sim.bot_comments(2)) == 1
