"""Quarantine end to end: the real bot against the simulator over real HTTP (signed webhooks,
App JWT, installation token), on both databases. A maintainer quarantines the demo's flaky
test on its tracking issue or on the PR; the bot's check run, the merge gate, turns green for
a quarantined flaky failure and stays red for one related to the PR; unquarantine and expiry
end it; someone without write access is refused."""

from __future__ import annotations

import time
from pathlib import Path

import aiohttp

from bot.demo import running, settle
from bot.report.check_run import CHECK_NAME
from bot.runtime import Bot
from bot.sim.scenario import Scenario, load_scenario
from bot.sim.server import Simulator
from bot.triage.failures import match_key
from bot.triage.quarantine import DAY, Ended
from tests.test_commands_e2e import AUTHOR, MAINTAINER, REPO, TEST_ID, fail, reactions, say, world

SCENARIOS = Path(__file__).parent / "scenarios"
KEY = match_key(TEST_ID)
ISSUE = 3
LABEL = "flaky:quarantined"
QUARANTINE_ON = {".github/flaky.yml": "rerun: false\nquarantine: {}\n"}
# PR #7 changes the module its test imports: the failure is related to the PR.
RELATED_FILES = ["src/bus/core.py"]


def tracked(files: dict[str, str], pr_files: list[str] | None = None) -> Scenario:
    """The demo's PR #7 failing once in its flaky test, and issue #3 a maintainer wrote
    about that test."""
    data = world("fail", files=files).model_dump()
    data["issues"] = [
        {"number": ISSUE, "title": "publish times out now and then", "user": MAINTAINER}
    ]
    if pr_files is not None:
        data["pull_requests"][0]["files"] = [{"filename": name} for name in pr_files]
    return Scenario.model_validate(data)


async def fail_and_track(sim: Simulator, bot: Bot) -> None:
    """The check fails; a maintainer makes #3 the test's tracking issue."""
    await fail(sim, bot)
    comment = await say(sim, bot, MAINTAINER, f"/flaky track #{ISSUE} {TEST_ID}")
    assert reactions(sim, comment) == ["eyes", "rocket"]


def gate(sim: Simulator) -> tuple[str, str | None, str]:
    """The gate's status, conclusion and summary."""
    (run,) = [r for r in sim.world.app_runs.values() if r.name == CHECK_NAME]
    return run.status, run.conclusion, run.summary or ""


def issue_body(sim: Simulator) -> str:
    return sim.world.issues[ISSUE].body


def bot_replies(sim: Simulator, issue: int) -> list[str]:
    return [c.body for c in sim.bot_comments(issue) if "flaky-triage:sticky-comment" not in c.body]


async def test_a_quarantined_flaky_test_no_longer_turns_the_gate_red_until_unquarantined(
    tmp_path: Path, store_url: str
) -> None:
    async with running(tracked(QUARANTINE_ON), tmp_path, database_url=store_url) as (sim, bot):
        await fail_and_track(sim, bot)
        before = gate(sim)
        comment = await say(sim, bot, MAINTAINER, "/flaky quarantine 7d", issue=ISSUE)
        labelled, body = sim.labels(ISSUE), issue_body(sim)
        # The issue's command does not touch the PR: its next check event, or a status.
        await say(sim, bot, AUTHOR, "/flaky status")
        quarantined = gate(sim)
        ended = await say(sim, bot, MAINTAINER, f"/flaky unquarantine {TEST_ID}")
        after = gate(sim)
        history = await bot.store.quarantine_history(REPO, KEY)
        unlabelled, final_body = sim.labels(ISSUE), issue_body(sim)

    assert before[:2] == ("completed", "failure")
    assert f"`{TEST_ID}`: not quarantined (unrelated)" in before[2]
    assert reactions(sim, comment) == ["eyes", "rocket"]
    (reply, *_) = bot_replies(sim, ISSUE)
    assert reply.startswith(f"Quarantined `{TEST_ID}` until ")
    assert f"owner `{MAINTAINER}`, tracking issue #3" in reply
    assert LABEL in labelled and "flaky-test" in labelled
    assert f"owner `{MAINTAINER}` (since " in body and f"by `{MAINTAINER}`" in body
    assert quarantined[:2] == ("completed", "success")
    assert "**Let through:**" in quarantined[2]
    assert f"`{TEST_ID}`: quarantined until " in quarantined[2]
    assert reactions(sim, ended) == ["eyes", "rocket"]
    assert after[:2] == ("completed", "failure")
    (q,) = history
    assert (q.ended_by, q.by, q.owner, q.issue_number) == (MAINTAINER, MAINTAINER, MAINTAINER, 3)
    assert round((q.expires_at - q.since) / DAY) == 7
    assert LABEL not in unlabelled and "flaky-test" in unlabelled
    assert "**Quarantined**" not in final_body


