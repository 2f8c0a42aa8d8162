"""The import walk end to end: `flakybot triage` reads imports without writing, and the
App's settings bound the walk."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import pytest

from bot.demo import final_decisions, running, settle
from bot.handlers import sources
from bot.handlers.sources import SourceCache, import_walks
from bot.metrics import Metrics
from bot.sim import Simulator
from bot.sim.scenario import Scenario, load_scenario
from bot.store import DeliveryState, Store
from bot.triage.imports import ImportWalk, Unreadable, WalkLimits
from bot.triage.imports.plan import QueryBounds
from bot.triage.imports.walk import cache_key, walk_from_json
from bot.triage.models import Extraction, Failure, Verdict
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


@pytest.mark.parametrize(
    ("settings", "trees", "walk"),
    [
        ({"import_files": 2}, 1, "partial: the budget of 2 files read was spent"),
        ({"import_files": 0}, 0, None),
        # An old .env: IMPORT_DEPTH=0 still turns the walk off, another depth is ignored.
        ({"import_depth": 0}, 0, None),
        ({"import_depth": 1}, 1, "3 repository files found to depth 2, 4 files read; complete"),
    ],
)
async def test_the_budget_settings_bound_the_walk_and_say_so(
    tmp_path: Path, settings: dict[str, int], trees: int, walk: str | None
) -> None:
    scenario = load_scenario(SCENARIOS / "python-imports-two-levels.yml")
    async with running(scenario, tmp_path, **settings) as (sim, bot):
        await sim.play(after_each=lambda: settle(sim, bot))
        await settle(sim, bot)
        decisions = await final_decisions(bot.store, "acme/shop", [21])

    [decision] = decisions.values()
    # shop.tax is found by reading shop/checkout.py, the third file the walk meets: a walk
    # cut before it (or none) leaves the verdict to the name and folder rules alone.
    complete = walk is not None and walk.endswith("complete")
    assert (decision.verdict is Verdict.RELATED) == complete
    assert sim.calls["GET /repos/{owner}/{repo}/git/trees/{tree_sha}"] == trees
    walks = [item.text for item in decision.items if item.kind == "imports"]
    assert [text.endswith(walk or "") for text in walks] == ([] if walk is None else [True])


TREES = "GET /repos/{owner}/{repo}/git/trees/{tree_sha}"
GRAPHQL = "POST /graphql"


INVOICE_FAILURE = Failure(
    test_id=INVOICE, name="test_vat_for_germany", file="tests/test_invoice.py", framework="pytest"
)


@asynccontextmanager
async def invoice_walks(
    store: Store,
) -> AsyncIterator[tuple[Simulator, Callable[[str], Awaitable[dict[str, ImportWalk]]]]]:
    """The simulator of python-imports-src-layout and a function walking the invoice test's
    imports at a commit as a fresh replica would (an empty cache), over `store`."""
    scenario = load_scenario(SCENARIOS / "python-imports-src-layout.yml")
    [pull] = scenario.pull_requests
    changed = [f.filename for f in pull.files]
    async with Simulator(scenario, webhook_secret="-") as sim, aiohttp.ClientSession() as s:
        token = sim.personal_token()
        gh = ReadOnlyClient(s, base_url=sim.url, metrics=Metrics(), oauth_token=token)

        async def walks(sha: str) -> dict[str, ImportWalk]:
            found = await import_walks(
                gh, store, "acme/shop", sha, [INVOICE_FAILURE], changed, True, SourceCache()
            )
            assert found is not None  # the walk is on (IMPORT_FILES above 0)
            return found

        yield sim, walks


async def test_a_walk_made_in_one_replica_costs_another_no_call(store: Store) -> None:
    """Finished walks and blob texts are kept in the store: the same test on the same head
    costs another replica (a fresh cache) nothing; another commit costs its tree and one
    query for the one file that differs (src/billing/tax.py, changed by the PR). The head's
    first walk is one query: the test file's round, filled with the other source files."""
    [pull] = load_scenario(SCENARIOS / "python-imports-src-layout.yml").pull_requests
    calls: list[tuple[int, int]] = []
    async with invoice_walks(store) as (sim, walks):

        async def counted(sha: str) -> dict[str, ImportWalk]:
            before = sim.calls.copy()
            found = await walks(sha)
            spent = sim.calls - before
            calls.append((spent[TREES], spent[GRAPHQL]))
            return found

        first = await counted(pull.head_sha)
        again = await counted(pull.head_sha)
        base = await counted(pull.base_sha)

    assert calls == [(1, 1), (0, 0), (1, 1)]
    assert again == first
    [walked] = first.values()
    assert "src/billing/tax.py" in {reached.path for reached in walked.reached}
    assert [w.reached for w in base.values()] == [walked.reached]


