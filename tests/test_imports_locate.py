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
from bot.triage.imports import ImportWalk, Reached, Source
from bot.triage.imports.locate import Located, locate_in_tree, locating_language
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
    assert locate_in_tree(CART, tree, None, {}) == Located(
        CART_FILE, "found from the class com.acme.cart.CartTest"
    )
    assert locate_in_tree(WIRE, tree, None, {}) == Located(
        "internal/wire/parse_test.go", "found from the package github.com/acme/bus/internal/wire"
    )
    assert locate_in_tree(PYTEST, tree, None, {}) is None


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
        # Several Go modules: their go.mod files first (one query), then the test's package
        # and what it imports.
        ("go-multi-module-root-package.yml", 1, 2),
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


# --- a test of a walked language that cannot be located (issue 24) --------------------------

CLOCK = Failure(test_id="go.acme.dev/clock.TestTickerStops", name="TestTickerStops", framework="go")


@pytest.mark.parametrize(
    ("failure", "changed"),
    [
        (CLOCK, "clock.go"),  # a Go package in no folder of the tree
        # A walked framework's failure that names no file: its traceback is elsewhere.
        (
            Failure(
                test_id="test_refresh",
                name="test_refresh",
                framework="pytest",
                trace_paths=["src/auth/tokens.py"],
            ),
            "src/auth/session.py",
        ),
        (
            Failure(
                test_id="Shop.Tests.CartTests.Totals",
                name="Totals",
                framework="dotnet",
                trace_paths=["src/Shop/Money.cs"],
            ),
            "src/Shop/Cart.cs",
        ),
        (
            Failure(
                test_id="tests::totals",
                name="tests::totals",
                framework="cargo",
                trace_paths=["src/lib.rs"],
            ),
            "src/cart.rs",
        ),
    ],
)
def test_a_walked_test_that_cannot_be_located_is_unknown_never_judged_by_names(
    failure: Failure, changed: str
) -> None:
    # imports={}: imports were followed, and this test's file was found nowhere.
    [decision] = decide([failure], [changed], passed_on_rerun=True, imports={})
    assert decision.verdict is Verdict.UNKNOWN
    assert decision.evidence == (
        f"flaky (passed on rerun of the same commit); this PR's change to {changed} could not "
        "be ruled out: its test file could not be located in the commit's tree"
    )
    # A change no test of its language could import still clears it; imports not followed
    # at all (depth 0) keep the name rules.
    [docs] = decide([failure], ["README.md"], passed_on_rerun=True, imports={})
    assert docs.verdict is Verdict.FLAKY
    [rules] = decide([failure], [changed], passed_on_rerun=True)
    assert rules.verdict is Verdict.FLAKY


@pytest.mark.parametrize(
    "changed", ["src/attr/__init__.pyi", "src/attr/_make.py", "pyproject.toml", "mypy.ini"]
)
def test_a_pytest_case_no_walker_reads_is_never_cleared_by_names(changed: str) -> None:
    # python-attrs/attrs c1dc5dcb runs its typing cases with pytest-mypy-plugins: each case
    # of tests/test_mypy.yml type-checks code importing the package, under mypy's settings.
    failure = Failure(
        test_id="tests/test_mypy.yml::testAttrsSimple",
        name="testAttrsSimple",
        file="tests/test_mypy.yml",
        framework="pytest",
    )
    [decision] = decide([failure], [changed], passed_on_rerun=True, imports={})
    assert decision.verdict is Verdict.UNKNOWN, decision.evidence
    assert f"this PR's change to {changed} could not be ruled out" in decision.evidence
    [docs] = decide([failure], ["docs/how-does-it-work.md"], passed_on_rerun=True, imports={})
    assert docs.verdict is Verdict.FLAKY


def test_a_class_in_no_source_root_has_no_footprint_at_all() -> None:
    [decision] = decide([CART], ["README.md"], passed_on_rerun=True, imports={})
    assert decision.verdict is Verdict.UNKNOWN


# --- placing a printed path in the tree (GOPATH, the module path) ----------------------------