async def test_a_related_failure_of_a_quarantined_test_still_blocks(
    tmp_path: Path, store_url: str
) -> None:
    scenario = tracked(QUARANTINE_ON, pr_files=RELATED_FILES)
    async with running(scenario, tmp_path, database_url=store_url) as (sim, bot):
        await fail_and_track(sim, bot)
        comment = await say(sim, bot, MAINTAINER, f"/flaky quarantine `{TEST_ID}` 2w")
        on = await bot.store.active_quarantines(REPO, time.time())
        status, conclusion, summary = gate(sim)

    assert reactions(sim, comment) == ["eyes", "rocket"]
    assert [q.test_key for q in on] == [KEY]
    assert (status, conclusion) == ("completed", "failure")
    assert f"`{TEST_ID}`: related to this PR, though quarantined" in summary


async def test_a_quarantine_expires_when_next_read(tmp_path: Path, store_url: str) -> None:
    async with running(tracked(QUARANTINE_ON), tmp_path, database_url=store_url) as (sim, bot):
        await fail_and_track(sim, bot)
        await say(sim, bot, MAINTAINER, f"/flaky quarantine {TEST_ID} 1d")
        cleared, labelled = gate(sim), sim.labels(ISSUE)
        (q,) = await bot.store.active_quarantines(REPO, time.time())
        # A day passes: the quarantine's expiry is now behind.
        passed = time.time() - 1
        await bot.store._sql.execute(  # type: ignore[attr-defined]
            "UPDATE quarantines SET expires_at = $1", passed
        )
        await say(sim, bot, AUTHOR, "/flaky status")
        expired = gate(sim)
        (ended,) = await bot.store.quarantine_history(REPO, KEY)

    assert cleared[1] == "success" and LABEL in labelled
    assert round((q.expires_at - q.since) / DAY) == 1
    assert expired[1] == "failure"
    assert f"`{TEST_ID}`: not quarantined (unrelated)" in expired[2]
    assert (ended.ended_at, ended.ended_by) == (passed, Ended.EXPIRED)
    assert LABEL not in sim.labels(ISSUE)
    assert "**Quarantined**" not in issue_body(sim)


async def test_people_without_write_access_are_refused(tmp_path: Path, store_url: str) -> None:
    async with running(tracked(QUARANTINE_ON), tmp_path, database_url=store_url) as (sim, bot):
        await fail_and_track(sim, bot)
        stranger = await say(sim, bot, "passer-by", "/flaky quarantine", issue=ISSUE)
        # The PR's author may give commands on it, but not this one.
        author = await say(sim, bot, AUTHOR, f"/flaky quarantine {TEST_ID}")
        on = await bot.store.active_quarantines(REPO, time.time())

    assert reactions(sim, stranger) == ["confused"]
    assert bot_replies(sim, ISSUE) == [
        "Not done: `/flaky` commands are for the PR's author and people with write access "
        "to the repository."
    ]
    assert reactions(sim, author) == ["eyes", "confused"]
    assert "Not done: quarantining a test needs write access to the repository." in bot_replies(
        sim, 7
    )
    assert on == []
    assert LABEL not in sim.labels(ISSUE)
    assert gate(sim)[1] == "failure"


