"""One delivery reads the repository's settings once, whichever steps need them."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import cachetools
import pytest

from bot.demo import running, settle
from bot.handlers import owners
from bot.handlers.context import BotContext
from bot.handlers.scope import Scope
from bot.handlers.tracking import REFRESH_EVENT
from bot.sim.record import TimelineEntry
from bot.sim.scenario import load_scenario
from bot.sim.server import Simulator

SCENARIOS = Path(__file__).parent / "scenarios"
CONTENTS = "GET /repos/{owner}/{repo}/contents/{path}"


async def test_every_step_of_a_delivery_shares_one_read_of_the_settings(tmp_path: Path) -> None:
    scenario = load_scenario(SCENARIOS / "tracking-auto-close-locked.yml")
    async with running(scenario, tmp_path) as (sim, bot):
        ctx = BotContext(store=bot.store, github=bot.github, metrics=bot.metrics)
        gh = await bot.github.installation_client(scenario.app.installation_id)
        scope = Scope(ctx, gh, "acme/bus")
        settings, *again = await asyncio.gather(scope.settings(), scope.settings(), scope.config())
        assert sim.calls[CONTENTS] == 1
        assert again == [settings, settings.config]
        assert settings.config.auto_close is not None


async def test_a_passing_run_with_a_tracking_issue_reads_the_settings_once(tmp_path: Path) -> None:
    """However many of a delivery's steps use the settings (a failure's triage, rerun,
    tracking issue and comment; a pass's auto-close), .github/flaky.yml is read once."""
    scenario = load_scenario(SCENARIOS / "tracking-auto-close-locked.yml")
    async with running(scenario, tmp_path) as (sim, bot):
        await sim.play(after_each=lambda: settle(sim, bot))
        await settle(sim, bot)
        handled = await bot.store.list_deliveries(100)
    events = sorted(d.event for d in handled if d.event in ("check_run", REFRESH_EVENT))
    # Three runs (the failure, its passing rerun, a pass on main) and the tracking
    # issue's refresh: one read each, never two.
    assert events == ["check_run"] * 3 + [REFRESH_EVENT]
    assert len(_reads(sim, ".github/flaky.yml")) == len(events)


def _reads(sim: Simulator, path: str) -> list[TimelineEntry]:
    return [
        entry
        for entry in sim.timeline
        if entry.kind == "api" and entry.path.split("?")[0].endswith(f"/contents/{path}")
    ]


async def test_codeowners_is_read_only_when_a_tracking_issue_is_written(tmp_path: Path) -> None:
    """GitHub's first CODEOWNERS location that exists is read, at most once per delivery, and
    only by the deliveries that write a tracking issue: the one opening it and its refresh;
    an unchanged file is revalidated (304), and a location found missing is not asked again."""
    scenario = load_scenario(SCENARIOS / "tracking-owners.yml")
    async with running(scenario, tmp_path) as (sim, bot):
        await sim.play(after_each=lambda: settle(sim, bot))
        await settle(sim, bot)
        handled = await bot.store.list_deliveries(100)
    refreshes = [d for d in handled if d.event == REFRESH_EVENT]
    github_dir = _reads(sim, ".github/CODEOWNERS")
    assert [e.status for e in github_dir] == [404]  # remembered as missing afterwards
    root = _reads(sim, "CODEOWNERS")
    assert refreshes  # PR 8's failure and rerun refresh the issue PR 7 opened
    # One read by the delivery that opened the issue, one revalidation per refresh.
    assert [(e.status, e.not_modified) for e in root] == [(200, False)] + [(304, True)] * len(
        refreshes
    )
    assert _reads(sim, "docs/CODEOWNERS") == []  # the root one was found first


async def test_invalid_codeowners_lines_are_logged_once_however_many_deliveries_read_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What was logged is remembered per process: the scenario's own run in another test of
    # this process must not have logged it already.
    monkeypatch.setattr(owners, "_WARNED", cachetools.LRUCache(16))
    scenario = load_scenario(SCENARIOS / "tracking-owners-invalid-line.yml")
    async with running(scenario, tmp_path) as (_, bot):
        ctx = BotContext(store=bot.store, github=bot.github, metrics=bot.metrics)
        gh = await bot.github.installation_client(scenario.app.installation_id)
        with caplog.at_level(logging.WARNING, logger="bot.handlers.owners"):
            first = await Scope(ctx, gh, "acme/bus").codeowners()
            second = await Scope(ctx, gh, "acme/bus").codeowners()
    assert first.path == second.path == "docs/CODEOWNERS"
    assert [r.getMessage() for r in caplog.records] == [
        f"acme/bus docs/CODEOWNERS: {problem} (line skipped, as GitHub does)"
        for problem in (
            "line 2: '!tests/bus/' uses `!` negation, which CODEOWNERS lacks",
            "line 3: 'tests/bus/[a-z]*' uses `[ ]` ranges, which CODEOWNERS lacks",
            "line 4: 'bus-owner-without-at' is not a user, team or email address",
        )
    ]
    assert [o.text for o in first.owners("tests/bus/test_core.py")] == ["@core-owner"]


async def test_the_first_codeowners_location_github_uses_wins(tmp_path: Path) -> None:
    """`.github/CODEOWNERS` over the root's over `docs/`'s, as GitHub searches them; the
    later locations are not read."""
    scenario = load_scenario(SCENARIOS / "tracking-owners.yml")
    files = {
        "CODEOWNERS": "* @root-owner\n",
        ".github/CODEOWNERS": "* @github-dir-owner\n",
        "docs/CODEOWNERS": "* @docs-owner\n",
    }
    scenario = scenario.model_copy(update={"files": files})
    async with running(scenario, tmp_path) as (sim, bot):
        ctx = BotContext(store=bot.store, github=bot.github, metrics=bot.metrics)
        gh = await bot.github.installation_client(scenario.app.installation_id)
        found = await Scope(ctx, gh, "acme/bus").codeowners()
    assert found.path == ".github/CODEOWNERS"
    assert [o.text for o in found.owners("tests/test_x.py")] == ["@github-dir-owner"]
    assert _reads(sim, "CODEOWNERS") == _reads(sim, "docs/CODEOWNERS") == []