GO_TREE = tree_of(
    {
        "go.mod": "module github.com/acme/bus\n",
        "wire/parse_test.go": "package wire\n",
        "wire/lexer_test.go": "package wire\n",
        "tools/go.mod": "module github.com/acme/bus/tools\n",
        "tools/gen/gen_test.go": "package gen\n",
    }
)
GO_MODS: dict[str, Source] = {"go.mod": "module github.com/acme/bus\n", "tools/go.mod": "x"}


@pytest.mark.parametrize(
    ("named", "go_mods", "expected"),
    [
        # GOPATH inside the workspace, GOPATH in a container, an import path: by the module.
        ("src/github.com/acme/bus/wire/parse_test.go", GO_MODS, "wire/parse_test.go"),
        ("go/src/github.com/acme/bus/wire/parse_test.go", GO_MODS, "wire/parse_test.go"),
        ("github.com/acme/bus/wire/parse_test.go", GO_MODS, "wire/parse_test.go"),
        # Without the go.mod files: the one tree file that is a tail of the printed path.
        ("src/github.com/acme/bus/wire/parse_test.go", {}, "wire/parse_test.go"),
        ("src/github.com/acme/bus/other/parse_test.go", {}, None),
    ],
)
def test_a_printed_path_the_tree_does_not_hold_is_placed_and_says_how(
    named: str, go_mods: dict[str, Source], expected: str | None
) -> None:
    failure = WIRE.model_copy(update={"file": named})
    found = locate_in_tree(failure, GO_TREE, named, go_mods)
    assert (found.path if found else None) == expected
    if found is not None:
        how = "its Go package github.com/acme/bus/wire" if go_mods else "its unique tail"
        assert found.how == f"printed as {named}, placed in the tree by {how}"


def test_two_tree_files_that_are_tails_of_the_printed_path_place_it_nowhere() -> None:
    tree = tree_of({"a/x_test.go": "", "src/a/x_test.go": "", "x_test.go": ""})
    assert locate_in_tree(WIRE, tree, "home/src/a/x_test.go", {}) is None


def test_the_file_go_printed_the_failure_in_is_the_test_file_of_its_package() -> None:
    printed = Failure(
        test_id="github.com/acme/bus/wire.TestLex",
        name="TestLex",
        framework="go",
        location="parse_test.go:41",
    )
    tree = tree_of({"go.mod": "", "wire/lexer_test.go": "", "wire/parse_test.go": ""})
    found = locate_in_tree(printed, tree, None, {})
    assert found is not None and found.path == "wire/parse_test.go"
    named = printed.model_copy(update={"location": None})
    found = locate_in_tree(named, tree, None, {})
    assert found is not None and found.path == "wire/lexer_test.go"  # named after TestLex


def test_the_footprint_of_a_placed_test_file_is_the_walk_of_the_placed_file() -> None:
    named = "src/github.com/acme/bus/wire/parse_test.go"
    failure = WIRE.model_copy(update={"file": named})
    placed = ImportWalk(
        "wire/parse_test.go",
        "Go",
        (Reached("wire/lexer.go", (), "a file of the test's Go package"),),
        (),
        (),
        (),
        found_by=f"printed as {named}, placed in the tree by its unique tail",
    )
    entries = footprint(failure, imports=placed).entries
    assert [(e.path, e.reason) for e in entries[:2]] == [
        ("wire/parse_test.go", REASON_TEST_FILE),
        ("wire/lexer.go", REASON_RUNS),
    ]
    [related] = decide([failure], ["wire/lexer.go"], imports={walk_key(failure): placed})
    assert related.verdict is Verdict.RELATED
    assert any("placed in the tree by its unique tail" in i.text for i in related.items)


def test_a_bare_name_is_a_tail_only_under_a_host() -> None:
    tree = tree_of({"go.mod": "", "clock_test.go": "", "test_a.py": ""})
    gopath = locate_in_tree(WIRE, tree, "src/github.com/acme/clock/clock_test.go", {})
    assert gopath is not None and gopath.path == "clock_test.go"
    # A repository path that is simply not there is no other file of the same name.
    assert locate_in_tree(WIRE, tree, "tests/test_a.py", {}) is None
