"""Content-creating requests of one installation go one at a time, WRITE_INTERVAL apart, and
back off together on a secondary rate limit; reads are never held up. On PostgreSQL the pace
holds across replicas."""

from __future__ import annotations

import asyncio
import itertools
import math
import time
from collections.abc import Awaitable, Callable

import aiohttp
import pytest
from aiohttp import web

from bot.github.client import GitHubClient, WriteClass, WritePacer, WriteSkipped
from bot.github.errors import RateLimited
from bot.metrics import Metrics
from bot.store.postgres import PostgresStore

Serve = Callable[[web.Application], Awaitable[str]]
INTERVAL = 0.15
SHARED_INTERVAL = 0.25


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


class Gate:
    """A server that holds the write to /held until opened, and records the order of writes."""

    def __init__(self) -> None:
        self.order: list[str] = []
        self.holding = asyncio.Event()
        self.opened = asyncio.Event()

    async def handle(self, request: web.Request) -> web.Response:
        name = request.path.rsplit("/", 1)[-1]
        if name == "held":
            self.holding.set()
            await self.opened.wait()
        self.order.append(name)
        return web.json_response({"id": 1}, status=201)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("POST", "/{tail:.*}", self.handle)
        return app


async def test_spare_writes_wait_for_every_other_write_and_only_one_waits(
    serve: Serve, session: aiohttp.ClientSession
) -> None:
    gate = Gate()
    url = await serve(gate.app())
    gh = client(session, url, WritePacer(0.0))
    spare = gh.spare()

    held = asyncio.create_task(gh.post("/held", data={}))
    await asyncio.wait_for(gate.holding.wait(), 30)
    # While a write is in flight: two spare writes, then a write for triage.
    spares = [asyncio.create_task(spare.post(f"/spare{n}", data={})) for n in (1, 2)]
    await asyncio.sleep(0)
    triage = asyncio.create_task(gh.post("/triage", data={}))
    await asyncio.sleep(0)
    gate.opened.set()
    await asyncio.wait_for(asyncio.gather(held, triage), 30)
    answers = await asyncio.wait_for(asyncio.gather(*spares, return_exceptions=True), 30)

    assert [type(answer) for answer in answers].count(WriteSkipped) == 1
    (made,) = [
        f"spare{n}" for n, answer in zip((1, 2), answers, strict=True) if answer == {"id": 1}
    ]
    assert gate.order == ["held", "triage", made]


async def test_command_replies_wait_while_a_triage_write_waits(
    serve: Serve, session: aiohttp.ClientSession
) -> None:
    gate = Gate()
    url = await serve(gate.app())
    gh = client(session, url, WritePacer(0.0))
    replies = gh.writing_as(WriteClass.REPLY)

    held = asyncio.create_task(replies.post("/held", data={}))
    await asyncio.wait_for(gate.holding.wait(), 30)
    # While a reply is in flight: two more replies, then a write for triage.
    more = [asyncio.create_task(replies.post(f"/reply{n}", data={})) for n in (1, 2)]
    await asyncio.sleep(0)
    triage = asyncio.create_task(gh.post("/triage", data={}))
    await asyncio.sleep(0)
    gate.opened.set()
    await asyncio.wait_for(asyncio.gather(held, triage, *more), 30)

    # First come first served, the triage write came last.
    assert gate.order == ["held", "triage", "reply1", "reply2"]


async def test_without_spare_writes_a_later_write_waits_for_all_before_it(
    serve: Serve, session: aiohttp.ClientSession
) -> None:
    gate = Gate()
    url = await serve(gate.app())
    gh = client(session, url, WritePacer(0.0))

    held = asyncio.create_task(gh.post("/held", data={}))
    await asyncio.wait_for(gate.holding.wait(), 30)
    others = [asyncio.create_task(gh.post(f"/other{n}", data={})) for n in (1, 2)]
    await asyncio.sleep(0)
    triage = asyncio.create_task(gh.post("/triage", data={}))
    await asyncio.sleep(0)
    gate.opened.set()
    await asyncio.wait_for(asyncio.gather(held, triage, *others), 30)

    assert gate.order == ["held", "other1", "other2", "triage"], "the control case is FIFO"


# --- across replicas: the PostgreSQL store keeps one pace per installation ----------------


async def test_replicas_take_write_slots_an_interval_apart_by_the_database_clock(
    pg_url: str,
) -> None:
    first, second = await PostgresStore.open(pg_url), await PostgresStore.open(pg_url)
    try:
        waits = await asyncio.gather(
            *(
                store.reserve_write(1, 10.0, 0.0, math.inf)
                for store in (first, second)
                for _ in range(3)
            )
        )
        other = await second.reserve_write(2, 10.0, 0.0, math.inf)
        later = await first.reserve_write(3, 10.0, 4.0, math.inf)
    finally:
        await first.close()
        await second.close()

    # Six slots, one every 10 s from now, whichever replica took each; the calls' moments
    # (a few milliseconds apart) are the only slack.
    for k, wait in enumerate(sorted(waits)):
        assert abs(wait - 10.0 * k) < 0.5
    assert abs(other) < 0.5, "another installation has a pace of its own"
    assert abs(later - 4.0) < 0.5, "a slot starts no sooner than the process's own pace allows"


