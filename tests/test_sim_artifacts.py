"""Actions artifacts in the simulator: listing, zips that round-trip, reruns, blob byte ranges."""

from __future__ import annotations

import hashlib
import io
import zipfile
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import aiohttp
import pytest

from bot.sim import Simulator, builtin_scenario
from bot.sim.blobs import UnsatisfiableRange, requested_span
from bot.sim.scenario import ArtifactSpec, Attempt, CheckSpec, Scenario
from bot.sim.state import CheckRun, now

REPO = "/repos/acme/bus"
CHECK = "tests (3.12)"
TRX = "\ufeff<?xml version='1.0'?>\r\n<TestRun>\r\n</TestRun>\r\n".encode()


def junit(attempt: int) -> str:
    return f'<testsuite name="attempt {attempt}" tests="42" failures="{2 - attempt}"/>\n'


def with_artifacts() -> Scenario:
    """The demo, each attempt uploading a JUnit report and a byte-exact TRX file, and a check
    from another CI."""
    demo = builtin_scenario()
    [check] = demo.checks
    attempts = [
        attempt.model_copy(
            update={
                "artifacts": [
                    ArtifactSpec(
                        name="test-results",
                        files={"reports/junit.xml": junit(number), "dotnet/run.trx": TRX},
                    ),
                    ArtifactSpec(name="coverage", files={"coverage.txt": f"{90 + number}%\n"}),
                ]
            }
        )
        for number, attempt in enumerate(check.attempts, 1)
    ]
    failing = Attempt(conclusion="failure")
    other_ci = CheckSpec(name="lint", pr=check.pr, app="circleci-checks", attempts=[failing])
    return demo.model_copy(
        update={"checks": [check.model_copy(update={"attempts": attempts}), other_ci]}
    )


@pytest.fixture
async def sim(hook_url: str) -> AsyncIterator[Simulator]:
    async with Simulator(with_artifacts(), webhook_secret="s", webhook_url=hook_url) as simulator:
        yield simulator


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


def first_attempt(sim: Simulator) -> CheckRun:
    run = sim.world.queue_run(CHECK)
    sim.world.complete_run(run)
    return run


async def get_json(http: aiohttp.ClientSession, url: str, auth: dict[str, str]) -> Any:
    async with http.get(url, headers=auth) as answer:
        assert answer.status == 200, await answer.text()
        return await answer.json()


async def blob_location(http: aiohttp.ClientSession, url: str, auth: dict[str, str]) -> str:
    async with http.get(url, headers=auth, allow_redirects=False) as answer:
        assert answer.status == 302, await answer.text()
        return answer.headers["Location"]


async def test_an_artifact_zip_round_trips(sim: Simulator, http: aiohttp.ClientSession) -> None:
    auth = {"Authorization": f"token {await sim.installation_token()}"}
    run = first_attempt(sim)
    listed = await get_json(http, f"{sim.url}{REPO}/actions/runs/{run.run_id}/artifacts", auth)
    assert listed["total_count"] == 2
    results = next(a for a in listed["artifacts"] if a["name"] == "test-results")
    assert results == await get_json(http, results["url"], auth)
    assert results["workflow_run"]["id"] == run.run_id
    assert results["workflow_run"]["head_sha"] == run.head_sha

    location = await blob_location(http, results["archive_download_url"], auth)
    assert location.startswith(f"{sim.url}/_blobs/")
    async with http.get(location) as answer:  # no credentials, like GitHub's blob storage
        assert (answer.status, answer.content_type) == (200, "application/zip")
        data = await answer.read()
    assert results["size_in_bytes"] == len(data)
    assert results["digest"] == "sha256:" + hashlib.sha256(data).hexdigest()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.namelist() == ["reports/junit.xml", "dotnet/run.trx"]
        assert {info.compress_type for info in archive.infolist()} == {zipfile.ZIP_DEFLATED}
        assert archive.read("reports/junit.xml").decode() == junit(1)
        assert archive.read("dotnet/run.trx") == TRX


async def test_unknown_or_expired_artifacts(sim: Simulator, http: aiohttp.ClientSession) -> None:
    auth = {"Authorization": f"token {await sim.installation_token()}"}
    run = first_attempt(sim)
    artifact = next(iter(sim.world.artifacts.values()))
    for path in (
        f"/actions/artifacts/{artifact.id + 100}",
        f"/actions/artifacts/{artifact.id + 100}/zip",
        f"/actions/runs/{run.run_id + 1}/artifacts",
    ):
        async with http.get(f"{sim.url}{REPO}{path}", headers=auth) as answer:
            assert answer.status == 404, path
    artifact.expires_at = now() - timedelta(seconds=1)
    shown = await get_json(http, f"{sim.url}{REPO}/actions/artifacts/{artifact.id}", auth)
    assert shown["expired"] is True
    zip_url = f"{sim.url}{REPO}/actions/artifacts/{artifact.id}/zip"
    async with http.get(zip_url, headers=auth, allow_redirects=False) as answer:
        assert answer.status == 410
        assert (await answer.json())["message"] == "Artifact has expired"


