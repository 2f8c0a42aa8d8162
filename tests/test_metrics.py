"""Metrics: GitHub requests by endpoint group, tracking issues opened and reopened."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from bot.demo import running, settle
from bot.github.client import GitHubClient
from bot.metrics import ENDPOINT_GROUPS, Metrics, endpoint_group
from bot.runtime import Bot
from bot.sim.scenario import Scenario, builtin_scenario, load_scenario
from bot.sim.server import Simulator

SCENARIOS = Path(__file__).parent / "scenarios"


@pytest.mark.parametrize(
    ("path", "group"),
    [
        ("/repos/o/r/pulls/7", "pulls"),
        ("/repos/o/r/pulls/7/files?per_page=100&page=2", "pulls"),
        ("/repos/o/r/commits/abc123/pulls", "pulls"),
        ("/repos/o/r/commits/abc123/check-runs?filter=latest", "check-runs"),
        ("/repos/o/r/check-runs/5/annotations", "check-runs"),
        ("/repos/o/r/actions/jobs/5/logs", "logs"),
        ("/repos/o/r/actions/runs/9/artifacts", "artifacts"),
        ("/repos/o/r/actions/artifacts/3/zip", "artifacts"),
        ("/repos/o/r/actions/jobs/5/rerun", "reruns"),
        ("/repos/o/r/actions/runs/9/rerun-failed-jobs", "reruns"),
        ("/repos/o/r/actions/jobs/5", "actions"),
        ("/repos/o/r/issues?labels=flaky-test&state=all", "issues"),
        ("/repos/o/r/issues/12", "issues"),
        ("/repos/o/r/issues/12/labels", "issues"),
        ("/repos/o/r/issues/7/comments", "comments"),
        ("/repos/o/r/issues/comments/44", "comments"),
        ("/repos/o/r/issues/comments/44/reactions", "reactions"),
        ("/repos/o/r/labels/flaky-test", "labels"),
        ("/repos/o/r/contents/.github/flaky.yml", "contents"),
        ("/repos/o/r/collaborators/octo/permission", "collaborators"),
        ("/repos/o/r/installation", "app"),
        ("/app", "app"),
        ("/app/installations/1/access_tokens", "app"),
        ("https://api.github.com/repos/o/r/pulls/7", "pulls"),
        ("/repos/o/r", "other"),
        ("/repos/o/r/commits/abc123", "other"),
        ("/user", "other"),
        ("", "other"),
    ],
)
def test_each_path_has_its_group(path: str, group: str) -> None:
    assert endpoint_group(path) == group
    assert group in ENDPOINT_GROUPS


async def test_an_enterprise_api_prefix_does_not_change_the_group(
    session: aiohttp.ClientSession, metrics: Metrics
) -> None:
    gh = GitHubClient(session, base_url="https://ghe.example/api/v3", metrics=metrics)

    gh.count_request("https://ghe.example/api/v3/repos/o/r/pulls/7/files", "GET", 200)

    assert metrics.registry.get_sample_value(
        "flakybot_github_requests_total", {"endpoint": "pulls", "method": "GET", "status": "200"}
    ) == pytest.approx(1.0)


async def _run(scenario: Scenario, tmp_path: Path) -> tuple[Simulator, dict[str, float]]:
    """Play a scenario against the real bot; its /metrics, scraped over HTTP, by sample."""
    async with running(scenario, tmp_path) as (sim, bot):
        await sim.play(after_each=lambda: settle(sim, bot))
        await settle(sim, bot)
        return sim, await _scrape(bot)


async def _scrape(bot: Bot) -> dict[str, float]:
    async with aiohttp.ClientSession() as client, client.get(bot.url + "/metrics") as response:
        text = await response.text()
    return {
        sample.name + str(sorted(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def requests(samples: dict[str, float], endpoint: str, method: str, *statuses: str) -> float:
    return sum(
        samples.get(f"flakybot_github_requests_total{sorted(labels.items())}", 0.0)
        for labels in (
            {"endpoint": endpoint, "method": method, "status": status} for status in statuses
        )
    )


async def test_a_run_counts_its_requests_by_group_and_the_issue_it_opened(tmp_path: Path) -> None:
    sim, samples = await _run(builtin_scenario(), tmp_path)

    calls = sim.calls
    assert (
        requests(samples, "pulls", "GET", "200", "304")  # 304: the ETag cache
        == calls["GET /repos/{owner}/{repo}/pulls/{pull_number}"]
        + calls["GET /repos/{owner}/{repo}/pulls/{pull_number}/files"]
    )
    # Log downloads go around the API client and are counted all the same (302: the redirect).
    assert (
        requests(samples, "logs", "GET", "302")
        == calls["GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs"]
    )
    assert requests(samples, "reruns", "POST", "201") == len(sim.reruns) == 1
    assert requests(samples, "comments", "POST", "201") == 1
    assert requests(samples, "issues", "POST", "201") == len(sim.issues_created) == 1
    assert requests(samples, "app", "POST", "201") == 1  # the installation token
    assert samples["flakybot_tracking_issues_total[('action', 'created')]"] == 1.0
    assert "flakybot_tracking_issues_total[('action', 'reopened')]" not in samples


async def test_a_reopened_tracking_issue_is_counted(tmp_path: Path) -> None:
    sim, samples = await _run(load_scenario(SCENARIOS / "tracking-reopen.yml"), tmp_path)

    reopened = [w for w in sim.writes if isinstance(w.body, dict) and w.body.get("state") == "open"]
    assert len(reopened) == 1
    assert samples["flakybot_tracking_issues_total[('action', 'reopened')]"] == 1.0
