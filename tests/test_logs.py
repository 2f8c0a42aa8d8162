"""Log lines: JSON, one per line, each naming its delivery; no secret ever in one."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.demo import running, settle
from bot.handlers import log_fields
from bot.logs import REDACTED, Redactor, bind, handler
from bot.sim.scenario import FaultRule, Faults, builtin_scenario

CORPUS = Path(__file__).resolve().parent / "fixtures" / "corpus" / "webhooks"
# Loggers that only ever run inside a delivery's work.
DELIVERY_LOGGERS = ("bot.handlers", "bot.github", "bot.triage")


@pytest.fixture
def captured() -> Iterator[io.StringIO]:
    """Everything logged, at DEBUG, as `serve` writes it (JSON)."""
    stream = io.StringIO()
    root = logging.getLogger()
    out = handler("json", stream=stream)
    level = root.level
    root.addHandler(out)
    root.setLevel(logging.DEBUG)
    try:
        yield stream
    finally:
        root.removeHandler(out)
        root.setLevel(level)


async def test_every_line_of_a_delivery_names_it_and_no_secret_appears(
    captured: io.StringIO, tmp_path: Path
) -> None:
    # The job's changed files fail four times: the client's three retries, then the inbox's.
    flaky_files = FaultRule(path=r"/pulls/7/files$", status=502, times=4)
    scenario = builtin_scenario().model_copy(update={"faults": Faults(rules=[flaky_files])})
    async with running(scenario, tmp_path) as (sim, bot):
        await sim.play(after_each=lambda: settle(sim, bot))
        await settle(sim, bot)
        secrets = [sim.webhook_secret, *sim.tokens.issued]
        key_lines = [line for line in sim.private_key_pem.splitlines() if "-----" not in line]

    text = captured.getvalue()
    lines: list[dict[str, Any]] = [json.loads(line) for line in text.splitlines()]
    assert all({"time", "level", "logger", "message"} <= line.keys() for line in lines)
    delivered = {e.delivery_id: e.event for e in sim.timeline if e.kind == "webhook"}
    work = [
        line
        for line in lines
        if line["logger"].startswith(DELIVERY_LOGGERS)
        or (line["logger"] == "bot.inbox" and "delivery" in line["message"])
    ]
    assert len(work) >= 5
    for line in work:
        assert line.get("delivery") in delivered, line
        assert line.get("event") == delivered[line["delivery"]], line
        assert line.get("repo") == "acme/bus", line
        assert line.get("installation") == sim.world.app.installation_id, line
    retried = [line for line in work if "retrying" in line["message"]]
    assert retried and retried[0]["level"] == "warning" and retried[0]["pr"] == 7
    assert any(line.get("pr") == 7 and "tracking issue" in line["message"] for line in work)
    # Tokens were handed out and the key has a body: the grep below has something to find.
    assert len(sim.tokens.issued) >= 1 and len(key_lines) > 10
    for secret in secrets + key_lines:
        assert secret not in text


def test_credentials_are_cut_out_of_any_line() -> None:
    stream = io.StringIO()
    log = logging.getLogger("test_logs.redaction")
    out = handler("json", secrets=["the-webhook-secret"], stream=stream)
    log.addHandler(out)
    try:
        log.warning(
            "token %s and %s, jwt %s, secret the-webhook-secret, key %s end",
            "ghs_16C7e42F292c6912E7710c838347Ae178B4a",
            "github_pat_11ABCDEFG0123456789_abcdefghij",
            "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiIxIn0.c2lnbmF0dXJl",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
        )
    finally:
        log.removeHandler(out)

    message = json.loads(stream.getvalue())["message"]
    assert message == (
        f"token {REDACTED} and {REDACTED}, jwt {REDACTED}, secret {REDACTED}, key {REDACTED} end"
    )


def test_short_values_are_not_treated_as_secrets() -> None:
    assert Redactor(["abc"])("abc abc") == "abc abc"


async def test_concurrent_deliveries_keep_their_own_context() -> None:
    stream = io.StringIO()
    log = logging.getLogger("test_logs.context")
    out = handler("text", stream=stream)
    log.addHandler(out)
    log.setLevel(logging.INFO)

    async def work(delivery: str, pr: int) -> None:
        bind(delivery=delivery, repo="acme/bus")
        await asyncio.sleep(0)
        bind(pr=pr)
        await asyncio.sleep(0)
        log.info("working")

    try:
        await asyncio.gather(work("d-1", 1), work("d-2", 2))
        log.info("outside")
    finally:
        log.removeHandler(out)

    lines = stream.getvalue().splitlines()
    assert sorted(line.split(": ", 1)[1] for line in lines) == [
        "outside",
        "working [delivery=d-1 repo=acme/bus pr=1]",
        "working [delivery=d-2 repo=acme/bus pr=2]",
    ]


@pytest.mark.parametrize(
    ("name", "fields"),
    [
        ("check_run.completed.1.json", {"repo": "Codertocat/Hello-World", "pr": 2}),
        (
            "pull_request.opened.2.json",
            {"installation": 1, "repo": "Codertocat/Hello-World", "pr": 2},
        ),
        # A comment on an issue, not a pull request: no PR to name.
        ("issue_comment.created.4.json", {"installation": 1, "repo": "Codertocat/Hello-World"}),
    ],
)
def test_log_fields_come_from_real_payloads(name: str, fields: dict[str, object]) -> None:
    path = CORPUS / name
    if not path.is_file():
        pytest.fail(
            f"corpus file {path} is absent (tests/fixtures/corpus is part of the repository)"
        )
    found = log_fields(json.loads(path.read_text()))
    assert {k: v for k, v in found.items() if v is not None} == fields


def test_log_fields_of_a_payload_of_any_shape_are_plain_values_or_nothing() -> None:
    hostile: dict[str, Any] = {
        "installation": {"id": True},
        "repository": {"full_name": 'acme/bus\n{"level": "error"}'},
        "check_run": {"pull_requests": {"0": {"number": 7}}},
    }
    assert log_fields(hostile) == {}
    assert log_fields({"check_run": {"pull_requests": [{"number": "7"}]}}) == {"pr": "7"}
    assert log_fields({"issue": {"number": 3}}) == {}  # an issue, not a pull request
