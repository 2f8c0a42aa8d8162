"""Shared fixtures: real stores (SQLite and PostgreSQL), metrics, HTTP on 127.0.0.1."""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import aiohttp
import asyncpg
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from hypothesis import HealthCheck, settings

from bot.metrics import Metrics
from bot.store import Store, open_store

# Every skip says why in a category the run counts; any other skip fails the run.
pytest_plugins = ["tests.skips"]

Serve = Callable[[web.Application], Awaitable[str]]

# Shared, noisy machines: no per-example deadline. In CI, the same examples every run, so a
# red build always reproduces.
settings.register_profile("flakybot", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("flakybot-ci", parent=settings.get_profile("flakybot"), derandomize=True)
settings.load_profile("flakybot-ci" if os.environ.get("CI") else "flakybot")


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'flakybot.sqlite3'}"


TEST_DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/test"


def with_search_path(database_url: str, schema: str) -> str:
    """The URL with `search_path` set: asyncpg sends unknown query keys as server settings."""
    parts = urlsplit(database_url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "search_path"]
    return urlunsplit(parts._replace(query=urlencode([*query, ("search_path", schema)])))


@pytest.fixture
async def pg_url() -> AsyncIterator[str]:
    """A PostgreSQL URL whose search_path is a fresh schema of this test's own, dropped after.

    The server is TEST_DATABASE_URL (default: the local one). Unreachable, the test fails
    in CI (env CI set) and is skipped elsewhere.
    """
    server = os.environ.get("TEST_DATABASE_URL") or TEST_DATABASE_URL
    try:
        admin = await asyncpg.connect(server, timeout=5)
    except (OSError, TimeoutError, asyncpg.PostgresError) as exc:
        reason = (
            f"optional tool: PostgreSQL at {server} is not reachable "
            f"({type(exc).__name__}: {exc}); start it or point TEST_DATABASE_URL at one"
        )
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    schema = f"test_{secrets.token_hex(8)}"
    try:
        await admin.execute(f'CREATE SCHEMA "{schema}"')
        yield with_search_path(server, schema)
    finally:
        await admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await admin.close()


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, database_url: str) -> str:
    """A DATABASE_URL for each backend in turn, empty for every test."""
    if request.param == "postgres":
        url: str = request.getfixturevalue("pg_url")
        return url
    return database_url


@pytest.fixture
async def store(store_url: str) -> AsyncIterator[Store]:
    opened = await open_store(store_url)
    yield opened
    await opened.close()


@pytest.fixture
def metrics() -> Metrics:
    return Metrics()


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client_session:
        yield client_session


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    """Start an aiohttp app on 127.0.0.1 and get its base URL; stopped after the test."""
    servers: list[TestServer] = []

    async def start(app: web.Application) -> str:
        server = TestServer(app, host="127.0.0.1")
        await server.start_server()
        servers.append(server)
        return str(server.make_url("")).rstrip("/")

    yield start
    for server in servers:
        await server.close()


@pytest.fixture(scope="session")
def private_key() -> str:
    """An RSA key in PEM, as a GitHub App's private key is."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()


@pytest.fixture
async def hook_url() -> AsyncIterator[str]:
    """A webhook receiver on 127.0.0.1 that accepts everything, for simulators under test."""

    async def accept(request: web.Request) -> web.Response:
        return web.Response(status=202)

    app = web.Application()
    app.router.add_post("/hook", accept)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    yield str(server.make_url("/hook"))
    await server.close()
