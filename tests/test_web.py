"""Webhook ingress over real HTTP on 127.0.0.1: signatures, headers, size cap, probes, metrics."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from urllib.parse import urlencode

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import bot.handlers
from bot.inbox import Worker
from bot.metrics import Metrics
from bot.store import Delivery, DeliveryState
from bot.store.sqlite import SQLiteStore
from bot.web import MAX_BODY_BYTES, create_app

Client = TestClient[web.Request, web.Application]
SECRET = "s3cr3t-webhook-value"
PATH = "/api/github/webhooks"
CORPUS = Path(__file__).resolve().parent / "fixtures" / "corpus"
PAYLOAD = json.dumps({"action": "completed", "check_run": {"id": 1}}).encode()


def sign(body: bytes, secret: str = SECRET, algorithm: str = "sha256") -> str:
    return f"{algorithm}=" + hmac.new(secret.encode(), body, algorithm).hexdigest()


def webhook_headers(
    body: bytes,
    *,
    event: str | None = "check_run",
    delivery: str | None = "d-1",
    signature: str | None = "valid",
    content_type: str = "application/json",
) -> dict[str, str]:
    headers = {"Content-Type": content_type}
    if event is not None:
        headers["X-GitHub-Event"] = event
    if delivery is not None:
        headers["X-GitHub-Delivery"] = delivery
    if signature is not None:
        headers["X-Hub-Signature-256"] = sign(body) if signature == "valid" else signature
    return headers


async def _never_dispatched(delivery: Delivery) -> None:
    raise AssertionError("the worker is not started in these tests")


@pytest.fixture
async def client(store: SQLiteStore, metrics: Metrics) -> AsyncIterator[Client]:
    worker = Worker(store, _never_dispatched, metrics)
    app = create_app(
        store=store, worker=worker, metrics=metrics, webhook_secret=SECRET, webhook_path=PATH
    )
    async with TestClient(TestServer(app, host="127.0.0.1")) as test_client:
        yield test_client


async def _post(client: Client, body: bytes, headers: Mapping[str, str]) -> tuple[int, str]:
    async with client.post(PATH, data=body, headers=dict(headers)) as response:
        return response.status, await response.text()


async def _ids(store: SQLiteStore) -> list[str]:
    return [d.id for d in await store.list_deliveries(1000)]


def test_a_webhook_secret_is_required(store: SQLiteStore, metrics: Metrics) -> None:
    worker = Worker(store, _never_dispatched, metrics)
    with pytest.raises(ValueError, match="secret"):
        create_app(
            store=store, worker=worker, metrics=metrics, webhook_secret="", webhook_path=PATH
        )


async def test_signed_delivery_is_stored_once(client: Client, store: SQLiteStore) -> None:
    first = await _post(client, PAYLOAD, webhook_headers(PAYLOAD))
    assert first[0] == 202
    assert json.loads(first[1]) == {"queued": True, "delivery": "d-1"}
    again = await _post(client, PAYLOAD, webhook_headers(PAYLOAD))
    assert again[0] == 202
    assert json.loads(again[1]) == {"queued": False, "delivery": "d-1"}
    (stored,) = await store.list_deliveries(10)
    assert (stored.id, stored.event, stored.action, stored.payload) == (
        "d-1",
        "check_run",
        "completed",
        PAYLOAD,
    )


async def test_real_payload_from_the_corpus_is_stored(client: Client, store: SQLiteStore) -> None:
    path = CORPUS / "webhooks" / "check_run.completed.1.json"
    if not path.is_file():
        pytest.fail(
            f"corpus file {path} is absent (tests/fixtures/corpus is part of the repository)"
        )
    body = path.read_bytes()
    assert (await _post(client, body, webhook_headers(body, delivery="real-1")))[0] == 202
    (stored,) = await store.list_deliveries(10)
    assert (stored.event, stored.action, stored.payload) == ("check_run", "completed", body)


@pytest.mark.parametrize(
    ("overrides", "status"),
    [
        ({"signature": None}, 401),
        ({"signature": sign(PAYLOAD, secret="wrong-secret")}, 401),
        ({"signature": "sha256=" + "0" * 64}, 401),
        ({"signature": "garbage"}, 401),
        # HMAC-SHA1 in the SHA-256 header is a downgrade, not a signature we accept.
        ({"signature": sign(PAYLOAD, algorithm="sha1")}, 401),
        ({"event": None}, 400),
        ({"delivery": None}, 400),
        ({"delivery": "x" * 201}, 400),
        ({"content_type": "text/plain"}, 400),
        ({"content_type": "application/json; charset=no-such-charset"}, 400),
    ],
)
async def test_refused_deliveries_are_not_stored(
    client: Client,
    store: SQLiteStore,
    overrides: dict[str, str | None],
    status: int,
) -> None:
    headers = webhook_headers(PAYLOAD, **overrides)  # type: ignore[arg-type]
    assert (await _post(client, PAYLOAD, headers))[0] == status
    assert await _ids(store) == []


async def test_a_signed_delivery_naming_one_of_the_bots_own_events_is_refused(
    client: Client, store: SQLiteStore
) -> None:
    headers = webhook_headers(PAYLOAD, event="flakybot.tracking_refresh")
    status, text = await _post(client, PAYLOAD, headers)
    assert (status, "the bot's own" in text) == (400, True)
    assert await _ids(store) == []


async def test_sha1_only_signature_is_refused(client: Client, store: SQLiteStore) -> None:
    headers = webhook_headers(PAYLOAD, signature=None)
    headers["X-Hub-Signature"] = sign(PAYLOAD, algorithm="sha1")
    assert (await _post(client, PAYLOAD, headers))[0] == 401
    assert await _ids(store) == []


@pytest.mark.parametrize("body", [b"{not json", b"[1, 2, 3]", b"\xff\xfe{}", b'"text"'])
async def test_signed_body_that_is_not_a_json_object_is_refused(
    client: Client, store: SQLiteStore, body: bytes
) -> None:
    assert (await _post(client, body, webhook_headers(body)))[0] == 400
    assert await _ids(store) == []


_DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b'{"action": "completed", "x": ' + _DEEP + b"}", "application/json"),
        (b'{"x": ' + _DEEP + b"}", "application/json; charset=latin-1"),
        (
            urlencode({"payload": '{"x": ' + _DEEP.decode() + "}"}).encode(),
            "application/x-www-form-urlencoded",
        ),
    ],
    ids=["json", "other-charset", "form"],
)
async def test_a_signed_body_nested_too_deeply_is_a_400_not_a_500(
    client: Client, store: SQLiteStore, body: bytes, content_type: str
) -> None:
    status, text = await _post(client, body, webhook_headers(body, content_type=content_type))
    assert (status, json.loads(text)) == (
        400,
        {"error": "body is nested too deeply to be a webhook payload"},
    )
    assert await _ids(store) == []


async def test_form_encoded_delivery_is_stored_as_json(client: Client, store: SQLiteStore) -> None:
    body = urlencode({"payload": PAYLOAD.decode()}).encode()
    headers = webhook_headers(body, content_type="application/x-www-form-urlencoded")
    assert (await _post(client, body, headers))[0] == 202
    (stored,) = await store.list_deliveries(10)
    assert json.loads(stored.payload) == json.loads(PAYLOAD)


async def test_body_over_the_cap_with_content_length_is_413(
    client: Client, store: SQLiteStore
) -> None:
    body = b" " * (MAX_BODY_BYTES + 1)
    assert (await _post(client, body, webhook_headers(body)))[0] == 413
    assert await _ids(store) == []


async def test_chunked_body_over_the_cap_is_413(client: Client, store: SQLiteStore) -> None:
    chunk = b" " * (1024 * 1024)
    chunks = 26

    async def stream() -> AsyncIterator[bytes]:
        for _ in range(chunks):
            yield chunk

    whole = chunk * chunks
    async with client.post(PATH, data=stream(), headers=webhook_headers(whole)) as response:
        assert response.request_info.headers.get("Transfer-Encoding") == "chunked"
        assert response.status == 413
    assert await _ids(store) == []


async def test_ping_is_answered_and_not_stored(client: Client, store: SQLiteStore) -> None:
    body = json.dumps({"zen": "Keep it logically awesome.", "hook_id": 1}).encode()
    status, text = await _post(client, body, webhook_headers(body, event="ping"))
    assert status == 200
    assert json.loads(text)["zen"] == "Keep it logically awesome."
    assert await _ids(store) == []


async def test_health_and_readiness(client: Client, store: SQLiteStore) -> None:
    async with client.get("/healthz") as response:
        assert response.status == 200
    async with client.get("/readyz") as response:
        assert response.status == 200
    await store.close()
    async with client.get("/readyz") as response:
        assert response.status == 503
    async with client.get("/healthz") as response:
        assert response.status == 200


async def test_metrics_expose_deliveries_and_inbox_depth(
    client: Client,
) -> None:
    await _post(client, PAYLOAD, webhook_headers(PAYLOAD))
    await _post(client, PAYLOAD, webhook_headers(PAYLOAD))
    async with client.get("/metrics") as response:
        assert response.status == 200
        text = await response.text()
    lines = set(text.splitlines())
    assert 'flakybot_deliveries_total{event="check_run",outcome="received"} 1.0' in lines
    assert 'flakybot_deliveries_total{event="check_run",outcome="duplicate"} 1.0' in lines
    assert "flakybot_inbox_depth 1.0" in lines


async def test_the_secret_never_leaves_the_process(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    texts = []
    attempts = [
        webhook_headers(PAYLOAD),
        webhook_headers(PAYLOAD),
        webhook_headers(PAYLOAD, delivery="d-2", signature="sha256=" + "0" * 64),
        webhook_headers(PAYLOAD, delivery="d-3", signature=SECRET),
        webhook_headers(PAYLOAD, delivery="d-4", signature=None),
        webhook_headers(PAYLOAD, delivery="d-5", event=None),
        webhook_headers(b"{", delivery="d-6"),
    ]
    for headers in attempts:
        texts.append((await _post(client, PAYLOAD, headers))[1])
    for path in ("/healthz", "/readyz", "/metrics"):
        async with client.get(path) as response:
            texts.append(await response.text())
    assert caplog.records, "expected the ingress to log something"
    assert all(SECRET not in text for text in texts)
    assert all(SECRET not in record.getMessage() for record in caplog.records)
    assert all(SECRET not in str(record.args) for record in caplog.records)


_SIGNATURES = st.sampled_from(["valid", "wrong", "sha1", "missing", "random"])
_HEADER_TEXT = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=40)
_CONTENT_TYPES = st.sampled_from(
    [
        "application/json",
        "application/json; charset=utf-8",
        "application/json; charset=latin-1",
        "application/json; charset=bogus",
        "application/x-www-form-urlencoded",
        "text/plain",
        "",
    ]
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=10,
)
_BODIES = st.one_of(
    st.binary(max_size=300),
    _JSON.map(lambda value: json.dumps(value).encode()),
    st.dictionaries(st.sampled_from(["action", "zen", "installation"]), _JSON).map(
        lambda value: json.dumps(value).encode()
    ),
)


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    body=_BODIES,
    signature=_SIGNATURES,
    noise=_HEADER_TEXT,
    event=st.one_of(st.sampled_from(["check_run", "ping", "issues"]), st.none(), _HEADER_TEXT),
    delivery=st.one_of(st.uuids().map(str), st.none(), _HEADER_TEXT),
    content_type=_CONTENT_TYPES,
)
async def test_random_requests_never_fail_the_server_nor_store_unsigned_bodies(
    client: Client,
    store: SQLiteStore,
    body: bytes,
    signature: str,
    noise: str,
    event: str | None,
    delivery: str | None,
    content_type: str,
) -> None:
    signatures = {
        "valid": sign(body),
        "wrong": sign(body, secret="not-" + SECRET),
        "sha1": sign(body, algorithm="sha1"),
        "missing": None,
        "random": noise,
    }
    headers = webhook_headers(
        body,
        event=event,
        delivery=delivery,
        signature=None,
        content_type=content_type,
    )
    if signatures[signature]:
        headers["X-Hub-Signature-256"] = str(signatures[signature])
    before = len(await _ids(store))
    status, _ = await _post(client, body, headers)
    after = len(await _ids(store))
    assert status < 500
    if signature != "valid":
        assert status in (400, 401)
        assert after == before
    if after > before:
        assert status == 202


async def test_bodies_orjson_refuses_get_the_answers_stdlib_json_gives(
    client: Client, store: SQLiteStore
) -> None:
    body = b'{"action": "completed", "big": 123456789012345678901234567890, "x": NaN}'
    assert (await _post(client, body, webhook_headers(body)))[0] == 202
    (stored,) = await store.list_deliveries(10)
    assert (stored.action, stored.payload) == ("completed", body)


async def test_latin1_json_is_parsed_in_its_charset_and_stored_as_utf8_json(
    client: Client, store: SQLiteStore
) -> None:
    """Stored as the UTF-8 JSON it holds, as a form-encoded delivery is: the worker reads
    every stored payload alike (json.loads of bytes takes UTF-8, never latin-1)."""
    body = '{"action": "édité"}'.encode("latin-1")
    headers = webhook_headers(body, content_type="application/json; charset=latin-1")
    assert (await _post(client, body, headers))[0] == 202
    (stored,) = await store.list_deliveries(10)
    assert stored.action == "édité"
    assert json.loads(stored.payload) == {"action": "édité"}


async def test_a_signature_that_is_not_ascii_is_refused_not_an_error(
    client: Client, store: SQLiteStore
) -> None:
    headers = webhook_headers(PAYLOAD, signature="sha256=" + "é" * 64)
    async with client.post(
        PATH, data=PAYLOAD, headers={k: v.encode().decode("latin-1") for k, v in headers.items()}
    ) as response:
        assert response.status == 401
    assert await _ids(store) == []


async def test_a_delivery_no_handler_wants_is_stored_done_and_wakes_no_worker(
    store: SQLiteStore, metrics: Metrics
) -> None:
    notified: list[int] = []

    class NotedWorker(Worker):
        def notify(self) -> None:
            notified.append(1)
            super().notify()

    worker = NotedWorker(store, _never_dispatched, metrics, wants=bot.handlers.wants)
    app = create_app(
        store=store, worker=worker, metrics=metrics, webhook_secret=SECRET, webhook_path=PATH
    )
    created = json.dumps({"action": "created", "check_run": {"id": 1}}).encode()
    async with TestClient(TestServer(app, host="127.0.0.1")) as test_client:
        for body, delivery in ((created, "unrouted"), (PAYLOAD, "routed")):
            status, _ = await _post(test_client, body, webhook_headers(body, delivery=delivery))
            assert status == 202
            # Only a delivery some handler takes wakes the worker.
            assert len(notified) == (1 if delivery == "routed" else 0)
    states = {d.id: d.state for d in await store.list_deliveries(10)}
    assert states == {"unrouted": DeliveryState.DONE, "routed": DeliveryState.PENDING}
    for outcome, count in (("received", 2.0), ("done", 1.0)):
        assert metrics.registry.get_sample_value(
            "flakybot_deliveries_total", {"event": "check_run", "outcome": outcome}
        ) == pytest.approx(count)


def _stdlib_reading(body: bytes) -> object:
    """stdlib json on the body read as UTF-8 (strictly: encoded surrogates are not UTF-8)."""
    try:
        return json.loads(body.decode("utf-8"))
    except ValueError:
        return None


_EDGE_TOKENS = st.sampled_from(
    ["NaN", "-Infinity", "+Infinity", "1e999", "123456789012345678901234567890", "01", "-0"]
)
_EDGE_BODIES = st.one_of(
    _BODIES,
    # Forms the two parsers might read differently: odd numbers, escapes, BOMs, raw bytes.
    st.tuples(st.sampled_from(["action", "x"]), _EDGE_TOKENS).map(
        lambda kv: f'{{"{kv[0]}": {kv[1]}}}'.encode()
    ),
    st.tuples(
        st.sampled_from([b"", b"\xef\xbb\xbf", b" \n"]),
        st.sampled_from([b'"\\ud800"', b'"\xed\xa0\x80"', b'"\\u00e9"', b'"\xff"', b'"\x01"']),
        st.sampled_from([b"", b" ", b" x", b"}"]),
    ).map(lambda t: t[0] + b'{"action": "completed", "x": ' + t[1] + b"}" + t[2]),
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=_EDGE_BODIES)
@example(body=b'{"action":"\\u0000"}')  # a NUL PostgreSQL's text refuses: kept, not a 500
async def test_a_signed_json_body_is_taken_exactly_when_stdlib_json_reads_an_object(
    client: Client, store: SQLiteStore, body: bytes
) -> None:
    delivery = f"d-{hashlib.sha256(body).hexdigest()[:16]}"
    status, _ = await _post(client, body, webhook_headers(body, delivery=delivery))
    data = _stdlib_reading(body)
    assert status == (202 if isinstance(data, dict) else 400), body
    if status == 202:
        (stored,) = [d for d in await store.list_deliveries(1000) if d.id == delivery]
        assert isinstance(data, dict)
        action = data.get("action")
        assert (stored.payload, stored.action) == (
            body,
            action.replace("\x00", "\ufffd") if isinstance(action, str) else None,
        )
