"""Webhooks the simulator sends: GitHub's shape, real signatures, reruns arriving on their own."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from jsonschema import FormatChecker
from openapi_schema_validator import OAS31Validator

from bot.sim import Simulator, builtin_scenario, load_scenario
from bot.sim.scenario import CheckSpec, CommentEvent, NewComment, Scenario

CORPUS = Path(__file__).resolve().parent / "fixtures" / "corpus"
SCHEMAS = CORPUS / "openapi" / "webhooks-schema.api.github.com.json"
SCENARIOS = Path(__file__).resolve().parent / "scenarios"
SECRET = "s3cret"


@dataclass
class Receiver:
    url: str = ""
    deliveries: list[tuple[dict[str, str], bytes]] = field(default_factory=list)

    def payloads(self, event: str) -> list[dict[str, Any]]:
        return [json.loads(b) for h, b in self.deliveries if h["X-GitHub-Event"] == event]


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    received = Receiver()

    async def accept(request: web.Request) -> web.Response:
        received.deliveries.append((dict(request.headers), await request.read()))
        return web.Response(status=202)

    app = web.Application()
    app.router.add_post("/api/github/webhooks", accept)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    received.url = str(server.make_url("/api/github/webhooks"))
    yield received
    await server.close()


@cache
def webhook_schema(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(SCHEMAS.read_text())
    body = document["webhooks"][name]["post"]["requestBody"]["content"]["application/json"]
    return {"allOf": [body["schema"]], "components": document["components"]}


def assert_webhook_fits(name: str, payload: dict[str, Any]) -> None:
    if not SCHEMAS.exists():
        pytest.fail(
            f"corpus not found at {CORPUS} (tests/fixtures/corpus is part of the repository)"
        )
    OAS31Validator(webhook_schema(name), format_checker=FormatChecker()).validate(payload)


def assert_signed(headers: dict[str, str], body: bytes) -> None:
    expected = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(headers["X-Hub-Signature-256"], expected)


async def test_play_sends_a_signed_check_run_that_fits_the_schema(receiver: Receiver) -> None:
    async with Simulator(
        builtin_scenario(), webhook_secret=SECRET, webhook_url=receiver.url
    ) as sim:
        await sim.play()
    [(headers, body)] = receiver.deliveries
    assert_signed(headers, body)
    assert headers["X-GitHub-Event"] == "check_run"
    assert headers["User-Agent"].startswith("GitHub-Hookshot/")
    payload = json.loads(body)
    assert_webhook_fits("check-run-completed", payload)
    check_run = payload["check_run"]
    assert (check_run["name"], check_run["conclusion"]) == ("tests (3.12)", "failure")
    assert check_run["pull_requests"][0]["number"] == 7
    job_url = check_run["details_url"]
    assert job_url.endswith(
        f"/acme/bus/actions/runs/{sim.world.runs[check_run['id']].run_id}/job/{check_run['id']}"
    )
    assert payload["installation"]["id"] == 1
    assert [entry.describe() for entry in sim.timeline][-1].startswith(
        "webhook check_run.completed"
    )


async def test_fork_pull_requests_are_missing_from_the_payload(receiver: Receiver) -> None:
    fork = load_scenario(SCENARIOS / "fork.yml")
    async with Simulator(fork, webhook_secret=SECRET, webhook_url=receiver.url) as sim:
        await sim.play()
        async with aiohttp.ClientSession() as http:
            token = await sim.installation_token()
            head = fork.pull_requests[0].head_sha
            async with http.get(
                f"{sim.url}/repos/acme/bus/commits/{head}/pulls",
                headers={"Authorization": f"token {token}"},
            ) as answer:
                pulls = await answer.json()
    [payload] = receiver.payloads("check_run")
    assert_webhook_fits("check-run-completed", payload)
    assert payload["check_run"]["pull_requests"] == []
    assert [pull["number"] for pull in pulls] == [7]
    assert pulls[0]["head"]["repo"]["fork"] is True


async def test_pr_comment_event_fits_the_schema_and_marks_the_pull_request(
    receiver: Receiver,
) -> None:
    scenario: Scenario = builtin_scenario().model_copy(
        update={
            "events": [CommentEvent(comment=NewComment(pr=7, user="octo-dev", body="/flaky help"))]
        }
    )
    async with Simulator(scenario, webhook_secret=SECRET, webhook_url=receiver.url) as sim:
        await sim.play()
        assert [c.body for c in sim.comments(7)] == ["/flaky help"]
    [(headers, body)] = receiver.deliveries
    assert_signed(headers, body)
    payload = json.loads(body)
    assert_webhook_fits("issue-comment-created", payload)
    assert payload["issue"]["pull_request"]["url"].endswith("/repos/acme/bus/pulls/7")
    assert payload["comment"]["body"] == "/flaky help"
    assert payload["sender"]["login"] == "octo-dev"


async def test_a_push_moves_the_pull_and_its_synchronize_event_fits_the_schema(
    receiver: Receiver,
) -> None:
    async with Simulator(
        builtin_scenario(), webhook_secret=SECRET, webhook_url=receiver.url
    ) as sim:
        before = sim.world.pulls[7].spec.head_sha
        payload = sim.push(7, "5" * 40)
        assert await sim.send_webhook("pull_request", payload) == 202
    [(headers, body)] = receiver.deliveries
    assert_signed(headers, body)
    assert headers["X-GitHub-Event"] == "pull_request"
    sent = json.loads(body)
    assert_webhook_fits("pull-request-synchronize", sent)
    assert (sent["action"], sent["before"], sent["after"]) == ("synchronize", before, "5" * 40)
    assert sent["pull_request"]["head"]["sha"] == "5" * 40


async def test_rerun_sends_a_new_job_with_a_higher_attempt(receiver: Receiver) -> None:
    async with Simulator(
        builtin_scenario(), webhook_secret=SECRET, webhook_url=receiver.url
    ) as sim:
        await sim.play()
        first = receiver.payloads("check_run")[0]["check_run"]
        async with aiohttp.ClientSession() as http:
            token = await sim.installation_token()
            base = f"{sim.url}/repos/acme/bus/actions/jobs"
            auth = {"Authorization": f"token {token}"}
            async with http.post(f"{base}/{first['id']}/rerun", headers=auth) as answer:
                assert answer.status == 201
            assert sim.pending == 1
            await sim.drain()
            assert sim.pending == 0
            second = receiver.payloads("check_run")[1]["check_run"]
            async with http.get(f"{base}/{second['id']}", headers=auth) as answer:
                job = await answer.json()
            async with http.get(f"{base}/{first['id']}", headers=auth) as answer:
                old_job = await answer.json()
    headers, body = receiver.deliveries[1]
    assert_signed(headers, body)
    assert second["id"] != first["id"]
    assert (second["name"], second["head_sha"]) == (first["name"], first["head_sha"])
    assert second["conclusion"] == "success"
    assert (job["run_id"], job["run_attempt"]) == (old_job["run_id"], old_job["run_attempt"] + 1)
    assert [(r.endpoint, r.target_id, r.status) for r in sim.reruns] == [("job", first["id"], 201)]


async def test_a_refused_rerun_sends_nothing(receiver: Receiver) -> None:
    scenario = builtin_scenario()
    scenario.checks[0].rerun_status = 403
    async with Simulator(scenario, webhook_secret=SECRET, webhook_url=receiver.url) as sim:
        await sim.play()
        job_id = next(iter(sim.world.runs))
        async with aiohttp.ClientSession() as http:
            token = await sim.installation_token()
            async with http.post(
                f"{sim.url}/repos/acme/bus/actions/jobs/{job_id}/rerun",
                headers={"Authorization": f"token {token}"},
            ) as answer:
                assert answer.status == 403
                assert "message" in await answer.json()
        await sim.drain()
    assert len(receiver.deliveries) == 1
    assert sim.writes == []


async def test_unsigned_delivery_and_custom_delivery_id(receiver: Receiver) -> None:
    async with Simulator(
        builtin_scenario(), webhook_secret=SECRET, webhook_url=receiver.url
    ) as sim:
        status = await sim.send_webhook(
            "ping", {"zen": "Keep it logically awesome."}, delivery_id="d-1", sign=False
        )
    [(headers, _)] = receiver.deliveries
    assert status == 202
    assert headers["X-GitHub-Delivery"] == "d-1"
    assert "X-Hub-Signature-256" not in headers


async def test_an_unreachable_target_answers_zero() -> None:
    async with Simulator(builtin_scenario(), webhook_secret=SECRET) as sim:
        sim.set_webhook_target("http://127.0.0.1:9/unreachable")
        assert await sim.send_webhook("ping", {}) == 0
        assert sim.timeline[-1].describe().endswith("no answer")


async def test_the_schema_check_rejects_a_payload_without_repository(receiver: Receiver) -> None:
    from jsonschema import ValidationError

    async with Simulator(
        builtin_scenario(), webhook_secret=SECRET, webhook_url=receiver.url
    ) as sim:
        await sim.play()
    [payload] = receiver.payloads("check_run")
    del payload["repository"]
    with pytest.raises(ValidationError):
        assert_webhook_fits("check-run-completed", payload)


async def test_a_check_outside_any_pull_request_runs_on_its_branch(receiver: Receiver) -> None:
    scenario = load_scenario(SCENARIOS / "broken-base-commit.yml")
    base_sha = scenario.pull_requests[0].base_sha
    async with Simulator(scenario, webhook_secret=SECRET, webhook_url=receiver.url) as sim:
        await sim.play()
        async with aiohttp.ClientSession() as http:
            token = await sim.installation_token()
            async with http.get(
                f"{sim.url}/repos/acme/bus/commits/{base_sha}/pulls",
                headers={"Authorization": f"token {token}"},
            ) as answer:
                pulls = await answer.json()
    on_base, on_pr = receiver.payloads("check_run")
    for payload in (on_base, on_pr):
        assert_webhook_fits("check-run-completed", payload)
    # One check, as GitHub names it, on two commits: main's and the PR's head.
    assert on_base["check_run"]["name"] == on_pr["check_run"]["name"] == "tests (3.12)"
    assert on_base["check_run"]["head_sha"] == base_sha
    assert on_base["check_run"]["pull_requests"] == []
    assert on_base["check_run"]["check_suite"]["head_branch"] == "main"
    assert on_pr["check_run"]["pull_requests"][0]["number"] == 36
    assert pulls == []


def test_a_check_runs_on_a_pull_request_or_a_commit_never_both() -> None:
    base = {"name": "t", "attempts": [{"conclusion": "failure"}]}
    with pytest.raises(ValueError, match="either on a pull request"):
        CheckSpec.model_validate(base)
    with pytest.raises(ValueError, match="either on a pull request"):
        CheckSpec.model_validate({**base, "pr": 1, "head_sha": "a" * 40})
    with pytest.raises(ValueError, match="branch is for checks outside"):
        CheckSpec.model_validate({**base, "pr": 1, "branch": "main"})


async def test_an_app_subscribed_to_workflow_job_gets_one_per_actions_job(
    receiver: Receiver,
) -> None:
    raw = builtin_scenario().model_dump(mode="json", exclude_none=True)
    raw["app"] = {**raw.get("app", {}), "workflow_job": True}
    raw["checks"][0]["attempts"][0].update(
        seconds=95, labels=["self-hosted", "linux", "gpu"], runner_name="gpu-box-3"
    )
    scenario = Scenario.model_validate(raw)
    async with Simulator(scenario, webhook_secret=SECRET, webhook_url=receiver.url) as sim:
        await sim.play()
    events = [headers["X-GitHub-Event"] for headers, _ in receiver.deliveries]
    assert events == ["workflow_job", "check_run"]
    (headers, body), _ = receiver.deliveries
    assert_signed(headers, body)
    payload = json.loads(body)
    assert_webhook_fits("workflow-job-completed", payload)
    job = payload["workflow_job"]
    [check_run] = receiver.payloads("check_run")
    assert job["check_run_url"].endswith(f"/check-runs/{check_run['check_run']['id']}")
    assert job["id"] == check_run["check_run"]["id"]
    assert (job["runner_name"], job["labels"]) == ("gpu-box-3", ["self-hosted", "linux", "gpu"])
    assert job["started_at"] == check_run["check_run"]["started_at"]
    started = datetime.fromisoformat(job["started_at"])
    assert (datetime.fromisoformat(job["completed_at"]) - started).total_seconds() >= 95
