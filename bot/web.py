"""The HTTP face of the bot: the webhook endpoint, health probes, metrics and the dashboard."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

import orjson
from aiohttp import web
from aiohttp.typedefs import Handler, Middleware
from prometheus_client import CONTENT_TYPE_LATEST, Counter, generate_latest
from pydantic import BaseModel, ConfigDict, ValidationError

from bot import dashboard
from bot.connections import GUARD_KEY, Guard, Limits, read_body
from bot.inbox import INTERNAL_EVENT_PREFIX, Worker
from bot.logs import bind
from bot.metrics import Metrics
from bot.store import Store

log = logging.getLogger(__name__)

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# GitHub caps webhook payloads at 25 MB; anything larger is not from GitHub.
MAX_BODY_BYTES = 25 * 1024 * 1024

STORE_KEY = web.AppKey("store", Store)
WORKER_KEY = web.AppKey("worker", Worker)
METRICS_KEY = web.AppKey("metrics", Metrics)
SECRET_KEY = web.AppKey("webhook_secret", bytes)


class DeliveryCounts:
    """`flakybot_deliveries` by event and outcome, each child looked up once.

    `labels()` takes a lock and builds its key on every call, and ingest counts once or twice
    per webhook; a signed sender names the events, as it did for `labels()` itself.
    """

    def __init__(self, metrics: Metrics) -> None:
        self._counter = metrics.deliveries
        self._children: dict[tuple[str, str], Counter] = {}

    def inc(self, event: str, outcome: str) -> None:
        child = self._children.get((event, outcome))
        if child is None:
            child = self._children[event, outcome] = self._counter.labels(event, outcome)
        child.inc()


COUNTS_KEY = web.AppKey("delivery_counts", DeliveryCounts)


def create_app(
    *,
    store: Store,
    worker: Worker,
    metrics: Metrics,
    webhook_secret: str,
    webhook_path: str,
    dashboard_access: dashboard.Access | None = None,
    trusted_proxies: Sequence[Network] = (),
    limits: Limits | None = None,
) -> web.Application:
    """The app; serve it through `app[GUARD_KEY].protocol_factory` for `limits` to hold."""
    if not webhook_secret:
        raise ValueError("a webhook secret is required: unsigned deliveries are never accepted")
    guard = Guard(limits or Limits(), metrics)
    middlewares: list[Middleware] = [guard.track_requests]
    # Only with proxies configured: no other request pays for reading the header.
    if trusted_proxies:
        middlewares.append(forwarded_client(trusted_proxies))
    app = web.Application(client_max_size=MAX_BODY_BYTES, middlewares=middlewares)
    app[GUARD_KEY] = guard
    app[STORE_KEY] = store
    app[WORKER_KEY] = worker
    app[METRICS_KEY] = metrics
    app[COUNTS_KEY] = DeliveryCounts(metrics)
    app[SECRET_KEY] = webhook_secret.encode()
    app.router.add_post(webhook_path, receive_webhook)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics_page)
    dashboard.install(app, store, dashboard_access or dashboard.Access(token=None))
    return app


def forwarded_client(proxies: Sequence[Network]) -> Middleware:
    """Requests whose `remote` is the client a trusted proxy saw, not the proxy."""

    @web.middleware
    async def from_proxy(request: web.Request, handler: Handler) -> web.StreamResponse:
        forwarded = request.headers.getall("X-Forwarded-For", [])
        client = client_address(request.remote, forwarded, proxies)
        if client is not None and client != request.remote:
            request = request.clone(remote=client)
        return await handler(request)

    return from_proxy


def client_address(
    peer: str | None, forwarded: Sequence[str], proxies: Sequence[Network]
) -> str | None:
    """Who connected: X-Forwarded-For read from the right while the address that sent it is
    a trusted proxy. Each proxy appends the address it was connected from, so the first
    address not trusted is the client; what is left of it, the client could have written.
    A hop that is not an address stops the walk at the proxy that wrote it."""
    hops = [hop.strip() for value in forwarded for hop in value.split(",")]
    client = peer
    while hops and _trusted(client, proxies):
        try:
            client = str(ipaddress.ip_address(hops.pop()))
        except ValueError:
            break
    return client


def _trusted(address: str | None, proxies: Sequence[Network]) -> bool:
    try:
        ip = ipaddress.ip_address(address or "")
    except ValueError:
        return False
    return any(ip in network for network in proxies)


def _answer(data: dict[str, Any], status: int) -> web.Response:
    return web.Response(body=orjson.dumps(data), status=status, content_type="application/json")


def _refuse(status: int, reason: str) -> web.Response:
    return _answer({"error": reason}, status)


def _signed(secret: bytes, body: bytes, signature: str) -> bool:
    expected = b"sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest().encode()
    # Header text is not always ASCII; compare bytes so odd input is a mismatch, not an error.
    return hmac.compare_digest(expected, signature.encode("utf-8", "surrogateescape"))


def _is_plain_json(request: web.Request) -> bool:
    """GitHub's usual delivery: application/json in UTF-8, stored as it came."""
    charset = request.charset
    return request.content_type == "application/json" and (
        charset is None or charset.lower() in ("utf-8", "utf8")
    )


