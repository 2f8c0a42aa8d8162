"""Strangers holding connections open: half-sent heads and bodies, trickled bodies, more
connections than the caps (all, one client's), a header line over aiohttp's limit. Raw
sockets against the real bot on 127.0.0.1 (and other loopback addresses)."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import resource
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from prometheus_client.parser import text_string_to_metric_families

from bot.connections import GUARD_KEY, Guard, Limits, client_of
from bot.demo import running
from bot.metrics import Metrics
from bot.runtime import Bot
from bot.sim.scenario import builtin_scenario
from bot.sim.server import Simulator
from tests.fleet import free_port, serve_env, wait_listening

PATH = "/api/github/webhooks"
# Generous bounds for what must happen at once: a slow machine is no failure, a hang is.
WAIT = 30.0

Raw = tuple[asyncio.StreamReader, asyncio.StreamWriter]


@asynccontextmanager
async def bot_with(tmp_path: Path, **settings: Any) -> AsyncIterator[Bot]:
    async with running(builtin_scenario(), tmp_path, **settings) as (_, bot):
        yield bot


def host_port(bot: Bot) -> tuple[str, int]:
    host, port = bot.url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


async def connect(host: str, port: int, sent: bytes, source: str | None = None) -> Raw:
    """A connection that has sent `sent`, from the loopback address `source` if given."""
    local = (source, 0) if source is not None else None
    reader, writer = await asyncio.open_connection(host, port, local_addr=local)
    writer.write(sent)
    await writer.drain()
    return reader, writer


async def trickle(writers: list[asyncio.StreamWriter], every: float) -> None:
    """One byte of each body every `every` seconds, for as long as the test lasts."""
    while True:
        for writer in writers:
            if not writer.is_closing():
                writer.write(b" ")
        await asyncio.sleep(every)


async def closed_by_server(reader: asyncio.StreamReader) -> bytes:
    """Everything the server sends until it closes the connection."""
    async with asyncio.timeout(WAIT):
        return await reader.read()


def closed_count(bot: Bot, reason: str) -> float:
    value = bot.metrics.registry.get_sample_value(
        "flakybot_connections_closed_total", {"reason": reason}
    )
    return value or 0.0


def connections(bot: Bot, state: str) -> float:
    value = bot.metrics.registry.get_sample_value("flakybot_connections_open", {"state": state})
    return value or 0.0


async def until(condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(WAIT):
        while True:
            if condition():
                return
            await asyncio.sleep(0.02)


def serve_with_few_files(env: dict[str, str], cwd: Path) -> subprocess.Popen[bytes]:
    """`flakybot serve` allowed 256 open files, as macOS allows by default."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "serve"],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard)),
    )


def head(method: str, path: str, *lines: str) -> bytes:
    return "\r\n".join([f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", *lines]).encode()


def half_a_delivery(delivery: str) -> bytes:
    """A webhook's head, complete enough for its body to be read, and the body's start."""
    return head(
        "POST",
        PATH,
        "Content-Type: application/json",
        "X-GitHub-Event: check_run",
        f"X-GitHub-Delivery: {delivery}",
        "X-Hub-Signature-256: sha256=" + "0" * 64,
        "Content-Length: 1000",
        "",
        '{"action": "completed", ',
    )


async def test_a_request_head_never_finished_is_closed_logged_and_counted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="bot.connections")
    async with bot_with(tmp_path, header_timeout_seconds=0.5) as bot:
        reader, writer = await connect(*host_port(bot), head("POST", PATH, "X-Half: ") + b"a")

        assert await closed_by_server(reader) == b""
        writer.close()
        assert closed_count(bot, "header-timeout") == 1
        async with aiohttp.ClientSession() as http, http.get(bot.url + "/healthz") as answer:
            assert answer.status == 200
    (line,) = [r for r in caplog.records if r.name == "bot.connections"]
    assert line.levelno == logging.WARNING
    assert "HEADER_TIMEOUT_SECONDS" in line.getMessage()
    assert "127.0.0.1" in line.getMessage()


async def test_a_request_head_sent_slowly_is_closed_at_the_deadline_all_the_same(
    tmp_path: Path,
) -> None:
    """A byte every so often is no way round it: the deadline runs from the first byte."""
    async with bot_with(tmp_path, header_timeout_seconds=1) as bot:
        reader, writer = await connect(*host_port(bot), head("GET", "/healthz"))

        async def drip() -> None:
            # Slow enough to stay under aiohttp's 128 headers for as long as the test waits.
            while not reader.at_eof():
                writer.write(b"\r\nX-Drip: 1")
                await asyncio.sleep(0.3)

        dripping = asyncio.create_task(drip())
        assert await closed_by_server(reader) == b""
        dripping.cancel()
        writer.close()
        assert closed_count(bot, "header-timeout") == 1


async def test_a_body_never_finished_is_answered_408_logged_and_counted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="bot.connections")
    async with bot_with(tmp_path, body_timeout_seconds=0.5) as bot:
        reader, writer = await connect(*host_port(bot), half_a_delivery("half-a-body"))

        answer = await closed_by_server(reader)
        writer.close()
        assert answer.startswith(b"HTTP/1.1 408 ")
        assert b"Connection: close" in answer
        assert closed_count(bot, "body-timeout") == 1
        assert await bot.store.list_deliveries(10) == []
    (line,) = [r for r in caplog.records if r.name == "bot.connections"]
    assert line.levelno == logging.WARNING
    assert "BODY_TIMEOUT_SECONDS" in line.getMessage()


