"""One delivery reads the repository's settings once, whichever steps need them."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.demo import running, settle
from bot.handlers.context import BotContext
from bot.handlers.scope import Scope
from bot.handlers.tracking import REFRESH_EVENT
from bot.sim.scenario import load_scenario

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
    assert sim.calls[CONTENTS] == len(events)
