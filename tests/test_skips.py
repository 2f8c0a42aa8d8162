"""tests/skips.py, run on a small suite of its own in a pytest process of its own: an
optional tool's skip is counted by category, any other skip fails the run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.skips import skip_category

ROOT = Path(__file__).resolve().parents[1]

SUITE = """
import pytest

def test_runs() -> None:
    pass

def test_needs_a_browser() -> None:
    pytest.skip("optional tool: Chromium is not installed")

@pytest.mark.skipif(True, reason="platform: needs /proc (Linux)")
def test_needs_proc() -> None:
    pass
"""


def run_suite(tmp_path: Path, extra: str = "") -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["tests.skips"]\n')
    (tmp_path / "test_suite.py").write_text(SUITE + extra)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_optional_tool_and_platform_skips_pass_and_are_counted(tmp_path: Path) -> None:
    done = run_suite(tmp_path)

    assert done.returncode == 0, done.stdout
    assert "skips by category" in done.stdout
    assert "optional tool: 1\n    1 x optional tool: Chromium is not installed" in done.stdout
    assert "platform: 1\n    1 x platform: needs /proc (Linux)" in done.stdout


def test_a_skip_for_a_missing_file_fails_the_run(tmp_path: Path) -> None:
    missing = """
def test_reads_a_fixture() -> None:
    pytest.skip("tests/fixtures/corpus/x.json not found")
"""
    done = run_suite(tmp_path, missing)

    assert done.returncode == 1, done.stdout
    assert "unexplained: 1 (fails the run" in done.stdout
    assert "1 x tests/fixtures/corpus/x.json not found" in done.stdout


def test_categories_are_read_from_the_start_of_the_reason() -> None:
    assert skip_category("optional tool: hyperscan is not installed") == "optional tool"
    assert skip_category("platform: needs /proc (Linux)") == "platform"
    assert skip_category("no optional tool: here") == "unexplained"
