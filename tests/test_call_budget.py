"""What a triage costs in GitHub calls that count against the rate limit (the simulator's
counter: 304 answers, the installation token and the log's blob host are free)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from bot.demo import running
from bot.sim.scenario import Scenario
from tests.fleet import check_name, failing_log, many_prs

PASSING_JUNIT = '<testsuite name="pytest" tests="1"><testcase classname="t" name="ok"/></testsuite>'


def two_prs_without_settings() -> Scenario:
    """Two PRs by different authors, two failing jobs each, no test shared between them (no
    tracking issue is due), and no `.github/flaky.yml`: the default settings, reruns on."""
    world = many_prs(2, 2).model_dump()
    world["files"] = {}
    for check in world["checks"]:
        pr, shard = check["pr"], int(check["name"].split()[2])
        check["attempts"] = [{"conclusion": "failure", "log": failing_log(2 * (pr - 1) + shard)}]
    return Scenario.model_validate(world)


async def test_a_new_pr_costs_five_calls_and_each_further_failure_of_its_head_three(
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

    # The repository has no flaky.yml, nor has its organisation (acme/.github): GitHub is
    # asked once for each, not on every triage.
    assert sim.calls["GET /repos/{owner}/{repo}/contents/{path}"] == 2
    # PR 2's head, once the App and the settings are known: the pull, its files, the job's
    # log, the rerun, and the comment. The pull had no comment, so none of the bot's is
    # there to look for.
    assert spent[(2, 0)] == 5
    assert "GET /repos/{owner}/{repo}/issues/{issue_number}/comments" not in sim.calls
    # Its second job: the log, the rerun, the comment's edit. The pull is the one kept from
    # the first triage (the head has not moved: no pull_request event came) and its files
    # are revalidated with their ETag (304, free).
    assert spent[(1, 1)] == spent[(2, 1)] == 3
    assert sim.calls["GET /repos/{owner}/{repo}/pulls/{pull_number}"] == 2
    assert len(sim.bot_comments(1)) == len(sim.bot_comments(2)) == 1


async def test_a_pr_that_has_comments_is_searched_for_ours_and_an_opened_event_saves_the_pull(
    tmp_path: Path,
) -> None:
    world = two_prs_without_settings().model_dump()
    world["comments"] = [{"issue": 2, "user": "octocat", "body": "LGTM once CI passes"}]
    async with running(Scenario.model_validate(world), tmp_path) as (sim, bot):
        sim.rerun_delay_s = 1e9
        spent = {}
        for pr in (1, 2):
            await sim.send_webhook("pull_request", sim.opened(pr))  # as GitHub does, first
            await bot.wait_idle(settle_seconds=0.05)
            before = sim.rate_limited_calls
            await sim.send_webhook("check_run", sim.next_completion(check_name(pr, 0)))
            await bot.wait_idle(settle_seconds=0.05)
            spent[pr] = sim.rate_limited_calls - before

    # The pull came with the opened event: no read. PR 1, once the settings are known (a
    # read each for the repository and its organisation, once): its files, the job's log,
    # the rerun and the comment.
    assert sim.calls["GET /repos/{owner}/{repo}/pulls/{pull_number}"] == 0
    assert spent[1] == 2 + 4
    # PR 2 has someone's comment: the bot's might be among them, so they are listed first,
    # and the App's own name is read to know its comments (once: `GET /app`).
    assert spent[2] == 4 + 1 + 1
    assert sim.calls["GET /repos/{owner}/{repo}/issues/{issue_number}/comments"] == 1
    assert sim.calls["GET /app"] == 1
    assert [len(sim.bot_comments(pr)) for pr in (1, 2)] == [1, 1]


def python_repo_pr(changed: str) -> Scenario:
    """One PR changing `changed`, in a src-layout Python repository whose tests import
    `app.io`; three failing jobs: shards 0 and 1 fail the same test (a matrix), shard 2
    another, and no `.github/flaky.yml`."""
    world = two_prs_without_settings().model_dump()
    world["pull_requests"] = world["pull_requests"][:1]
    world["pull_requests"][0]["files"] = [{"filename": changed}]
    test = "from app.io import read\n\n\ndef test_reads_back():\n    assert read() == b'x'\n"
    world["files"] = {
        "pyproject.toml": '[tool.setuptools.packages.find]\nwhere = ["src"]\n',
        "src/app/__init__.py": "",
        "src/app/io.py": "def read():\n    return b''\n",
        "src/app/core.py": "",
        "tests/conftest.py": "import pytest\n",
        "tests/shard0/test_io.py": test,
        "tests/shard2/test_io.py": test.replace("read()", "read(2)"),
    }
    world["checks"] = [
        {"name": check_name(1, shard), "pr": 1, "attempts": [{"conclusion": "failure", "log": log}]}
        for shard, log in enumerate([failing_log(0), failing_log(0), failing_log(2)])
    ]
    return Scenario.model_validate(world)


async def spend(world: Scenario, workdir: Path) -> tuple[list[int], Counter[str]]:
    """The calls each of the world's check failures costs, delivered one at a time."""
    spent = []
    async with running(world, workdir) as (sim, bot):
        sim.rerun_delay_s = 1e9
        for check in world.checks:
            before = sim.rate_limited_calls
            await sim.send_webhook("check_run", sim.next_completion(check.name))
            await bot.wait_idle(settle_seconds=0.05)
            spent.append(sim.rate_limited_calls - before)
    return spent, sim.calls


