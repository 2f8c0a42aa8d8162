"""A Probot app's `.env` runs `flakybot serve` unchanged: Probot's log levels and formats, its
base64 PRIVATE_KEY, GitHub Enterprise Server (GHE_HOST, GHE_PROTOCOL) and deliveries through
a webhook proxy channel (WEBHOOK_PROXY_URL)."""

from __future__ import annotations

import asyncio
import base64
import os
import signal
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.cli import _github_addresses, _holds_no_app_keys, _parser, _probot_env
from bot.config import Settings, api_url_from_env
from bot.github.api import graphql_url
from bot.sim.scenario import builtin_scenario
from bot.sim.server import GHES_BASE, Simulator
from bot.webhook_proxy import ServerSentEvents, delivery_request
from tests.fleet import APP_VARIABLES, free_port, wait_listening
from tests.smee import SmeeChannel

PROBOT_VARIABLES = (*APP_VARIABLES, "LOG_LEVEL", "LOG_FORMAT", "PORT", "HOST")


def settings(**env: str) -> Settings:
    values: dict[str, Any] = {name.lower(): value for name, value in env.items()}
    return Settings(_env_file=None, **values)


@pytest.mark.parametrize(
    ("level", "python"),
    [("trace", "DEBUG"), ("debug", "DEBUG"), ("warn", "WARNING"), ("fatal", "CRITICAL")],
)
def test_probots_log_levels_are_read(level: str, python: str) -> None:
    assert settings(LOG_LEVEL=level).log_level == python


def test_a_log_level_nobody_knows_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match="trace, debug, info, warn, error, fatal"):
        settings(LOG_LEVEL="loud")


def test_probots_pretty_log_format_is_text() -> None:
    assert settings(LOG_FORMAT="pretty").log_format == "text"


def test_a_base64_private_key_is_read_as_probot_reads_it(private_key: str) -> None:
    encoded = base64.b64encode(private_key.encode()).decode()
    assert settings(PRIVATE_KEY=encoded).private_key_pem().strip() == private_key.strip()


def test_ghe_host_makes_the_api_an_enterprise_servers() -> None:
    ghes = settings(GHE_HOST="github.example.com")
    assert ghes.github_api_url == "https://github.example.com/api/v3"
    assert graphql_url(ghes.github_api_url) == "https://github.example.com/api/graphql"
    plain = settings(GHE_HOST="127.0.0.1:8080", GHE_PROTOCOL="http")
    assert plain.github_api_url == "http://127.0.0.1:8080/api/v3"
    # An explicit GITHUB_API_URL wins, as a flag does over Probot's environment.
    both = settings(GHE_HOST="ghe.example.com", GITHUB_API_URL="https://proxy.example.com/api")
    assert both.github_api_url == "https://proxy.example.com/api"


def test_triage_and_config_check_read_ghe_host_too() -> None:
    assert api_url_from_env({"GHE_HOST": "ghe.example.com"}) == "https://ghe.example.com/api/v3"
    assert api_url_from_env({"GHE_HOST": "h:8080", "GHE_PROTOCOL": "http"}) == (
        "http://h:8080/api/v3"
    )
    assert api_url_from_env({"GITHUB_API_URL": "https://x/api", "GHE_HOST": "h"}) == "https://x/api"
    assert api_url_from_env({}) is None


def test_setup_reads_the_proxy_and_the_enterprise_server_from_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("WEBHOOK_PROXY_URL", "GHE_HOST", "GHE_PROTOCOL", "GITHUB_API_URL"):
        monkeypatch.delenv(name, raising=False)
    env_file = tmp_path / ".env"
    env_file.write_text("WEBHOOK_PROXY_URL=https://smee.io/abc\nGHE_HOST=ghe.example.com\n")
    args = _parser().parse_args(["setup", "--env-file", str(env_file)])

    env = _probot_env(env_file)

    assert env["WEBHOOK_PROXY_URL"] == "https://smee.io/abc"
    assert _github_addresses(args, env) == (
        "https://ghe.example.com",
        "https://ghe.example.com/api/v3",
    )
    # Probot's instructions make .env first, with the proxy alone: setup adds to it.
    assert _holds_no_app_keys(env_file, env)
    env_file.write_text("APP_ID=1\n")
    assert not _holds_no_app_keys(env_file, env)


