"""Run context end to end (issue 28): the real bot against the simulator over HTTP, with
real signatures. GitHub sends `workflow_job` for every Actions job of an App subscribed to
it; the bot keeps each job's runner, labels and attempt, joins them with the runs it
records, and builds a tracking issue's input with the context of every occurrence and run
and the check's usual duration on the default branch."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.demo import running, settle
from bot.handlers.context import BotContext
from bot.handlers.scope import Scope
from bot.handlers.tracking import _issue_input
from bot.runtime import Bot
from bot.sim.scenario import Scenario, builtin_scenario
from bot.sim.server import Simulator
from bot.sim.webhooks import check_run_completed, delivery_headers, workflow_job_completed
from bot.store import DeliveryState
from bot.triage.failures import match_key
from bot.triage.run_context import RunContext, UsualDuration
from tests.test_hostile_payloads import _broken

ROOT = Path(__file__).resolve().parents[1]
LOG = (ROOT / "bot/sim/scenarios/demo-attempt-1.log").read_text()
PASS_LOG = (ROOT / "bot/sim/scenarios/demo-attempt-2.log").read_text()
# The opening lines of a real GitHub-hosted job log (agno-agi/agno, tests/fixtures/corpus/
# logs/INDEX.md): the runner's header, before its first step.
AGNO = ROOT / "tests/fixtures/corpus/logs/blastradius/agno-agi__agno__job97433407085__log.txt"
HEADER = AGNO.read_text(encoding="utf-8").partition("Complete job name")[0].rpartition("\n")[0]
TEST_ID = "tests/bus/test_core.py::test_publish_waits_for_ack"
REPO = "acme/bus"
BASE = "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d"


def _pull(number: int, author: str, digit: str) -> dict[str, Any]:
    return {
        "number": number,
        "title": f"Change {number}",
        "author": author,
        "head_sha": digit * 40,
        "base_sha": BASE,
        "head_ref": f"branch-{number}",
        "files": ["docs/usage.md"],
    }


def _check(name: str, attempt: dict[str, Any], **where: Any) -> dict[str, Any]:
    return {"name": name, "check_name": "tests", "workflow": "CI", "attempts": [attempt], **where}


def _scenario(*, workflow_job: bool) -> Scenario:
    raw = builtin_scenario().model_dump(mode="json", exclude_none=True)
    raw.pop("expect", None)
    raw["app"] = {**raw.get("app", {}), "workflow_job": workflow_job}
    raw["files"] = {**raw["files"], ".github/flaky.yml": "rerun: false\n"}
    raw["pull_requests"] = [_pull(7, "ann", "a"), _pull(8, "bob", "b"), _pull(9, "cy", "c")]
    passed = {"conclusion": "success", "log": PASS_LOG}
    raw["checks"] = [
        # The check on the default branch, outside any PR: its usual duration.
        *(
            _check(f"main {n}", {**passed, "seconds": s}, head_sha=f"{n}" * 40, branch="main")
            for n, s in ((1, 100), (2, 120), (3, 140))
        ),
        # Failed on a hosted Ubuntu runner whose log names its image, beside a lint job.
        _check(
            "tests #7",
            {
                "conclusion": "failure",
                "log": HEADER + "\n" + LOG,
                "seconds": 400,
                "labels": ["ubuntu-24.04"],
                "runner_name": "GitHub Actions 7",
            },
            pr=7,
        ),
        {**_check("lint #7", {**passed, "seconds": 20}, pr=7), "check_name": "lint"},
        # Failed on Windows, with no header in its log.
        _check(
            "tests #8",
            {
                "conclusion": "failure",
                "log": LOG,
                "seconds": 130,
                "labels": ["windows-latest"],
                "runner_name": "GitHub Actions 8",
            },
            pr=8,
        ),
        _check("tests #9", {**passed, "seconds": 110}, pr=9),
    ]
    return Scenario.model_validate(raw)


async def _play(sim: Simulator, bot: Bot, names: list[str]) -> None:
    for name in names:
        await sim.complete_check(sim.world.queue_run(name))
        await settle(sim, bot)


ORDER = ["main 1", "main 2", "main 3", "lint #7", "tests #7", "tests #8", "tests #9"]


async def test_a_flaky_tests_issue_input_carries_each_runs_context(tmp_path: Path) -> None:
    async with running(_scenario(workflow_job=True), tmp_path) as (sim, bot):
        await _play(sim, bot, ORDER)
        runs = {name: sim.world.latest_run(name) for name in ORDER}
        stored = await bot.store.run_contexts(REPO, ["tests"], 0.0, 100)
        record = await bot.store.tracking_issue(REPO, match_key(TEST_ID))
        assert record is not None and len(sim.issues_created) == 1
        ctx = BotContext(store=bot.store, github=bot.github, metrics=bot.metrics)
        gh = await bot.github.installation_client(1)
        scope = Scope(ctx, gh, REPO)
        inp = await _issue_input(scope, record, await scope.config(), time.time())
        deliveries = await bot.store.list_deliveries(100)

    failed_7, failed_8 = runs["tests #7"], runs["tests #8"]
    assert failed_7 is not None and failed_8 is not None
    # Stored: every run of the check, passed ones too, with the job GitHub described.
    assert len(stored) == 6
    assert stored[failed_7.id] == RunContext(
        runner_name="GitHub Actions 7",
        runner_os="Linux",  # the log's header
        runner_image="ubuntu-24.04 20260816.277.1",  # ditto: the real agno job's image
        labels=["ubuntu-24.04"],
        job_seconds=400.0,
        attempt=1,
        jobs_in_run=2,  # tests and lint, one workflow run
        at=stored[failed_7.id].at,
        check_name="tests",
    )
    assert stored[failed_8.id].model_dump(exclude={"at"}) == RunContext(
        runner_name="GitHub Actions 8",
        runner_os="Windows",  # from its labels: its log names no system
        labels=["windows-latest"],
        job_seconds=130.0,
        attempt=1,
        jobs_in_run=1,
        check_name="tests",
    ).model_dump(exclude={"at"})
    passed_9 = runs["tests #9"]
    assert passed_9 is not None and stored[passed_9.id].job_seconds == 110.0
    # The tracking issue's input: each occurrence with its message and context.
    by_pr = {o.pr_number: o for o in inp.occurrences}
    assert set(by_pr) == {7, 8}
    assert "TimeoutError: ack not received within 2.0s" in by_pr[7].message
    assert by_pr[7].context == stored[failed_7.id]
    assert by_pr[8].context == stored[failed_8.id]
    assert inp.run_contexts == list(stored.values())
    assert inp.usual == [UsualDuration(check_name="tests", runs=3, median=120.0, p90=140.0)]
    # Each job's webhook was handled without a call to GitHub and is done.
    jobs = [d for d in deliveries if d.event == "workflow_job"]
    assert len(jobs) == 7 and {d.state for d in jobs} == {DeliveryState.DONE}


async def test_without_the_workflow_job_event_the_run_says_what_it_can(tmp_path: Path) -> None:
    async with running(_scenario(workflow_job=False), tmp_path) as (sim, bot):
        await _play(sim, bot, ORDER)
        failed_7, failed_8 = sim.world.latest_run("tests #7"), sim.world.latest_run("tests #8")
        stored = await bot.store.run_contexts(REPO, ["tests"], 0.0, 100)

    assert failed_7 is not None and failed_8 is not None
    assert stored[failed_7.id].model_dump(exclude={"at"}) == RunContext(
        runner_os="Linux",
        runner_image="ubuntu-24.04 20260816.277.1",
        job_seconds=400.0,
        attempt=1,
        check_name="tests",
    ).model_dump(exclude={"at"})
    assert stored[failed_8.id].model_dump(exclude={"at"}) == RunContext(
        job_seconds=130.0, attempt=1, check_name="tests"
    ).model_dump(exclude={"at"})


BREAKAGES = [
    ("workflow_job", ...),
    ("workflow_job.run_id", "nine"),
    ("workflow_job.labels", "ubuntu-latest"),
    ("workflow_job.status", None),
    ("repository", 7),
]


async def _post_signed(sim: Simulator, body: bytes, delivery_id: str) -> int:
    """Post bytes as a signed `workflow_job` delivery, as GitHub would sign them."""
    assert sim.webhook_url is not None
    headers = delivery_headers(
        "workflow_job", delivery_id, body, secret=sim.webhook_secret, sign=True, app_id=sim.app_id
    )
    async with (
        aiohttp.ClientSession() as http,
        http.post(sim.webhook_url, data=body, headers=headers) as answer,
    ):
        return answer.status


@pytest.mark.parametrize(("path", "value"), BREAKAGES, ids=lambda v: repr(v)[:20])
async def test_a_workflow_job_of_the_wrong_shape_is_refused_clearly_and_loses_nothing(
    tmp_path: Path, path: str, value: Any
) -> None:
    async with running(_scenario(workflow_job=True), tmp_path) as (sim, bot):
        run = sim.world.queue_run("tests #9")
        sim.world.complete_run(run)
        good = workflow_job_completed(sim.shapes, run)
        bad = _broken(good, path, value)
        assert await sim.send_webhook("workflow_job", bad, delivery_id="bad") == 202
        await settle(sim, bot)
        # Not a JSON object at all: refused at the door (400), nothing stored.
        for n, body in enumerate([b"[1]", b'{"action":"completed","workflow_job":{']):
            assert await _post_signed(sim, body, f"not-an-object-{n}") == 400
        assert await sim.send_webhook("workflow_job", good, delivery_id="good") == 202
        await sim.send_webhook("check_run", check_run_completed(sim.shapes, run))
        await settle(sim, bot)
        states = {d.id: d for d in await bot.store.list_deliveries(10)}
        stored = await bot.store.run_contexts(REPO, ["tests"], 0.0, 10)

    bad_delivery = states.pop("bad")
    assert (bad_delivery.state, bad_delivery.attempts) == (DeliveryState.DEAD, 1)
    assert bad_delivery.last_error is not None
    assert bad_delivery.last_error.startswith("ValidationError: ")
    assert path.split(".")[-1] in bad_delivery.last_error
    assert not any(name.startswith("not-an-object") for name in states)
    assert {d.state for d in states.values()} == {DeliveryState.DONE}
    assert sim.writes == []
    assert stored[run.id].labels == ["ubuntu-latest"] and stored[run.id].jobs_in_run == 1