async def test_more_half_sent_requests_than_the_cap_never_keep_healthz_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="bot.connections")
    async with bot_with(tmp_path, max_connections=5, header_timeout_seconds=300) as bot:
        host, port = host_port(bot)
        async with AsyncExitStack() as held:
            for _ in range(20):
                _, writer = await connect(host, port, head("GET", "/healthz"))
                held.callback(writer.close)

            async with (
                asyncio.timeout(WAIT),
                aiohttp.ClientSession() as http,
                http.get(bot.url + "/healthz") as answer,
            ):
                assert answer.status == 200
            assert connections(bot, "busy") + connections(bot, "waiting") <= 5
            assert closed_count(bot, "evicted") >= 16  # 20 and /healthz through 5 places
    lines = [r.getMessage() for r in caplog.records if r.name == "bot.connections"]
    # Many evictions, one line: a flood of connections is no flood of log lines.
    assert len(lines) == 1
    assert "MAX_CONNECTIONS" in lines[0]


async def test_a_newcomer_finds_every_place_busy_and_is_answered_503(tmp_path: Path) -> None:
    """Connections whose request is all there (its handler running) are not evicted: the
    newcomer waits its turn. A guarded app of its own, with a route that holds its request."""
    metrics = Metrics()
    guard = Guard(Limits(max_connections=2), metrics)
    release = asyncio.Event()

    async def hold(request: web.Request) -> web.Response:
        await release.wait()
        return web.Response(text="done")

    app = web.Application(middlewares=[guard.track_requests])
    app[GUARD_KEY] = guard
    app.router.add_get("/hold", hold)
    runner = web.AppRunner(app)
    await runner.setup()
    assert runner.server is not None
    listener = await asyncio.get_running_loop().create_server(
        guard.protocol_factory(runner.server), "127.0.0.1", 0
    )
    port = listener.sockets[0].getsockname()[1]
    try:
        held = [await connect("127.0.0.1", port, head("GET", "/hold", "", "")) for _ in range(2)]
        busy = {"state": "busy"}
        await until(
            lambda: metrics.registry.get_sample_value("flakybot_connections_open", busy) == 2
        )

        reader, writer = await connect("127.0.0.1", port, head("GET", "/hold", "", ""))
        answer = await closed_by_server(reader)
        writer.close()
        release.set()
        for _, held_writer in held:
            held_writer.close()
    finally:
        listener.close()
        await runner.cleanup()
    assert answer.startswith(b"HTTP/1.1 503 ")
    closed = metrics.registry.get_sample_value(
        "flakybot_connections_closed_total", {"reason": "refused"}
    )
    assert closed == 1


async def test_a_body_slower_than_the_minimum_rate_is_cut_after_the_grace(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="bot.connections")
    settings = {"body_timeout_seconds": 300, "body_grace_seconds": 0.5, "min_body_rate": 100}
    async with bot_with(tmp_path, **settings) as bot:
        reader, writer = await connect(*host_port(bot), half_a_delivery("a-trickle"))
        trickling = asyncio.create_task(trickle([writer], every=0.2))  # 5 bytes a second

        answer = await closed_by_server(reader)
        trickling.cancel()
        writer.close()
        assert answer.startswith(b"HTTP/1.1 408 ")
        assert closed_count(bot, "too-slow") == 1
        assert await bot.store.list_deliveries(10) == []
    (line,) = [r for r in caplog.records if r.name == "bot.connections"]
    assert "MIN_BODY_RATE" in line.getMessage()


async def test_one_client_holds_no_more_than_its_share(tmp_path: Path) -> None:
    """Its sixth half-sent body takes the place of its own slowest, not another client's."""
    settings = {"body_timeout_seconds": 300, "min_body_rate": 0, "max_connections_per_client": 5}
    async with bot_with(tmp_path, **settings) as bot:
        host, port = host_port(bot)
        other = await connect(host, port, half_a_delivery("other"), source="127.0.0.3")
        await until(lambda: connections(bot, "receiving") == 1)
        held = []
        for n in range(8):
            held.append(await connect(host, port, half_a_delivery(f"d-{n}"), source="127.0.0.2"))
            expected = 1 + min(n + 1, 5)
            await until(lambda: connections(bot, "receiving") == expected)  # noqa: B023

        answers = [await closed_by_server(reader) for reader, _ in held[:3]]
        assert all(answer.startswith(b"HTTP/1.1 408 ") for answer in answers)
        assert closed_count(bot, "evicted-sending") == 3
        assert not other[0].at_eof()
        assert connections(bot, "receiving") == 6
        for _, writer in [other, *held]:
            writer.close()