def _read_payload(request: web.Request, body: bytes) -> Any:
    """The payload as stdlib json reads it, in whatever form GitHub sent it: the answer the
    receiver must give (gidgethub's, before). JSON in its charset (UTF-8 unless the request
    names another), or a form whose `payload` field is the JSON. Raises ValueError (not
    JSON, not a webhook's content type; UnicodeDecodeError is one), LookupError (an unknown
    charset, a form without `payload`) or RecursionError (nested too deeply)."""
    text = body.decode(request.charset or "utf-8")
    if request.content_type == "application/x-www-form-urlencoded":
        text = parse_qs(text)["payload"][0]
    elif request.content_type != "application/json":
        raise ValueError(f"not a webhook's content type: {request.content_type}")
    return json.loads(text)


class _Head(BaseModel):
    """What ingest reads of a payload: only its action (and a ping's zen)."""

    model_config = ConfigDict(extra="ignore")
    action: Any = None
    zen: Any = None


def _head(body: bytes) -> _Head | None:
    """The action of a JSON object, checking every byte is JSON without building the rest.

    pydantic-core's parser validates the whole body but makes Python objects only for the
    fields asked for: a third to a quarter of stdlib json's time on GitHub's payloads. None
    when it refuses the body (not an object, or rarer forms such as a BOM or lone
    surrogates): `_read_payload` then gives stdlib json's answer, the one the receiver owes.
    """
    try:
        return _Head.model_validate_json(body)
    except ValidationError:
        return None


@dataclass(frozen=True, slots=True)
class _Headers:
    event: str  # X-GitHub-Event
    delivery_id: str  # X-GitHub-Delivery
    signature: str  # X-Hub-Signature-256


@dataclass(frozen=True, slots=True)
class _Payload:
    action: str | None
    body: bytes  # what the inbox keeps: the body as it came, or its JSON if form-encoded


async def receive_webhook(request: web.Request) -> web.Response:
    """Verify, store, answer. Nothing slow happens here: GitHub gives up after 10 s."""
    headers = _headers(request)
    if isinstance(headers, web.Response):
        return headers
    bind(delivery=headers.delivery_id, event=headers.event)
    try:
        body = await read_body(request, request.read)
    except web.HTTPRequestEntityTooLarge:
        return _refuse(413, f"body larger than {MAX_BODY_BYTES} bytes")
    # The signature first: nothing of an unsigned body is parsed.
    if not _signed(request.app[SECRET_KEY], body, headers.signature):
        log.warning("delivery %s refused: bad signature", headers.delivery_id)
        return _refuse(401, "signature does not match")
    payload = _payload(request, headers, body)
    if isinstance(payload, web.Response):
        return payload
    return await _queue(request, headers, payload)


