"""The list of quarantined tests a workflow reads with its own GITHUB_TOKEN, end to end: the
real bot quarantines a test on its tracking issue (simulator, real HTTP, both databases), then
docs/snippets/quarantined-from-issues.sh runs for real (bash, curl, jq) against the
simulator's issues API, as a workflow would against GitHub's: it writes the list the
dashboard serves, less what has expired."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from bot.demo import running
from bot.report.quarantine_list import marker, quarantine_list
from bot.sim.server import Simulator
from bot.sim.state import Issue, now
from bot.triage.quarantine import DAY, Quarantine
from tests.test_commands_e2e import MAINTAINER, REPO, say
from tests.test_quarantine_e2e import ISSUE, LABEL, QUARANTINE_ON, fail_and_track, tracked

SNIPPET = Path(__file__).resolve().parents[1] / "docs" / "snippets" / "quarantined-from-issues.sh"


def expired_elsewhere(sim: Simulator) -> int:
    """An issue still labelled for a quarantine past its expiry (ended on record when next
    read), its hidden line as the bot writes it; its number."""
    number = sim.world.next_issue_number()
    gone = Quarantine(
        repo=REPO,
        test_key="tests.bus.test_wire.test_frame",
        test_id="tests/bus/test_wire.py::test_frame",
        issue_number=number,
        by=MAINTAINER,
        owner=MAINTAINER,
        since=time.time() - 15 * DAY,
        expires_at=time.time() - DAY,
    )
    moment = now()
    sim.world.issues[number] = Issue(
        number=number,
        id=sim.world.new_id("issue"),
        title="frame test fails",
        body=f"**Quarantined** until long ago\n{marker(gone)}\n",
        state="open",
        user=MAINTAINER,
        labels=[LABEL],
        created_at=moment,
        updated_at=moment,
    )
    return number


async def test_a_workflow_reads_the_quarantined_tests_from_the_labelled_issues(
    tmp_path: Path, store_url: str
) -> None:
    for tool in ("bash", "curl", "jq"):
        if shutil.which(tool) is None:
            pytest.skip(f"optional tool: {tool} is not installed (.ci/run installs jq)")
    async with running(tracked(QUARANTINE_ON), tmp_path, database_url=store_url) as (sim, bot):
        await fail_and_track(sim, bot)
        await say(sim, bot, MAINTAINER, "/flaky quarantine 7d", issue=ISSUE)
        on = await bot.store.active_quarantines(REPO, time.time())
        expired_elsewhere(sim)
        token, _ = sim.tokens.issue()
        env = {
            **os.environ,
            "GITHUB_API_URL": sim.url,
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_TOKEN": token,
        }
        shell = await asyncio.create_subprocess_exec(
            "bash",
            "-eo",
            "pipefail",
            str(SNIPPET),
            cwd=tmp_path,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        output, _ = await shell.communicate()
        body = sim.world.issues[ISSUE].body

    assert shell.returncode == 0, output.decode()
    assert LABEL in sim.labels(ISSUE)
    assert marker(on[0]) in body.splitlines()
    listed = json.loads((tmp_path / "quarantined.json").read_text())
    assert listed == {"version": 1, "tests": quarantine_list(REPO, on, time.time())["tests"]}
