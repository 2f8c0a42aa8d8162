"""The simulator's HTTP behaviour: App auth, tokens, pagination, ETags, logs, faults, records."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import aiohttp
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from bot.sim import Simulator, builtin_scenario
from bot.sim.faults import FaultPlan
from bot.sim.scenario import ChangedFile, FaultRule, Faults, IssueSpec, Scenario

REPO = "/repos/acme/bus"


def with_changes(**update: Any) -> Scenario:
    return builtin_scenario().model_copy(update=update)


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


def signed(key: rsa.RSAPrivateKey | str, **claims: Any) -> str:
    now = int(time.time())
    body = {"iat": now - 60, "exp": now + 540, "iss": "1", **claims}
    return jwt.encode(body, key, algorithm="RS256")


async def test_app_jwt_is_verified(http: aiohttp.ClientSession) -> None:
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = int(time.time())
    async with Simulator(builtin_scenario(), webhook_secret="s") as sim:
        cases = {
            "good": (signed(sim.private_key_pem), 200),
            "wrong key": (signed(other), 401),
            "expired": (signed(sim.private_key_pem, iat=now - 900, exp=now - 300), 401),
            "wrong iss": (signed(sim.private_key_pem, iss="2"), 401),
            "too long": (signed(sim.private_key_pem, iat=now, exp=now + 3600), 401),
            "installation token": (await sim.installation_token(), 401),
        }
        for name, (credential, status) in cases.items():
            async with http.get(
                f"{sim.url}/app", headers={"Authorization": f"Bearer {credential}"}
            ) as answer:
                assert answer.status == status, name
                if status == 200:
                    assert (await answer.json())["slug"] == "flaky-triage"
    pem = other.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    assert pem != sim.private_key_pem.encode()


async def test_tokens_are_required_random_and_expire(http: aiohttp.ClientSession) -> None:
    async with Simulator(builtin_scenario(), webhook_secret="s") as sim:
        first, second = await sim.installation_token(), await sim.installation_token()
        assert first != second
        url = f"{sim.url}{REPO}/pulls/7"
        for header in ({}, {"Authorization": "token nope"}, {"Authorization": "Basic x"}):
            async with http.get(url, headers=header) as answer:
                assert answer.status == 401
                assert (await answer.json())["message"] in {
                    "Bad credentials",
                    "Requires authentication",
                }
        async with http.get(url, headers={"Authorization": f"Bearer {first}"}) as answer:
            assert answer.status == 200
        sim.tokens.expire_all()
        async with http.get(url, headers={"Authorization": f"token {first}"}) as answer:
            assert answer.status == 401


async def test_pull_files_paginate_with_link_headers(http: aiohttp.ClientSession) -> None:
    scenario = builtin_scenario()
    pr = scenario.pull_requests[0]
    pr.files = [ChangedFile(filename=f"src/m{i}.py") for i in range(75)]
    pr.files.append(
        ChangedFile(filename="src/new.py", status="renamed", previous_filename="src/old.py")
    )
    async with Simulator(scenario, webhook_secret="s") as sim:
        auth = {"Authorization": f"token {await sim.installation_token()}"}
        seen: list[dict[str, Any]] = []
        url: str | None = f"{sim.url}{REPO}/pulls/7/files"
        pages = 0
        while url is not None:
            async with http.get(url, headers=auth) as answer:
                seen += await answer.json()
                link = answer.headers.get("Link", "")
                url = str(answer.links["next"]["url"]) if "next" in answer.links else None
                pages += 1
                if pages == 1:
                    assert 'rel="last"' in link and "page=3" in link
        assert pages == 3
        assert len(seen) == 76
        assert seen[-1]["previous_filename"] == "src/old.py"
        async with http.get(f"{sim.url}{REPO}/pulls/7/files?per_page=500", headers=auth) as answer:
            assert len(await answer.json()) == 76  # per_page is capped at 100


async def test_if_none_match_answers_304_without_counting(http: aiohttp.ClientSession) -> None:
    async with Simulator(builtin_scenario(), webhook_secret="s") as sim:
        token = await sim.installation_token()
        auth = {"Authorization": f"token {token}"}
        url = f"{sim.url}{REPO}/pulls/7"
        async with http.get(url, headers=auth) as answer:
            etag = answer.headers["ETag"]
            assert answer.headers["X-RateLimit-Resource"] == "core"
            remaining = int(answer.headers["X-RateLimit-Remaining"])
        async with http.get(url, headers={**auth, "If-None-Match": etag}) as answer:
            assert answer.status == 304
            assert await answer.read() == b""
            assert int(answer.headers["X-RateLimit-Remaining"]) == remaining
        other = {"Authorization": f"token {await sim.installation_token()}"}
        async with http.get(url, headers={**other, "If-None-Match": etag}) as answer:
            assert answer.status == 200  # ETags are per credential, as on GitHub
    assert sim.calls["GET /repos/{owner}/{repo}/pulls/{pull_number}"] == 3
    assert sim.rate_limited_calls == 2
    assert [e.not_modified for e in sim.timeline if e.path.endswith("/pulls/7")] == [
        False,
        True,
        False,
    ]


async def test_job_logs_redirect_to_a_short_lived_blob(http: aiohttp.ClientSession) -> None:
    async with Simulator(builtin_scenario(), webhook_secret="s") as sim:
        auth = {"Authorization": f"token {await sim.installation_token()}"}
        run = sim.world.queue_run("tests (3.12)")
        logs = f"{sim.url}{REPO}/actions/jobs/{run.id}/logs"
        async with http.get(logs, headers=auth, allow_redirects=False) as answer:
            assert answer.status == 404  # not finished: no log yet
        sim.world.complete_run(run)
        async with http.get(logs, headers=auth, allow_redirects=False) as answer:
            assert answer.status == 302
            location = answer.headers["Location"]
        assert location.startswith(f"{sim.url}/_blobs/")
        async with http.get(location) as answer:  # no credentials, like GitHub's blob storage
            assert answer.content_type == "text/plain"
            text = await answer.text()
        assert "FAILED tests/bus/test_core.py::test_publish_waits_for_ack" in text
        assert all(line.startswith("2026-11-30T10:00:00.0000000Z ") for line in text.splitlines())
        for key, blob in sim.blobs.items():
            sim.blobs[key] = replace(blob, expires_at=0.0)
        async with http.get(location) as answer:
            assert answer.status == 404


async def test_fault_rules_fail_the_first_requests(http: aiohttp.ClientSession) -> None:
    rules = [
        FaultRule(method="GET", path=r"/pulls/7$", status=502, times=2),
        FaultRule(path=r"/collaborators/", status=403, headers={"Retry-After": "7"}),
        FaultRule(path=r"/issues/7$", status=403, message="Resource not accessible by integration"),
        FaultRule(path=r"/issues/7/comments", drop_connection=True, times=2),
    ]
    async with Simulator(with_changes(faults=Faults(rules=rules)), webhook_secret="s") as sim:
        auth = {"Authorization": f"token {await sim.installation_token()}"}
        statuses = []
        for _ in range(3):
            async with http.get(f"{sim.url}{REPO}/pulls/7", headers=auth) as answer:
                statuses.append(answer.status)
        assert statuses == [502, 502, 200]
        url = f"{sim.url}{REPO}/collaborators/octo-dev/permission"
        async with http.get(url, headers=auth) as answer:
            assert (answer.status, answer.headers["Retry-After"]) == (403, "7")
        async with http.get(url, headers=auth) as answer:
            assert answer.status == 200
        async with http.get(f"{sim.url}{REPO}/issues/7", headers=auth) as answer:
            assert (answer.status, (await answer.json())["message"]) == (
                403,
                "Resource not accessible by integration",
            )
        # aiohttp retries an idempotent request once on its own when the connection drops,
        # so the rule drops two in a row to reach the caller.
        with pytest.raises(aiohttp.ServerDisconnectedError):
            async with http.get(f"{sim.url}{REPO}/issues/7/comments", headers=auth) as answer:
                await answer.read()
        async with http.get(f"{sim.url}{REPO}/issues/7/comments", headers=auth) as answer:
            assert answer.status == 200
    dropped = [e for e in sim.timeline if e.kind == "api" and e.status == 0]
    assert len(dropped) == 2


async def test_fault_rules_answer_githubs_rate_limits_and_refusals_in_its_shapes(
    http: aiohttp.ClientSession,
) -> None:
    rerun = r"/actions/jobs/\d+/rerun$"
    rules = [
        FaultRule(method="POST", path=rerun, status=403, rate_limit="secondary", retry_after=30),
        FaultRule(method="POST", path=rerun, status=429, rate_limit="primary", retry_after=600),
        FaultRule(
            method="POST", path=rerun, status=403, message="Resource not accessible by integration"
        ),
    ]
    async with Simulator(with_changes(faults=Faults(rules=rules)), webhook_secret="s") as sim:
        auth = {"Authorization": f"token {await sim.installation_token()}"}
        url = f"{sim.url}{REPO}/actions/jobs/1/rerun"  # faults answer before routing
        answers = []
        before = int(time.time())
        for _ in range(3):
            async with http.post(url, headers=auth) as answer:
                answers.append((answer.status, dict(answer.headers), await answer.json()))
        after = int(time.time())

    (secondary, s_headers, s_body), (primary, p_headers, p_body), (refused, r_headers, r_body) = (
        answers
    )
    assert (secondary, s_headers["Retry-After"]) == (403, "30")
    assert s_body["message"].startswith("You have exceeded a secondary rate limit.")
    assert s_body["documentation_url"].endswith("#about-secondary-rate-limits")
    assert int(s_headers["X-RateLimit-Remaining"]) > 0, "a secondary limit leaves requests"
    assert primary == 429 and "Retry-After" not in p_headers
    assert p_body["message"].startswith(
        f"API rate limit exceeded for installation ID {sim.world.app.installation_id}."
    )
    assert p_headers["X-RateLimit-Remaining"] == "0"
    assert before + 600 <= int(p_headers["X-RateLimit-Reset"]) <= after + 600
    assert (refused, r_body["message"]) == (403, "Resource not accessible by integration")
    assert "Retry-After" not in r_headers


async def test_probability_rules_are_repeatable_with_a_seed(http: aiohttp.ClientSession) -> None:
    faults = Faults(seed=4, rules=[FaultRule(path="/pulls/", status=500, probability=0.5)])
    outcomes = []
    for _ in range(2):
        async with Simulator(with_changes(faults=faults), webhook_secret="s") as sim:
            auth = {"Authorization": f"token {await sim.installation_token()}"}
            run = []
            for _ in range(20):
                async with http.get(f"{sim.url}{REPO}/pulls/7", headers=auth) as answer:
                    run.append(answer.status)
            outcomes.append(run)
    assert outcomes[0] == outcomes[1]
    assert {500, 200} == set(outcomes[0])


async def test_writes_record_changes_only(http: aiohttp.ClientSession) -> None:
    async with Simulator(builtin_scenario(), webhook_secret="s") as sim:
        auth = {"Authorization": f"token {await sim.installation_token()}"}
        async with http.post(
            f"{sim.url}{REPO}/issues/7/comments", headers=auth, json={"body": "hello"}
        ) as answer:
            comment = await answer.json()
        reactions = f"{sim.url}{REPO}/issues/comments/{comment['id']}/reactions"
        for expected in (201, 200):
            async with http.post(reactions, headers=auth, json={"content": "+1"}) as answer:
                assert answer.status == expected
        async with http.post(f"{sim.url}{REPO}/issues/7/comments", headers=auth, json={}) as answer:
            assert answer.status == 422
    assert [(w.method, w.path, w.status) for w in sim.writes] == [
        ("POST", f"{REPO}/issues/7/comments", 201),
        ("POST", f"{REPO}/issues/comments/{comment['id']}/reactions", 201),
    ]
    assert sim.writes[0].body == {"body": "hello"}
    assert [c.body for c in sim.bot_comments(7)] == ["hello"]
    assert [r.content for r in sim.reactions(comment["id"])] == ["+1"]


async def test_an_issue_body_over_githubs_limit_is_refused_as_github_does(
    http: aiohttp.ClientSession,
) -> None:
    issue = IssueSpec(number=3, title="Notes", body="Kept.", user="maintainer-mo")
    async with Simulator(with_changes(issues=[issue]), webhook_secret="s") as sim:
        auth = {"Authorization": f"token {await sim.installation_token()}"}
        answers = []
        for method, path, extra in [
            ("PATCH", "/issues/3", {}),
            ("POST", "/issues", {"title": "New"}),
        ]:
            for size in (65_537, 65_536):
                body = {"body": "x" * size, **extra}
                async with http.request(
                    method, f"{sim.url}{REPO}{path}", headers=auth, json=body
                ) as answer:
                    answers.append((answer.status, await answer.json()))
    too_long, fits, too_long_new, fits_new = answers
    assert too_long == too_long_new
    assert too_long[0] == 422 and too_long[1]["message"] == "Validation Failed"
    assert too_long[1]["errors"] == [
        {
            "resource": "Issue",
            "code": "custom",
            "field": "body",
            "message": "body is too long (maximum is 65536 characters)",
        }
    ]
    assert (fits[0], fits_new[0]) == (200, 201)
    assert len(sim.world.issues[3].body) == 65_536


def test_fixed_latency_waits_exactly_and_uniform_latency_stays_within_bounds() -> None:
    fixed = FaultPlan(Faults(latency_ms=50, latency="fixed"))
    uniform = FaultPlan(Faults(latency_ms=50, seed=3))

    assert {fixed.latency_s() for _ in range(20)} == {0.05}
    waits = [uniform.latency_s() for _ in range(200)]
    assert all(0 <= w <= 0.05 for w in waits) and len(set(waits)) > 100
