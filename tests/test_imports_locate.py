"""A failure that names no file (Go packages, JVM classes): found in the commit's tree, its
walk kept under its test id, and the located file strong evidence in its footprint."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.demo import final_decisions, running, settle
from bot.sim.scenario import load_scenario
from bot.triage.footprint import (
    REASON_RUNS,
    REASON_TEST_FILE,
    footprint,
    plan_walk,
    walk_key,
)
from bot.triage.imports import ImportWalk, Reached
from bot.triage.imports.locate import locate_in_tree, locating_language
from bot.triage.models import Failure, Verdict
from bot.triage.verdict import decide
from tests.test_imports_walk import tree_of

SCENARIOS = Path(__file__).parent / "scenarios"
CART = Failure(test_id="com.acme.cart.CartTest#discountApplies", name="x", framework="maven")
WIRE = Failure(
    test_id="github.com/acme/bus/internal/wire.TestParse", name="TestParse", framework="go"
)
PYTEST = Failure(test_id="tests/test_a.py::test_b", name="test_b", framework="pytest")
CART_FILE = "src/test/java/com/acme/cart/CartTest.java"


def test_the_walk_key_is_the_test_file_else_the_test_id() -> None:
    assert walk_key(PYTEST) == "tests/test_a.py"
    assert walk_key(CART) == CART.test_id


def test_locating_by_language() -> None:
    names = [getattr(locating_language(f), "name", None) for f in (CART, WIRE, PYTEST)]
    assert names == ["Java/Kotlin/Scala", "Go", None]
    tree = tree_of({CART_FILE: "", "internal/wire/parse_test.go": ""})
    assert locate_in_tree(CART, tree) == CART_FILE
    assert locate_in_tree(WIRE, tree) == "internal/wire/parse_test.go"
    assert locate_in_tree(PYTEST, tree) is None


@pytest.mark.parametrize(
    ("failure", "changed", "complete", "expected"),
    [
        (CART, ["src/main/java/com/acme/cart/Cart.java"], True, ""),  # locate, then walk
        (CART, ["README.md"], False, ""),  # the list is cut: anything may have changed
        (CART, ["README.md"], True, "this PR changes no Java/Kotlin/Scala file"),
        # Go's package rule gives a footprint without the tree: no call for a docs change.
        (WIRE, ["README.md"], True, None),
        (WIRE, ["internal/store/db.go"], True, ""),
        (PYTEST, ["README.md"], True, None),
    ],
)
def test_plan_walk(
    failure: Failure, changed: list[str], complete: bool, expected: str | None
) -> None:
    plan = plan_walk(failure, changed, complete)
    if expected is None:
        assert plan is None
    else:
        assert plan is not None and plan.test_file is None and plan.skip == expected
        assert plan.key == failure.test_id


def test_a_failure_whose_traceback_meets_the_change_needs_no_walk() -> None:
    go = WIRE.model_copy(update={"trace_paths": ["internal/wire/lexer.go"]})
    assert plan_walk(go, ["internal/wire/lexer.go"]) is None


def located_walk(*reached: Reached, skipped: str = "") -> ImportWalk:
    return ImportWalk(
        CART_FILE, "Java/Kotlin/Scala", reached, (), (), (), found_by="found", skipped=skipped
    )


def test_the_located_file_is_strong_evidence_and_the_verdict_finds_the_walk() -> None:
    assert footprint(CART).entries == []
    walked = located_walk(Reached("src/test/java/x/CartTest.java", (), "another"))
    entries = footprint(CART, imports=walked).entries
    assert [(e.path, e.reason) for e in entries[:2]] == [
        (CART_FILE, REASON_TEST_FILE),
        ("src/test/java/x/CartTest.java", REASON_RUNS),
    ]
    [related] = decide([CART], [CART_FILE], imports={CART.test_id: walked})
    assert related.verdict is Verdict.RELATED
    skipped = located_walk(skipped="this PR changes no Java/Kotlin/Scala file")
    [unrelated] = decide([CART], ["README.md"], imports={walk_key(CART): skipped})
    assert unrelated.verdict is Verdict.UNRELATED
    assert any("were not followed: this PR changes no" in item.text for item in unrelated.items)
    [unknown] = decide([CART], ["README.md"])  # without the tree: no footprint at all
    assert unknown.verdict is Verdict.UNKNOWN


@pytest.mark.parametrize(
    ("name", "trees", "queries"),
    [
        # Only the tree: the class's file is found, nothing the PR changes can be imported.
        # The rerun's triage (same head) spends nothing more.
        ("jvm-class-docs-only.yml", 1, 0),
        # The tree, then one query: the test file with go.mod and its package, filled with
        # the repository's other source files, which hold what they import.
        ("go-imports-two-levels.yml", 1, 1),
        ("jvm-kotlin-two-levels.yml", 1, 1),
    ],
)
async def test_calls_spent_to_locate_and_walk(
    tmp_path: Path, name: str, trees: int, queries: int
) -> None:
    scenario = load_scenario(SCENARIOS / name)
    async with running(scenario, tmp_path) as (sim, bot):
        await sim.play(after_each=lambda: settle(sim, bot))
        await settle(sim, bot)
        numbers = [pull.number for pull in scenario.pull_requests]
        decisions = await final_decisions(bot.store, scenario.repo.full_name, numbers)
    assert sim.calls["GET /repos/{owner}/{repo}/git/trees/{tree_sha}"] == trees
    assert sim.calls["POST /graphql"] == queries
    assert decisions and all(d.verdict is not Verdict.UNKNOWN for d in decisions.values())