async def test_a_slot_held_back_past_the_inline_wait_is_not_taken(pg_url: str) -> None:
    store = await PostgresStore.open(pg_url)
    try:
        await store.defer_writes(1, 60.0)  # a replica met a secondary limit: Retry-After 60
        held = await store.reserve_write(1, 10.0, 0.0, 5.0)
        after = await store.reserve_write(1, 10.0, 0.0, math.inf)
    finally:
        await store.close()

    assert abs(held - 60.0) < 0.5
    # The delivery that asked went back to the inbox: the first write after the limit is
    # not pushed back by the slot it did not use.
    assert abs(after - 60.0) < 0.5


async def test_a_long_deferral_is_raised_not_slept_through(
    serve: Serve, session: aiohttp.ClientSession
) -> None:
    recorder = Recorder()
    url = await serve(recorder.app())
    pacer = WritePacer(INTERVAL)
    gh = client(session, url, pacer)
    gh.max_inline_wait = 5.0
    await pacer.back_off(60.0)
    before = time.time()

    with pytest.raises(RateLimited) as raised:
        await gh.post("/repos/o/r/issues", data={"title": "x"})

    assert raised.value.until >= before + 60.0 - 0.5
    assert recorder.spans == []


async def test_writes_of_two_replicas_are_an_interval_apart(
    serve: Serve, session: aiohttp.ClientSession, pg_url: str
) -> None:
    recorder = Recorder()
    url = await serve(recorder.app())
    stores = [await PostgresStore.open(pg_url) for _ in range(2)]
    try:
        # One pacer per replica (process), each with its store: what GitHubApp hands out.
        pacers = [WritePacer(SHARED_INTERVAL, shared=store, installation_id=1) for store in stores]
        clients = [client(session, url, pacer) for pacer in pacers]
        await asyncio.gather(
            *(gh.post("/repos/o/r/issues", data={"title": "x"}) for gh in clients * 3)
        )
    finally:
        for store in stores:
            await store.close()

    starts = sorted(start for method, start, _ in recorder.spans if method == "POST")
    assert len(starts) == 6
    # Slots are spaced exactly; a write starts when its reply from the database has come
    # and its task has run again, a few milliseconds after its slot on a busy machine.
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert min(gaps) >= SHARED_INTERVAL - 0.05, gaps


async def test_without_a_shared_schedule_two_replicas_write_at_once(
    serve: Serve, session: aiohttp.ClientSession
) -> None:
    recorder = Recorder()
    url = await serve(recorder.app())
    clients = [client(session, url, WritePacer(INTERVAL)) for _ in range(2)]

    await asyncio.gather(*(gh.post("/repos/o/r/issues", data={"title": "x"}) for gh in clients))

    first, second = sorted(start for method, start, _ in recorder.spans if method == "POST")
    assert second - first < INTERVAL, "the control case should not be paced"


async def test_a_secondary_rate_limit_on_one_replica_holds_back_the_other(
    serve: Serve, session: aiohttp.ClientSession, pg_url: str
) -> None:
    recorder = Recorder()
    recorder.limited = 1
    url = await serve(recorder.app())
    stores = [await PostgresStore.open(pg_url) for _ in range(2)]
    try:
        limited, other = (
            client(session, url, WritePacer(0.0, shared=store, installation_id=1))
            for store in stores
        )
        # The first replica's write is refused with Retry-After 0.4 and retried after it.
        await limited.post("/repos/o/r/issues", data={"title": "x"})
        await other.post("/repos/o/r/issues/1/comments", data={"body": "y"})
    finally:
        for store in stores:
            await store.close()

    (refused,) = [end for method, _, end in recorder.spans if method == "limited"]
    writes = [start for method, start, _ in recorder.spans if method == "POST"]
    assert len(writes) == 2
    assert all(start - refused >= 0.4 - 0.02 for start in writes)


async def test_graphql_queries_are_reads_and_never_wait_in_the_write_pacer(
    serve: Serve, session: aiohttp.ClientSession
) -> None:
    """A GraphQL query is POSTed but reads: writes held back by a rate limit (here for ten
    minutes) do not hold it. A mutation is a write and waits its turn like any other."""
    asked: list[str] = []

    async def answer(request: web.Request) -> web.Response:
        asked.append((await request.json())["query"].split()[0])
        return web.json_response({"data": {"repository": None}})

    app = web.Application()
    app.router.add_post("/graphql", answer)
    url = await serve(app)
    pacer = WritePacer(INTERVAL)
    await pacer.back_off(600)
    gh = GitHubClient(
        session,
        base_url=url,
        metrics=Metrics(),
        installation_id=1,
        oauth_token="t",
        pacer=pacer,
        max_inline_wait=1.0,
    )

    endpoint = f"{url}/graphql"
    await gh.graphql(
        "query($o: String!) { repository(owner: $o) { id } }", endpoint=endpoint, o="x"
    )
    await gh.graphql("{ viewer { login } }", endpoint=endpoint)
    with pytest.raises(RateLimited):
        await gh.graphql("mutation { addStar(input: {}) { clientMutationId } }", endpoint=endpoint)

    assert asked == ["query($o:", "{"]