async def test_rerun_artifacts_join_the_run_once_it_completes(
    sim: Simulator, http: aiohttp.ClientSession
) -> None:
    auth = {"Authorization": f"token {await sim.installation_token()}"}
    run = first_attempt(sim)
    artifacts_url = f"{sim.url}{REPO}/actions/runs/{run.run_id}/artifacts"
    async with http.post(f"{sim.url}{REPO}/actions/jobs/{run.id}/rerun", headers=auth) as answer:
        assert answer.status == 201
    before = await get_json(http, artifacts_url, auth)
    assert before["total_count"] == 2  # the rerun has not finished: nothing uploaded yet
    await sim.drain()

    after = await get_json(http, artifacts_url, auth)
    assert after["total_count"] == 4
    newest_first = after["artifacts"]
    ids = [artifact["id"] for artifact in newest_first]
    assert ids == sorted(ids, reverse=True)
    stamps = [artifact["created_at"] for artifact in newest_first]
    assert stamps == sorted(stamps, reverse=True)
    assert {artifact["workflow_run"]["id"] for artifact in newest_first} == {run.run_id}
    oldest_first = await get_json(http, artifacts_url + "?direction=asc", auth)
    assert [artifact["id"] for artifact in oldest_first["artifacts"]] == ids[::-1]

    named = await get_json(http, artifacts_url + "?name=test-results&per_page=1", auth)
    assert named["total_count"] == 2 and len(named["artifacts"]) == 1
    location = await blob_location(http, named["artifacts"][0]["archive_download_url"], auth)
    async with http.get(location) as answer:
        data = await answer.read()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.read("reports/junit.xml").decode() == junit(2)


async def test_only_actions_runs_have_artifacts(
    sim: Simulator, http: aiohttp.ClientSession
) -> None:
    auth = {"Authorization": f"token {await sim.installation_token()}"}
    actions = first_attempt(sim)
    other = sim.world.queue_run("lint")
    sim.world.complete_run(other)
    url = f"{sim.url}{REPO}/actions/runs/{{}}/artifacts"
    async with http.get(url.format(other.run_id), headers=auth) as answer:
        assert answer.status == 404
    listed = await get_json(http, url.format(actions.run_id), auth)
    assert listed["total_count"] == 2


async def test_blob_ranges_like_azure_storage(sim: Simulator, http: aiohttp.ClientSession) -> None:
    auth = {"Authorization": f"token {await sim.installation_token()}"}
    run = first_attempt(sim)
    location = await blob_location(http, f"{sim.url}{REPO}/actions/jobs/{run.id}/logs", auth)
    async with http.get(location) as answer:
        assert (answer.status, answer.headers["Accept-Ranges"]) == (200, "bytes")
        whole = await answer.read()
    total = len(whole)
    assert total > 300

    cases = {
        "bytes=-100": (total - 100, total - 1),
        f"bytes=-{total + 50}": (0, total - 1),
        "bytes=200-": (200, total - 1),
        "bytes=10-19": (10, 19),
        f"bytes=5-{total + 1000}": (5, total - 1),
    }
    for header, (first, last) in cases.items():
        async with http.get(location, headers={"Range": header}) as answer:
            assert answer.status == 206, header
            assert answer.headers["Content-Range"] == f"bytes {first}-{last}/{total}", header
            assert answer.content_type == "text/plain"
            assert await answer.read() == whole[first : last + 1], header

    for header in (f"bytes={total}-", f"bytes={total + 5}-{total + 9}", "bytes=-0"):
        async with http.get(location, headers={"Range": header}) as answer:
            assert answer.status == 416, header
            assert answer.headers["Content-Range"] == f"bytes */{total}"

    for header in ("bytes=9-3", "items=0-5", "bytes=0-1,5-6", "bytes=-"):
        async with http.get(location, headers={"Range": header}) as answer:
            assert answer.status == 200, header
            assert await answer.read() == whole


async def test_a_zip_can_be_read_in_ranges(sim: Simulator, http: aiohttp.ClientSession) -> None:
    auth = {"Authorization": f"token {await sim.installation_token()}"}
    first_attempt(sim)
    artifact = next(iter(sim.world.artifacts.values()))
    zip_url = f"{sim.url}{REPO}/actions/artifacts/{artifact.id}/zip"
    location = await blob_location(http, zip_url, auth)
    # A zip's directory sits at its end: readers fetch the tail first, then the rest.
    async with http.get(location, headers={"Range": "bytes=-22"}) as answer:
        assert answer.status == 206 and answer.content_type == "application/zip"
        tail = await answer.read()
    assert tail.startswith(b"PK\x05\x06")  # end of central directory record
    async with http.get(location, headers={"Range": f"bytes=0-{len(artifact.data) - 23}"}) as a:
        head = await a.read()
    assert head + tail == artifact.data


@pytest.mark.parametrize(
    ("header", "total", "span"),
    [
        (None, 10, None),
        ("bytes=-3", 10, range(7, 10)),
        ("bytes=-30", 10, range(0, 10)),
        ("bytes=-3", 0, None),  # nothing to name in Content-Range: the empty blob whole
        ("bytes=4-", 10, range(4, 10)),
        ("bytes=0-0", 10, range(0, 1)),
        (" bytes=2-5 ", 10, range(2, 6)),
        ("bytes=8-99", 10, range(8, 10)),
        ("bytes=5-4", 10, None),
        ("bytes=a-b", 10, None),
        ("bytes=1-2, 4-5", 10, None),
    ],
)
def test_requested_span(header: str | None, total: int, span: range | None) -> None:
    assert requested_span(header, total) == span


@pytest.mark.parametrize(
    ("header", "total"), [("bytes=10-", 10), ("bytes=12-15", 10), ("bytes=-0", 10), ("bytes=0-", 0)]
)
def test_unsatisfiable_spans(header: str, total: int) -> None:
    with pytest.raises(UnsatisfiableRange):
        requested_span(header, total)
