"""The bot's own check run (`check_run: true`) and merge-queue runs, end to end: the real bot
against the simulator over HTTP. The scenario files' `expect` blocks run in test_e2e.py; these
tests look at what was sent and what the store kept."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from bot.demo import another_bot, running, settle
from bot.report.check_run import CHECK_NAME
from bot.runtime import Bot
from bot.sim import Simulator
from bot.sim.record import Write
from bot.sim.scenario import FaultRule, Faults, Scenario, load_scenario
from bot.store import DeliveryState
from bot.triage.failures import match_key

SCENARIOS = Path(__file__).parent / "scenarios"
CORPUS = Path(__file__).parent / "fixtures" / "corpus" / "webhooks"
TEST_ID = "tests/bus/test_core.py::test_publish_waits_for_ack"
HEAD = "3f1c2a9d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39"


async def _play(sim: Simulator, bot: Bot) -> None:
    await sim.play(after_each=lambda: settle(sim, bot))
    await settle(sim, bot)


def _check_run_writes(sim: Simulator) -> list[Write]:
    return [w for w in sim.writes if "/check-runs" in w.path]


async def test_check_run_is_created_once_then_updated_in_place(tmp_path: Path) -> None:
    scenario = load_scenario(SCENARIOS / "check-run-created-updated.yml")
    async with running(scenario, tmp_path) as (sim, bot):
        await _play(sim, bot)
        (run,) = sim.world.app_runs.values()
        known = await bot.store.get_triage_check_run("acme/bus", HEAD)
        own_attempts = await bot.store.check_attempts_for("acme/bus", HEAD, CHECK_NAME)
        recorded = await bot.store.runs_at("acme/bus", HEAD)

    create, update = _check_run_writes(sim)
    assert (create.method, create.path) == ("POST", "/repos/acme/bus/check-runs")
    assert (create.body["name"], create.body["head_sha"]) == (CHECK_NAME, HEAD)
    assert create.body["conclusion"] == "neutral"
    assert "unrelated to this PR (rerun pending)" in create.body["output"]["title"]
    (note,) = create.body["output"]["annotations"]
    # Where the failure was raised, as the log's traceback says.
    assert (note["path"], note["start_line"], note["annotation_level"]) == (
        "src/bus/core.py",
        112,
        "warning",
    )
    assert note["title"] == TEST_ID
    assert (update.method, update.path) == ("PATCH", f"/repos/acme/bus/check-runs/{run.id}")
    assert "likely flaky" in update.body["output"]["summary"]
    assert update.body["output"]["annotations"] == []  # sent once: GitHub appends
    assert known is not None and known.check_run_id == run.id and len(known.annotations) == 1
    # GitHub told the bot each time its own run completed; the bot never triaged it.
    assert run.requests == 2
    assert own_attempts == []
    assert [r.check_name for r in recorded] == ["tests (3.12)", "tests (3.12)"]


async def test_strict_check_run_fails_until_the_rerun_passes(tmp_path: Path) -> None:
    scenario = load_scenario(SCENARIOS / "check-run-strict.yml")
    async with running(scenario, tmp_path) as (sim, bot):
        await _play(sim, bot)
        recorded = await bot.store.runs_at("acme/bus", HEAD)

    assert [w.body["conclusion"] for w in _check_run_writes(sim)] == ["failure", "success"]
    # Its own `failure` came back as a check_run event: never triaged, never recorded.
    assert {r.check_name for r in recorded} == {"tests (3.12)"}


async def test_sixty_annotations_go_fifty_then_ten(tmp_path: Path) -> None:
    scenario = load_scenario(SCENARIOS / "check-run-many-annotations.yml")
    async with running(scenario, tmp_path) as (sim, bot):
        await _play(sim, bot)

    writes = _check_run_writes(sim)
    assert [(w.method, len(w.body["output"]["annotations"])) for w in writes] == [
        ("POST", 50),
        ("PATCH", 10),
    ]
    (run,) = sim.world.app_runs.values()
    titles = [note["title"] for note in run.annotations]
    assert len(set(titles)) == 60


async def test_a_new_database_finds_the_check_run_instead_of_creating_another(
    tmp_path: Path,
) -> None:
    scenario = load_scenario(SCENARIOS / "check-run-created-updated.yml")
    async with running(scenario, tmp_path) as (sim, bot):
        payload = sim.next_completion("tests (3.12)")
        await sim.send_webhook("check_run", payload)
        await settle(sim, bot)
        # Another bot with an empty database (a lost volume) triages the rerun's pass.
        async with another_bot(sim, bot, tmp_path / "fresh.sqlite3") as second:
            await sim.send_webhook("check_run", sim.next_completion("tests (3.12)"))
            await settle(sim, second)

    assert [w.method for w in _check_run_writes(sim)] == ["POST", "PATCH"]
    assert len(sim.world.app_runs) == 1


async def test_a_create_whose_answer_was_lost_is_found_not_made_again(tmp_path: Path) -> None:
    scenario = load_scenario(SCENARIOS / "check-run-created-updated.yml")
    lost = FaultRule(
        method="POST", path="/check-runs$", drop_connection=True, after_applying=True, times=1
    )
    faulty = scenario.model_copy(update={"faults": Faults(rules=[lost])})
    async with running(faulty, tmp_path) as (sim, bot):
        await _play(sim, bot)

    # GitHub made the run, the bot never heard: its retry finds the run by name and App.
    assert len(sim.world.app_runs) == 1
    assert [w.method for w in _check_run_writes(sim)][:2] == ["POST", "PATCH"]
    assert sim.calls["POST /repos/{owner}/{repo}/check-runs"] == 1
    posts = [t for t in sim.timeline if t.method == "POST" and t.path.endswith("/check-runs")]
    assert [t.status for t in posts] == [0]  # carried out, its answer dropped


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/check-runs$"), ("PATCH", r"/check-runs/\d+$")],
    ids=["create", "update"],
)
async def test_annotations_are_sent_once_though_a_write_answer_was_lost(
    method: str, path: str, tmp_path: Path, store_url: str
) -> None:
    scenario = load_scenario(SCENARIOS / "check-run-many-annotations.yml")
    lost = FaultRule(method=method, path=path, drop_connection=True, after_applying=True, times=1)
    faulty = scenario.model_copy(update={"faults": Faults(rules=[lost])})
    async with running(faulty, tmp_path, database_url=store_url) as (sim, bot):
        await _play(sim, bot)
        dead = await bot.store.list_deliveries(100, [DeliveryState.DEAD])

    dropped = [t for t in sim.timeline if t.kind == "api" and t.status == 0]
    assert [t.method for t in dropped] == [method]  # the fault fired, after GitHub applied it
    assert dead == []
    (run,) = sim.world.app_runs.values()
    titles = [note["title"] for note in run.annotations]
    assert len(titles) == len(set(titles)) == 60
    # The run's annotations are read once, after the lost answer, not on every write.
    assert sim.calls["GET /repos/{owner}/{repo}/check-runs/{check_run_id}/annotations"] == 1


async def test_an_installation_without_checks_write_is_told_once_and_still_commented(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    scenario = load_scenario(SCENARIOS / "check-run-created-updated.yml")
    refused = scenario.model_copy(
        update={"app": scenario.app.model_copy(update={"checks": "read"})}
    )
    caplog.set_level(logging.WARNING, logger="bot.handlers.check_report")
    async with running(refused, tmp_path) as (sim, bot):
        await _play(sim, bot)
        dead = await bot.store.list_deliveries(100, [DeliveryState.DEAD])

    assert dead == []
    assert sim.world.app_runs == {}
    assert len(sim.bot_comments(7)) == 1
    warnings = [r for r in caplog.records if "checks: write" in r.getMessage()]
    assert len(warnings) == 1


def _queue_scenario() -> Scenario:
    return load_scenario(SCENARIOS / "merge-group-run.yml")


async def test_merge_queue_run_is_the_queue_history_and_never_a_comment(tmp_path: Path) -> None:
    scenario = _queue_scenario()
    (check,) = scenario.checks
    assert check.head_sha is not None
    async with running(scenario, tmp_path) as (sim, bot):
        await _play(sim, bot)
        (record,) = await bot.store.runs_at("acme/bus", check.head_sha)
        queue_run = await bot.store.latest_branch_run(
            "acme/bus", "tests (3.12)", "gh-readonly-queue/main"
        )
        seen = await bot.store.occurrences("acme/bus", [match_key(TEST_ID)], 0.0)
        dead = await bot.store.list_deliveries(100, [DeliveryState.DEAD])

    assert (record.branch, record.pr_number, record.conclusion) == (
        "gh-readonly-queue/main",
        None,
        "failure",
    )
    assert queue_run == record
    assert [(o.branch, o.pr_number, o.verdict) for o in seen] == [
        ("gh-readonly-queue/main", None, "unknown")
    ]
    assert dead == []
    assert sim.calls["GET /repos/{owner}/{repo}/commits/{commit_sha}/pulls"] == 0
    assert sim.writes == []  # no comment, no check run, no issue, no rerun


async def test_a_queue_shaped_branch_pushed_by_someone_is_not_the_queue(tmp_path: Path) -> None:
    """The name alone is no merge queue: GitHub says the run's event was `push`."""
    scenario = _queue_scenario()
    (check,) = scenario.checks
    pushed = scenario.model_copy(update={"checks": [check.model_copy(update={"event": "push"})]})
    assert check.head_sha is not None and check.branch is not None
    async with running(pushed, tmp_path) as (sim, bot):
        await _play(sim, bot)
        (record,) = await bot.store.runs_at("acme/bus", check.head_sha)
        queue_run = await bot.store.latest_branch_run(
            "acme/bus", "tests (3.12)", "gh-readonly-queue/main"
        )

    assert (record.branch, record.pr_number) == (check.branch, None)
    assert queue_run is None
    assert sim.calls["GET /repos/{owner}/{repo}/actions/runs/{run_id}"] == 1
    assert sim.calls["GET /repos/{owner}/{repo}/commits/{commit_sha}/pulls"] == 1


