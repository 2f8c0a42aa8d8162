"""Shared fixtures: a real SQLite store, metrics, an HTTP session and servers on 127.0.0.1."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from hypothesis import HealthCheck, settings

from bot.metrics import Metrics
from bot.store.sqlite import SQLiteStore

Serve = Callable[[web.Application], Awaitable[str]]

# Shared, noisy machines: no per-example deadline. In CI, the same examples every run, so a
# red build always reproduces.
settings.register_profile("flakybot", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("flakybot-ci", parent=settings.get_profile("flakybot"), derandomize=True)
settings.load_profile("flakybot-ci" if os.environ.get("CI") else "flakybot")


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'flakybot.sqlite3'}"


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[SQLiteStore]:
    opened = await SQLiteStore.open(database_url)
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
