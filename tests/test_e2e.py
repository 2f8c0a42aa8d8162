"""The real bot against the simulator over real HTTP: signed webhooks, App JWT, tokens."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.demo import another_bot, final_verdicts, run_scenario, running, settle
from bot.report.comment import MARKER
from bot.sim.scenario import builtin_scenario, load_scenario

SCENARIOS = Path(__file__).parent / "scenarios"
TEST_ID = "tests/bus/test_core.py::test_publish_waits_for_ack"


async def test_builtin_scenario_ends_with_one_flaky_comment(tmp_path: Path) -> None:
    result = await run_scenario(builtin_scenario(), tmp_path)

    assert result.problems == []
    assert result.verdicts == {TEST_ID: "flaky"}
    comments = result.sim.bot_comments(7)
    assert len(comments) == 1
    assert comments[0].body.startswith(MARKER)
    assert "likely flaky, unrelated to this PR" in comments[0].body
    assert len(result.sim.reruns) == 1
    # The bot authenticated as a real App: JWT for the token, the token for everything else.
    assert result.sim.calls["POST /app/installations/{installation_id}/access_tokens"] == 1
    # Edited in place, never a second comment: one POST, then PATCHes.
    posts = [w for w in result.sim.writes if w.path.endswith("/issues/7/comments")]
    assert len(posts) == 1


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.yml")), ids=lambda path: path.stem)
async def test_every_scenario_meets_its_expectations(path: Path, tmp_path: Path) -> None:
    result = await run_scenario(load_scenario(path), tmp_path)

    assert result.problems == []


async def test_related_failure_is_never_called_unrelated_nor_rerun(tmp_path: Path) -> None:
    result = await run_scenario(load_scenario(SCENARIOS / "related.yml"), tmp_path)

    assert result.problems == []
    assert set(result.verdicts.values()) == {"related"}
    assert result.sim.reruns == []
    (comment,) = result.sim.bot_comments(8)
    assert "related to this PR" in comment.body
    assert "unrelated" not in comment.body.split("\n")[1]


async def test_fork_pull_request_is_found_from_its_head_commit(tmp_path: Path) -> None:
    result = await run_scenario(load_scenario(SCENARIOS / "fork.yml"), tmp_path)

    assert result.problems == []
    assert result.sim.calls["GET /repos/{owner}/{repo}/commits/{commit_sha}/pulls"] >= 1
    assert len(result.sim.bot_comments(7)) == 1


async def test_redelivery_of_the_same_webhook_changes_nothing(tmp_path: Path) -> None:
    async with running(builtin_scenario(), tmp_path) as (sim, bot):
        payload = sim.next_completion("tests (3.12)")
        statuses = [
            await sim.send_webhook("check_run", payload, delivery_id="same-delivery")
            for _ in range(3)
        ]
        await settle(sim, bot)
        deliveries = await bot.store.list_deliveries(100)

    assert statuses == [202, 202, 202]
    assert [d.id for d in deliveries].count("same-delivery") == 1
    assert len(sim.reruns) == 1
    assert len(sim.bot_comments(7)) == 1


async def test_a_new_database_finds_the_existing_comment_instead_of_posting_again(
    tmp_path: Path,
) -> None:
    async with running(builtin_scenario(), tmp_path) as (sim, bot):
        payload = sim.next_completion("tests (3.12)")
        await sim.send_webhook("check_run", payload)
        await settle(sim, bot)
        assert len(sim.bot_comments(7)) == 1

        # Another bot with an empty database (a lost volume) triages the same failure again.
        async with another_bot(sim, bot, tmp_path / "fresh.sqlite3") as second:
            assert await sim.send_webhook("check_run", payload) == 202
            await settle(sim, second)

    comment_posts = [
        w for w in sim.writes if w.method == "POST" and w.path.endswith("/issues/7/comments")
    ]
    assert len(comment_posts) == 1
    assert len(sim.bot_comments(7)) == 1


async def test_unsigned_and_wrongly_signed_webhooks_never_reach_the_inbox(
    tmp_path: Path,
) -> None:
    async with running(builtin_scenario(), tmp_path) as (sim, bot):
        payload = sim.next_completion("tests (3.12)")
        unsigned = await sim.send_webhook("check_run", payload, sign=False)
        sim.webhook_secret = "not-the-secret"
        wrong = await sim.send_webhook("check_run", payload)
        await settle(sim, bot)
        stored = await bot.store.list_deliveries(100)
        verdicts = await final_verdicts(bot.store, "acme/bus", [7])

    assert (unsigned, wrong) == (401, 401)
    assert stored == []
    assert verdicts == {}
    assert sim.bot_comments(7) == []