async def test_a_kept_walk_that_does_not_read_back_is_walked_again(store: Store) -> None:
    walked = ImportWalk("t.py", "Python", (), ("t.py",), (), ())
    await store.save_import_walk("acme/shop", "a" * 40, "k", walked, 1.0)
    assert await store.import_walk("acme/shop", "a" * 40, "t.py", "k") == walked
    assert await store.import_walk("acme/shop", "a" * 40, "t.py", "other key") is None
    assert walk_from_json('{"test_file": "t.py"}') is None
    assert walk_from_json("not json") is None


async def test_kept_sources_are_pruned_with_the_deliveries(store: Store) -> None:
    await store.save_blobs({"b" * 40: "x = 1\n", "c" * 40: Unreadable("binary")}, 10.0)
    await store.save_blobs({"b" * 40: "changed?"}, 30.0)  # a SHA names one text: kept as is
    assert await store.blobs(["b" * 40, "c" * 40, "d" * 40]) == {
        "b" * 40: "x = 1\n",
        "c" * 40: Unreadable("binary"),
    }
    walked = ImportWalk("t.py", "Python", (), (), (), ())
    await store.save_import_walk("acme/shop", "a" * 40, "k", walked, 10.0)
    assert await store.prune_sources(20.0) == 3
    assert await store.blobs(["b" * 40]) == {}


async def test_a_jobs_extraction_is_kept_by_check_run_and_reading_and_pruned(
    store: Store,
) -> None:
    """What a failed job said is kept, so a retried delivery does not download its log again."""
    failure = Failure(test_id="t.py::test_a", name="test_a", framework="pytest", message="x")
    said = Extraction(failures=[failure], problems=["log: all but its last 64 MiB"])
    assert await store.job_extraction("acme/shop", 41, "key") is None
    await store.save_job_extraction("acme/shop", 41, "key", said, 10.0)
    await store.save_job_extraction("acme/shop", 41, "key", Extraction(), 11.0)  # kept as is
    assert await store.job_extraction("acme/shop", 41, "key") == said
    assert await store.job_extraction("acme/shop", 41, "other settings") is None
    assert await store.job_extraction("acme/other", 41, "key") is None
    assert await store.prune_sources(20.0) == 1
    assert await store.job_extraction("acme/shop", 41, "key") is None


@pytest.mark.parametrize(
    ("blobs", "size", "queries"), [(100, 4 << 20, 1), (1, 4 << 20, 4), (100, 1, 4)]
)
async def test_a_large_read_is_split_into_queries_sent_together(
    store: Store, monkeypatch: pytest.MonkeyPatch, blobs: int, size: int, queries: int
) -> None:
    """Round 1 reads the test file and pyproject.toml, its query filled with the other
    Python files (all that round 2 would read); when the bounds allow one blob, or fewer
    bytes than any file holds, nothing fills it: a query per file, round 2 reads
    billing/__init__.py and billing/tax.py."""
    monkeypatch.setattr(sources, "QUERY", QueryBounds(blobs=blobs, bytes=size))
    [pull] = load_scenario(SCENARIOS / "python-imports-src-layout.yml").pull_requests
    async with invoice_walks(store) as (sim, walks):
        found = await walks(pull.head_sha)

    assert sim.calls[GRAPHQL] == queries
    [walked] = found.values()
    assert not walked.partial
    assert "src/billing/tax.py" in {reached.path for reached in walked.reached}


@pytest.mark.parametrize(
    "fault",
    [
        {"status": 502},
        {"status": 403, "rate_limit": "secondary", "retry_after": 1},
    ],
    ids=["502", "secondary rate limit"],
)
async def test_a_walk_cut_by_a_fault_is_retried_never_kept(
    tmp_path: Path, fault: dict[str, object]
) -> None:
    """One failed GraphQL query (issue 25 item 13): the delivery is retried and the walk
    made again, complete; the walk the fault cut is neither kept nor used."""
    world = load_scenario(SCENARIOS / "python-imports-src-layout.yml").model_dump()
    world["faults"] = {"rules": [{"method": "POST", "path": "^/graphql$", **fault}]}
    scenario = Scenario.model_validate(world)
    [pull] = scenario.pull_requests
    async with running(scenario, tmp_path) as (sim, bot):
        await sim.play(after_each=lambda: settle(sim, bot))
        await settle(sim, bot)
        decisions = await final_decisions(bot.store, "acme/shop", [21])
        deliveries = await bot.store.list_deliveries(100)
        kept = await bot.store.import_walk(
            "acme/shop", pull.head_sha, "tests/test_invoice.py", cache_key(WalkLimits())
        )

    [decision] = decisions.values()
    assert decision.verdict is Verdict.RELATED
    [walk_line] = [item.text for item in decision.items if item.kind == "imports"]
    assert walk_line.endswith("complete")
    assert kept is not None and not kept.partial
    # The failed query, then the retried delivery's one (filled: `plan_reads`).
    assert sim.calls[GRAPHQL] == 2
    assert {d.state for d in deliveries} == {DeliveryState.DONE}
