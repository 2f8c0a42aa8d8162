"""Hostile artifacts end to end: XXE and billion-laughs JUnit, a zip bomb, `../` entry names.

The real bot against the simulator over HTTP. Each is refused, named in the PR comment, and
leaves the rest of the job's evidence to be read as usual.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

from bot.demo import final_verdicts, running, settle
from bot.sim.scenario import Scenario, builtin_scenario
from bot.triage.reports.artifacts import MIB

REPORTS = Path(__file__).parent / "fixtures" / "reports"
LOG_TEST = "tests/bus/test_core.py::test_publish_waits_for_ack"
REPORT_TEST = "tests/bus/test_store.py::TestStore::test_flush"

JUNIT = b"""<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="1" failures="1">
<testcase classname="tests.bus.test_store.TestStore" name="test_flush"
 file="tests/bus/test_store.py" line="12">
<failure message="AssertionError: flushed 0 of 3">AssertionError: flushed 0 of 3</failure>
</testcase></testsuite></testsuites>
"""


def _world(artifacts: list[dict[str, Any]]) -> Scenario:
    """The demo's PR #7 with one failed attempt that uploads these artifacts, read as reports."""
    raw = builtin_scenario().model_dump(mode="json", exclude_none=True)
    failing = raw["checks"][0]["attempts"][0]
    failing["artifacts"] = artifacts
    raw["checks"][0]["attempts"] = [failing]
    raw["files"] = {
        ".github/flaky.yml": "rerun: false\nreports:\n  - artifact: 'junit*'\n",
    }
    raw.pop("expect", None)
    return Scenario.model_validate(raw)


def _zip(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in entries.items():
            archive.writestr(name, content)
    return buffer.getvalue()


async def test_entity_reports_are_refused_and_named_and_the_log_still_triaged(
    tmp_path: Path,
) -> None:
    scenario = _world(
        [
            {
                "name": "junit",
                "files": {
                    "xxe.xml": (REPORTS / "xxe.xml").read_bytes(),
                    "laughs.xml": (REPORTS / "billion-laughs.xml").read_bytes(),
                },
            }
        ]
    )
    async with running(scenario, tmp_path) as (sim, bot):
        await sim.play()
        await settle(sim, bot)
        verdicts = await final_verdicts(bot.store, "acme/bus", [7])
        stored = await bot.store.list_deliveries(100)

    assert all(d.state == "done" for d in stored)
    # The log's failure is judged as usual; the reports add nothing.
    assert verdicts == {LOG_TEST: "unrelated"}
    (comment,) = sim.bot_comments(7)
    for name in ("junit/xxe.xml", "junit/laughs.xml"):
        assert f"not read: {name}: refused: XML entities are not allowed" in comment.body
    # Nothing the entities name reached the comment: no file read, no expansion.
    assert "root:" not in comment.body
    assert "lollol" not in comment.body
    assert "not read: log" not in comment.body  # the log was small enough to read whole


async def test_a_zip_bomb_is_refused_and_named(tmp_path: Path) -> None:
    scenario = _world([{"name": "junit-bomb", "files": {"report.xml": bytes(20 * MIB)}}])
    async with running(scenario, tmp_path) as (sim, bot):
        await sim.play()
        await settle(sim, bot)
        verdicts = await final_verdicts(bot.store, "acme/bus", [7])

    assert verdicts == {LOG_TEST: "unrelated"}
    (comment,) = sim.bot_comments(7)
    assert "not read: junit-bomb: refused: report.xml compresses " in comment.body


async def test_entries_named_outside_the_archive_are_skipped_and_the_rest_is_read(
    tmp_path: Path,
) -> None:
    # A scenario refuses such names (upload-artifact never makes them), so the zip is swapped
    # in after the simulator built the artifact: what a hostile uploader could serve.
    scenario = _world([{"name": "junit", "files": {"report.xml": "<placeholder/>"}}])
    hostile = _zip(
        {
            "../../etc/cron.d/evil.xml": JUNIT,
            "/abs/evil.xml": JUNIT,
            "reports/../../up.xml": JUNIT,
            "reports/junit.xml": JUNIT,
        }
    )
    async with running(scenario, tmp_path) as (sim, bot):
        payload = sim.next_completion("tests (3.12)")
        (artifact,) = sim.world.artifacts.values()
        artifact.data = hostile
        assert await sim.send_webhook("check_run", payload) == 202
        await settle(sim, bot)
        verdicts = await final_verdicts(bot.store, "acme/bus", [7])

    # The one safe entry is read (its failure joins the log's); the others are named.
    assert verdicts == {LOG_TEST: "unrelated", REPORT_TEST: "unrelated"}
    (comment,) = sim.bot_comments(7)
    for name in ("../../etc/cron.d/evil.xml", "/abs/evil.xml", "reports/../../up.xml"):
        assert f"not read: junit: skipped unsafe entry name '{name}'" in comment.body


async def test_a_job_whose_only_report_is_refused_says_so_in_its_row(tmp_path: Path) -> None:
    scenario = _world([{"name": "junit", "files": {"xxe.xml": (REPORTS / "xxe.xml").read_bytes()}}])
    scenario.checks[0].attempts[0] = (
        scenario.checks[0]
        .attempts[0]
        .model_copy(
            update={
                "log": "2026-11-30T10:00:41Z ##[error]Process completed with exit code 2.\n",
                "annotations": [],
            }
        )
    )
    async with running(scenario, tmp_path) as (sim, bot):
        await sim.play()
        await settle(sim, bot)

    (comment,) = sim.bot_comments(7)
    (row,) = [line for line in comment.body.splitlines() if "_no test identified_" in line]
    assert "no failed test could be identified in the log; not read: junit/xxe.xml: refused" in row
    assert sim.reruns == []