async def test_following_imports_costs_two_calls_on_a_head_and_none_again(
    tmp_path: Path,
) -> None:
    # The same world, but a PR that changes only documentation: no walk (it cannot change
    # the verdict), today's cost.
    today, _ = await spend(python_repo_pr("docs/io.md"), tmp_path / "docs")
    walked, calls = await spend(python_repo_pr("src/app/core.py"), tmp_path / "code")

    # The head's first failure: the tree, then the test file with its conftest.py and
    # pyproject.toml in one GraphQL query, filled with the repository's other Python files
    # (`plan_reads`): what they import is in it.
    assert walked[0] - today[0] == 2
    assert calls["GET /repos/{owner}/{repo}/git/trees/{tree_sha}"] == 1
    # The same test failing in another job of the head: the walk is kept, no call.
    assert walked[1] == today[1]
    # Another test on the head: its file and what it imports were read with the first
    # (cached by blob SHA): no call.
    assert walked[2] == today[2]
    assert calls["POST /graphql"] == 1


async def test_a_job_that_uploaded_a_report_costs_two_calls_more_and_a_wheel_none(
    tmp_path: Path,
) -> None:
    # Without `reports:`, the artifacts a job's log says it uploaded are looked for: shard 0
    # of each PR uploads a JUnit report (every test passed: the verdicts stay the same),
    # shard 1 a wheel, which its name rules out.
    plain = two_prs_without_settings()
    world = plain.model_dump()
    for check in world["checks"]:
        shard = int(check["name"].split()[2])
        check["attempts"][0]["artifacts"] = [
            {"name": "test-results", "files": {"junit.xml": PASSING_JUNIT}}
            if shard == 0
            else {"name": "wheel-linux", "files": {"dist/app-1.0-py3-none-any.whl": "PK"}}
        ]
    before, _ = await spend(plain, tmp_path / "plain")
    after, calls = await spend(Scenario.model_validate(world), tmp_path / "uploads")

    # The run's artifact list and the report's download, for each job that uploaded one.
    assert [a - b for a, b in zip(after, before, strict=True)] == [2, 0, 2, 0]
    assert calls["GET /repos/{owner}/{repo}/actions/runs/{run_id}/artifacts"] == 2
    assert calls["GET /repos/{owner}/{repo}/actions/artifacts/{artifact_id}/zip"] == 2
