"""The composed router and the dispatch that runs each handler on its own.

A feature router left out of `FEATURE_ROUTERS` would silently never run: these tests find
every handler module's router and prove each registration is reachable through the
composition. Dispatch isolation is shown with the real `dispatch` and a probe router put
in place of the composed one; the installation handler runs through the real composition.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from http import HTTPStatus
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from gidgethub import GitHubBroken, routing, sansio

import bot.handlers
from bot.github.client import GitHubApp
from bot.handlers import FEATURE_ROUTERS, dispatch, router
from bot.handlers.context import BotContext
from bot.inbox import HandlerFailures
from bot.metrics import Metrics
from bot.store import Delivery, DeliveryState
from bot.store.sqlite import SQLiteStore

CORPUS = Path(__file__).resolve().parent / "fixtures" / "corpus"
Serve = Callable[[web.Application], Awaitable[str]]  # the `serve` fixture of conftest.py
Callback = Callable[..., Awaitable[None]]


def _handler_modules() -> dict[str, Any]:
    return {
        info.name: importlib.import_module(f"bot.handlers.{info.name}")
        for info in pkgutil.iter_modules(bot.handlers.__path__)
    }


def _registrations(feature: routing.Router) -> list[tuple[sansio.Event, Callback]]:
    """A sample event for every (event, data detail) a router registered, with its callback."""
    found = []
    for event_type, callbacks in feature._shallow_routes.items():
        for callback in callbacks:
            found.append((sansio.Event({}, event=event_type, delivery_id="x"), callback))
    for event_type, details in feature._deep_routes.items():
        for key, by_value in details.items():
            for value, callbacks in by_value.items():
                sample = sansio.Event({key: value}, event=event_type, delivery_id="x")
                found.extend((sample, callback) for callback in callbacks)
    return found


def test_every_feature_router_is_composed() -> None:
    with_router = {
        name: module.router
        for name, module in _handler_modules().items()
        if isinstance(getattr(module, "router", None), routing.Router)
    }
    assert with_router, "no handler module defines a router"
    composed = {id(r) for r in FEATURE_ROUTERS.values()}
    left_out = sorted(name for name, r in with_router.items() if id(r) not in composed)
    assert left_out == [], f"feature routers missing from FEATURE_ROUTERS: {left_out}"


@pytest.mark.parametrize("feature", sorted(FEATURE_ROUTERS))
def test_every_registration_is_reachable_through_the_composed_router(feature: str) -> None:
    registrations = _registrations(FEATURE_ROUTERS[feature])
    assert registrations, f"{feature} registers nothing"
    for sample, callback in registrations:
        assert callback in router.fetch(sample), (
            f"{callback.__qualname__} ({sample.event} {sample.data}) is not reachable"
        )


def test_known_handlers_are_registered_for_their_events() -> None:
    completed = sansio.Event({"action": "completed"}, event="check_run", delivery_id="x")
    created = sansio.Event({"action": "created"}, event="installation", delivery_id="x")
    assert {f.__qualname__ for f in router.fetch(completed)} == {"on_check_run_completed"}
    assert {f.__qualname__ for f in router.fetch(created)} == {"on_installation"}
    unrelated = sansio.Event({"action": "created"}, event="check_run", delivery_id="x")
    assert router.fetch(unrelated) == frozenset()


# --- dispatch ------------------------------------------------------------------------------


def _delivery(event: str, payload: dict[str, Any], delivery_id: str = "d-1") -> Delivery:
    return Delivery(
        id=delivery_id,
        event=event,
        action=payload.get("action"),
        payload=json.dumps(payload).encode(),
        state=DeliveryState.CLAIMED,
        attempts=1,
        received_at=0.0,
        next_attempt_at=0.0,
        claim_token="t",
    )


def _token_server() -> web.Application:
    async def access_token(request: web.Request) -> web.Response:
        expires = datetime.fromtimestamp(time.time() + 3600, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return web.json_response(
            {"token": f"ghs_{request.match_info['id']}", "expires_at": expires}, status=201
        )

    app = web.Application()
    app.router.add_post("/app/installations/{id}/access_tokens", access_token)
    return app


@pytest.fixture
async def ctx(
    store: SQLiteStore,
    metrics: Metrics,
    session: aiohttp.ClientSession,
    serve: Serve,
    private_key: str,
) -> AsyncIterator[BotContext]:
    github = GitHubApp(
        session,
        api_url=await serve(_token_server()),
        app_id=1,
        private_key=private_key,
        metrics=metrics,
    )
    yield BotContext(store=store, github=github, metrics=metrics)


async def test_dispatch_runs_every_handler_and_reports_every_failure(
    ctx: BotContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[str] = []
    probe = routing.Router()

    @probe.register("flaky_probe")
    async def a_fails(event: sansio.Event, gh: object, ctx: BotContext) -> None:
        ran.append("a")
        raise ValueError("bad data")

    @probe.register("flaky_probe")
    async def b_records(event: sansio.Event, gh: object, ctx: BotContext) -> None:
        ran.append(f"b gh={gh}")

    @probe.register("flaky_probe", action="go")
    async def c_fails(event: sansio.Event, gh: object, ctx: BotContext) -> None:
        ran.append("c")
        raise GitHubBroken(HTTPStatus.BAD_GATEWAY)

    monkeypatch.setattr(bot.handlers, "router", routing.Router(probe))
    with pytest.raises(HandlerFailures) as raised:
        await dispatch(_delivery("flaky_probe", {"action": "go"}), ctx)
    assert ran == ["a", "b gh=None", "c"]
    assert [type(e) for e in raised.value.failures] == [ValueError, GitHubBroken]

    ran.clear()
    with pytest.raises(ValueError, match="bad data"):
        await dispatch(_delivery("flaky_probe", {"action": "stay"}), ctx)
    assert ran == ["a", "b gh=None"]


async def test_dispatch_of_an_event_nobody_handles_does_nothing(ctx: BotContext) -> None:
    await dispatch(_delivery("star", {"action": "created", "installation": {"id": 5}}), ctx)
    assert await ctx.store.installations() == []


def _corpus_payload(name: str) -> dict[str, Any]:
    path = CORPUS / "webhooks" / name
    if not path.is_file():
        pytest.fail(
            f"corpus file {path} is absent (tests/fixtures/corpus is part of the repository)"
        )
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


async def test_installation_events_reach_the_store_through_the_composed_router(
    ctx: BotContext,
) -> None:
    created = _corpus_payload("installation.created.1.json")
    deleted = _corpus_payload("installation.deleted.1.json")
    await dispatch(_delivery("installation", created, "d-created"), ctx)
    await dispatch(_delivery("installation", deleted, "d-deleted"), ctx)
    expected = {
        (created["installation"]["id"], created["installation"]["account"]["login"], True),
        (deleted["installation"]["id"], deleted["installation"]["account"]["login"], False),
    }
    assert set(await ctx.store.installations()) == expected


def test_routes_match_on_the_action_alone() -> None:
    """dispatch() turns deliveries away by event and action before parsing their payload."""
    for name, feature in FEATURE_ROUTERS.items():
        for event_type, details in feature._deep_routes.items():
            assert set(details) <= {"action"}, f"{name}: {event_type} routes on {set(details)}"
