"""Imports as evidence: strong when they meet the change, never a weaker "unrelated"."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bot.triage.footprint import worth_walking
from bot.triage.imports import ImportWalk, Reached
from bot.triage.models import Confidence, EvidenceKind, Failure, ImportStep, Verdict
from bot.triage.verdict import decide

TEST = "tests/test_invoice.py"


def failure(trace: list[str] | None = None) -> Failure:
    return Failure(
        test_id=f"{TEST}::test_vat",
        name="test_vat",
        file=TEST,
        framework="pytest",
        trace_paths=trace or [],
    )


def invoice_walk(*, cut: tuple[str, ...] = ()) -> ImportWalk:
    step = ImportStep(importer=TEST, module="billing.tax", path="src/billing/tax.py")
    return ImportWalk(
        test_file=TEST,
        language="Python",
        reached=(
            Reached("tests/conftest.py", (), "a conftest.py"),
            Reached("src/billing/tax.py", (step,)),
        ),
        read=(TEST, "tests/conftest.py"),
        wanted=(),
        cut=cut,
    )


def test_an_imported_module_the_pr_changes_is_related_with_high_confidence() -> None:
    [decision] = decide([failure()], ["src/billing/tax.py"], imports={TEST: invoice_walk()})
    assert decision.verdict is Verdict.RELATED
    assert decision.confidence is Confidence.HIGH
    assert decision.evidence == (
        "tests/test_invoice.py imports billing.tax (src/billing/tax.py), which this PR changes"
    )
    [walked] = [item.text for item in decision.items if item.kind is EvidenceKind.IMPORTS]
    assert walked.endswith("2 files read; complete")


def test_a_changed_conftest_is_related() -> None:
    [decision] = decide([failure()], ["tests/conftest.py"], imports={TEST: invoice_walk()})
    assert decision.verdict is Verdict.RELATED
    assert "is a conftest.py that runs for the test" in decision.evidence


@given(
    changed=st.lists(
        st.sampled_from(
            ["src/billing/ledger.py", "docs/a.md", "src/other.py", "tests/test_other.py"]
        ),
        min_size=1,
    ),
    cut=st.sampled_from([(), ("the budget of 3,000 files read was spent",)]),
    passed=st.booleans(),
)
def test_a_partial_walk_never_clears_a_change_it_could_not_rule_out(
    changed: list[str], cut: tuple[str, ...], passed: bool
) -> None:
    """None of these paths is reached by the walk. A complete walk rules them out (a
    sibling test file is no evidence, a Markdown file no code); a partial one cannot rule
    out a Python file, so the verdict is UNKNOWN, never "flaky" nor "unrelated"."""
    [decision] = decide(
        [failure()], changed, passed_on_rerun=passed, imports={TEST: invoice_walk(cut=cut)}
    )
    if cut and any(path.endswith(".py") for path in changed):
        assert decision.verdict is Verdict.UNKNOWN
        assert ("could not be ruled out" if passed else "cannot be ruled out") in decision.evidence
        assert "the budget of 3,000 files read was spent" in decision.evidence
        assert "unrelated" not in decision.evidence
    else:
        assert decision.verdict is (Verdict.FLAKY if passed else Verdict.UNRELATED)
    if cut:
        assert any("partial: " in item.text for item in decision.items)


def test_the_walk_is_made_only_when_it_can_change_the_verdict() -> None:
    assert worth_walking(failure(), ["src/billing/tax.py"]) == TEST
    # Nothing a Python test can import changed.
    assert worth_walking(failure(), ["docs/a.md", "web/app.ts", "tox.ini"]) is None
    # ...but the configuration the walk reads may steer its imports (pytest's pythonpath).
    assert worth_walking(failure(), ["docs/a.md", "pyproject.toml"]) == TEST
    # ...unless GitHub's list of changes is cut off.
    assert worth_walking(failure(), ["docs/a.md"], changed_complete=False) == TEST
    # The test file or its traceback already meets the change: related, high, without it.
    assert worth_walking(failure(), [TEST, "src/x.py"]) is None
    assert worth_walking(failure(["src/x.py"]), ["src/x.py"]) is None
    # Not a Python test.
    js = failure().model_copy(update={"file": "web/a.test.ts", "test_id": "web/a.test.ts::x"})
    assert worth_walking(js, ["web/a.py"]) is None
