"""Evidence strength in the verdict: only a strong hit makes a walked test related; weak
hits are caveats; flaky and unrelated need a walk that rules the change out."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.report.footprint import footprint_record
from bot.triage.failures import match_key
from bot.triage.footprint import footprint
from bot.triage.imports import ImportWalk, Reached
from bot.triage.models import (
    BaseResult,
    Confidence,
    Decision,
    EvidenceKind,
    Failure,
    ImportStep,
    Strength,
    Verdict,
)
from bot.triage.models import TestContext as Context
from bot.triage.verdict import Rules, decide

TEST = "tests/test_invoice.py"
TAX = ImportStep(importer=TEST, module="billing.tax", path="src/billing/tax.py")
CUT = "the limit of 100 files read was reached"
BROKEN = Context(
    base=BaseResult(where="the base commit abc1234", head_sha="a" * 40, same_signature=True)
)


def failure(test_file: str = TEST) -> Failure:
    return Failure(
        test_id=f"{test_file}::test_vat", name="test_vat", file=test_file, framework="pytest"
    )


def walk(test_file: str = TEST, *, cut: tuple[str, ...] = ()) -> ImportWalk:
    reached = (Reached("src/billing/tax.py", (TAX,)),) if test_file == TEST else ()
    return ImportWalk(test_file, "Python", reached, (test_file,), (), cut)


def one(changed: list[str], **kwargs: object) -> Decision:
    kwargs.setdefault("imports", {TEST: walk()})
    [decision] = decide([failure()], changed, **kwargs)  # type: ignore[arg-type]
    return decision


def test_strength_is_a_property_of_each_entry() -> None:
    entries = {
        e.reason: e.strength for e in footprint(failure(), {"tests/**": ["data/**"]}).entries
    }
    assert entries == {
        "test file": Strength.STRONG,
        "mapped in .github/flaky.yml (tests/**)": Strength.STRONG,
        "conventional pair": Strength.WEAK,
        "test package directory": Strength.WEAK,
    }


# (changed paths, how the rerun went, context) -> (verdict, confidence)
RULES = [
    # A sibling test file is no evidence at all: flaky with full confidence.
    (["tests/test_cart.py"], "passed", Context(), Verdict.FLAKY, Confidence.HIGH),
    # ...and never outranks a broken base, which is sure.
    (["tests/test_cart.py"], "none", BROKEN, Verdict.BROKEN_BASE, Confidence.HIGH),
    # A weak hit (same folder, not imported) is a caveat lowering the confidence.
    (["tests/helpers.py"], "passed", Context(), Verdict.FLAKY, Confidence.MEDIUM),
    (["tests/helpers.py"], "none", Context(), Verdict.UNRELATED, Confidence.LOW),
    (["tests/helpers.py"], "none", BROKEN, Verdict.BROKEN_BASE, Confidence.MEDIUM),
    (["tests/helpers.py"], "reproduced", Context(), Verdict.UNRELATED, Confidence.LOW),
    # A data file beside the test: the walk cannot rule out that the test reads it.
    (["tests/data/invoice.json"], "passed", Context(), Verdict.FLAKY, Confidence.MEDIUM),
    (["tests/data/invoice.json"], "none", Context(), Verdict.UNKNOWN, Confidence.LOW),
    (["tests/data/invoice.json"], "reproduced", Context(), Verdict.UNKNOWN, Confidence.LOW),
    # The pair by name, not imported: weak.
    (["lib/invoice.py"], "passed", Context(), Verdict.FLAKY, Confidence.MEDIUM),
    # A strong hit is related and beats a broken base.
    (["src/billing/tax.py"], "none", Context(), Verdict.RELATED, Confidence.HIGH),
    (["src/billing/tax.py"], "none", BROKEN, Verdict.RELATED, Confidence.MEDIUM),
    (["src/billing/tax.py"], "passed", Context(), Verdict.RELATED, Confidence.MEDIUM),
    # The complete walk rules out a Python file it did not reach.
    (["src/shipping/rates.py"], "reproduced", Context(), Verdict.UNRELATED, Confidence.LOW),
]


@pytest.mark.parametrize(("changed", "rerun", "context", "verdict", "confidence"), RULES)
def test_the_rules_with_a_complete_walk(
    changed: list[str], rerun: str, context: Context, verdict: Verdict, confidence: Confidence
) -> None:
    decision = one(
        changed,
        passed_on_rerun=rerun == "passed",
        reproduced_on_rerun=rerun == "reproduced",
        contexts={match_key(failure().test_id): context},
    )
    assert (decision.verdict, decision.confidence) == (verdict, confidence)


def test_a_weak_hit_is_named_as_a_caveat() -> None:
    decision = one(["tests/helpers.py"], passed_on_rerun=True)

    caveat = "this PR changes tests/helpers.py in the test's folder; the test does not import it"
    assert decision.caveats == [caveat]
    assert [i.text for i in decision.items if i.kind is EvidenceKind.WEAK] == [caveat]
    assert decision.evidence == (
        "passed on rerun of the same commit; this PR changes none of the 2 paths it reads "
        "for certain: tests/test_invoice.py, src/billing/tax.py"
    )


def test_a_sibling_test_file_is_neither_a_hit_nor_a_caveat() -> None:
    decision = one(["tests/test_cart.py"])

    assert decision.matched_paths == []
    assert decision.caveats == []
    assert decision.evidence.startswith("this PR changes none of the 4 paths it depends on")


def test_a_sibling_test_file_the_test_imports_is_related() -> None:
    step = ImportStep(importer=TEST, module="test_cart", path="tests/test_cart.py")
    imported = ImportWalk(
        TEST, "Python", (Reached("tests/test_cart.py", (step,)),), (TEST,), (), ()
    )

    decision = one(["tests/test_cart.py"], imports={TEST: imported})

    assert decision.verdict is Verdict.RELATED
    assert decision.evidence == (
        "tests/test_invoice.py imports test_cart (tests/test_cart.py), which this PR changes"
    )


def test_a_root_level_tests_folder_gives_its_parent_only_as_weak_evidence() -> None:
    test_file = "src/__tests__/test_cart.py"

    [decision] = decide(
        [failure(test_file)],
        ["src/checkout/payment.py"],
        passed_on_rerun=True,
        imports={test_file: walk(test_file)},
    )

    assert decision.verdict is Verdict.FLAKY
    assert decision.caveats == [
        "this PR changes src/checkout/payment.py in src/, the folder its __tests__ tests; "
        "the test does not import it"
    ]


@pytest.mark.parametrize("rerun", ["none", "passed", "reproduced"])
def test_a_partial_walk_cannot_rule_out_a_python_change(rerun: str) -> None:
    decision = one(
        ["src/shipping/rates.py", "docs/a.md"],
        imports={TEST: walk(cut=(CUT,))},
        passed_on_rerun=rerun == "passed",
        reproduced_on_rerun=rerun == "reproduced",
    )

    assert (decision.verdict, decision.confidence) == (Verdict.UNKNOWN, Confidence.LOW)
    cut = (
        "the walk of tests/test_invoice.py's imports is partial (the limit of 100 files read "
        "was reached)"
    )
    if rerun == "passed":
        # Flaky, since it passed on the same commit; but the change is not ruled out.
        assert decision.evidence == (
            "flaky (passed on rerun of the same commit); this PR's change to "
            f"src/shipping/rates.py could not be ruled out: {cut}"
        )
    else:
        assert (
            decision.evidence == f"{cut}, so a change to src/shipping/rates.py cannot be ruled out"
        )
    ruled_out = [i.text for i in decision.items if i.kind is EvidenceKind.RULED_OUT]
    assert ruled_out == ["ruled out: docs/a.md is documentation, which no test imports"]
    assert decision.walk is not None and decision.walk.partial
    assert decision.walk.files_read == 1


def test_a_partial_walk_with_a_broken_base_is_broken_base() -> None:
    decision = one(
        ["src/shipping/rates.py"],
        imports={TEST: walk(cut=(CUT,))},
        contexts={match_key(failure().test_id): BROKEN},
    )
    assert (decision.verdict, decision.confidence) == (Verdict.BROKEN_BASE, Confidence.MEDIUM)


def test_a_missing_walk_cannot_rule_out_a_python_change() -> None:
    decision = one(["src/shipping/rates.py"], imports={}, passed_on_rerun=True)

    assert decision.verdict is Verdict.UNKNOWN
    assert decision.evidence == (
        "flaky (passed on rerun of the same commit); this PR's change to "
        "src/shipping/rates.py could not be ruled out: the imports of tests/test_invoice.py "
        "were not followed"
    )


@pytest.mark.parametrize(
    "changed",
    [["docs/setup.md", "README.rst"], ["cmd/api/main.go", "web/app.ts"], ["assets/logo.png"]],
)
def test_changes_no_python_test_can_import_need_no_walk(changed: list[str]) -> None:
    decision = one(changed, imports={}, passed_on_rerun=True)
    assert (decision.verdict, decision.confidence) == (Verdict.FLAKY, Confidence.HIGH)


def test_another_project_of_the_repository_is_not_ruled_out_by_a_cut_walk() -> None:
    """A project imports its siblings by package name: a walk cut short may have stopped one
    hop before the changed file of another project, so the change cannot be ruled out."""
    test_file = "services/api/tests/test_app.py"
    files = {
        "services/api/pyproject.toml",
        "services/worker/pyproject.toml",
        "package.json",
        test_file,
    }
    changed = ["services/worker/src/worker/jobs.py"]
    cut = walk(test_file, cut=(CUT,))

    [decision] = decide(
        [failure(test_file)],
        changed,
        passed_on_rerun=True,
        imports={test_file: cut},
        files=files,
    )

    assert decision.verdict is Verdict.UNKNOWN
    assert "services/worker/src/worker/jobs.py" in decision.evidence


def test_a_test_no_walker_reads_keeps_the_name_and_folder_rules() -> None:
    elixir = Failure(
        test_id="test/billing_test.exs:12",
        name="vat",
        file="test/billing_test.exs",
        framework="exunit",
    )
    [decision] = decide([elixir], ["test/support/factory.ex"], passed_on_rerun=True, imports={})
    assert (decision.verdict, decision.confidence) == (Verdict.RELATED, Confidence.MEDIUM)


def test_with_the_walk_off_every_test_keeps_the_name_and_folder_rules() -> None:
    decision = one(["tests/helpers.py"], imports=None)
    assert (decision.verdict, decision.confidence) == (Verdict.RELATED, Confidence.MEDIUM)
    decision = one(["src/shipping/rates.py"], imports=None, passed_on_rerun=True)
    assert decision.verdict is Verdict.FLAKY


def test_a_mapping_in_flaky_yml_is_strong_even_inside_the_tests_folder() -> None:
    rules = Rules(footprints={"tests/**": ["tests/fixtures/**"]})

    decision = one(["tests/fixtures/invoice.json"], rules=rules)

    assert (decision.verdict, decision.confidence) == (Verdict.RELATED, Confidence.HIGH)
    assert "footprints setting maps to this test" in decision.evidence


def test_a_deep_import_chain_says_its_depth() -> None:
    rate = ImportStep(
        importer="src/billing/tax.py", module="billing.rates", path="src/billing/rates.py"
    )
    deep = ImportWalk(
        TEST,
        "Python",
        (Reached("src/billing/tax.py", (TAX,)), Reached("src/billing/rates.py", (TAX, rate))),
        (TEST, "src/billing/tax.py"),
        (),
        (),
    )

    decision = one(["src/billing/rates.py"], imports={TEST: deep})

    assert decision.evidence == (
        "tests/test_invoice.py imports billing.tax (src/billing/tax.py), which imports "
        "billing.rates (src/billing/rates.py), which this PR changes (depth 2)"
    )
    assert decision.walk is not None
    assert (decision.walk.depth, decision.walk.files_read, decision.walk.partial) == (2, 2, False)


def test_a_file_gone_at_the_commit_is_not_ruled_out_by_a_complete_walk() -> None:
    """A test that imported a module the PR renames away fails on the import; the walk at
    the head cannot see an import of a file that is not there."""
    files = {TEST, "src/billing/tax.py", "src/billing/vat.py"}
    renamed = ["src/billing/vat.py", "src/billing/rates.py"]

    decision = one(renamed, files=files)

    assert decision.verdict is Verdict.UNKNOWN
    assert decision.evidence == (
        "the walk of tests/test_invoice.py's imports cannot see an import of a file this PR "
        "removes or renames away, so a change to src/billing/rates.py cannot be ruled out"
    )
    assert one(renamed, files=files, passed_on_rerun=True).verdict is Verdict.UNKNOWN
    assert one(renamed, passed_on_rerun=True).verdict is Verdict.FLAKY  # files not known


def test_a_removed_file_no_import_of_the_complete_walk_names_is_ruled_out() -> None:
    """The walk kept what its imports that name no file could have named (issue 24):
    `from billing.rates import RATES`, in tax.py behind a fallback, names billing/rates;
    nothing names billing/legacy."""
    found = replace(walk(), unplaced=("**/billing", "**/billing/rates", "**/billing/tax"))
    files = {TEST, "src/billing/tax.py"}

    legacy = one(["src/billing/legacy.py"], imports={TEST: found}, files=files)
    assert legacy.verdict is Verdict.UNRELATED
    assert ruled_out(legacy) == [
        "ruled out: src/billing/legacy.py is gone at this commit, and nothing the complete "
        "walk of tests/test_invoice.py reached names it"
    ]
    rates = one(["src/billing/rates.py"], imports={TEST: found}, files=files)
    assert rates.verdict is Verdict.UNKNOWN
    assert rates.evidence == (
        "an import the walk of tests/test_invoice.py reached may have named a file this PR "
        "removes or renames away, so a change to src/billing/rates.py cannot be ruled out"
    )
    gone_config = one(
        ["src/billing/legacy.py", "pyproject.toml"], imports={TEST: found}, files=files
    )
    # With pyproject.toml gone, the roots of the base commit are not those of the head.
    assert gone_config.verdict is Verdict.UNKNOWN
    assert "a change to src/billing/legacy.py cannot be ruled out" in gone_config.evidence
    named = failure().model_copy(
        update={"message": "AttributeError: module 'legacy' has no attribute"}
    )
    [decision] = decide([named], ["src/billing/legacy.py"], imports={TEST: found}, files=files)
    assert decision.verdict is Verdict.UNKNOWN


def test_the_json_footprint_gives_strength_weak_caveats_and_the_walk() -> None:
    decision = one(["tests/helpers.py", "src/billing/tax.py"], imports={TEST: walk(cut=(CUT,))})

    record = footprint_record(decision)

    assert record["hits"] == [
        {"path": "tests/helpers.py", "reason": "test package directory", "strength": "weak"},
        {"path": "src/billing/tax.py", "reason": "imported by the test", "strength": "strong"},
    ]
    assert record["weak"] == [
        "this PR changes tests/helpers.py in the test's folder; the part of its imports that "
        "was read does not reach it"
    ]
    assert (record["walk_depth"], record["files_read"], record["partial"]) == (1, 1, True)
    assert record["cut"] == [CUT]
    assert record["walk"].endswith(f"1 file read; partial: {CUT}")
    assert record["ruled_out"] == []
    cleared = footprint_record(one(["tests/unit/test_cart.py"]))["ruled_out"]
    assert cleared == [
        "ruled out: tests/unit/test_cart.py is another test file the walk of "
        "tests/test_invoice.py did not reach"
    ]


@given(
    changed=st.lists(
        st.sampled_from(
            [
                TEST,
                "src/billing/tax.py",
                "src/shipping/rates.py",
                "tests/helpers.py",
                "tests/test_cart.py",
                "tests/data/invoice.json",
                "docs/a.md",
                "cmd/main.go",
            ]
        ),
        min_size=1,
        max_size=4,
    ),
    partial=st.booleans(),
    rerun=st.sampled_from(["none", "passed", "reproduced"]),
    broken=st.booleans(),
)
def test_only_a_strong_hit_relates_and_only_a_ruled_out_change_clears(
    changed: list[str], partial: bool, rerun: str, broken: bool
) -> None:
    decision = one(
        changed,
        imports={TEST: walk(cut=(CUT,) if partial else ())},
        passed_on_rerun=rerun == "passed",
        reproduced_on_rerun=rerun == "reproduced",
        contexts={match_key(failure().test_id): BROKEN if broken else Context()},
    )

    strong = {TEST, "src/billing/tax.py"} & set(changed)
    assert (decision.verdict is Verdict.RELATED) == bool(strong)
    if decision.verdict in {Verdict.FLAKY, Verdict.UNRELATED}:
        reached = {TEST, "src/billing/tax.py"}
        unreached_python = {p for p in changed if p.endswith(".py") and p not in reached}
        assert not (partial and unreached_python)
        assert not (rerun != "passed" and "tests/data/invoice.json" in changed)
        # Every changed path is accounted for: a caveat, or the rule that ruled it out.
        said = " ".join(ruled_out(decision) + decision.caveats)
        assert all(path in said for path in changed)
    if broken and not strong:
        assert decision.verdict is Verdict.BROKEN_BASE


def ruled_out(decision: Decision) -> list[str]:
    return [item.text for item in decision.items if item.kind is EvidenceKind.RULED_OUT]


# Near the test, no evidence once the walk is complete: (changed path, the rule's words).
CLEARED_NEAR = [
    (
        "tests/unit/test_cart.py",
        "is another test file the walk of tests/test_invoice.py did not reach",
    ),
    ("tests/test_cart.py", "is another test file the walk of tests/test_invoice.py did not reach"),
    ("tests/README.md", "is documentation, which no test imports"),
    ("tests/CHANGELOG", "is documentation, which no test imports"),
]


@pytest.mark.parametrize(("path", "why"), CLEARED_NEAR)
def test_a_complete_walk_rules_out_other_test_files_and_prose_near_the_test(
    path: str, why: str
) -> None:
    """No caveat, full confidence, and the evidence says which rule cleared the path."""
    decision = one([path])

    assert (decision.verdict, decision.confidence) == (Verdict.UNRELATED, Confidence.MEDIUM)
    assert decision.caveats == []
    assert ruled_out(decision) == [f"ruled out: {path} {why}"]
    assert one([path], passed_on_rerun=True).confidence is Confidence.HIGH


def test_a_partial_walk_keeps_another_test_file_unknown() -> None:
    """Something in the part of the closure the walk did not read may import it."""
    decision = one(["tests/unit/test_cart.py"], imports={TEST: walk(cut=(CUT,))})

    assert decision.verdict is Verdict.UNKNOWN
    assert "tests/unit/test_cart.py cannot be ruled out" in decision.evidence
    assert ruled_out(decision) == []


@pytest.mark.parametrize(
    "path", ["tests/fixtures/README.md", "tests/expected.txt", "tests/testdata/table.md"]
)
def test_data_a_test_may_read_stays_a_caveat_that_blocks_unrelated(path: str) -> None:
    decision = one([path])

    assert decision.verdict is Verdict.UNKNOWN
    assert "the test may read it without importing it" in decision.evidence
    assert one([path], passed_on_rerun=True).verdict is Verdict.FLAKY


def test_files_that_break_any_test_stay_risky() -> None:
    decision = one(["tests/unit/conftest.py", "uv.lock"], passed_on_rerun=True)

    assert decision.confidence is Confidence.MEDIUM
    assert "this PR changes uv.lock (lockfile), which can break any test" in decision.caveats
    assert not any("uv.lock" in text for text in ruled_out(decision))


def test_a_removed_test_file_the_failure_does_not_name_is_ruled_out() -> None:
    files = {TEST, "src/billing/tax.py", "tests/test_cart_new.py"}
    renamed = ["tests/test_cart_new.py", "tests/test_cart.py"]

    decision = one(renamed, files=files)

    assert decision.verdict is Verdict.UNRELATED
    assert ruled_out(decision) == [
        "ruled out: tests/test_cart_new.py is another test file the walk of "
        "tests/test_invoice.py did not reach",
        "ruled out: tests/test_cart.py is another test file, gone at this commit, that the "
        "failure does not name",
    ]


def test_a_removed_test_file_the_failure_names_is_not_ruled_out() -> None:
    """The test imported it: the import fails at the head, naming the module."""
    named = failure().model_copy(
        update={"message": "ModuleNotFoundError: No module named 'tests.test_cart'"}
    )
    files = {TEST, "src/billing/tax.py"}

    [decision] = decide([named], ["tests/test_cart.py"], imports={TEST: walk()}, files=files)

    assert decision.verdict is Verdict.UNKNOWN
    assert "a change to tests/test_cart.py cannot be ruled out" in decision.evidence


def test_scripts_and_other_projects_outside_the_closure_are_ruled_out_by_name() -> None:
    changed = ["scripts/release.py", "playground/demo.py", "packages/cli/src/cli/main.py"]

    decision = one([*changed, "web/app.ts", "tools/gen.py"], passed_on_rerun=True)

    assert (decision.verdict, decision.confidence) == (Verdict.FLAKY, Confidence.HIGH)
    assert ruled_out(decision) == [
        f"ruled out: {', '.join(changed)}, and 1 more are outside what the complete walk of "
        "tests/test_invoice.py reached",
        "ruled out: web/app.ts is code of another language, which a Python test does not import",
    ]


def test_code_named_like_prose_is_not_ruled_out_by_a_partial_walk() -> None:
    decision = one(["src/billing/history.py"], imports={TEST: walk(cut=(CUT,))})

    assert decision.verdict is Verdict.UNKNOWN


def test_a_changed_file_the_failure_names_is_related_whatever_rule_would_clear_it() -> None:
    """A test that runs the code blocks of the docs (mktestdocs) names the page in its id;
    a test that opens a data file names it in its error: neither is ruled out."""
    docs_test = Failure(
        test_id="tests/test_docs.py::test_files_good[docs/index.md]",
        name="test_files_good[docs/index.md]",
        file="tests/test_docs.py",
        framework="pytest",
    )
    [decision] = decide([docs_test], ["docs/index.md", "docs/other.md"], passed_on_rerun=True)
    assert (decision.verdict, decision.matched_paths) == (Verdict.RELATED, ["docs/index.md"])
    assert decision.evidence == (
        "passed on rerun, but touches code this PR changed; this PR changes docs/index.md, "
        "which the failure names (in its test id or error)"
    )

    opened = failure().model_copy(
        update={"message": "FileNotFoundError: [Errno 2] No such file: 'tests/expected.txt'"}
    )
    [decision] = decide([opened], ["tests/expected.txt"], imports={TEST: walk()})
    assert decision.verdict is Verdict.RELATED


@pytest.mark.parametrize(
    "message", ["see docs/index.mdx", "see mydocs/index.md", "docs/index.md/x"]
)
def test_a_path_is_named_only_as_a_whole(message: str) -> None:
    named = failure().model_copy(update={"message": message})
    [decision] = decide([named], ["docs/index.md"], imports={TEST: walk()})
    assert decision.verdict is Verdict.UNRELATED