def _headers(request: web.Request) -> _Headers | web.Response:
    """The delivery's headers, or the refusal of a request that cannot be one, before its
    body is read."""
    if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
        return _refuse(413, f"body larger than {MAX_BODY_BYTES} bytes")
    event_name = request.headers.get("X-GitHub-Event")
    delivery_id = request.headers.get("X-GitHub-Delivery")
    signature = request.headers.get("X-Hub-Signature-256")
    if not signature:
        return _refuse(401, "missing X-Hub-Signature-256")
    if not signature.startswith("sha256="):
        # An "sha1=" value would be the weaker HMAC: refused.
        return _refuse(401, "X-Hub-Signature-256 must be sha256=<hex>")
    if not event_name or not delivery_id or len(delivery_id) > 200:
        return _refuse(400, "missing X-GitHub-Event or X-GitHub-Delivery header")
    if event_name.startswith(INTERNAL_EVENT_PREFIX):
        return _refuse(400, f"{INTERNAL_EVENT_PREFIX}* events are the bot's own, not GitHub's")
    return _Headers(event_name, delivery_id, signature)


def _payload(request: web.Request, headers: _Headers, body: bytes) -> _Payload | web.Response:
    """The action and the bytes to store of a signed body; or the answer already due: the
    refusal of a body that is not a JSON object, or a ping's pong.

    One reading: stdlib json's (`_read_payload`), which decides what is accepted. A UTF-8
    JSON body first takes `_head`, which accepts only what that reading also accepts, and
    faster (tests/test_web.py holds the two to the same answers); a body in another form
    is stored as the UTF-8 JSON it holds, so the handlers read every delivery alike."""
    plain = _is_plain_json(request)
    head = _head(body) if plain else None
    if head is None:
        try:
            data = _read_payload(request, body)
        except (ValueError, LookupError):
            return _refuse(400, "body is not a JSON webhook payload")
        except RecursionError:
            # stdlib json parses nested arrays and objects recursively: `[[[[...` deep.
            return _refuse(400, "body is nested too deeply to be a webhook payload")
        if not isinstance(data, dict):
            return _refuse(400, "payload must be a JSON object")
        head = _Head(action=data.get("action"), zen=data.get("zen"))
        body = body if plain else json.dumps(data).encode()
    if headers.event == "ping":
        request.app[COUNTS_KEY].inc("ping", "pong")
        return _answer({"ok": True, "zen": head.zen}, 200)
    return _Payload(_action(head.action), body)


def _action(action: object) -> str | None:
    if not isinstance(action, str):
        return None
    # JSON may spell a NUL ("\u0000"), which PostgreSQL's text refuses; no handler wants
    # such an action, and the payload itself is kept as it came.
    return action.replace("\x00", "\ufffd")


async def _queue(request: web.Request, headers: _Headers, payload: _Payload) -> web.Response:
    """Store the delivery and wake the worker if a handler wants it."""
    event_name, delivery_id, action = headers.event, headers.delivery_id, payload.action
    counts = request.app[COUNTS_KEY]
    worker = request.app[WORKER_KEY]
    # Stored either way (listed, replayable); one no handler wants is stored finished, so
    # the worker never spends a claim and a completion on it.
    wanted = worker.wants(event_name, action)
    stored = await request.app[STORE_KEY].put_delivery(
        delivery_id, event_name, action, payload.body, time.time(), done=not wanted
    )
    counts.inc(event_name, "received" if stored else "duplicate")
    if stored and wanted:
        worker.notify()
        log.debug("delivery %s (%s.%s) queued", delivery_id, event_name, action)
    elif stored:
        counts.inc(event_name, "done")
        log.debug("delivery %s (%s.%s) stored done: no handler", delivery_id, event_name, action)
    return _answer({"queued": stored, "delivery": delivery_id}, 202)


async def healthz(request: web.Request) -> web.Response:
    return web.json_response({"ok": True})


async def readyz(request: web.Request) -> web.Response:
    try:
        await request.app[STORE_KEY].ping()
    except Exception as exc:
        log.warning("not ready: store unreachable: %s", type(exc).__name__)
        return web.json_response({"ok": False, "store": "unreachable"}, status=503)
    return web.json_response({"ok": True})


async def metrics_page(request: web.Request) -> web.Response:
    metrics = request.app[METRICS_KEY]
    depth, oldest = await request.app[STORE_KEY].inbox_depth()
    metrics.inbox_depth.set(depth)
    metrics.inbox_oldest_age.set(0 if oldest is None else max(0.0, time.time() - oldest))
    return web.Response(
        body=generate_latest(metrics.registry), headers={"Content-Type": CONTENT_TYPE_LATEST}
    )
