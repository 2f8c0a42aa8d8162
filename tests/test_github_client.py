"""The GitHub client against a small GitHub-shaped server on 127.0.0.1.

Tokens, ETag caches per installation, what is retried and what is not, and the job-log
download (redirect without credentials, Range suffix, tail of a host that ignores Range).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import aiohttp
import jwt
import pytest
from aiohttp import web
from cryptography.hazmat.primitives import serialization
from gidgethub import BadRequest, GitHubBroken

from bot.github.client import TOKEN_REFRESH_MARGIN, GitHubApp, GitHubClient
from bot.github.downloads import Streamed, stream_job_log
from bot.github.errors import RateLimited, classify, rate_limit_wait
from bot.metrics import Metrics

APP_ID = 4242
Serve = Callable[[web.Application], Awaitable[str]]  # the `serve` fixture of conftest.py


@dataclass
class FakeGitHub:
    """Answers the endpoints under test and keeps every request it saw."""

    public_key: str
    token_lifetime: float = 3600.0
    seen: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    tokens_issued: Counter[int] = field(default_factory=Counter)
    scripted: dict[str, list[web.Response]] = field(default_factory=dict)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/app/installations/{id}/access_tokens", self.access_token)
        app.router.add_route("*", "/{tail:.*}", self.other)
        return app

    def requests(self, path: str) -> list[dict[str, str]]:
        return [headers for _, seen_path, headers in self.seen if seen_path == path]

    def _record(self, request: web.Request) -> None:
        self.seen.append((request.method, request.path, dict(request.headers)))

    async def access_token(self, request: web.Request) -> web.Response:
        self._record(request)
        scheme, _, bearer = request.headers["Authorization"].partition(" ")
        if scheme.lower() != "bearer":
            return _json(401)
        claims = jwt.decode(bearer, self.public_key, algorithms=["RS256"])
        assert str(claims["iss"]) == str(APP_ID)
        installation = int(request.match_info["id"])
        self.tokens_issued[installation] += 1
        # Let concurrent callers pile up behind the first request if they are going to.
        await asyncio.sleep(0.05)
        expires = datetime.fromtimestamp(time.time() + self.token_lifetime, UTC)
        return web.json_response(
            {
                "token": f"ghs_{installation}_{self.tokens_issued[installation]}",
                "expires_at": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
            },
            status=201,
        )

    async def other(self, request: web.Request) -> web.Response:
        self._record(request)
        queue = self.scripted.get(f"{request.method} {request.path}")
        if queue:
            return queue.pop(0)
        if request.path == "/repos/o/r":
            etag = f'"{request.headers.get("Authorization", "")}-v1"'
            if request.headers.get("If-None-Match") == etag:
                return web.Response(status=304, headers={"ETag": etag})
            return web.json_response({"full_name": "o/r"}, headers={"ETag": etag})
        return web.json_response({"ok": True, "method": request.method})


@pytest.fixture
async def fake(private_key: str, serve: Serve) -> tuple[FakeGitHub, str]:
    public = (
        serialization.load_pem_private_key(private_key.encode(), password=None)
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    github = FakeGitHub(public_key=public)
    return github, await serve(github.app())


def _github_app(
    session: aiohttp.ClientSession, url: str, private_key: str, metrics: Metrics
) -> GitHubApp:
    return GitHubApp(session, api_url=url, app_id=APP_ID, private_key=private_key, metrics=metrics)


def _client(session: aiohttp.ClientSession, url: str, metrics: Metrics) -> GitHubClient:
    return GitHubClient(session, base_url=url, metrics=metrics, oauth_token="ghs_test")


def _json(status: int, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response({"message": f"status {status}"}, status=status, headers=headers)


async def test_concurrent_token_requests_cause_one_refresh(
    fake: tuple[FakeGitHub, str],
    session: aiohttp.ClientSession,
    private_key: str,
    metrics: Metrics,
) -> None:
    github, url = fake
    app = _github_app(session, url, private_key, metrics)
    tokens = await asyncio.gather(*(app.token(1) for _ in range(25)))
    assert set(tokens) == {"ghs_1_1"}
    assert github.tokens_issued == Counter({1: 1})
    assert await app.token(2) == "ghs_2_1"
    assert github.tokens_issued == Counter({1: 1, 2: 1})


async def test_token_close_to_expiry_is_refreshed(
    fake: tuple[FakeGitHub, str],
    session: aiohttp.ClientSession,
    private_key: str,
    metrics: Metrics,
) -> None:
    github, url = fake
    app = _github_app(session, url, private_key, metrics)
    first = await app.token(1)
    expires = time.time() + github.token_lifetime
    assert await app.token(1, now=expires - TOKEN_REFRESH_MARGIN - 60) == first
    refreshed = await app.token(1, now=expires - TOKEN_REFRESH_MARGIN + 1)
    assert refreshed != first
    assert github.tokens_issued[1] == 2


async def test_etag_cache_is_kept_per_installation(
    fake: tuple[FakeGitHub, str],
    session: aiohttp.ClientSession,
    private_key: str,
    metrics: Metrics,
) -> None:
    github, url = fake
    app = _github_app(session, url, private_key, metrics)
    first = await (await app.installation_client(1)).getitem("/repos/o/r")
    # A new client per delivery still shares its installation's cache.
    second = await (await app.installation_client(1)).getitem("/repos/o/r")
    other = await (await app.installation_client(2)).getitem("/repos/o/r")
    assert first == second == other == {"full_name": "o/r"}
    one_first, one_second, two_first = github.requests("/repos/o/r")
    assert "If-None-Match" not in one_first
    assert one_second["If-None-Match"] == '"token ghs_1_1-v1"'
    assert "If-None-Match" not in two_first
    assert two_first["Authorization"] == "token ghs_2_1"
    assert metrics.registry.get_sample_value(
        "flakybot_github_requests_total", {"endpoint": "other", "method": "GET", "status": "304"}
    ) == pytest.approx(1.0)


async def test_get_answered_502_is_retried(
    fake: tuple[FakeGitHub, str], session: aiohttp.ClientSession, metrics: Metrics
) -> None:
    github, url = fake
    github.scripted["GET /repos/o/r/pulls/1"] = [_json(502)]
    assert await _client(session, url, metrics).getitem("/repos/o/r/pulls/1") == {
        "ok": True,
        "method": "GET",
    }
    assert len(github.requests("/repos/o/r/pulls/1")) == 2


async def test_get_that_keeps_failing_gives_up(
    fake: tuple[FakeGitHub, str], session: aiohttp.ClientSession, metrics: Metrics
) -> None:
    github, url = fake
    github.scripted["GET /repos/o/r/pulls/1"] = [_json(503) for _ in range(10)]
    client = GitHubClient(
        session, base_url=url, metrics=metrics, oauth_token="ghs_test", max_retries=2
    )
    with pytest.raises(GitHubBroken):
        await client.getitem("/repos/o/r/pulls/1")
    assert len(github.requests("/repos/o/r/pulls/1")) == 3


async def test_post_answered_502_is_not_retried(
    fake: tuple[FakeGitHub, str], session: aiohttp.ClientSession, metrics: Metrics
) -> None:
    github, url = fake
    path = "/repos/o/r/issues/1/comments"
    github.scripted[f"POST {path}"] = [_json(502)]
    with pytest.raises(GitHubBroken):
        await _client(session, url, metrics).post(path, data={"body": "hello"})
    assert len(github.requests(path)) == 1


async def test_patch_answered_502_is_retried_unless_unrepeated(
    fake: tuple[FakeGitHub, str], session: aiohttp.ClientSession, metrics: Metrics
) -> None:
    """A check run's annotations are appended: such a PATCH is not repeated blindly."""
    github, url = fake
    path = "/repos/o/r/check-runs/1"
    github.scripted[f"PATCH {path}"] = [_json(502)]
    client = _client(session, url, metrics)
    await client.patch(path, data={"output": {}})
    assert len(github.requests(path)) == 2
    github.scripted[f"PATCH {path}"] = [_json(502)]
    with pytest.raises(GitHubBroken):
        await client.unrepeated().patch(path, data={"output": {}})
    assert len(github.requests(path)) == 3