async def test_quarantine_is_refused_while_it_is_off(tmp_path: Path) -> None:
    files = {".github/flaky.yml": "rerun: false\n"}
    async with running(tracked(files), tmp_path) as (sim, bot):
        await fail_and_track(sim, bot)
        comment = await say(sim, bot, MAINTAINER, f"/flaky quarantine {TEST_ID}")

    assert reactions(sim, comment) == ["eyes", "confused"]
    assert any("quarantine is off in this repository" in r for r in bot_replies(sim, 7))
    assert [r for r in sim.world.app_runs.values() if r.name == CHECK_NAME] == []


def auto_settings(min_prs: int) -> dict[str, str]:
    # One failure in two runs: the Wilson interval's lower bound is 9.5 %.
    rule = f"quarantine:\n  auto:\n    min_rate: 0.05\n    min_prs: {min_prs}\n"
    return {".github/flaky.yml": rule}


async def test_automatic_quarantine_takes_the_rate_and_the_prs_both(
    tmp_path: Path, store_url: str
) -> None:
    # The check fails, the bot reruns it, the rerun passes: a tracking issue opens.
    scenario = world("fail", "pass", files=auto_settings(min_prs=1))
    async with running(scenario, tmp_path, database_url=store_url) as (sim, bot):
        await fail(sim, bot)
        (q,) = await bot.store.active_quarantines(REPO, time.time())
        (issue,) = sim.issues_created
        status, conclusion, summary = gate(sim)

    assert (q.source, q.by, q.issue_number) == ("auto", "flaky-triage", issue.number)
    assert q.reason == "failed 1 of 2 runs of tests (3.12), on 1 pull request"
    assert LABEL in issue.labels
    assert "(since " in issue.body and ", automatically)" in issue.body
    assert (status, conclusion) == ("completed", "success")
    assert "passed on rerun of the same commit (attempt 1 failed)" in summary


async def test_no_automatic_quarantine_below_the_number_of_prs(tmp_path: Path) -> None:
    scenario = world("fail", "pass", files=auto_settings(min_prs=2))
    async with running(scenario, tmp_path) as (sim, bot):
        await fail(sim, bot)
        on = await bot.store.active_quarantines(REPO, time.time())

    assert len(sim.issues_created) == 1
    assert on == []


async def test_automatic_closing_of_a_fixed_test_ends_its_quarantine(
    tmp_path: Path, store_url: str
) -> None:
    raw = load_scenario(SCENARIOS / "tracking-auto-close.yml").model_dump(
        mode="json", exclude_none=True
    )
    raw.pop("expect")
    raw["files"][".github/flaky.yml"] += "quarantine: {}\n"
    raw["collaborators"] = {MAINTAINER: "write"}
    async with running(Scenario.model_validate(raw), tmp_path, database_url=store_url) as (
        sim,
        bot,
    ):
        await fail(sim, bot)  # fails 3 days ago, passes on rerun: a tracking issue opens
        (issue,) = sim.issues_created
        await say(sim, bot, MAINTAINER, "/flaky quarantine", issue=issue.number)
        labelled = list(issue.labels)
        for name in ("main 1", "main 2", "main 3"):  # 4 passes over 3 days: closed
            await fail(sim, bot, name)
        (q,) = await bot.store.quarantine_history(REPO, KEY)

    assert LABEL in labelled
    assert (issue.state, issue.state_reason) == ("closed", "completed")
    assert q.ended_by == Ended.FIXED and q.ended_at is not None
    assert LABEL not in issue.labels
    assert "**Quarantined**" not in issue.body


TOKEN = "dashboard-token-for-tests-0123456789abcdefXYZ"