@pytest.mark.parametrize("sources", [1, 11], ids=["one-address", "eleven-addresses"])
async def test_trickling_strangers_never_keep_github_or_healthz_out(
    tmp_path: Path, sources: int
) -> None:
    """The reported attack: about 110 connections with a made-up signature that trickle
    their bodies held every place, and GitHub's deliveries and /healthz were answered 503.
    Their trickle is over the minimum rate here, and the body deadline far: only the
    eviction of the slowest half-sent body lets the newcomers in."""
    settings = {"body_timeout_seconds": 300, "min_body_rate": 1, "body_grace_seconds": 0}
    async with running(builtin_scenario(), tmp_path, **settings) as (sim, bot):
        held = AsyncExitStack()
        await held.__aenter__()
        host, port = host_port(bot)
        writers = []
        for n in range(110):
            source = "127.0.0.1" if sources == 1 else f"127.0.0.{2 + n % sources}"
            _, writer = await connect(host, port, half_a_delivery(f"x-{n}"), source=source)
            held.callback(writer.close)
            writers.append(writer)
        trickling = asyncio.create_task(trickle(writers, every=0.5))
        held.callback(trickling.cancel)
        await until(lambda: connections(bot, "receiving") >= (20 if sources == 1 else 99))

        started = time.monotonic()
        status = await sim.send_webhook(
            "check_run", sim.next_completion("tests (3.12)"), delivery_id="real-one"
        )
        delivered = time.monotonic() - started
        async with aiohttp.ClientSession() as http, http.get(bot.url + "/healthz") as answer:
            healthz = answer.status
        probed = time.monotonic() - started - delivered
        stored = [d.id for d in await bot.store.list_deliveries(10)]
        print(f"under attack: delivery {delivered:.3f} s, /healthz {probed:.3f} s")
        await held.aclose()
    assert (status, healthz) == (202, 200)
    assert stored == ["real-one"]
    assert closed_count(bot, "refused") == 0
    assert closed_count(bot, "evicted-sending") >= 2


async def test_a_header_line_over_the_limit_is_one_warning_without_the_senders_bytes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with bot_with(tmp_path) as bot:
        reader, writer = await connect(
            *host_port(bot), head("GET", "/healthz", "X-Big: " + "secretish" * 2000, "", "")
        )
        answer = await closed_by_server(reader)
        writer.close()

    assert answer.split(b"\r\n", 1)[0].split(b" ")[1] == b"400"
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
    (line,) = [r for r in caplog.records if "could not be read" in r.getMessage()]
    assert line.levelno == logging.WARNING
    assert line.exc_info is None
    assert "LineTooLong" in line.getMessage()
    assert "secretish" not in line.getMessage()


async def test_serve_with_few_file_descriptors_still_answers_healthz_under_a_flood(
    tmp_path: Path,
) -> None:
    """The reported attack: with the open-file limit at 256, a few hundred silent half-sent
    requests used every descriptor and kept /healthz out for good."""
    port = free_port()
    async with Simulator(builtin_scenario(), webhook_secret="flood-secret") as sim:
        env = serve_env(
            sim,
            secret="flood-secret",
            database_url=f"sqlite:///{tmp_path / 'bot.sqlite3'}",
            PORT=str(port),
            # Only the cap may explain the answer, not a timeout.
            HEADER_TIMEOUT_SECONDS="300",
        )
        server = serve_with_few_files(env, tmp_path)
        try:
            await wait_listening(port)
            async with AsyncExitStack() as held, asyncio.timeout(2 * WAIT):
                for _ in range(300):
                    _, writer = await connect("127.0.0.1", port, head("GET", "/healthz"))
                    held.callback(writer.close)
                async with aiohttp.ClientSession() as http:
                    async with http.get(f"http://127.0.0.1:{port}/healthz") as answer:
                        assert answer.status == 200
                    async with http.get(f"http://127.0.0.1:{port}/metrics") as answer:
                        metrics = await answer.text()
        finally:
            server.terminate()
            _, stderr = server.communicate(timeout=WAIT)

    (evicted,) = [
        sample.value
        for family in text_string_to_metric_families(metrics)
        for sample in family.samples
        if sample.name == "flakybot_connections_closed_total"
        and sample.labels == {"reason": "evicted"}
    ]
    assert evicted >= 200  # 300 through the default 100 places
    lines = [json.loads(line) for line in stderr.decode().splitlines()]
    assert [line for line in lines if line["level"] in ("error", "critical")] == []
    assert any(
        line["level"] == "warning" and "MAX_CONNECTIONS" in line["message"] for line in lines
    )


@pytest.mark.parametrize(
    ("address", "client"),
    [
        ("203.0.113.7", "203.0.113.7"),
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:bbbb::9", "2001:db8:1:2::/64"),  # the same /64: the same client
        ("::ffff:203.0.113.7", "203.0.113.7"),
        ("10.0.0.5", None),  # a trusted proxy speaks for many clients
        ("unknown", None),
    ],
)
def test_a_client_is_an_address_or_an_ipv6_64(address: str, client: str | None) -> None:
    assert client_of(address, [ipaddress.ip_network("10.0.0.0/8")]) == client