async def test_a_merge_group_delivery_is_kept_and_never_crashes(tmp_path: Path) -> None:
    payload = json.loads((CORPUS / "merge_group.checks_requested.1.json").read_text())
    async with running(_queue_scenario(), tmp_path) as (sim, bot):
        status = await sim.send_webhook("merge_group", payload, delivery_id="queue-1")
        await settle(sim, bot)
        (delivery,) = await bot.store.list_deliveries(100)

    assert status == 202
    assert (delivery.id, delivery.event, delivery.state) == ("queue-1", "merge_group", "done")
    assert sim.writes == []


# --- a head the PR moved on from keeps a check run of its own (strict) --------------------

NEW_HEAD = "5" * 40


def _strict_two_checks() -> Scenario:
    """check-run-strict.yml with a second job whose failure is never rerun."""
    scenario = load_scenario(SCENARIOS / "check-run-strict.yml")
    (check,) = scenario.checks
    failing = check.model_copy(update={"name": "tests (3.13)", "attempts": check.attempts[:1]})
    return scenario.model_copy(update={"checks": [check, failing]})


async def _deliver(sim: Simulator, bot: Bot, event: str, payload: dict[str, object]) -> None:
    await sim.send_webhook(event, payload)
    await bot.wait_idle(settle_seconds=0.05)


