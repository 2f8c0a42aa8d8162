"""The HTTP face of the bot: the webhook endpoint, health probes and metrics."""

from __future__ import annotations

import json
import logging
import time

from aiohttp import web
from gidgethub import BadRequest, ValidationFailure, sansio
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from bot.inbox import Worker
from bot.metrics import Metrics
from bot.store import Store

log = logging.getLogger(__name__)

# GitHub caps webhook payloads at 25 MB; anything larger is not from GitHub.
MAX_BODY_BYTES = 25 * 1024 * 1024

STORE_KEY = web.AppKey("store", Store)
WORKER_KEY = web.AppKey("worker", Worker)
METRICS_KEY = web.AppKey("metrics", Metrics)
SECRET_KEY = web.AppKey("webhook_secret", str)


def create_app(
    *, store: Store, worker: Worker, metrics: Metrics, webhook_secret: str, webhook_path: str
) -> web.Application:
    if not webhook_secret:
        raise ValueError("a webhook secret is required: unsigned deliveries are never accepted")
    app = web.Application(client_max_size=MAX_BODY_BYTES)
    app[STORE_KEY] = store
    app[WORKER_KEY] = worker
    app[METRICS_KEY] = metrics
    app[SECRET_KEY] = webhook_secret
    app.router.add_post(webhook_path, receive_webhook)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics_page)
    return app


def _refuse(status: int, reason: str) -> web.Response:
    return web.json_response({"error": reason}, status=status)


async def receive_webhook(request: web.Request) -> web.Response:
    """Verify, store, answer. Nothing slow happens here: GitHub gives up after 10 s."""
    if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
        return _refuse(413, f"body larger than {MAX_BODY_BYTES} bytes")
    event_name = request.headers.get("X-GitHub-Event")
    delivery_id = request.headers.get("X-GitHub-Delivery")
    signature = request.headers.get("X-Hub-Signature-256")
    if not signature:
        return _refuse(401, "missing X-Hub-Signature-256")
    if not signature.startswith("sha256="):
        # gidgethub would also verify a "sha1=" value here: refuse the weaker HMAC.
        return _refuse(401, "X-Hub-Signature-256 must be sha256=<hex>")
    if not event_name or not delivery_id or len(delivery_id) > 200:
        return _refuse(400, "missing X-GitHub-Event or X-GitHub-Delivery header")
    try:
        body = await request.read()
    except web.HTTPRequestEntityTooLarge:
        return _refuse(413, f"body larger than {MAX_BODY_BYTES} bytes")
    headers = {
        "content-type": request.headers.get("Content-Type", ""),
        "x-github-event": event_name,
        "x-github-delivery": delivery_id,
        "x-hub-signature-256": signature,
    }
    try:
        event = sansio.Event.from_http(headers, body, secret=request.app[SECRET_KEY])
    except ValidationFailure:
        log.warning("delivery %s refused: bad signature", delivery_id)
        return _refuse(401, "signature does not match")
    except (BadRequest, ValueError, LookupError):  # LookupError: an unknown charset
        return _refuse(400, "body is not a JSON webhook payload")
    if not isinstance(event.data, dict):
        return _refuse(400, "payload must be a JSON object")
    metrics = request.app[METRICS_KEY]
    if event_name == "ping":
        metrics.deliveries.labels("ping", "pong").inc()
        return web.json_response({"ok": True, "zen": event.data.get("zen")})
    action = event.data.get("action")
    # Store the normalised JSON (form-encoded deliveries decode to the same payload).
    payload = (
        body
        if headers["content-type"].startswith("application/json")
        else (json.dumps(event.data).encode())
    )
    stored = await request.app[STORE_KEY].put_delivery(
        delivery_id, event_name, action if isinstance(action, str) else None, payload, time.time()
    )
    metrics.deliveries.labels(event_name, "received" if stored else "duplicate").inc()
    if stored:
        request.app[WORKER_KEY].notify()
        log.info("delivery %s (%s.%s) queued", delivery_id, event_name, action)
    return web.json_response({"queued": stored, "delivery": delivery_id}, status=202)


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
