"""`flakybot` as people run it: real processes, real exit codes, real output."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import yaml
from cryptography.hazmat.primitives import serialization

from bot.sim.scenario import builtin_scenario
from bot.sim.server import Simulator
from bot.store import Delivery, DeliveryState, open_store
from tests.fleet import APP_VARIABLES, free_port, serve_env, wait_listening

SCENARIOS = Path(__file__).parent / "scenarios"


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in APP_VARIABLES}
    env.update(extra)
    return env


def flakybot(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        cwd=cwd,
        env=env or clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_serve_refuses_to_start_and_names_every_missing_variable(tmp_path: Path) -> None:
    result = flakybot("serve", cwd=tmp_path)

    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    for name in ("APP_ID", "PRIVATE_KEY or PRIVATE_KEY_PATH", "WEBHOOK_SECRET"):
        assert name in lines[0]


def test_serve_never_prints_the_secret_it_was_given(tmp_path: Path) -> None:
    secret = "s3cr3t-value-that-must-not-leak"
    result = flakybot("serve", cwd=tmp_path, env=clean_env(WEBHOOK_SECRET=secret))

    assert result.returncode == 2
    assert "APP_ID" in result.stderr
    assert "WEBHOOK_SECRET" not in result.stderr
    assert secret not in result.stdout + result.stderr


@pytest.mark.parametrize("token", ["a", "dashboard", "0123456789" * 3, "ab" * 40])
def test_serve_refuses_a_dashboard_token_easy_to_guess_and_says_how_to_make_one(
    tmp_path: Path, token: str
) -> None:
    env = clean_env(
        APP_ID="1",
        PRIVATE_KEY="not-read-before-the-check",
        WEBHOOK_SECRET="s3cr3t",
        DATABASE_URL=f"sqlite:///{tmp_path / 'bot.sqlite3'}",
        DASHBOARD_TOKEN=token,
    )
    result = flakybot("serve", cwd=tmp_path, env=env)

    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("flakybot serve: cannot start: DASHBOARD_TOKEN: too easy to guess")
    assert 'python -c "import secrets; print(secrets.token_urlsafe(32))"' in line
    assert "openssl rand -hex 32" in line
    assert f"'{token}'" not in line and f"={token}" not in line
    assert not (tmp_path / "bot.sqlite3").exists()  # refused before touching anything


def _public_half(private_key: str) -> str:
    key = serialization.load_pem_private_key(private_key.encode(), password=None)
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


@pytest.mark.parametrize(
    ("variable", "key"),
    [
        ("PRIVATE_KEY", "-----BEGIN RSA PRIVATE KEY-----\\nnot-base64-at-all\\n-----END"),
        ("PRIVATE_KEY", "public"),
        ("PRIVATE_KEY_PATH", "a file of something else"),
        ("PRIVATE_KEY_PATH", "no such file"),
    ],
)
def test_serve_refuses_to_start_with_a_private_key_it_cannot_sign_with(
    tmp_path: Path, private_key: str, variable: str, key: str
) -> None:
    """Before, it started, then dead-lettered every delivery: "could not parse public key"."""
    if key == "public":
        key = _public_half(private_key)
    if variable == "PRIVATE_KEY_PATH":
        path = tmp_path / "app.pem"
        if key != "no such file":
            path.write_text(key)
        key = str(path)
    env = clean_env(APP_ID="12", WEBHOOK_SECRET="s3cr3t-for-the-key-test", **{variable: key})

    result = flakybot("serve", cwd=tmp_path, env=env)

    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("flakybot serve: cannot start: ")
    assert variable in line
    assert "-----" not in line
    assert not (tmp_path / "flakybot.sqlite3").exists()  # refused before opening anything


def test_demo_json_records_verdicts_and_every_write(tmp_path: Path) -> None:
    result = flakybot("demo", "--json", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["verdicts"] == {"tests/bus/test_core.py::test_publish_waits_for_ack": "flaky"}
    assert record["expectations_failed"] == []
    writes = {(w["method"], w["path"]) for w in record["writes"]}
    assert ("POST", "/repos/acme/bus/issues/7/comments") in writes
    assert ("POST", "/repos/acme/bus/actions/jobs/40000000001/rerun") in writes
    bodies = [w["body"]["body"] for w in record["writes"] if "comments" in w["path"]]
    assert "likely flaky, unrelated to this PR" in bodies[-1]


def test_demo_exits_1_when_the_scenario_expects_something_else(tmp_path: Path) -> None:
    scenario = yaml.safe_load((SCENARIOS / "related.yml").read_text())
    scenario["expect"]["verdicts"] = {"tests/bus/test_core.py::test_publish_waits_for_ack": "flaky"}
    for check in scenario["checks"]:
        for attempt in check["attempts"]:
            if "log_file" in attempt:
                attempt["log_file"] = str((SCENARIOS / attempt["log_file"]).resolve())
    path = tmp_path / "wrong.yml"
    path.write_text(yaml.safe_dump(scenario))

    result = flakybot("demo", "--scenario", str(path), cwd=tmp_path)

    assert result.returncode == 1
    assert "expectations not met" in result.stdout
    assert "related" in result.stdout


def test_demo_refuses_an_invalid_scenario_with_a_clear_message(tmp_path: Path) -> None:
    path = tmp_path / "bad.yml"
    path.write_text("name: bad\nrepo: {owner: a, name: b}\nsurprise: 1\n")

    result = flakybot("demo", "--scenario", str(path), cwd=tmp_path)

    assert result.returncode == 2
    assert "surprise" in result.stderr
    assert "Traceback" not in result.stderr


async def wait_for(predicate: Callable[[], Awaitable[bool]], limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if await predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("condition not met in time")


async def test_a_killed_server_loses_nothing_and_doubles_nothing(tmp_path: Path) -> None:
    """SIGKILL `flakybot serve` mid-delivery; the restarted one takes the claim again."""
    scenario = builtin_scenario().model_copy(deep=True)
    scenario.faults.latency_ms = 600  # every API call is slow: the kill lands mid-handler
    database_url = f"sqlite:///{tmp_path / 'bot.sqlite3'}"
    port = free_port()
    async with Simulator(scenario, webhook_secret="kill-test-secret") as sim:
        env = serve_env(
            sim,
            secret="kill-test-secret",
            database_url=database_url,
            PORT=str(port),
            CLAIM_LEASE_SECONDS="2",
            LOG_LEVEL="WARNING",
        )
        sim.set_webhook_target(f"http://127.0.0.1:{port}/api/github/webhooks")

        def start() -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                [sys.executable, "-m", "bot.cli", "serve"],
                cwd=tmp_path,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )

        store = await open_store(database_url)
        server = start()
        try:
            await wait_listening(port)
            payload = sim.next_completion("tests (3.12)")
            assert await sim.send_webhook("check_run", payload) == 202

            async def claimed() -> bool:
                rows = await store.list_deliveries(10)
                return bool(rows) and rows[0].state == DeliveryState.CLAIMED

            await wait_for(claimed)
            server.send_signal(signal.SIGKILL)
            server.wait(timeout=10)
            assert sim.bot_comments(7) == []  # it died before finishing

            server = start()

            async def finished() -> bool:
                rows = await store.list_deliveries(10)
                return (
                    bool(rows)
                    and all(d.state == DeliveryState.DONE for d in rows)
                    and (sim.pending == 0)
                )

            await wait_for(finished, limit=90)
            await sim.drain()
            await wait_for(finished, limit=90)
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
            await store.close()

    deliveries = await _deliveries(database_url)
    first = [d for d in deliveries if d.event == "check_run"][-1]
    assert first.attempts == 2  # claimed by the killed process, then by the new one
    assert len(sim.bot_comments(7)) == 1
    assert "likely flaky, unrelated to this PR" in sim.bot_comments(7)[0].body


async def _deliveries(database_url: str) -> list[Delivery]:
    store = await open_store(database_url)
    try:
        return await store.list_deliveries(100)
    finally:
        await store.close()


def test_deliveries_lists_replays_and_shows_the_dead(tmp_path: Path) -> None:
    database_url = f"sqlite:///{tmp_path / 'bot.sqlite3'}"

    async def seed() -> None:
        store = await open_store(database_url)
        now = time.time()
        await store.put_delivery("d-ok", "check_run", "completed", b"{}", now)
        await store.put_delivery("d-dead", "issue_comment", "created", b"{}", now + 1)
        (dead,) = [d for d in await store.claim(now + 5, 60, 10) if d.id == "d-dead"]
        assert dead.claim_token is not None
        await store.dead_letter("d-dead", dead.claim_token, "ValueError: boom", now + 6)
        await store.close()

    asyncio.run(seed())
    env = clean_env(DATABASE_URL=database_url)

    listing = flakybot("deliveries", cwd=tmp_path, env=env)
    failed = flakybot("deliveries", "--failed", cwd=tmp_path, env=env)
    replay = flakybot("deliveries", "--replay", "d-dead", cwd=tmp_path, env=env)
    unknown = flakybot("deliveries", "--replay", "nope", cwd=tmp_path, env=env)
    after = flakybot("deliveries", "--failed", cwd=tmp_path, env=env)

    assert listing.returncode == 0 and "d-ok" in listing.stdout and "d-dead" in listing.stdout
    assert "d-dead" in failed.stdout and "ValueError: boom" in failed.stdout
    assert "d-ok" not in failed.stdout
    assert replay.returncode == 0
    assert unknown.returncode == 1 and "nope" in unknown.stderr
    assert "no dead-lettered deliveries" in after.stdout


async def test_serve_logs_which_log_scanner_it_uses(tmp_path: Path) -> None:
    port = free_port()
    async with Simulator(builtin_scenario(), webhook_secret="scanner-secret") as sim:
        env = serve_env(
            sim,
            secret="scanner-secret",
            database_url=f"sqlite:///{tmp_path / 'bot.sqlite3'}",
            PORT=str(port),
            LOG_SCANNER="re2",
        )
        server = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot.cli",
            "serve",
            cwd=tmp_path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            await wait_listening(port)
        finally:
            server.send_signal(signal.SIGTERM)
            _, stderr = await asyncio.wait_for(server.communicate(), 15)
    messages = [json.loads(line)["message"] for line in stderr.decode().splitlines()]
    assert "log scanner: re2" in messages


def test_serve_refuses_a_log_scanner_it_does_not_know(tmp_path: Path) -> None:
    result = flakybot("serve", cwd=tmp_path, env=clean_env(LOG_SCANNER="grep"))

    assert result.returncode == 2
    assert "log_scanner" in result.stderr.lower()


@pytest.mark.parametrize("command", ["serve", "migrate", "deliveries"])
@pytest.mark.parametrize(
    "url",
    [
        "sqlite:///{tmp}/a-file/bot.sqlite3",
        "postgresql://flaky:pa55word-not-shown@127.0.0.1:{port}/flaky",
        "mysql://127.0.0.1/flaky",
    ],
)
def test_a_database_it_cannot_open_is_one_line_naming_database_url(
    tmp_path: Path, private_key: str, command: str, url: str
) -> None:
    """Before, a 23 to 56 line traceback that never named the variable."""
    (tmp_path / "a-file").write_text("not a folder")
    env = clean_env(
        APP_ID="12",
        PRIVATE_KEY=private_key,
        WEBHOOK_SECRET="s3cr3t-for-the-database-test",
        DATABASE_URL=url.format(port=free_port(), tmp=tmp_path),
    )

    result = flakybot(command, cwd=tmp_path, env=env)

    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"flakybot {command}: cannot start: DATABASE_URL: ")
    assert "pa55word" not in line
