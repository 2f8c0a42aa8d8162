"""Every endpoint the simulator serves answers with a body that fits GitHub's own OpenAPI schema."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from functools import cache
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from gidgethub.apps import get_jwt
from jsonschema import FormatChecker, ValidationError
from openapi_schema_validator import OAS30Validator

from bot.sim import Simulator, builtin_scenario
from bot.sim.scenario import ArtifactSpec, IssueSpec, OtherRepoSpec, Scenario

CORPUS = Path(__file__).resolve().parent / "fixtures" / "corpus"
SPEC = CORPUS / "openapi" / "github-rest-subset.openapi.json"
REPO = "/repos/acme/bus"


@cache
def spec() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SPEC.read_text())
    return loaded


def assert_fits(path: str, method: str, status: int, body: Any) -> None:
    """Validate a body against the schema GitHub documents for that operation and status."""
    document = spec()
    response = document["paths"][path][method.lower()]["responses"][str(status)]
    while "$ref" in response:
        response = document["components"]["responses"][response["$ref"].rsplit("/", 1)[-1]]
    schema = response["content"]["application/json"]["schema"]
    rooted = {"allOf": [schema], "components": document["components"]}
    OAS30Validator(rooted, format_checker=FormatChecker()).validate(body)


def world() -> Scenario:
    scenario = builtin_scenario()
    [check] = scenario.checks
    report = ArtifactSpec(name="junit", files={"junit.xml": "<testsuite tests='42'/>\n"})
    attempts = [attempt.model_copy(update={"artifacts": [report]}) for attempt in check.attempts]
    return scenario.model_copy(
        update={
            "checks": [check.model_copy(update={"attempts": attempts})],
            "files": {**scenario.files, ".github/flaky.yml": "max_reruns: 2\n"},
            "repos": {
                "acme/.github": OtherRepoSpec(files={".github/flaky.yml": "rerun: false\n"}),
                "acme/private": OtherRepoSpec(installed=False, files={"a.yml": "rerun: false\n"}),
            },
            "issues": [
                IssueSpec(number=3, title="Flaky: test_x", user="maintainer-mo", labels=["flaky"])
            ],
        }
    )


@pytest.fixture
async def sim(hook_url: str) -> AsyncIterator[Simulator]:
    async with Simulator(world(), webhook_secret="s3cret", webhook_url=hook_url) as simulator:
        yield simulator


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def test_every_endpoint_matches_the_openapi_schema(
    sim: Simulator, http: aiohttp.ClientSession
) -> None:
    app_jwt = get_jwt(app_id=str(sim.app_id), private_key=sim.private_key_pem)
    token_path = "/app/installations/{installation_id}/access_tokens"
    async with http.post(
        f"{sim.url}/app/installations/1/access_tokens",
        headers={"Authorization": f"Bearer {app_jwt}"},
    ) as answer:
        assert answer.status == 201
        token_body = await answer.json()
    assert_fits(token_path, "POST", 201, token_body)
    auth = {"Authorization": f"token {token_body['token']}"}

    async def call(method: str, template: str, path: str, status: int, **kw: Any) -> Any:
        async with http.request(
            method, sim.url + path, headers=auth, allow_redirects=False, **kw
        ) as answer:
            assert answer.status == status, (path, await answer.text())
            body = await answer.json() if answer.content_type == "application/json" else None
        if template:
            assert_fits(template, method, status, body)
        return body

    async with http.get(
        f"{sim.url}{REPO}/installation", headers={"Authorization": f"Bearer {app_jwt}"}
    ) as answer:
        assert_fits("/repos/{owner}/{repo}/installation", "GET", 200, await answer.json())

    await sim.play()
    await sim.drain()  # nothing scheduled yet: play() sends only the first attempt
    job_id = next(iter(sim.world.runs))
    run_id = sim.world.runs[job_id].run_id
    head = sim.world.pulls[7].spec.head_sha
    r = "/repos/{owner}/{repo}"

    await call("GET", f"{r}/pulls/{{pull_number}}", f"{REPO}/pulls/7", 200)
    files = await call("GET", f"{r}/pulls/{{pull_number}}/files", f"{REPO}/pulls/7/files", 200)
    assert [entry["filename"] for entry in files] == ["docs/usage.md", "src/cli.py"]
    pulls = await call(
        "GET", f"{r}/commits/{{commit_sha}}/pulls", f"{REPO}/commits/{head}/pulls", 200
    )
    assert [pull["number"] for pull in pulls] == [7]
    listed = await call(
        "GET", f"{r}/commits/{{ref}}/check-runs", f"{REPO}/commits/{head}/check-runs", 200
    )
    assert listed["total_count"] == 1
    run = await call("GET", f"{r}/check-runs/{{check_run_id}}", f"{REPO}/check-runs/{job_id}", 200)
    assert (run["conclusion"], run["pull_requests"][0]["number"]) == ("failure", 7)
    notes = await call(
        "GET",
        f"{r}/check-runs/{{check_run_id}}/annotations",
        f"{REPO}/check-runs/{job_id}/annotations",
        200,
    )
    assert notes[0]["message"] == "Process completed with exit code 1."
    job = await call("GET", f"{r}/actions/jobs/{{job_id}}", f"{REPO}/actions/jobs/{job_id}", 200)
    assert (job["id"], job["run_id"], job["run_attempt"]) == (job_id, run_id, 1)
    await call("GET", "", f"{REPO}/actions/jobs/{job_id}/logs", 302)
    workflow_run = await call(
        "GET", f"{r}/actions/runs/{{run_id}}", f"{REPO}/actions/runs/{run_id}", 200
    )
    assert (workflow_run["id"], workflow_run["event"]) == (run_id, "pull_request")
    artifacts = await call(
        "GET",
        f"{r}/actions/runs/{{run_id}}/artifacts",
        f"{REPO}/actions/runs/{run_id}/artifacts",
        200,
    )
    [artifact] = artifacts["artifacts"]
    artifact_id = artifact["id"]
    shown = await call(
        "GET",
        f"{r}/actions/artifacts/{{artifact_id}}",
        f"{REPO}/actions/artifacts/{artifact_id}",
        200,
    )
    assert shown == artifact and shown["workflow_run"]["id"] == run_id
    download = f"{r}/actions/artifacts/{{artifact_id}}/{{archive_format}}"
    await call("GET", "", f"{REPO}/actions/artifacts/{artifact_id}/zip", 302)
    await call(
        "POST",
        f"{r}/actions/runs/{{run_id}}/rerun-failed-jobs",
        f"{REPO}/actions/runs/{run_id}/rerun-failed-jobs",
        201,
        json={},
    )
    await sim.drain()
    await call(
        "POST", f"{r}/actions/jobs/{{job_id}}/rerun", f"{REPO}/actions/jobs/{job_id}/rerun", 201
    )
    await sim.drain()
    assert [run.run_attempt for run in sim.world.runs.values()] == [1, 2, 3]
    artifacts = await call(
        "GET",
        f"{r}/actions/runs/{{run_id}}/artifacts",
        f"{REPO}/actions/runs/{run_id}/artifacts",
        200,
    )
    assert artifacts["total_count"] == 3
    sim.world.artifacts[artifact_id].expires_at = sim.world.epoch
    await call("GET", download, f"{REPO}/actions/artifacts/{artifact_id}/zip", 410)

    comment = await call(
        "POST",
        f"{r}/issues/{{issue_number}}/comments",
        f"{REPO}/issues/7/comments",
        201,
        json={"body": "<!-- flaky-triage -->\nfirst"},
    )
    assert (comment["user"]["login"], comment["user"]["type"]) == ("flaky-triage[bot]", "Bot")
    cid = comment["id"]
    await call("GET", f"{r}/issues/{{issue_number}}/comments", f"{REPO}/issues/7/comments", 200)
    await call(
        "PATCH",
        f"{r}/issues/comments/{{comment_id}}",
        f"{REPO}/issues/comments/{cid}",
        200,
        json={"body": "second"},
    )
    got = await call(
        "GET", f"{r}/issues/comments/{{comment_id}}", f"{REPO}/issues/comments/{cid}", 200
    )
    assert got["body"] == "second"
    reactions = f"{r}/issues/comments/{{comment_id}}/reactions"
    await call(
        "POST", reactions, f"{REPO}/issues/comments/{cid}/reactions", 201, json={"content": "eyes"}
    )
    await call(
        "POST", reactions, f"{REPO}/issues/comments/{cid}/reactions", 200, json={"content": "eyes"}
    )

    issues = await call("GET", f"{r}/issues", f"{REPO}/issues?state=all", 200)
    assert {issue["number"] for issue in issues} == {3, 7}
    assert "pull_request" in next(issue for issue in issues if issue["number"] == 7)
    created = await call(
        "POST",
        f"{r}/issues",
        f"{REPO}/issues",
        201,
        json={
            "title": "Flaky test: test_publish_waits_for_ack",
            "body": "x",
            "labels": ["flaky"],
            "assignees": ["maintainer-mo"],
        },
    )
    number = created["number"]
    assert number == 8
    assert [user["login"] for user in created["assignees"]] == ["maintainer-mo"]
    # One assignee who may not be assigned refuses the whole issue, naming them.
    refused = await call(
        "POST",
        f"{r}/issues",
        f"{REPO}/issues",
        422,
        json={"title": "t", "body": "x", "assignees": ["maintainer-mo", "stranger"]},
    )
    assert refused["errors"][0]["value"] == ["stranger"]
    assert len(sim.world.issues_created) == 1
    await call("GET", f"{r}/issues/{{issue_number}}", f"{REPO}/issues/{number}", 200)
    closed = await call(
        "PATCH",
        f"{r}/issues/{{issue_number}}",
        f"{REPO}/issues/{number}",
        200,
        json={"state": "closed", "title": "Flaky test: renamed"},
    )
    assert (closed["state"], closed["title"]) == ("closed", "Flaky test: renamed")
    labels = await call(
        "POST",
        f"{r}/issues/{{issue_number}}/labels",
        f"{REPO}/issues/{number}/labels",
        200,
        json={"labels": ["ci"]},
    )
    assert [label["name"] for label in labels] == ["flaky", "ci"]
    await call("GET", "", f"{REPO}/labels/flaky", 200)
    await call("POST", "", f"{REPO}/labels", 201, json={"name": "needs-fix", "color": "d73a4a"})

    permission = await call(
        "GET",
        f"{r}/collaborators/{{username}}/permission",
        f"{REPO}/collaborators/maintainer-mo/permission",
        200,
    )
    assert (permission["permission"], permission["role_name"]) == ("write", "maintain")
    content = await call("GET", f"{r}/contents/{{path}}", f"{REPO}/contents/.github/flaky.yml", 200)
    assert content["type"] == "file" and content["encoding"] == "base64"
    org = "/repos/acme/.github/contents/.github/flaky.yml"
    content = await call("GET", f"{r}/contents/{{path}}", org, 200)
    assert base64.b64decode(content["content"]) == b"rerun: false\n"
    assert content["url"].endswith(org + "?ref=main")
    repo = await call("GET", "", REPO, 200)
    assert repo["full_name"] == "acme/bus"


async def test_not_found_looks_like_github(sim: Simulator, http: aiohttp.ClientSession) -> None:
    async with http.post(
        f"{sim.url}/app/installations/1/access_tokens",
        headers={
            "Authorization": "Bearer "
            + get_jwt(app_id=str(sim.app_id), private_key=sim.private_key_pem)
        },
    ) as answer:
        token = (await answer.json())["token"]
    for path in (
        f"{REPO}/pulls/99",
        f"{REPO}/contents/missing.txt",
        "/repos/other/repo/pulls/7",
        "/repos/acme/.github/contents/missing.yml",
        "/repos/acme/.github/contents/.github/flaky.yml?ref=other",
        "/repos/acme/.github/pulls/1",  # another repository's files only
        "/repos/acme/private/contents/a.yml",  # not installed
    ):
        async with http.get(sim.url + path, headers={"Authorization": f"token {token}"}) as answer:
            assert answer.status == 404
            body = await answer.json()
        assert body["message"] == "Not Found"
        assert_fits("/repos/{owner}/{repo}/issues", "GET", 404, body)


def test_the_schema_check_rejects_a_wrong_shape() -> None:
    with pytest.raises(ValidationError):
        assert_fits("/repos/{owner}/{repo}/pulls/{pull_number}", "GET", 200, {"number": "7"})