def test_server_sent_events_are_read_across_chunks() -> None:
    events = ServerSentEvents()
    stream = b'id: 1\nevent: ready\ndata: {}\n\n: a comment\ndata: {"a":\ndata: 1}\r\n\r\n'
    found = [event for i in range(len(stream)) for event in events.feed(stream[i : i + 1])]
    assert found == [("ready", "{}"), ("message", '{"a":\n1}')]


def test_a_proxied_delivery_keeps_githubs_headers_and_compact_body() -> None:
    data = (
        '{"host":"smee.io","x-github-event":"ping","x-hub-signature-256":"sha256=ab",'
        '"content-length":"9","body":{"zen": "é"},"query":{},"timestamp":1}'
    )
    request = delivery_request(data)
    assert request is not None
    headers, body = request
    assert headers == {
        "x-github-event": "ping",
        "x-hub-signature-256": "sha256=ab",
        "content-type": "application/json",
    }
    assert body == '{"zen":"é"}'.encode()


def _probot_dotenv(sim: Simulator, smee: SmeeChannel, secret: str, port: int) -> str:
    host = sim.host_url.removeprefix("http://")
    key = base64.b64encode(sim.private_key_pem.encode()).decode()
    return (
        f"APP_ID={sim.app_id}\n"
        f"PRIVATE_KEY={key}\n"
        f"WEBHOOK_SECRET={secret}\n"
        f"WEBHOOK_PROXY_URL={smee.url}\n"
        f"GHE_HOST={host}\n"
        "GHE_PROTOCOL=http\n"
        "LOG_LEVEL=trace\n"
        "LOG_FORMAT=pretty\n"
        f"PORT={port}\n"
        "HOST=127.0.0.1\n"
    )


async def test_serve_runs_a_probot_env_and_triages_a_delivery_through_the_proxy(
    tmp_path: Path,
) -> None:
    secret = "probot-env-secret-1234"
    port = free_port()
    scenario = builtin_scenario()
    async with (
        SmeeChannel() as smee,
        Simulator(scenario, webhook_secret=secret, api_base=GHES_BASE) as sim,
    ):
        (tmp_path / ".env").write_text(_probot_dotenv(sim, smee, secret, port))
        sim.set_webhook_target(smee.url)  # GitHub delivers to the channel, not to the bot
        env = {k: v for k, v in os.environ.items() if k not in PROBOT_VARIABLES}
        log = (tmp_path / "serve.log").open("wb")
        server = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.cli", "serve", cwd=tmp_path, env=env, stderr=log
        )
        try:
            await wait_listening(port)
            while not smee.listeners:
                assert server.returncode is None, (tmp_path / "serve.log").read_text()
                await asyncio.sleep(0.05)
            assert await sim.send_webhook("check_run", sim.next_completion("tests (3.12)")) == 200
            await _until(lambda: sim.pending == 0 and bool(sim.bot_comments(7)))
            await sim.drain()
            await _until(lambda: "likely flaky" in sim.bot_comments(7)[0].body)
        finally:
            server.send_signal(signal.SIGTERM)
            await asyncio.wait_for(server.wait(), 15)
            log.close()

    output = (tmp_path / "serve.log").read_text()
    assert "likely flaky, unrelated to this PR" in sim.bot_comments(7)[0].body
    assert smee.received >= 1
    assert any(call.startswith("POST /graphql") for call in sim.calls)  # at /api/graphql
    assert " DEBUG " in output and not output.lstrip().startswith("{")  # trace, pretty
    assert "webhook proxy: relaying" in output
    assert smee.url not in output  # whoever has the channel's address reads its deliveries


async def _until(done: object, limit: float = 90.0) -> None:
    assert callable(done)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not done():
        if loop.time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.05)


async def test_the_simulator_serves_an_enterprise_servers_paths() -> None:
    async with (
        Simulator(builtin_scenario(), webhook_secret="unused", api_base=GHES_BASE) as sim,
        aiohttp.ClientSession(headers={"Authorization": f"token {sim.personal_token()}"}) as http,
    ):
        assert sim.url == sim.host_url + "/api/v3"
        async with http.get(f"{sim.url}/repos/acme/bus") as answer:
            assert answer.status == 200
        async with http.get(f"{sim.host_url}/repos/acme/bus") as answer:
            assert answer.status == 404  # not at api.github.com's paths
        async with http.post(f"{sim.host_url}/api/graphql", json={"query": "{}"}) as answer:
            assert answer.status == 200
        async with http.post(f"{sim.url}/graphql", json={"query": "{}"}) as answer:
            assert answer.status == 404
    assert sim.calls["GET /repos/{owner}/{repo}"] == 1  # recorded as api.github.com's
