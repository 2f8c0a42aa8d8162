"""Verdicts: related whenever the footprint meets the change, unrelated only when shown."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.triage.footprint import footprint
from bot.triage.models import Extraction, Failure, InfraCause, Verdict
from bot.triage.verdict import NO_TEST_IDENTIFIED, decide, decide_extraction, summarise


def failure(
    test_id: str = "tests/bus/test_core.py::TestBus::test_publish",
    trace_paths: list[str] | None = None,
) -> Failure:
    return Failure(
        test_id=test_id,
        name=test_id.rpartition("::")[2],
        framework="pytest",
        trace_paths=trace_paths if trace_paths is not None else ["src/bus/core.py"],
    )


def test_no_failures_is_unknown_never_unrelated() -> None:
    (decision,) = decide([], ["README.md"], passed_on_rerun=True)

    assert decision.failure is None
    assert decision.verdict is Verdict.UNKNOWN
    assert (
        decision.evidence == NO_TEST_IDENTIFIED == "no failed test could be identified in the log"
    )


def test_changed_path_in_traceback_is_related_with_the_path_and_reason() -> None:
    failed = failure()

    (decision,) = decide([failed], ["docs/index.md", "src/bus/core.py"])

    assert decision.verdict is Verdict.RELATED
    assert decision.evidence == "this PR changes src/bus/core.py, which is in its traceback"
    assert decision.failure == failed
    assert decision.matched_paths == ["src/bus/core.py"]
    assert decision.footprint == footprint(failed).entries


@pytest.mark.parametrize(
    ("changed", "why"),
    [
        ("tests/bus/test_core.py", "which is the test file itself"),
        ("tests/bus/conftest.py", "which is in the test's directory tests/bus/"),
        ("lib/bus/core.py", "which is the test file's conventional pair (**/bus/core.py)"),
    ],
)
def test_related_evidence_names_each_kind_of_reason(changed: str, why: str) -> None:
    (decision,) = decide([failure(trace_paths=[])], [changed])

    assert decision.verdict is Verdict.RELATED
    assert decision.evidence == f"this PR changes {changed}, {why}"


def test_related_with_many_paths_counts_them_and_names_the_first_three() -> None:
    changed = ["src/bus/core.py", "tests/bus/a.py", "tests/bus/b.py", "tests/bus/c.py", "x.md"]

    (decision,) = decide([failure()], changed)

    assert decision.verdict is Verdict.RELATED
    assert decision.matched_paths == changed[:4]
    assert decision.evidence == (
        "this PR changes 4 paths it depends on: src/bus/core.py (in traceback), "
        "tests/bus/a.py (test package directory), tests/bus/b.py (test package directory), "
        "and 1 more"
    )


def test_a_related_failure_that_passed_on_rerun_stays_related() -> None:
    (decision,) = decide([failure()], ["src/bus/core.py"], passed_on_rerun=True)

    assert decision.verdict is Verdict.RELATED
    assert decision.evidence.startswith("passed on rerun, but touches code this PR changed; ")
    assert "src/bus/core.py" in decision.evidence


def test_related_is_kept_even_when_the_changed_list_is_incomplete() -> None:
    (decision,) = decide([failure()], ["src/bus/core.py"], changed_complete=False)

    assert decision.verdict is Verdict.RELATED


def test_outside_the_footprint_is_unrelated_listing_what_it_depends_on() -> None:
    (decision,) = decide([failure()], ["docs/index.md", "src/http/client.py"])

    assert decision.verdict is Verdict.UNRELATED
    assert decision.matched_paths == []
    assert decision.evidence == (
        "this PR changes none of the 4 paths it depends on: "
        "tests/bus/test_core.py, src/bus/core.py, **/bus/core.py, and 1 more"
    )


def test_passed_on_rerun_outside_the_footprint_is_flaky() -> None:
    (decision,) = decide([failure()], ["docs/index.md"], passed_on_rerun=True)

    assert decision.verdict is Verdict.FLAKY
    assert decision.evidence.startswith(
        "passed on rerun of the same commit; this PR changes none of the 4 paths it depends on"
    )


def test_reproduced_on_rerun_outside_the_footprint_says_it_failed_again() -> None:
    (decision,) = decide([failure()], ["docs/index.md"], reproduced_on_rerun=True)

    assert decision.verdict is Verdict.UNRELATED
    assert decision.evidence.startswith("failed again on rerun of the same commit; ")


@pytest.mark.parametrize("passed_on_rerun", [False, True])
def test_incomplete_changed_list_is_never_unrelated_or_flaky(passed_on_rerun: bool) -> None:
    (decision,) = decide(
        [failure()], ["docs/index.md"], changed_complete=False, passed_on_rerun=passed_on_rerun
    )

    assert decision.verdict is Verdict.UNKNOWN
    assert "more files than GitHub lists (3,000)" in decision.evidence
    assert "cannot be ruled out" in decision.evidence


def test_a_failure_with_no_known_footprint_is_unknown() -> None:
    nameless = Failure(test_id="TestOne", name="TestOne", framework="go")

    (decision,) = decide([nameless], ["docs/index.md"], passed_on_rerun=True)

    assert decision.verdict is Verdict.UNKNOWN
    assert decision.footprint == []
    assert "cannot be ruled out" in decision.evidence


def test_one_decision_per_failure_in_order() -> None:
    failures = [failure(), failure("tests/http/test_client.py::test_get", trace_paths=[])]

    decisions = decide(failures, ["src/bus/core.py"])

    assert [d.failure for d in decisions] == failures
    assert [d.verdict for d in decisions] == [Verdict.RELATED, Verdict.UNRELATED]
    assert summarise(decisions) == {Verdict.RELATED: 1, Verdict.UNRELATED: 1}


def test_a_rerun_cannot_both_pass_and_reproduce() -> None:
    with pytest.raises(ValueError, match="both pass and reproduce"):
        decide([failure()], [], passed_on_rerun=True, reproduced_on_rerun=True)


repo_path = st.lists(
    st.sampled_from(["src", "tests", "bus", "http", "core.py", "a.py"]), min_size=1, max_size=4
).map("/".join)


@given(
    trace=st.lists(repo_path, max_size=3),
    changed=st.lists(repo_path, max_size=5),
    complete=st.booleans(),
    rerun=st.sampled_from(["none", "passed", "reproduced"]),
)
def test_never_unrelated_or_flaky_when_a_changed_path_is_in_the_traceback(
    trace: list[str], changed: list[str], complete: bool, rerun: str
) -> None:
    (decision,) = decide(
        [failure(trace_paths=trace)],
        changed,
        changed_complete=complete,
        passed_on_rerun=rerun == "passed",
        reproduced_on_rerun=rerun == "reproduced",
    )

    if set(trace) & set(changed):
        assert decision.verdict is Verdict.RELATED
    if decision.verdict is Verdict.FLAKY:
        assert rerun == "passed"
    if not complete:
        assert decision.verdict in {Verdict.RELATED, Verdict.UNKNOWN}
    assert decision.verdict in {Verdict.RELATED, Verdict.UNKNOWN} or not decision.matched_paths


def test_an_infrastructure_failure_without_a_test_is_infra_with_its_line() -> None:
    extraction = Extraction(
        infra=InfraCause(kind="cancelled", line="##[error]The operation was canceled.")
    )

    (decision,) = decide_extraction(extraction, ["docs/a.md"])

    assert decision.verdict is Verdict.INFRA
    assert decision.failure is None
    assert "The operation was canceled." in decision.evidence


def test_a_mass_failure_is_never_unrelated_nor_flaky_but_related_stays() -> None:
    failures = [
        Failure(test_id=f"tests/t{i}/test_x.py::test_{i}", name=f"test_{i}", framework="pytest")
        for i in range(12)
    ]
    extraction = Extraction(failures=failures, mass_failure=True)

    decisions = decide_extraction(extraction, ["tests/t0/test_x.py"], passed_on_rerun=True)

    verdicts = [d.verdict for d in decisions]
    assert verdicts[0] is Verdict.RELATED
    assert set(verdicts[1:]) == {Verdict.UNKNOWN}
    assert "12 tests failed in this job" in decisions[1].evidence


def test_without_a_test_or_a_cause_the_job_is_unknown() -> None:
    (decision,) = decide_extraction(Extraction(), ["docs/a.md"])

    assert decision.verdict is Verdict.UNKNOWN
