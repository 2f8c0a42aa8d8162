"""Content-creating requests of one installation go one at a time, WRITE_INTERVAL apart, and
back off together on a secondary rate limit; reads are never held up."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable

import aiohttp
from aiohttp import web

from bot.github.client import GitHubClient, WritePacer
from bot.metrics import Metrics

Serve = Callable[[web.Application], Awaitable[str]]
INTERVAL = 0.15


class Recorder:
    def __init__(self) -> None:
        self.spans: list[tuple[str, float, float]] = []
        self.limited = 0  # secondary rate-limit answers still to give

    async def handle(self, request: web.Request) -> web.Response:
        start = time.monotonic()
        if request.method == "POST" and self.limited:
            self.limited -= 1
            self.spans.append(("limited", start, time.monotonic()))
            return web.json_response(
                {"message": "You have exceeded a secondary rate limit."},
                status=403,
                headers={"Retry-After": "0.4"},
            )
        await asyncio.sleep(0.02)
        self.spans.append((request.method, start, time.monotonic()))
        return web.json_response({"ok": True}, status=201 if request.method == "POST" else 200)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.handle)
        return app


def client(session: aiohttp.ClientSession, url: str, pacer: WritePacer) -> GitHubClient:
    return GitHubClient(
        session, base_url=url, metrics=Metrics(), installation_id=1, oauth_token="t", pacer=pacer
    )


async def test_writes_are_serialised_and_spaced_reads_are_not(
    serve: Serve, session: aiohttp.ClientSession
) -> None:
    recorder = Recorder()
    url = await serve(recorder.app())
    pacer = WritePacer(INTERVAL)
    # Two clients of one installation share its pacer, as GitHubApp hands them out.
    first, second = client(session, url, pacer), client(session, url, pacer)

    began = time.monotonic()
    await asyncio.gather(
        *(gh.post("/repos/o/r/issues", data={"title": "x"}) for gh in (first, second, first)),
        *(gh.getitem("/repos/o/r") for gh in (first, second)),
    )

    writes = sorted((s, e) for method, s, e in recorder.spans if method == "POST")
    reads = [s for method, s, _ in recorder.spans if method == "GET"]
    assert len(writes) == 3
    for (_, end), (start, _) in itertools.pairwise(writes):
        assert start - end >= INTERVAL * 0.95
    assert all(start - began < INTERVAL for start in reads), "a read waited for the writes"


async def test_a_secondary_rate_limit_pushes_back_every_later_write(
    serve: Serve, session: aiohttp.ClientSession
) -> None:
    recorder = Recorder()
    recorder.limited = 1
    url = await serve(recorder.app())
    pacer = WritePacer(0.0)
    gh = client(session, url, pacer)

    await gh.post("/repos/o/r/issues", data={"title": "x"})
    await gh.post("/repos/o/r/issues/1/comments", data={"body": "y"})

    (limited,) = [end for method, _, end in recorder.spans if method == "limited"]
    writes = [start for method, start, _ in recorder.spans if method == "POST"]
    assert len(writes) == 2
    assert all(start - limited >= 0.4 for start in writes)


async def test_without_a_pacer_writes_may_overlap(
    serve: Serve, session: aiohttp.ClientSession
) -> None:
    recorder = Recorder()
    url = await serve(recorder.app())
    gh = GitHubClient(session, base_url=url, metrics=Metrics(), oauth_token="t")

    await asyncio.gather(*(gh.post("/repos/o/r/issues", data={"title": "x"}) for _ in range(3)))

    writes = sorted((s, e) for method, s, e in recorder.spans if method == "POST")
    assert writes[1][0] < writes[0][1], "the control case should overlap"
