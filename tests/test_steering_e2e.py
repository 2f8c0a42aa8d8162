"""The gather step for configuration that steers a test's imports (a package.json, a
go.mod): a changed manifest is read at the PR's base commit in the walk's first query (no
call of its own), and a replica that finds the walk kept reads the two versions in one
query."""

from __future__ import annotations

from pathlib import Path

import aiohttp

from bot.handlers.sources import Compared, SourceCache, import_walks, inert_changes
from bot.metrics import Metrics
from bot.sim import Simulator
from bot.sim.scenario import load_scenario
from bot.store import Store
from bot.triage.models import Failure
from bot.tryout import ReadOnlyClient

SCENARIOS = Path(__file__).parent / "scenarios"
TEST = "packages/formik-native/test/useFormik.test.tsx"
FAILURE = Failure(test_id=f"{TEST} > useFormik", name="useFormik", file=TEST, framework="jest")
TREES = "GET /repos/{owner}/{repo}/git/trees/{tree_sha}"
GRAPHQL = "POST /graphql"


async def inert_at_head(
    scenario_name: str, store: Store, failure: Failure = FAILURE
) -> list[tuple[dict[str, str], int, int]]:
    """What `inert_changes` says at the PR's head, the queries the walk spent, and the calls
    `inert_changes` spent on top (trees and queries), for a first replica and then a fresh
    one."""
    scenario = load_scenario(SCENARIOS / scenario_name)
    repo = scenario.repo.full_name
    [pull] = scenario.pull_requests
    changed = [f.filename for f in pull.files]
    compared = Compared.of(pull.base_sha, changed)
    found: list[tuple[dict[str, str], int, int]] = []
    async with Simulator(scenario, webhook_secret="-") as sim, aiohttp.ClientSession() as s:
        gh = ReadOnlyClient(
            s, base_url=sim.url, metrics=Metrics(), oauth_token=sim.personal_token()
        )
        for _ in range(2):
            cache = SourceCache()
            before = sim.calls.copy()
            walks = await import_walks(
                gh,
                store,
                repo,
                pull.head_sha,
                [failure],
                changed,
                True,
                cache,
                compared=compared,
            )
            walked = sim.calls - before
            inert = await inert_changes(gh, store, repo, pull.head_sha, walks, compared, cache)
            spent = sim.calls - before - walked
            found.append((inert, walked[GRAPHQL], spent[TREES] + spent[GRAPHQL]))
    return found


async def test_a_version_bump_is_told_apart_at_no_extra_call(store: Store) -> None:
    found = await inert_at_head("js-package-json-version-only.yml", store)
    said = {"packages/formik/package.json": "its scripts and version fields"}
    # The first replica read the base version with the walk's one query (the test file with
    # its configuration, filled with the files it goes on to import); the second found
    # the walk kept, and the base version too (kept by its `commit:path`): the head's, read
    # by the tree's SHA before, costs one query.
    assert found == [(said, 1, 0), (said, 0, 1)]


async def test_an_exports_change_is_not_inert(store: Store) -> None:
    found = await inert_at_head("js-package-json-exports-changed.yml", store)
    assert found == [({}, 1, 0), ({}, 0, 1)]


GO_TEST = "exp/zapslog/handler_test.go"
GO_FAILURE = Failure(
    test_id="go.uber.org/zap/exp/zapslog.TestAddCaller",
    name="TestAddCaller",
    file=GO_TEST,
    framework="go",
)


async def test_a_go_mod_require_bump_is_told_apart_at_no_extra_call(store: Store) -> None:
    found = await inert_at_head("go-mod-require-bump.yml", store, GO_FAILURE)
    said = {"exp/go.mod": "its require directive"}
    # As for a package.json: the base's exp/go.mod came with the walk's one query; a replica
    # that found the walk kept read the head's in one.
    assert found == [(said, 1, 0), (said, 0, 1)]


async def test_a_go_mod_replace_added_is_not_inert(store: Store) -> None:
    found = await inert_at_head("go-mod-replace-added.yml", store, GO_FAILURE)
    assert [inert for inert, _, _ in found] == [{}, {}]