async def test_secondary_rate_limit_with_retry_after_zero_is_retried(
    fake: tuple[FakeGitHub, str], session: aiohttp.ClientSession, metrics: Metrics
) -> None:
    github, url = fake
    path = "/repos/o/r/issues/1/comments"
    github.scripted[f"POST {path}"] = [_json(403, {"Retry-After": "0"})]
    answer = await _client(session, url, metrics).post(path, data={"body": "hello"})
    assert answer == {"ok": True, "method": "POST"}
    assert len(github.requests(path)) == 2


async def test_plain_403_is_neither_retried_nor_transient(
    fake: tuple[FakeGitHub, str], session: aiohttp.ClientSession, metrics: Metrics
) -> None:
    github, url = fake
    github.scripted["GET /repos/o/r/pulls/1"] = [_json(403)]
    with pytest.raises(BadRequest) as raised:
        await _client(session, url, metrics).getitem("/repos/o/r/pulls/1")
    assert len(github.requests("/repos/o/r/pulls/1")) == 1
    assert classify(raised.value) is None


SECONDARY = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
    "If you reach out to GitHub Support for help, please include the request ID 1F3A:2B4C."
)


@pytest.mark.parametrize(
    ("status", "headers", "message", "wait"),
    [
        (403, {"Retry-After": "30"}, SECONDARY, 30.0),
        (429, {"retry-after": "5"}, "", 5.0),
        # Primary: remaining 0, wait until the reset (the epoch second given).
        (403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1000120"}, "", 120.0),
        (429, {"X-RateLimit-Remaining": "0"}, "API rate limit exceeded for installation", 60.0),
        # Neither header: GitHub asks for at least a minute.
        (403, {"X-RateLimit-Remaining": "4990"}, SECONDARY, 60.0),
        (429, {}, "", 60.0),
        # Refusals and other answers are no rate limit, whatever headers they carry.
        (403, {"X-RateLimit-Remaining": "4990"}, "Resource not accessible by integration", None),
        (403, {}, "This workflow is already running", None),
        (404, {"Retry-After": "30"}, "Not Found", None),
        (422, {}, "Validation Failed", None),
    ],
)
def test_a_rate_limit_is_told_from_a_refusal_by_githubs_signals(
    status: int, headers: dict[str, str], message: str, wait: float | None
) -> None:
    assert rate_limit_wait(status, headers, message, now=1_000_000.0) == wait


async def test_429_with_a_long_wait_surfaces_as_transient(
    fake: tuple[FakeGitHub, str], session: aiohttp.ClientSession, metrics: Metrics
) -> None:
    github, url = fake
    github.scripted["GET /repos/o/r/pulls/1"] = [_json(429, {"Retry-After": "3600"})]
    started = time.monotonic()
    with pytest.raises(RateLimited) as raised:
        await _client(session, url, metrics).getitem("/repos/o/r/pulls/1")
    assert time.monotonic() - started < 5
    assert len(github.requests("/repos/o/r/pulls/1")) == 1
    assert classify(raised.value) is raised.value
    assert raised.value.retry_after == pytest.approx(3600, abs=5)


# --- job logs --------------------------------------------------------------------------------

LOG = b"".join(f"2024-01-01T00:00:00Z line {i:05} of the job log\n".encode() for i in range(2000))
LOG_LINES = set(LOG.decode().splitlines())


@dataclass
class BlobHost:
    body: bytes
    honour_range: bool
    seen: list[dict[str, str]] = field(default_factory=list)

    async def blob(self, request: web.Request) -> web.Response:
        self.seen.append(dict(request.headers))
        wanted = request.headers.get("Range", "")
        if not self.honour_range or not wanted.startswith("bytes=-"):
            return web.Response(body=self.body, content_type="text/plain")
        size = len(self.body)
        start = max(0, size - int(wanted.removeprefix("bytes=-")))
        return web.Response(
            status=206,
            body=self.body[start:],
            headers={"Content-Range": f"bytes {start}-{size - 1}/{size}"},
            content_type="text/plain",
        )


async def _log_world(serve: Serve, blob_host: BlobHost) -> tuple[str, list[dict[str, str]]]:
    blob_app = web.Application()
    blob_app.router.add_get("/blob/{job}", blob_host.blob)
    blob_url = await serve(blob_app)
    api_seen: list[dict[str, str]] = []

    async def logs(request: web.Request) -> web.Response:
        api_seen.append(dict(request.headers))
        if request.headers.get("Authorization") != "token ghs_logs":
            return _json(401)
        return web.Response(
            status=302, headers={"Location": f"{blob_url}/blob/{request.match_info['job']}"}
        )

    api = web.Application()
    api.router.add_get("/repos/o/r/actions/jobs/{job}/logs", logs)
    return await serve(api), api_seen


async def download_job_log(session: aiohttp.ClientSession, **kwargs: Any) -> tuple[Streamed, str]:
    chunks: list[bytes] = []

    async def sink(chunk: bytes) -> None:
        chunks.append(chunk)

    streamed = await stream_job_log(session, sink=sink, **kwargs)
    return streamed, b"".join(chunks).decode()


def _assert_is_tail(text: str, cap: int) -> None:
    assert len(text.encode()) <= cap
    lines = text.splitlines()
    assert lines, "nothing kept"
    assert set(lines) <= LOG_LINES, "a kept line is not a whole line of the log"
    assert lines[-1] == LOG.decode().splitlines()[-1]


@pytest.mark.parametrize("honour_range", [True, False], ids=["range", "no-range"])
async def test_job_log_keeps_the_tail_without_leaking_the_token(
    serve: Serve, session: aiohttp.ClientSession, honour_range: bool
) -> None:
    blob_host = BlobHost(LOG, honour_range=honour_range)
    api_url, api_seen = await _log_world(serve, blob_host)
    cap = len(LOG) // 3
    log, text = await download_job_log(
        session, api_url=api_url, token="ghs_logs", repo="o/r", job_id=7, cap_bytes=cap
    )
    assert log.truncated is True
    _assert_is_tail(text, cap)
    assert len(text.encode()) > cap - 200  # at most the first, cut line was dropped
    assert log.size_read == (cap if honour_range else len(LOG))
    assert [h["Authorization"] for h in api_seen] == ["token ghs_logs"]
    (blob_request,) = blob_host.seen
    assert "Authorization" not in blob_request
    assert blob_request["Range"] == f"bytes=-{cap}"


@pytest.mark.parametrize("honour_range", [True, False], ids=["range", "no-range"])
async def test_job_log_smaller_than_the_cap_is_whole(
    serve: Serve, session: aiohttp.ClientSession, honour_range: bool
) -> None:
    api_url, _ = await _log_world(serve, BlobHost(LOG, honour_range=honour_range))
    log, text = await download_job_log(
        session, api_url=api_url, token="ghs_logs", repo="o/r", job_id=7, cap_bytes=len(LOG) * 2
    )
    assert (log.truncated, text, log.size_read) == (False, LOG.decode(), len(LOG))


async def test_job_log_errors_are_classified(serve: Serve, session: aiohttp.ClientSession) -> None:
    api_url, _ = await _log_world(serve, BlobHost(LOG, honour_range=True))
    with pytest.raises(BadRequest) as refused:
        await download_job_log(
            session, api_url=api_url, token="wrong", repo="o/r", job_id=7, cap_bytes=1024
        )
    assert classify(refused.value) is None

    broken = web.Application()

    async def fail(request: web.Request) -> web.Response:
        return _json(502)

    broken.router.add_get("/repos/o/r/actions/jobs/{job}/logs", fail)
    broken_url = await serve(broken)
    with pytest.raises(GitHubBroken) as raised:
        await download_job_log(
            session, api_url=broken_url, token="t", repo="o/r", job_id=7, cap_bytes=1024
        )
    assert classify(raised.value) is not None
