"""Many PRs and real `flakybot serve` processes: what the replica test and benches share."""

from __future__ import annotations

import asyncio
import os
import random
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.sim.scenario import Scenario

if TYPE_CHECKING:
    from bot.sim.server import Simulator

_STAMP = "2026-11-30T10:00:00.0000000Z "


def failing_log(shard: int) -> str:
    """A pytest job log in which `tests/shard{shard}/test_io.py::test_reads_back` fails."""
    lines = [
        "##[group]Run pytest",
        "============================= test session starts ==============================",
        f"tests/shard{shard}/test_io.py::test_reads_back F",
        "=================================== FAILURES ===================================",
        "________________________________ test_reads_back _______________________________",
        f"tests/shard{shard}/test_io.py:12: in test_reads_back",
        "    assert read() == b'x'",
        "E   AssertionError: assert b'' == b'x'",
        "=========================== short test summary info ============================",
        f"FAILED tests/shard{shard}/test_io.py::test_reads_back"
        " - AssertionError: assert b'' == b'x'",
        "============================== 1 failed in 0.10s ===============================",
        "##[endgroup]",
        "##[error]Process completed with exit code 1.",
    ]
    return "\n".join(_STAMP + line for line in lines) + "\n"


def check_name(pr: int, shard: int) -> str:
    return f"tests shard {shard} (pr {pr})"


def many_prs(prs: int, checks: int, *, latency_ms: int = 0) -> Scenario:
    """`prs` PRs that change only docs, each with `checks` failing Actions checks, no reruns.

    `latency_ms` makes every GitHub call wait exactly that long.
    """
    return Scenario.model_validate(
        {
            "name": f"{prs}-prs",
            "repo": {"owner": "acme", "name": "bus"},
            "files": {".github/flaky.yml": "rerun: false\n"},
            "faults": {"latency_ms": latency_ms, "latency": "fixed"},
            "pull_requests": [
                {
                    "number": pr,
                    "title": f"change {pr}",
                    "author": f"dev{pr % 7}",
                    "head_sha": f"{pr:040x}",
                    "base_sha": "f" * 40,
                    "head_ref": f"topic-{pr}",
                    "files": [f"docs/page{pr}.md"],
                }
                for pr in range(1, prs + 1)
            ],
            "checks": [
                {
                    "name": check_name(pr, shard),
                    "pr": pr,
                    "attempts": [{"conclusion": "failure", "log": failing_log(shard)}],
                }
                for pr in range(1, prs + 1)
                for shard in range(checks)
            ],
        }
    )


# Below Linux's default ephemeral range (32768-60999): a server restarted on its port must
# not find it taken by some client's outgoing connection, which the kernel numbers from there.
_PORTS = range(20_000, 32_000)


_handed_out: set[int] = set()


def free_port() -> int:
    """A port nothing listens on now, outside the range outgoing connections are given, and
    never one this process handed out before (two servers asked for at once get two)."""
    for _ in range(200):
        port = random.choice(_PORTS)
        if port in _handed_out:
            continue
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise OSError(f"no free port found in {_PORTS.start}-{_PORTS.stop - 1}")


# Settings a `flakybot serve` started here must not inherit from the caller's environment.
APP_VARIABLES = (
    "APP_ID",
    "PRIVATE_KEY",
    "PRIVATE_KEY_PATH",
    "WEBHOOK_SECRET",
    "GITHUB_API_URL",
    "DATABASE_URL",
    "DASHBOARD_TOKEN",
    "GHE_HOST",
    "GHE_PROTOCOL",
    "WEBHOOK_PROXY_URL",
)


def serve_env(sim: Simulator, *, secret: str, database_url: str, **settings: str) -> dict[str, str]:
    """The environment of a `flakybot serve` wired to this simulator: this process's own,
    less any App settings it holds, plus the simulator's App, `secret`, the database and
    `settings` (e.g. PORT="3001", WRITE_INTERVAL="0")."""
    env = {k: v for k, v in os.environ.items() if k not in APP_VARIABLES}
    env.update(
        APP_ID=str(sim.app_id),
        PRIVATE_KEY=sim.private_key_pem,
        WEBHOOK_SECRET=secret,
        GITHUB_API_URL=sim.url,
        DATABASE_URL=database_url,
        HOST="127.0.0.1",
        # A tally is written a moment after its failures, not a minute: runs end sooner.
        TRACKING_REFRESH_SECONDS="0.2",
        # Every delivery comes from 127.0.0.1 here, standing for GitHub's many senders: the
        # per-client cap (a defence against one slow peer) would cut the fleet's bursts.
        MAX_CONNECTIONS_PER_CLIENT="1000",
    )
    env.update(settings)
    return env


def start_serve(env: dict[str, str], cwd: Path) -> subprocess.Popen[bytes]:
    """`flakybot serve` in a process of its own, configured by `env` alone."""
    return subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "serve"],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


async def wait_listening(port: int, limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.1)
            continue
        writer.close()
        await writer.wait_closed()
        return
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {limit:.0f}s")


def flaky_prs(prs: int, checks: int, *, faults: dict[str, Any] | None = None) -> Scenario:
    """`prs` PRs that change only docs, each with `checks` Actions jobs that fail once and pass
    on rerun (`rerun: true`). Each job's test fails on every PR, by several authors, so it
    earns a tracking issue. `faults`: the scenario's `faults` block."""
    scenario = many_prs(prs, checks).model_dump()
    scenario["name"] = f"{prs}-flaky-prs"
    scenario["files"] = {".github/flaky.yml": "rerun: true\n"}
    scenario["faults"] = faults or {}
    for check in scenario["checks"]:
        check["attempts"].append({"conclusion": "success", "log": "1 passed\n"})
    return Scenario.model_validate(scenario)
