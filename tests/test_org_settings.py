"""Settings from the organisation's `.github` repository and `_extends`, end to end: every
read is conditional, and a `.github` repository the App cannot read is logged once, never
fatal."""

from __future__ import annotations

import logging
from pathlib import Path

import cachetools
import pytest

from bot.demo import final_verdicts, running, settle
from bot.handlers import scope
from bot.sim.scenario import FaultRule, load_scenario

SCENARIOS = Path(__file__).parent / "scenarios"
TEST_ID = "tests/e2e/test_checkout.py::test_pay"


@pytest.fixture(autouse=True)
def fresh_log_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """What was logged is remembered per process: start each test with none of it."""
    monkeypatch.setattr(scope, "_CONFIG_WARNED", cachetools.LRUCache(16))


async def test_every_file_of_the_chain_is_read_once_per_delivery_and_revalidated(
    tmp_path: Path,
) -> None:
    scenario = load_scenario(SCENARIOS / "org-settings-repo-overrides.yml")
    async with running(scenario, tmp_path) as (sim, bot):
        await sim.play()  # the failure, then its rerun's pass: two deliveries
        await settle(sim, bot)
    # The settings' reads (CODEOWNERS, read for the tracking issue, goes the same way).
    reads = [e for e in sim.timeline if e.kind == "api" and e.path.endswith("/flaky.yml")]
    paths = [e.path for e in reads]
    pair = [
        "/repos/acme/bus/contents/.github/flaky.yml",
        "/repos/acme/.github/contents/.github/flaky.yml",
    ]
    assert len(paths) >= 4 and paths == pair * (len(paths) // 2), paths
    # The first delivery reads both files; every later read is a 304, free of rate limit.
    assert [e.not_modified for e in reads[:2]] == [False, False]
    assert all(e.not_modified for e in reads[2:])


@pytest.mark.parametrize(
    ("fault", "named"),
    [
        (None, "not installed or no such file"),
        (
            FaultRule(
                path="^/repos/acme/.github/contents/",
                status=403,
                times=100,
                message="Resource not accessible by integration",
            ),
            "status 403",
        ),
    ],
    ids=["404", "403"],
)
async def test_an_unreadable_github_repository_is_logged_once_and_the_defaults_apply(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, fault: FaultRule | None, named: str
) -> None:
    caplog.set_level(logging.INFO, logger="bot.handlers.scope")
    scenario = load_scenario(SCENARIOS / "org-settings-unreadable.yml")
    if fault is not None:
        scenario.repos["acme/.github"].installed = True  # readable but for the fault
        scenario.faults.rules.append(fault)
    async with running(scenario, tmp_path) as (sim, bot):
        await sim.play()
        await settle(sim, bot)
        verdicts = await final_verdicts(bot.store, "acme/bus", [35])
        handled = await bot.store.list_deliveries(100)

    assert len(sim.reruns) == 1  # the organisation's `rerun: false` was not read
    assert verdicts == {TEST_ID: "flaky"}
    assert {str(d.state) for d in handled} == {"done"}
    reads = [e for e in sim.timeline if e.kind == "api" and "/acme/.github/" in e.path]
    assert reads and all(e.status == (403 if fault else 404) for e in reads)
    noted = [r for r in caplog.records if "acme/.github" in r.getMessage()]
    assert [r.getMessage() for r in noted] == [
        f"acme/bus settings: acme/.github .github/flaky.yml: not read ({named}); "
        "the built-in defaults apply"
    ]
    assert all(r.levelno < logging.ERROR for r in caplog.records)