def _own_run_on(sim: Simulator, sha: str) -> str | None:
    (run,) = [run for run in sim.world.app_runs.values() if run.head_sha == sha]
    return run.conclusion


async def test_an_old_heads_check_run_succeeds_when_its_rerun_passes_after_a_push(
    tmp_path: Path, store_url: str
) -> None:
    scenario = load_scenario(SCENARIOS / "check-run-strict.yml")
    async with running(scenario, tmp_path, database_url=store_url) as (sim, bot):
        sim.rerun_delay_s = 1e9  # reruns are completed by hand, not by the simulator
        await _deliver(sim, bot, "check_run", sim.next_completion("tests (3.12)"))
        assert _own_run_on(sim, HEAD) == "failure"  # unrelated, its rerun pending
        (rerun,) = [run for run in sim.world.runs.values() if run.status != "completed"]
        await _deliver(sim, bot, "pull_request", sim.push(7, NEW_HEAD))
        await sim.complete_check(rerun)
        await bot.wait_idle(settle_seconds=0.05)

    assert rerun.head_sha == HEAD
    assert _own_run_on(sim, HEAD) == "success"
    assert [run.head_sha for run in sim.world.app_runs.values()] == [HEAD]


async def test_an_old_heads_check_run_fails_with_a_failure_never_rerun(
    tmp_path: Path, store_url: str
) -> None:
    async with running(_strict_two_checks(), tmp_path, database_url=store_url) as (sim, bot):
        sim.rerun_delay_s = 1e9
        await _deliver(sim, bot, "check_run", sim.next_completion("tests (3.12)"))
        (rerun,) = [run for run in sim.world.runs.values() if run.status != "completed"]
        await sim.complete_check(rerun)
        await bot.wait_idle(settle_seconds=0.05)
        assert _own_run_on(sim, HEAD) == "success"  # all that was known of the head
        late = sim.next_completion("tests (3.13)")  # failed on this head...
        await _deliver(sim, bot, "pull_request", sim.push(7, NEW_HEAD))  # ...then a push
        await _deliver(sim, bot, "check_run", late)  # never rerun: no longer the head
        attempts = await bot.store.check_attempts_for("acme/bus", HEAD, "tests (3.13)")

    assert [a.rerun_note for a in attempts][-1] == (
        f"not rerun: {HEAD[:7]} is no longer the head of the pull request"
    )
    assert _own_run_on(sim, HEAD) == "failure"