async def test_the_list_of_quarantined_tests_is_served_only_to_authorised_readers(
    tmp_path: Path, store_url: str
) -> None:
    scenario = tracked(QUARANTINE_ON)
    scenario.repo.private = True
    async with running(scenario, tmp_path, database_url=store_url, dashboard_token=TOKEN) as (
        sim,
        bot,
    ):
        await fail_and_track(sim, bot)
        await say(sim, bot, MAINTAINER, f"/flaky quarantine {TEST_ID} 2w")
        url = f"{bot.url}/acme/bus/quarantined.json"
        async with aiohttp.ClientSession() as stranger:
            anonymous = await stranger.get(url, allow_redirects=False)
            wrong = await stranger.get(url, headers={"Authorization": "Bearer guess"})
            basic = await stranger.get(url, headers={"Authorization": "Basic eDp5"})
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as reader:
            answer = await reader.get(url)
            listed = await answer.json()
            elsewhere = await reader.get(f"{bot.url}/acme/other/quarantined.json")
            shown = await reader.get(f"{bot.url}/acme/bus/quarantined")
            shown_html = await shown.text()
        async with aiohttp.ClientSession() as stranger:
            page_refused = await stranger.get(
                f"{bot.url}/acme/bus/quarantined", allow_redirects=False
            )

    assert (anonymous.status, wrong.status, basic.status) == (401, 401, 401)
    assert anonymous.headers["WWW-Authenticate"] == "Bearer"
    assert answer.status == 200
    assert answer.headers["Cache-Control"] == "no-store"
    (entry,) = listed["tests"]
    assert (listed["version"], listed["repository"]) == (1, REPO)
    assert entry["test_id"] == TEST_ID and entry["test_key"] == KEY
    assert (entry["tracking_issue"], entry["owner"], entry["source"]) == (
        ISSUE,
        MAINTAINER,
        "command",
    )
    assert entry["expires_at"] > entry["since"]
    assert elsewhere.status == 404
    # The dashboard's page says the same to people, and nothing to a stranger.
    assert shown.status == 200
    assert f"<code>{TEST_ID}</code>" in shown_html
    assert f'<a href="https://github.com/acme/bus/issues/{ISSUE}">#{ISSUE}</a>' in shown_html
    assert f"<code>{MAINTAINER}</code>" in shown_html and "<script" not in shown_html
    assert page_refused.status == 303  # to the sign-in form, as every page


async def test_a_private_repository_s_list_is_not_served_without_a_token(tmp_path: Path) -> None:
    scenario = tracked(QUARANTINE_ON)
    scenario.repo.private = True
    async with running(scenario, tmp_path) as (sim, bot):  # the demo's open dashboard
        await fail_and_track(sim, bot)
        await say(sim, bot, MAINTAINER, f"/flaky quarantine {TEST_ID}")
        async with aiohttp.ClientSession() as stranger:
            answer = await stranger.get(f"{bot.url}/acme/bus/quarantined.json")

    assert answer.status == 404


async def test_a_quarantine_names_a_tracked_test(tmp_path: Path) -> None:
    other = "tests/bus/test_wire.py::test_frame"
    async with running(tracked(QUARANTINE_ON), tmp_path) as (sim, bot):
        await fail_and_track(sim, bot)
        on_pr = await say(sim, bot, MAINTAINER, f"/flaky quarantine {other}")
        bare = await say(sim, bot, MAINTAINER, "/flaky quarantine 7d")
        on_issue = await say(
            sim, bot, MAINTAINER, f"/flaky quarantine {other}\n/flaky rerun", issue=ISSUE
        )
        soon = await say(sim, bot, MAINTAINER, "/flaky quarantine 2001-01-01", issue=ISSUE)
        on = await bot.store.active_quarantines(REPO, time.time())

    for comment in (on_pr, bare, on_issue, soon):
        assert reactions(sim, comment) == ["eyes", "confused"]
    pr_replies = bot_replies(sim, 7)
    assert (
        f"Not done: `{other}` has no tracking issue, where a quarantine is shown."
        in (pr_replies[-2])
    )
    assert pr_replies[-1].startswith("Not done: on a pull request, name the test:")
    assert bot_replies(sim, ISSUE) == [
        f"Not done: issue #3 does not track `{other}`.\n\n"
        "Not done: `/flaky rerun` works on pull requests.",
        "Not done: 2001-01-01 is in the past.",
    ]
    assert on == []


def with_lint(scenario: Scenario) -> Scenario:
    """A second check on PR #7's head, `lint`, which passes when it runs."""
    data = scenario.model_dump()
    data["checks"].append({"name": "lint", "pr": 7, "attempts": [{"conclusion": "success"}]})
    return Scenario.model_validate(data)


