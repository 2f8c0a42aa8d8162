"""What a new user sees first: the demo's last lines, `flakybot parse`'s words, the
dashboard's chart and its verdicts in the PR comment's vocabulary."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from defusedxml import ElementTree

from bot.report.dashboard import chart_days, render_test
from bot.report.flaky_tests import summarise_tests
from bot.report.svg import outcome_chart
from bot.triage.models import Occurrence, RunRecord
from tests.fleet import APP_VARIABLES

SVG = "{http://www.w3.org/2000/svg}"
NOW = 1_796_000_000.0
REPO = "acme/shop"
GO_LOG = (
    "=== RUN   TestFoo\n--- FAIL: TestFoo (0.00s)\n    foo_test.go:12: boom\nFAIL\n"
    "FAIL\texample.com/m/foo\t0.01s\n"
)


def flakybot(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        cwd=cwd,
        env={k: v for k, v in os.environ.items() if k not in APP_VARIABLES},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_demo_prints_no_dashboard_address_that_is_already_closed(tmp_path: Path) -> None:
    result = flakybot("demo", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("dashboard: ")
    assert "http://" not in last
    assert "flakybot demo --serve" in last


def test_parse_says_1_failed_test_and_never_none(tmp_path: Path) -> None:
    (tmp_path / "go.log").write_text(GO_LOG)

    result = flakybot("parse", "go.log", cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert "job: 1 failed test\n" in result.stdout
    assert "None" not in result.stdout
    assert "file: (not named)" in result.stdout


def test_the_outcome_chart_has_axes_with_their_labels() -> None:
    days = [("Nov 28", 1, 0), ("Nov 29", 0, 0), ("Nov 30", 2, 3)]

    root = ElementTree.fromstring(outcome_chart(days, label="runs"))

    axis = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "axis")
    assert len(axis.findall(f"{SVG}line")) == 2
    labels = [t.text for t in root.iter(f"{SVG}text")]
    assert {"0", "5", "Nov 28", "Nov 30", "runs"} <= set(labels)


def _occurrence(verdict: str) -> Occurrence:
    return Occurrence(
        repo=REPO,
        check_run_id=1,
        check_name="tests",
        test_key="tests.a",
        test_id="tests/a",
        signature="sig",
        generic=False,
        head_sha="a" * 40,
        pr_number=1,
        at=NOW,
        verdict=verdict,
    )


def _run(attempt: int, conclusion: str) -> RunRecord:
    return RunRecord(
        repo=REPO,
        check_run_id=attempt,
        check_name="tests",
        head_sha="a" * 40,
        pr_number=1,
        attempt=attempt,
        conclusion=conclusion,
        completed_at=NOW,
    )


def _verdict_cells(occurrence: Occurrence, runs: list[RunRecord]) -> list[str]:
    (test,) = summarise_tests([occurrence], runs, now=NOW)
    html = render_test(REPO, test, [occurrence], chart_days([occurrence], runs, NOW, 30), runs)
    body = html.split('<tbody id="occurrences">', 1)[1].split("</tbody>", 1)[0]
    return re.findall(r"<td>([^<]*)</td></tr>", body)


def test_a_test_page_names_the_verdict_as_the_pr_comment_does() -> None:
    rerun_passed = [_run(1, "failure"), _run(2, "success")]

    assert _verdict_cells(_occurrence("unrelated"), rerun_passed) == ["likely flaky"]
    assert _verdict_cells(_occurrence("unknown"), rerun_passed) == ["flaky, change not ruled out"]
    assert _verdict_cells(_occurrence("unrelated"), rerun_passed[:1]) == ["unrelated"]
    assert _verdict_cells(_occurrence("broken-base"), rerun_passed[:1]) == [
        "fails on the base branch too"
    ]
