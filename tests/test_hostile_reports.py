"""Hostile artifacts end to end: XXE and billion-laughs JUnit, a zip bomb, `../` entry names,
entries that expand a thousandfold just under the compression-ratio check.

The real bot against the simulator over HTTP. Each is refused, named in the PR comment, and
leaves the rest of the job's evidence to be read as usual.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

from bot.demo import final_verdicts, running, settle
from bot.handlers.job_evidence import JOB_EXPANDED_BYTES
from bot.sim.scenario import Scenario, builtin_scenario
from bot.sim.webhooks import issue_comment_created
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
        **raw["files"],
        # The test the JUnit reports below name; the walk reads what it imports.
        "tests/bus/test_store.py": "from bus.core import Bus\n",
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


def _under_the_ratio_floor(entries: int) -> bytes:
    """A zip of `entries` JUnit files of just under 1 MiB, each deflated about 1000-fold:
    below the size where a compression ratio is checked."""
    head = b'<testsuite name="pytest"><testcase name="t"><system-out>'
    tail = b"</system-out></testcase></testsuite>"
    filler = head + b"a" * (MIB - 1 - len(head) - len(tail)) + tail
    return _zip({"reports/junit.xml": JUNIT} | {f"out/r{i}.xml": filler for i in range(entries)})


async def test_artifacts_expanding_past_their_caps_are_refused_and_status_reads_them_so_too(
    tmp_path: Path,
) -> None:
    # Issue #18.3: a 224 KB zip expanding to 208 MB (199 such entries) passed every check, and
    # five took `flakybot serve` past its memory limit; /flaky status read them again. Here
    # one is that zip and four expand to 30 MiB each: under an artifact's cap, over the job's.
    # Before the fix all five were read whole, nothing refused.
    names = [f"junit-{i}" for i in range(5)]
    scenario = _world([{"name": name, "files": {"r.xml": "<placeholder/>"}} for name in names])
    huge, large = _under_the_ratio_floor(199), _under_the_ratio_floor(30)
    assert len(huge) < 300 * 1024
    async with running(scenario, tmp_path) as (sim, bot):
        payload = sim.next_completion("tests (3.12)")
        artifacts = sorted(sim.world.artifacts.values(), key=lambda a: a.name)
        for artifact in artifacts:
            artifact.data = huge if artifact.name == "junit-4" else large
        assert await sim.send_webhook("check_run", payload) == 202
        await settle(sim, bot)
        verdicts = await final_verdicts(bot.store, "acme/bus", [7])
        (triaged,) = sim.bot_comments(7)
        first_body = triaged.body
        asked = sim.world.add_comment(7, "octo-dev", "/flaky status")
        await sim.send_webhook("issue_comment", issue_comment_created(sim.shapes, asked))
        await settle(sim, bot)
        stored = await bot.store.list_deliveries(100)
        (refreshed,) = sim.bot_comments(7)

    assert all(d.state == "done" for d in stored)
    # What fits is read: the report's failure joins the log's.
    assert verdicts == {LOG_TEST: "unrelated", REPORT_TEST: "unrelated"}
    for body in (first_body, refreshed.body):
        # Newest first: the 208 MB one is refused before a byte is expanded, two of 30 MiB
        # fit the job's 64 MiB, the next stops mid-read and the last is not downloaded.
        declared = 199 * (MIB - 1) + len(JUNIT)
        assert f"not read: junit-4: refused: {declared} bytes declared uncompressed" in body
        over_job = f"refused: the job's reports are over {JOB_EXPANDED_BYTES} bytes decompressed"
        assert f"not read: junit-1: {over_job}" in body
        assert f"not read: artifact junit-0: {over_job}" in body
        assert "junit-3" not in body
        assert "junit-2" not in body
    assert [r.content for r in sim.reactions(asked.id)] == ["eyes", "rocket"]
