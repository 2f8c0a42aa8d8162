"""Scenario files: loading, defaults, log files, and clear errors for wrong ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.sim import ScenarioError, builtin_scenario, load_scenario
from bot.sim.scenario import ArtifactSpec, CheckEvent

SCENARIOS = Path(__file__).resolve().parent / "scenarios"

MINIMAL = """
name: tiny
repo: {owner: acme, name: bus}
pull_requests:
  - {number: 1, title: t, author: a, head_sha: h, base_sha: b, head_ref: x,
     files: [a.py, {filename: b.py, status: renamed, previous_filename: old.py}]}
checks:
  - name: unit
    pr: 1
    attempts: [{conclusion: failure, log_file: unit.log, artifacts: []}]
"""
ARTIFACT = "artifacts: []"


def write(tmp_path: Path, text: str, log: str | None = "line\n") -> Path:
    if log is not None:
        (tmp_path / "unit.log").write_text(log)
    path = tmp_path / "scenario.yml"
    path.write_text(text)
    return path


def test_builtin_demo_is_complete() -> None:
    demo = builtin_scenario()
    [check] = demo.checks
    assert [a.conclusion for a in check.attempts] == ["failure", "success"]
    log = check.attempts[0].log or ""
    assert "1 failed, 41 passed in 3.20s" in log
    assert "##[error]Process completed with exit code 1." in log
    assert [f.filename for f in demo.pull_requests[0].files] == ["docs/usage.md", "src/cli.py"]
    assert demo.expect.reruns == 1
    assert demo.planned_events() == [CheckEvent(check="tests (3.12)")]


@pytest.mark.parametrize("name", ["related.yml", "fork.yml"])
def test_test_scenarios_load(name: str) -> None:
    scenario = load_scenario(SCENARIOS / name)
    assert "test_publish_waits_for_ack" in (scenario.checks[0].attempts[0].log or "")


def test_defaults_and_relative_log_files(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, MINIMAL, log="from the file\n"))
    assert (scenario.app.id, scenario.app.slug, scenario.app.installation_id) == (
        1,
        "flaky-triage",
        1,
    )
    assert scenario.repo.default_branch == "main" and scenario.repo.private is False
    pr = scenario.pull_requests[0]
    assert (pr.base_ref, pr.fork, pr.state) == (None, False, "open")
    assert [(f.filename, f.previous_filename) for f in pr.files] == [
        ("a.py", None),
        ("b.py", "old.py"),
    ]
    check = scenario.checks[0]
    assert (check.app, check.rerun_status) == ("github-actions", None)
    assert check.attempts[0].log == "from the file\n"
    assert scenario.faults.latency_ms == 0 and scenario.faults.rules == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("name: tiny", "name: tiny\ncolour: red"), "colour: unknown key"),
        (("pr: 1", "pr: 2"), "unknown pull request 2"),
        (("conclusion: failure", "conclusion: exploded"), "attempts.0.conclusion"),
        (("log_file: unit.log", "log_file: missing.log"), "cannot read log_file 'missing.log'"),
        (("log_file: unit.log", "log: x, log_file: unit.log"), "either log or log_file"),
        (("status: renamed, ", ""), "previous_filename is required"),
        (("checks:", "events: [{check: nope}]\nchecks:"), "unknown check 'nope'"),
        (("checks:", "faults: {rules: [{path: '(', status: 500}]}\nchecks:"), "regular expr"),
        (("checks:", "faults: {rules: [{path: x}]}\nchecks:"), "exactly one of status"),
        (("checks:", "collaborators: {bob: owner}\nchecks:"), "collaborators.bob"),
        ((ARTIFACT, "artifacts: [{name: r, files: {a.xml: x}, colour: red}]"), "colour: unknown"),
        ((ARTIFACT, "artifacts: [{name: r}]"), "at least one file"),
        ((ARTIFACT, "artifacts: [{name: 'a/b', files: {a.xml: x}}]"), "not a valid artifact name"),
        ((ARTIFACT, "artifacts: [{name: r, files: {../a.xml: x}}]"), "not a relative path"),
        ((ARTIFACT, "artifacts: [{name: r, files_from: {/a.xml: x}}]"), "not a relative path"),
        (
            (ARTIFACT, "artifacts: [{name: r, files: {a: x}, files_from: {a: unit.log}}]"),
            "in both files and files_from: ['a']",
        ),
        (
            (ARTIFACT, "artifacts: [{name: r, files: {a: x}}, {name: r, files: {b: y}}]"),
            "artifact names must be unique",
        ),
        (
            (ARTIFACT, "artifacts: [{name: r, files_from: {a: gone.xml}}]"),
            "attempt 1: artifact 'r': cannot read 'gone.xml'",
        ),
        (
            (ARTIFACT + "}]", "artifacts: [{name: r, files: {a: x}}]}]\n    app: circleci"),
            "only GitHub Actions checks upload artifacts",
        ),
    ],
)
def test_invalid_scenarios_say_what_is_wrong(
    tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    text = MINIMAL.replace(*change, 1)
    with pytest.raises(ScenarioError, match=r"scenario\.yml") as caught:
        load_scenario(write(tmp_path, text))
    assert message in str(caught.value)


def test_artifact_files_are_read_as_bytes(tmp_path: Path) -> None:
    trx = "\ufeff<TestRun>\r\n</TestRun>\r\n".encode()
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "run.trx").write_bytes(trx)
    artifacts = (
        "artifacts: [{name: results, files: {junit.xml: '<testsuite/>'},"
        " files_from: {dotnet/run.trx: reports/run.trx}}]"
    )
    scenario = load_scenario(write(tmp_path, MINIMAL.replace(ARTIFACT, artifacts)))
    [artifact] = scenario.checks[0].attempts[0].artifacts
    assert artifact.files_from == {}
    assert artifact.contents() == {"junit.xml": b"<testsuite/>", "dotnet/run.trx": trx}


def test_unread_files_from_is_refused() -> None:
    artifact = ArtifactSpec(name="results", files_from={"run.trx": "run.trx"})
    with pytest.raises(ValueError, match="files_from is read by load_scenario"):
        artifact.contents()


def test_not_yaml_or_not_a_mapping(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="not valid YAML"):
        load_scenario(write(tmp_path, "name: [unclosed"))
    with pytest.raises(ScenarioError, match="mapping"):
        load_scenario(write(tmp_path, "- just a list"))
    with pytest.raises(ScenarioError, match="cannot read"):
        load_scenario(tmp_path / "absent.yml")
