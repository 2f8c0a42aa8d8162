"""The shapes a pasted job log comes in (issue 17, item 5), read as the raw log they came from.

The real `gh run view --log-failed` capture is tests/fixtures/logs/gh/motion5_log_failed.txt.
The other shapes are made here from real raw logs exactly as the tool that makes them does:
gh prints `job<TAB>step<TAB>` before each line of a step's log (cli/cli
`pkg/cmd/run/view/view.go`), a run's log archive holds `N_job.txt` and `job/N_step.txt`
files, a terminal copy writes ESC as `^[`, and a log copied from the web view has no
timestamps. Each is checked against what the raw log itself gives.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from bot.job_logs import read_job_logs
from bot.triage.failures import extract_from_chunks
from bot.triage.parsers.log_forms import LogForm, archive_jobs, jobs_of, sniff

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT / "tests" / "fixtures" / "logs"
GH = LOGS / "gh" / "motion5_log_failed.txt"
STREAMPARK = LOGS / "maven" / "streampark_surefire2_junit5.log"
MINITEST = LOGS / "minitest" / "github_diff_parser_failures.log"
STAMP = re.compile(rb"^\d{4}-\d\d-\d\dT[\d:.]+Z ?", re.MULTILINE)


def _ids(data: bytes) -> list[str]:
    return [f.test_id for f in extract_from_chunks([data]).failures]


def _parse_json(*paths: Path) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "parse", "--json", *map(str, paths)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result: list[dict[str, Any]] = json.loads(done.stdout)
    return result


def test_sniff_tells_each_form_from_its_first_lines() -> None:
    raw = STREAMPARK.read_bytes()
    assert sniff(raw) == LogForm("raw", timestamps=True)
    assert sniff(STAMP.sub(b"", raw)) == LogForm("plain", timestamps=False)
    assert sniff(GH.read_bytes()) == LogForm("gh-run-view", timestamps=True, caret_escapes=True)
    assert sniff(b"") == LogForm("plain", timestamps=False)


def test_gh_output_is_split_by_job_with_its_prefixes_cut() -> None:
    form = sniff(GH.read_bytes())
    data = GH.read_bytes()
    # Chunks that cut lines anywhere: the pieces are whole lines all the same.
    chunks = [data[i : i + 777] for i in range(0, len(data), 777)]
    pieces = list(jobs_of(form, chunks))
    jobs = list(dict.fromkeys(job for job, _ in pieces))
    assert jobs == ["quality (node 24)", "integration (node 24)", "build (node 24)"]
    text = b"".join(piece for _, piece in pieces)
    assert b"\t" not in text.replace(b"\t\t", b"")  # no `job<TAB>step<TAB>` left
    assert b"^[" not in text and b"\x1b[31m" in text
    # An annotation's continuation line has no timestamp: its prefix goes too.
    assert b"\n \xe2\x9d\xaf load packages/core/test/integration/single-input-channel" in text


def test_gh_log_failed_capture_finds_the_vitest_failures_of_its_job() -> None:
    found = {form.job: extraction for form, extraction in read_job_logs(GH)}

    assert list(found) == ["quality (node 24)", "integration (node 24)", "build (node 24)"]
    integration = found["integration (node 24)"]
    # Vitest's own separator between file, suite and test is U+203A.
    leaf = "packages/core/test/integration/bare-authored-leaf.test.ts \u203a the bare authored leaf"
    assert [f.test_id for f in integration.failures] == [
        f"{leaf} \u203a LF-5 interpolates a bare array of stops",
        f"{leaf} \u203a LF-6 publishes a bare static value and holds it at every progress",
    ]
    assert integration.failures[0].message == "TypeError: readGoalSlot is not a function"
    # The type-check jobs ran no tests: nothing is made up for them.
    assert found["quality (node 24)"].failures == []
    assert found["build (node 24)"].failures == []


@pytest.mark.parametrize("log", [STREAMPARK, MINITEST], ids=lambda p: p.parent.name)
def test_every_form_of_a_real_log_reads_as_the_raw_log(log: Path, tmp_path: Path) -> None:
    raw = log.read_bytes()
    expected = _ids(raw)
    assert expected  # the raw log itself names failed tests
    plain = STAMP.sub(b"", raw)
    carets = raw.replace(b"[ERROR]", b"^[[31m[ERROR]^[[0m").replace(
        b"Failure:", b"^[[31mFailure:^[[0m"
    )
    gh = b"".join(b"test\tRun tests\t" + line for line in raw.splitlines(keepends=True))
    shapes = {"plain.log": plain, "carets.log": carets, "gh.txt": gh}
    for name, data in shapes.items():
        (tmp_path / name).write_bytes(data)
        ((_, extraction),) = read_job_logs(tmp_path / name)
        assert [f.test_id for f in extraction.failures] == expected, name
    assert sniff(carets).caret_escapes


def test_a_run_log_archive_is_read_job_by_job(tmp_path: Path) -> None:
    archive = tmp_path / "logs_30154978928.zip"
    raw = STREAMPARK.read_bytes()
    half = raw.index(b"[INFO] Results:")
    half = raw.rindex(b"\n", 0, half) + 1
    with zipfile.ZipFile(archive, "w") as zf:
        # The whole job's log at the top, and its steps in a folder: read once, not twice.
        zf.writestr("1_unit-test.txt", raw)
        zf.writestr("unit-test/1_Set up job.txt", b"")
        zf.writestr("unit-test/4_Run tests.txt", raw)
        # A job with only its steps' files: read in step order, across files.
        zf.writestr("ruby/10_Post job cleanup.txt", raw[half:])
        zf.writestr("ruby/9_Run tests.txt", raw[:half])

    results = list(read_job_logs(archive))

    assert [(form.kind, form.job, form.timestamps) for form, _ in results] == [
        ("archive", "unit-test", True),
        ("archive", "ruby", True),
    ]
    expected = _ids(raw)
    assert [f.test_id for f in results[0][1].failures] == expected
    assert [f.test_id for f in results[1][1].failures] == expected


def test_archive_jobs_orders_steps_by_number() -> None:
    names = ["b/10_Post.txt", "b/2_Run.txt", "2_a.txt", "a/1_Set up job.txt", "b/notes.md"]
    assert archive_jobs(names) == [("a", ["2_a.txt"]), ("b", ["b/2_Run.txt", "b/10_Post.txt"])]


def test_parse_says_which_form_it_read(tmp_path: Path) -> None:
    archive = tmp_path / "run.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("1_test.txt", MINITEST.read_bytes())

    results = _parse_json(GH, archive, MINITEST)

    assert [(r["log_form"]["kind"], r["log_form"]["job"]) for r in results] == [
        ("gh-run-view", "quality (node 24)"),
        ("gh-run-view", "integration (node 24)"),
        ("gh-run-view", "build (node 24)"),
        ("archive", "test"),
        ("raw", None),
    ]
    assert results[1]["read_as"] == (
        '`gh run view --log` output (job "integration (node 24)", timestamps, '
        "escape codes written as ^[)"
    )
    assert results[1]["job"] == "tests-failed"
    assert [f["test_id"] for f in results[3]["failures"]] == [
        "GithubDiffParserTest#test_boom1",
        "GithubDiffParserTest#test_boom3",
        "GithubDiffParserTest#test_boom2",
    ]
    human = subprocess.run(
        [sys.executable, "-m", "bot.cli", "parse", str(MINITEST)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert human.startswith(f"{MINITEST}: read as raw job log (timestamps)\n")
