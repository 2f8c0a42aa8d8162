"""Reports found without configuration, end to end: the real bot and the simulator over HTTP.
The jobs of one workflow run upload reports to one list of artifacts; each job's failures
must come from its own."""

from __future__ import annotations

from pathlib import Path

from bot.demo import running
from bot.sim import Simulator
from bot.sim.scenario import Scenario, load_scenario
from bot.store.models import CheckAttempt

SCENARIO = Path(__file__).parent / "scenarios" / "report-discovered.yml"
LIST = "GET /repos/{owner}/{repo}/actions/runs/{run_id}/artifacts"
ZIP = "GET /repos/{owner}/{repo}/actions/artifacts/{artifact_id}/zip"
EXPIRY = "tests/store/test_cache.py::TestCache::test_expiry"
EVICTION = "tests/store/test_cache.py::TestCache::test_eviction"
SEP = " \u203a "  # Playwright's title path
NEGATIVE = SEP.join(["e2e/cart.spec.js", "cart", "refuses a negative discount"])
RETRIED = SEP.join(["e2e/cart.spec.js", "cart", "passes on retry"])


def with_settings(flaky_yml: str) -> Scenario:
    world = load_scenario(SCENARIO)
    return world.model_copy(update={"files": {".github/flaky.yml": flaky_yml}})


async def first_attempts(
    world: Scenario, workdir: Path, *, upload_lines: bool = True
) -> tuple[Simulator, dict[str, set[str]]]:
    """Each job's first attempt triaged in turn (reruns accepted, never completed): the
    simulator, and the failed tests the bot recorded for each job. Without `upload_lines`
    the jobs' logs do not say what they uploaded (an upload tool that says nothing)."""
    async with running(world, workdir) as (sim, bot):
        sim.rerun_delay_s = 1e9
        if not upload_lines:
            sim.world.upload_log = lambda run: ""  # type: ignore[method-assign]
        await sim.play(after_each=lambda: bot.wait_idle(settle_seconds=0.05))
        attempts = await bot.store.check_attempts_for_pr("acme/store", 11)
    return sim, {attempt.check_name: _tests(attempt) for attempt in attempts}


def _tests(attempt: CheckAttempt) -> set[str]:
    return {d.failure.test_id for d in attempt.decisions if d.failure is not None}


async def test_each_job_reads_the_reports_it_uploaded_and_no_siblings(tmp_path: Path) -> None:
    sim, failed = await first_attempts(load_scenario(SCENARIO), tmp_path)

    # tests (3.12) ran after tests (3.11) had uploaded its report to the same run: the run's
    # list held both, and only its own was read.
    assert failed["tests (3.11)"] == {EVICTION}
    assert failed["tests (3.12)"] == {EXPIRY}
    # Playwright's JSON, in an artifact whose name says nothing, read for its content.
    assert failed["e2e"] == {NEGATIVE, RETRIED}
    assert failed["build"] == set()
    # The run's list once per job that uploaded something a name does not rule out (build
    # uploaded only a wheel: no call), and one download per report: coverage-3.12 and the
    # wheel were never downloaded.
    assert sim.calls[LIST] == 3
    assert sim.calls[ZIP] == 3
    comment = sim.bot_comments(11)[0].body
    assert "not read" not in comment  # coverage.xml and the wheel are not named as problems


async def test_a_job_whose_log_names_no_upload_reads_none_and_costs_no_call(
    tmp_path: Path,
) -> None:
    sim, failed = await first_attempts(load_scenario(SCENARIO), tmp_path, upload_lines=False)

    assert all(tests == set() for tests in failed.values())
    assert sim.calls[LIST] == sim.calls[ZIP] == 0


async def test_an_empty_reports_list_reads_no_artifact(tmp_path: Path) -> None:
    sim, failed = await first_attempts(with_settings("reports: []\n"), tmp_path)

    assert all(tests == set() for tests in failed.values())
    assert sim.calls[LIST] == sim.calls[ZIP] == 0


async def test_a_reports_list_replaces_discovery(tmp_path: Path) -> None:
    flaky_yml = "reports:\n  - artifact: 'e2e-*'\n    files: ['**/*.json']\n"
    sim, failed = await first_attempts(with_settings(flaky_yml), tmp_path)

    assert failed["tests (3.11)"] == failed["tests (3.12)"] == set()
    assert failed["e2e"] == {NEGATIVE, RETRIED}
    assert failed["build"] == set()  # its log names its own upload (a wheel), not e2e-shop
    # Configured artifacts are matched in the run's list, read concurrently with the log:
    # every job lists it, and each downloads only the matches its log says it uploaded.
    assert sim.calls[LIST] == 4
    assert sim.calls[ZIP] == 1


async def test_an_artifact_gone_before_its_download_is_named_and_the_rest_read(
    tmp_path: Path,
) -> None:
    # Expired or deleted between the run's list and the download: GitHub answers 410.
    world = load_scenario(SCENARIO).model_dump()
    world["faults"] = {
        "rules": [
            {
                "method": "GET",
                "path": r"/actions/artifacts/\d+/zip$",
                "status": 410,
                "message": "Artifact has expired",
                "times": 1,
            }
        ]
    }
    sim, failed = await first_attempts(Scenario.model_validate(world), tmp_path)

    assert failed["tests (3.11)"] == set()  # its one report was the first download
    assert failed["tests (3.12)"] == {EXPIRY}
    assert "artifact test-results-3.11: gone (410)" in sim.bot_comments(11)[0].body
