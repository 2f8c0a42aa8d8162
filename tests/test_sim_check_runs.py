"""The simulator's `POST /check-runs` and `PATCH /check-runs/{id}`: GitHub's shapes (checked
against its OpenAPI description), its limits and errors, and the webhook it sends the App."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from bot.sim import Simulator, builtin_scenario
from bot.sim.scenario import Scenario
from tests.test_sim_openapi import assert_fits
from tests.test_sim_webhooks import Receiver, assert_webhook_fits, receiver  # noqa: F401

REPO = "/repos/acme/bus"
HEAD = "3f1c2a9d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39"  # PR #7's head in the built-in scenario
CREATE = "/repos/{owner}/{repo}/check-runs"
ONE = "/repos/{owner}/{repo}/check-runs/{check_run_id}"


def note(n: int, level: str = "warning") -> dict[str, Any]:
    return {
        "path": "src/bus/core.py",
        "start_line": n + 1,
        "end_line": n + 1,
        "annotation_level": level,
        "message": f"failure {n}",
        "title": f"tests/t.py::test_{n}",
    }


def output(notes: list[dict[str, Any]], summary: str = "the table") -> dict[str, Any]:
    return {"title": "1 failure", "summary": summary, "annotations": notes}


class Client:
    def __init__(self, sim: Simulator, http: aiohttp.ClientSession, token: str) -> None:
        self.sim, self.http, self.auth = sim, http, {"Authorization": f"token {token}"}

    async def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        async with self.http.request(
            method, self.sim.url + path, headers=self.auth, json=body
        ) as answer:
            return answer.status, await answer.json()


@pytest.fixture
async def client(receiver: Receiver) -> AsyncIterator[Client]:  # noqa: F811
    async with (
        Simulator(builtin_scenario(), webhook_secret="s3cret", webhook_url=receiver.url) as sim,
        aiohttp.ClientSession() as http,
    ):
        yield Client(sim, http, await sim.installation_token())


async def test_create_then_update_appends_annotations_and_fits_githubs_schema(
    client: Client,
    receiver: Receiver,  # noqa: F811
) -> None:
    body = {
        "name": "flaky-triage",
        "head_sha": HEAD,
        "status": "completed",
        "conclusion": "neutral",
        "output": output([note(n) for n in range(50)]),
    }
    status, created = await client.call("POST", f"{REPO}/check-runs", body)
    assert status == 201, created
    assert_fits(CREATE, "POST", 201, created)
    assert (created["status"], created["conclusion"]) == ("completed", "neutral")
    assert created["app"]["id"] == client.sim.app_id
    assert [pr["number"] for pr in created["pull_requests"]] == [7]
    run_id = created["id"]

    change = {"conclusion": "success", "output": output([note(50, "failure")], "now green")}
    status, updated = await client.call("PATCH", f"{REPO}/check-runs/{run_id}", change)
    assert status == 200, updated
    assert_fits(ONE, "PATCH", 200, updated)
    assert (updated["conclusion"], updated["output"]["summary"]) == ("success", "now green")
    assert updated["output"]["annotations_count"] == 51  # appended, as on GitHub

    status, shown = await client.call("GET", f"{REPO}/check-runs/{run_id}")
    assert_fits(ONE, "GET", 200, shown)
    status, notes = await client.call("GET", f"{REPO}/check-runs/{run_id}/annotations?per_page=100")
    assert_fits(ONE + "/annotations", "GET", 200, notes)
    assert [n["annotation_level"] for n in notes].count("failure") == 1
    status, listed = await client.call(
        "GET",
        f"{REPO}/commits/{HEAD}/check-runs?check_name=flaky-triage&app_id={client.sim.app_id}",
    )
    assert_fits("/repos/{owner}/{repo}/commits/{ref}/check-runs", "GET", 200, listed)
    assert [run["id"] for run in listed["check_runs"]] == [run_id]

    # GitHub tells the App about its own run each time it completes.
    await client.sim.drain()
    payloads = receiver.payloads("check_run")
    assert [p["check_run"]["conclusion"] for p in payloads] == ["neutral", "success"]
    for payload in payloads:
        assert_webhook_fits("check-run-completed", payload)
        assert payload["check_run"]["app"]["id"] == client.sim.app_id


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"head_sha": HEAD}, '"name" wasn\'t supplied'),
        ({"name": "x", "head_sha": "0" * 40}, "No commit found for SHA"),
        ({"name": "x", "head_sha": HEAD, "status": "completed"}, "conclusion is required"),
        ({"name": "x", "head_sha": HEAD, "conclusion": "green"}, "properties/conclusion"),
        ({"name": "x", "head_sha": HEAD, "output": {"title": "t"}}, '"summary" wasn\'t supplied'),
        (
            {"name": "x", "head_sha": HEAD, "output": output([note(n) for n in range(51)])},
            "Only 50 annotations are allowed per request",
        ),
        (
            {"name": "x", "head_sha": HEAD, "output": output([], "y" * 65_536)},
            "Only 65535 characters are allowed",
        ),
        (
            {"name": "x", "head_sha": HEAD, "output": output([note(1, "error")])},
            "properties/annotation_level",
        ),
        (
            {"name": "x", "head_sha": HEAD, "output": output([{"path": "a.py"}])},
            '"start_line", "end_line", "annotation_level", "message" weren\'t supplied',
        ),
    ],
)
async def test_github_refuses_what_it_refuses_with_422(
    client: Client, body: dict[str, Any], words: str
) -> None:
    status, answer = await client.call("POST", f"{REPO}/check-runs", body)
    assert status == 422
    assert words in answer["message"]
    assert client.sim.world.app_runs == {}


async def test_an_update_over_the_limit_changes_nothing(client: Client) -> None:
    body = {"name": "x", "head_sha": HEAD, "output": output([note(0)])}
    _, created = await client.call("POST", f"{REPO}/check-runs", body)
    too_many = {"output": output([note(n) for n in range(51)], "changed")}
    status, _ = await client.call("PATCH", f"{REPO}/check-runs/{created['id']}", too_many)
    assert status == 422
    (run,) = client.sim.world.app_runs.values()
    assert (len(run.annotations), run.summary) == (1, "the table")


async def test_another_apps_run_is_403_an_unknown_one_404(client: Client) -> None:
    job = client.sim.world.queue_run("tests (3.12)")  # an Actions job: not the App's
    status, answer = await client.call("PATCH", f"{REPO}/check-runs/{job.id}", {"status": "queued"})
    assert (status, answer["message"]) == (403, "Resource not accessible by integration")
    status, _ = await client.call("PATCH", f"{REPO}/check-runs/1", {"status": "queued"})
    assert status == 404


async def test_an_installation_with_checks_read_cannot_create(receiver: Receiver) -> None:  # noqa: F811
    scenario: Scenario = builtin_scenario()
    reading = scenario.model_copy(
        update={"app": scenario.app.model_copy(update={"checks": "read"})}
    )
    async with (
        Simulator(reading, webhook_secret="s3cret", webhook_url=receiver.url) as sim,
        aiohttp.ClientSession() as http,
    ):
        client = Client(sim, http, await sim.installation_token())
        body = {"name": "x", "head_sha": HEAD, "conclusion": "neutral"}
        status, answer = await client.call("POST", f"{REPO}/check-runs", body)
    assert (status, answer["message"]) == (403, "Resource not accessible by integration")
