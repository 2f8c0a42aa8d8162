"""The dashboard's page for one pull request, which the sticky comment links for what its
table leaves out: every check and test the bot triaged there, with the whole evidence, under
the dashboard's access rule. End to end: the real bot against the simulator over HTTP."""

from __future__ import annotations

from pathlib import Path

import aiohttp

from bot.demo import running, settle
from bot.sim.scenario import Scenario, builtin_scenario, load_scenario
from bot.triage.failures import match_key

SCENARIOS = Path(__file__).parent / "scenarios"
DASHBOARD = "https://triage.example.org"
TOKEN = "dashboard-token-for-tests-0123456789abcdefXYZ"


def forty_refused(*, private: bool = False) -> Scenario:
    scenario = load_scenario(SCENARIOS / "mass-failure-40-same-error.yml")
    repo = scenario.repo.model_copy(update={"private": private})
    return scenario.model_copy(update={"repo": repo})


async def test_the_comment_links_the_pr_page_which_has_every_test_and_its_evidence(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    async with running(forty_refused(), tmp_path, dashboard_url=DASHBOARD + "/") as (sim, bot):
        await sim.play()
        await settle(sim, bot)
        (comment,) = sim.bot_comments(21)
        page = await session.get(bot.url + "/acme/shop/pull/21")
        text = await page.text()
        other = await session.get(bot.url + "/acme/shop/pull/22")

    assert f"[Every result on the dashboard]({DASHBOARD}/acme/shop/pull/21)." in comment.body
    assert page.status == 200
    assert all(f"tests/db/test_orders.py::test_case_{n:03d}" in text for n in range(0, 40, 8))
    assert text.count('class="decision"') == 40
    assert text.count("40 tests failed in this job: a mass failure, not judged test by test") == 40
    # The whole error, which the comment's table cuts at 80 characters.
    assert "port 5432 failed: Connection refused</pre>" in text
    assert 'href="/acme/shop/tests/' in text  # each test links its own page
    assert "<script" not in text
    assert other.status == 404


async def test_a_private_repositorys_pr_page_needs_the_token(tmp_path: Path) -> None:
    async with running(forty_refused(private=True), tmp_path, dashboard_token=TOKEN) as (
        sim,
        bot,
    ):
        await sim.play()
        await settle(sim, bot)
        async with aiohttp.ClientSession() as stranger:
            anonymous = await stranger.get(bot.url + "/acme/shop/pull/21", allow_redirects=False)
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as client:
            bearer = await client.get(bot.url + "/acme/shop/pull/21")
            shown = await bearer.text()

    assert anonymous.status == 303
    assert "test_case_" not in await anonymous.text()
    assert bearer.status == 200
    assert "tests/db/test_orders.py::test_case_000" in shown


async def test_without_the_token_the_demo_hides_a_private_repositorys_pr_page(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    async with running(forty_refused(private=True), tmp_path) as (sim, bot):
        await sim.play()
        await settle(sim, bot)
        page = await session.get(bot.url + "/acme/shop/pull/21")
        text = await page.text()

    assert page.status == 404
    assert "test_case_" not in text


async def test_a_tracking_issue_links_its_tests_page_on_the_dashboard(tmp_path: Path) -> None:
    async with running(builtin_scenario(), tmp_path, dashboard_url=DASHBOARD) as (sim, bot):
        await sim.play()
        await settle(sim, bot)
        (issue,) = sim.issues_created

    key = match_key("tests/bus/test_core.py::test_publish_waits_for_ack")
    link = f"Every occurrence is on [the dashboard]({DASHBOARD}/acme/bus/tests/{key})."
    assert link in issue.body


async def test_the_pr_page_names_an_unknown_failure_that_passed_on_rerun_as_the_comment_does(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    scenario = load_scenario(SCENARIOS / "go-package-not-located-unknown.yml")
    async with running(scenario, tmp_path) as (sim, bot):
        await sim.play()
        await settle(sim, bot)
        (comment,) = sim.bot_comments(62)
        page = await session.get(bot.url + "/acme/clock/pull/62")
        text = await page.text()

    assert page.status == 200
    assert "flaky, change not ruled out" in comment.body
    # Before, the page's heading said "unknown" where the comment said this.
    assert "</a>: flaky, change not ruled out (confidence:" in text