def gate_title(sim: Simulator) -> str:
    (run,) = [r for r in sim.world.app_runs.values() if r.name == CHECK_NAME]
    return run.title or ""


async def test_the_gate_waits_for_a_running_check_and_never_goes_back_to_in_progress(
    tmp_path: Path,
) -> None:
    async with running(with_lint(tracked(QUARANTINE_ON)), tmp_path) as (sim, bot):
        await fail_and_track(sim, bot)
        blocked = gate(sim)
        lint = sim.world.queue_run("lint")
        # Quarantined while lint runs: the gate waits, but GitHub shows it completed already.
        await say(sim, bot, MAINTAINER, f"/flaky quarantine {TEST_ID}")
        waiting, waiting_title = gate(sim), gate_title(sim)
        await sim.complete_check(lint)
        await settle(sim, bot)
        cleared = gate(sim)

    assert blocked[:2] == ("completed", "failure")
    assert waiting[:2] == ("completed", "failure")
    assert waiting_title == "Waiting for 1 check; 1 failure let through"
    assert "**Waiting for:**\n- `lint`: still running" in waiting[2]
    assert cleared[:2] == ("completed", "success")


async def test_a_head_where_nothing_failed_gets_a_gate_when_its_last_check_passes(
    tmp_path: Path,
) -> None:
    scenario = with_lint(world("pass", files=QUARANTINE_ON))
    async with running(scenario, tmp_path) as (sim, bot):
        lint = sim.world.queue_run("lint")
        await fail(sim, bot)  # the tests pass
        first = gate(sim)
        await sim.complete_check(lint)
        await settle(sim, bot)
        last = gate(sim)

    assert first[:2] == ("in_progress", None)
    assert last[:2] == ("completed", "success")
    assert last[2].startswith("### Merge gate\n\nEvery check of this commit passed.\n\n")


async def test_the_owner_is_reminded_once_on_the_issue_before_the_quarantine_ends(
    tmp_path: Path, store_url: str
) -> None:
    async with running(tracked(QUARANTINE_ON), tmp_path, database_url=store_url) as (sim, bot):
        await fail_and_track(sim, bot)
        await say(sim, bot, MAINTAINER, f"/flaky quarantine {TEST_ID} 3d")
        before = bot_replies(sim, ISSUE)
        # Two days pass: one day is left.
        await bot.store._sql.execute(  # type: ignore[attr-defined]
            "UPDATE quarantines SET since = since - $1, expires_at = expires_at - $1", 2 * DAY
        )
        await say(sim, bot, AUTHOR, "/flaky status")
        await say(sim, bot, AUTHOR, "/flaky status")
        (q,) = await bot.store.active_quarantines(REPO, time.time())

    assert before == []
    (reminder,) = bot_replies(sim, ISSUE)
    assert reminder.startswith(f"The quarantine of `{TEST_ID}` ends on ")
    assert f"@{MAINTAINER}: `/flaky quarantine` on this issue renews it" in reminder
    assert q.reminded_at is not None


async def test_a_quarantined_test_s_week_is_told_on_its_issue(
    tmp_path: Path, store_url: str
) -> None:
    async with running(tracked(QUARANTINE_ON), tmp_path, database_url=store_url) as (sim, bot):
        await fail_and_track(sim, bot)
        await say(sim, bot, MAINTAINER, f"/flaky quarantine {TEST_ID}")
        # It began a week ago (its failure, just now, falls in the week).
        await bot.store._sql.execute(  # type: ignore[attr-defined]
            "UPDATE quarantines SET since = since - $1", 7 * DAY
        )
        await say(sim, bot, AUTHOR, "/flaky status")
        await say(sim, bot, AUTHOR, "/flaky status")

    (digest,) = [r for r in bot_replies(sim, ISSUE) if "the last 7 days" in r]
    assert digest.startswith(
        f"Quarantine of `{TEST_ID}`, the last 7 days: still failing: failed 1 of 1 run of "
        "`tests (3.12)`, on #7. It ends on "
    )
