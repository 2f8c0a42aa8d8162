"""The import walk end to end: `flakybot triage` reads imports without writing, and the
App's settings bound the walk."""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp
import pytest

from bot.demo import final_decisions, running, settle
from bot.metrics import Metrics
from bot.sim import Simulator
from bot.sim.scenario import load_scenario
from bot.triage.models import Verdict
from bot.tryout import ReadOnlyClient
from tests.test_tryout import flakybot

SCENARIOS = Path(__file__).parent / "scenarios"
INVOICE = "tests/test_invoice.py::test_vat_for_germany"


async def test_triage_json_shows_the_import_chain_and_writes_nothing() -> None:
    scenario = load_scenario(SCENARIOS / "python-imports-src-layout.yml")
    async with Simulator(scenario, webhook_secret="-") as sim:
        sim.next_completion("tests")
        status, out, err = await flakybot(
            "triage",
            "acme/shop#21",
            "--json",
            "--api-url",
            sim.url,
            "--token",
            sim.personal_token(),
            env={},
        )

    assert (status, err) == (0, "")
    record = json.loads(out)
    [verdict] = record["failed_checks"][0]["verdicts"]
    assert (verdict["test"], verdict["verdict"]) == (INVOICE, "related")
    footprint = verdict["footprint"]
    assert footprint["changed_paths_in_footprint"] == ["src/billing/tax.py"]
    [tax] = [i for i in footprint["imports"] if i["changed_by_pr"]]
    assert tax == {
        "path": "src/billing/tax.py",
        "depth": 1,
        "chain": "tests/test_invoice.py imports billing.tax (src/billing/tax.py)",
        "changed_by_pr": True,
    }
    assert footprint["walk"].endswith("4 files read; complete")
    assert "`tests/test_invoice.py` imports `billing.tax`" in record["comment"]
    # Read-only: the GraphQL queries are its only POSTs.
    assert sim.writes == []
    assert {c for c in sim.calls if not c.startswith("GET ")} == {"POST /graphql"}


async def test_the_try_out_client_refuses_a_graphql_mutation() -> None:
    scenario = load_scenario(SCENARIOS / "python-imports-src-layout.yml")
    async with Simulator(scenario, webhook_secret="-") as sim, aiohttp.ClientSession() as s:
        gh = ReadOnlyClient(s, base_url=sim.url, metrics=Metrics(), oauth_token="t")
        with pytest.raises(RuntimeError, match="makes no POST request"):
            await gh.graphql(
                "mutation { addStar(input: {}) { clientMutationId } }",
                endpoint=f"{sim.url}/graphql",
            )
    assert sim.writes == []


@pytest.mark.parametrize(("depth", "trees"), [(1, 1), (0, 0)])
async def test_the_depth_setting_bounds_the_walk_and_says_so(
    tmp_path: Path, depth: int, trees: int
) -> None:
    scenario = load_scenario(SCENARIOS / "python-imports-two-levels.yml")
    async with running(scenario, tmp_path, import_depth=depth) as (sim, bot):
        await sim.play(after_each=lambda: settle(sim, bot))
        await settle(sim, bot)
        decisions = await final_decisions(bot.store, "acme/shop", [21])

    [decision] = decisions.values()
    # shop.tax is two hops away: a shallower walk does not reach it, and the verdict is
    # what the name and folder rules alone say.
    assert decision.verdict is not Verdict.RELATED
    assert sim.calls["GET /repos/{owner}/{repo}/git/trees/{tree_sha}"] == trees
    walks = [item.text for item in decision.items if item.kind == "imports"]
    if depth:
        [walk] = walks
        assert walk.endswith("partial: imports deeper than 1 not followed")
    else:
        assert walks == []
