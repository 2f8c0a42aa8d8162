"""Settings from the organisation's `.github` repository and `_extends`, end to end: every
read is conditional, and a `.github` repository the App cannot read is logged once, never
fatal."""

from __future__ import annotations

import logging
from pathlib import Path

import cachetools
import pytest

from bot.config import ParsedSettings, parse_settings_file
from bot.demo import final_verdicts, running, settle
from bot.handlers import scope
from bot.sim.scenario import FaultRule, load_scenario

SCENARIOS = Path(__file__).parent / "scenarios"
TEST_ID = "tests/e2e/test_checkout.py::test_pay"
FILE = ".github/flaky.yml"


@pytest.fixture(autouse=True)
def fresh_log_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """What was logged is remembered per process: start each test with none of it."""
    monkeypatch.setattr(scope, "_CONFIG_WARNED", cachetools.LRUCache(16))
    monkeypatch.setattr(
        scope, "_PARSED", cachetools.LRUCache(16 * 2**20, getsizeof=lambda e: e[1]), raising=False
    )


def count_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts of the settings files parsed from now on."""
    parsed: list[str] = []

    def counted(text: str | None) -> ParsedSettings:
        parsed.append(text or "")
        return parse_settings_file(text)

    monkeypatch.setattr("bot.repo_settings.parse_settings_file", counted)
    return parsed


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


async def test_a_settings_file_is_parsed_once_per_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 0.9 MB file cost 6 to 8.5 s of CPU on every delivery that read it."""
    parsed = count_parses(monkeypatch)
    scenario = load_scenario(SCENARIOS / "org-settings-repo-overrides.yml")
    async with running(scenario, tmp_path / "first") as (sim, bot):
        await sim.play()  # two deliveries, each reading both files
        await settle(sim, bot)
    reads = [e for e in sim.timeline if e.kind == "api" and e.path.endswith("/flaky.yml")]
    assert len(reads) >= 4
    assert sorted(parsed) == sorted(
        [scenario.files[".github/flaky.yml"], scenario.repos["acme/.github"].files[FILE]]
    )

    # The organisation's file changes: it alone is parsed again.
    changed = load_scenario(SCENARIOS / "org-settings-repo-overrides.yml")
    changed.repos["acme/.github"].files[FILE] = "rerun: false\nmax_reruns: 3\n"
    async with running(changed, tmp_path / "second") as (sim, bot):
        await sim.play()
        await settle(sim, bot)
    assert len(parsed) == 3
    assert parsed[2] == "rerun: false\nmax_reruns: 3\n"


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
