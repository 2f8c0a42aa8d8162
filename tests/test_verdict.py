"""Verdicts: related whenever the footprint meets the change, unrelated only when shown."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.triage.failures import match_key
from bot.triage.footprint import MASS_WALK_FILES, footprint, mass_walk
from bot.triage.imports import ImportWalk
from bot.triage.models import (
    BaseResult,
    Confidence,
    Decision,
    EvidenceKind,
    Extraction,
    Failure,
    InfraCause,
    PastOccurrence,
    RunRate,
    Verdict,
)
from bot.triage.models import (
    TestContext as Context,
)
from bot.triage.verdict import (
    NO_TEST_IDENTIFIED,
    Rules,
    decide,
    decide_extraction,
    summarise,
)


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
        "this PR changes none of the 5 paths it depends on: "
        "tests/bus/test_core.py, src/bus/core.py, **/bus/core.py, and 2 more"
    )


def test_passed_on_rerun_outside_the_footprint_is_flaky() -> None:
    (decision,) = decide([failure()], ["docs/index.md"], passed_on_rerun=True)

    assert decision.verdict is Verdict.FLAKY
    assert decision.evidence.startswith(
        "passed on rerun of the same commit; this PR changes none of the 5 paths it depends on"
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


def _mass(files: int, tests_per_file: int = 2) -> list[Failure]:
    return [
        Failure(test_id=f"tests/test_m{i}.py::test_{n}", name=f"test_{n}", framework="pytest")
        for n in range(tests_per_file)
        for i in range(files)
    ]


def test_a_mass_failure_walks_its_distinct_test_files_up_to_the_budget() -> None:
    failures = _mass(25)

    chosen = mass_walk(failures, ["src/shop/money.py"])

    files = list(dict.fromkeys(f.test_id.partition("::")[0] for f in chosen))
    assert files == [f"tests/test_m{i}.py" for i in range(MASS_WALK_FILES)] and len(files) == 20
    assert len(chosen) == 2 * MASS_WALK_FILES  # a chosen file's other failures come with it
    assert mass_walk(failures, ["docs/index.md"]) == []  # no walk could change a verdict


def test_a_mass_failure_says_when_the_walk_budget_left_test_files_out() -> None:
    failures = _mass(25)
    extraction = Extraction(failures=failures, mass_failure=True)

    walked = {"tests/test_m0.py": ImportWalk("tests/test_m0.py", "Python", (), (), (), ())}

    cut = decide_extraction(extraction, ["src/shop/money.py"], imports=walked)
    within = decide_extraction(
        Extraction(failures=_mass(20), mass_failure=True), ["src/shop/money.py"], imports=walked
    )

    assert {d.verdict for d in cut} == {Verdict.UNKNOWN}
    assert cut[0].evidence == (
        "50 tests failed in this job: a mass failure, not judged test by test; the imports of "
        "20 of its 25 test files were followed, the limit in a mass failure"
    )
    assert "limit" not in within[0].evidence


def test_without_a_test_or_a_cause_the_job_is_unknown() -> None:
    (decision,) = decide_extraction(Extraction(), ["docs/a.md"])

    assert decision.verdict is Verdict.UNKNOWN


# --- history, base branch, risky paths, config footprints, disputes, confidence -----------

KEY = match_key("tests/bus/test_core.py::TestBus::test_publish")


def past(*, same: bool = True, pr: int | None = 12, passed: bool | None = None) -> PastOccurrence:
    return PastOccurrence(
        pr_number=pr,
        branch="main" if pr is None else "feature",
        author=None if pr is None else "bob",
        head_sha="b" * 40,
        check_name="tests",
        at=1_700_000_000.0,
        same_signature=same,
        passed_on_rerun=passed,
    )


def decide_with(context: Context, changed: list[str] | None = None, **kwargs: Any) -> Decision:
    (decision,) = decide(
        [failure()], changed if changed is not None else ["docs/index.md"],
        contexts={KEY: context}, **kwargs,
    )  # fmt: skip
    return decision


def kinds(decision: Decision) -> list[EvidenceKind]:
    return [item.kind for item in decision.items]


def test_every_decision_lists_its_facts_and_keeps_one_strongest_line() -> None:
    decision = decide_with(Context())

    assert decision.verdict is Verdict.UNRELATED
    assert decision.confidence is Confidence.MEDIUM
    assert kinds(decision) == [EvidenceKind.NO_OVERLAP]
    assert decision.items[0].text == decision.evidence


def test_known_history_of_the_same_failure_elsewhere_is_flaky() -> None:
    decision = decide_with(Context(history=[past(pr=12, passed=True), past(pr=None)]))

    assert decision.verdict is Verdict.FLAKY
    assert decision.confidence is Confidence.HIGH
    assert decision.evidence.startswith(
        "known flaky: failed the same way on 1 other PR by another author (#12) and 1 run on "
        "main in the last 30 days; passed on rerun 1 of 1 time; this PR changes none of"
    )
    assert EvidenceKind.HISTORY in kinds(decision)
    assert len(decision.history) == 2


def test_one_earlier_occurrence_is_a_small_sample_not_high_confidence() -> None:
    decision = decide_with(Context(history=[past()]))

    assert decision.verdict is Verdict.FLAKY
    assert decision.confidence is Confidence.MEDIUM


def test_the_same_test_with_a_different_error_is_a_new_failure_not_the_known_flake() -> None:
    decision = decide_with(Context(history=[past(same=False), past(same=False, pr=15)]))

    assert decision.verdict is Verdict.UNRELATED
    assert "2 other times in the last 30 days with a different error" in " ".join(
        item.text for item in decision.items
    )


def test_history_never_outweighs_an_overlap() -> None:
    decision = decide_with(Context(history=[past(), past(pr=13)]), ["src/bus/core.py"])

    assert decision.verdict is Verdict.RELATED
    assert decision.confidence is Confidence.HIGH


def test_the_same_failure_on_the_base_branch_is_broken_base() -> None:
    base = BaseResult(where="the base commit 0a1b2c3", head_sha="0" * 40, same_signature=True)

    decision = decide_with(Context(base=base, history=[past()]))

    assert decision.verdict is Verdict.BROKEN_BASE
    assert decision.evidence.startswith("failed the same way on the base commit 0a1b2c3; ")
    assert decision.confidence is Confidence.HIGH
    assert EvidenceKind.BASE in kinds(decision)


def test_broken_base_with_a_different_error_is_not_broken_base() -> None:
    base = BaseResult(where="the base commit 0a1b2c3", head_sha="0" * 40, same_signature=False)

    decision = decide_with(Context(base=base))

    assert decision.verdict is Verdict.UNRELATED
    assert "also failed on the base commit 0a1b2c3, with a different error" in [
        item.text for item in decision.items
    ]


def test_an_overlap_beats_a_broken_base_with_lower_confidence() -> None:
    base = BaseResult(where="the base commit 0a1b2c3", head_sha="0" * 40, same_signature=True)

    decision = decide_with(Context(base=base), ["src/bus/core.py"])

    assert decision.verdict is Verdict.RELATED
    assert decision.confidence is Confidence.MEDIUM
    assert EvidenceKind.BASE in kinds(decision)


def test_risky_paths_never_make_it_related_but_are_caveats_lowering_confidence() -> None:
    changed = [".github/workflows/ci.yml", "poetry.lock", "docs/index.md"]

    unrelated = decide_with(Context(), changed)
    flaky = decide_with(Context(), changed, passed_on_rerun=True)

    assert unrelated.verdict is Verdict.UNRELATED
    assert unrelated.confidence is Confidence.LOW
    assert unrelated.caveats == [
        "this PR changes .github/workflows/ci.yml (CI configuration), which can break any test",
        "this PR changes poetry.lock (lockfile), which can break any test",
    ]
    assert flaky.verdict is Verdict.FLAKY
    assert flaky.confidence is Confidence.MEDIUM


def test_configured_risky_paths_are_caveats_too() -> None:
    decision = decide_with(Context(), ["scripts/ci.sh"], rules=Rules(risky_paths=["scripts/**"]))

    assert decision.caveats == [
        "this PR changes scripts/ci.sh (listed in risky_paths), which can break any test"
    ]


def test_a_risky_path_inside_the_footprint_is_an_overlap_not_a_caveat() -> None:
    decision = decide_with(Context(), ["tests/bus/conftest.py"])

    assert decision.verdict is Verdict.RELATED
    assert decision.caveats == []


def test_config_footprints_map_tests_to_what_they_depend_on() -> None:
    e2e = failure("tests/e2e/test_login.py::test_login", trace_paths=[])
    rules = Rules(footprints={"tests/e2e/**": ["**"]})

    (mapped,) = decide([e2e], ["src/web/views.py"], rules=rules)
    (unmapped,) = decide([e2e], ["src/web/views.py"])

    assert mapped.verdict is Verdict.RELATED
    assert mapped.evidence == (
        "this PR changes src/web/views.py, which the repo's footprints setting maps to this "
        "test (**)"
    )
    assert unmapped.verdict is Verdict.UNRELATED


def test_retries_inside_the_run_that_passed_in_the_end_show_flakiness() -> None:
    retried = failure().model_copy(update={"attempts_failed": 1, "attempts_total": 3})

    (decision,) = decide([retried], ["docs/index.md"])

    assert decision.verdict is Verdict.FLAKY
    assert decision.evidence.startswith("failed 1 of 3 tries within this run, then passed; ")
    assert EvidenceKind.RETRIES in kinds(decision)


def test_reproduced_on_rerun_is_the_least_sure_unrelated() -> None:
    decision = decide_with(Context(), reproduced_on_rerun=True)

    assert decision.verdict is Verdict.UNRELATED
    assert decision.confidence is Confidence.LOW


@pytest.mark.parametrize("passed_on_rerun", [False, True])
def test_a_disputed_verdict_is_never_flaky_nor_unrelated(passed_on_rerun: bool) -> None:
    decision = decide_with(
        Context(disputed_by=["alice"], history=[past(), past(pr=13)]),
        passed_on_rerun=passed_on_rerun,
    )

    assert decision.verdict is Verdict.UNKNOWN
    assert decision.confidence is Confidence.LOW
    assert decision.evidence.startswith("@alice said this verdict was wrong (/flaky wrong); ")
    assert EvidenceKind.FEEDBACK in kinds(decision)


def test_a_disputed_related_verdict_stays_related() -> None:
    decision = decide_with(Context(disputed_by=["alice"]), ["src/bus/core.py"])

    assert decision.verdict is Verdict.RELATED
    assert EvidenceKind.FEEDBACK in kinds(decision)


def test_the_rate_is_an_evidence_item_with_its_denominator() -> None:
    rate = RunRate(failures=12, runs=20, low=0.387, high=0.781, flips=1, flip_commits=1)

    decision = decide_with(Context(rate=rate))

    assert decision.rate == rate
    assert [i.text for i in decision.items if i.kind is EvidenceKind.RATE] == [
        "failed 12 of 20 runs (60 %, 95 % CI 39\u201378 %)",
        "flipped between pass and fail 1 time on 1 commit run more than once",
    ]


def test_a_mass_failure_keeps_broken_base() -> None:
    base = BaseResult(where="the base commit 0a1b2c3", head_sha="0" * 40, same_signature=True)
    failures = [failure(f"tests/x/test_{n}.py::test_a", trace_paths=[]) for n in range(3)]
    contexts = {match_key(failures[0].test_id): Context(base=base)}

    decisions = decide_extraction(
        Extraction(failures=failures, mass_failure=True), ["docs/index.md"], contexts=contexts
    )

    assert [d.verdict for d in decisions] == [Verdict.BROKEN_BASE, Verdict.UNKNOWN, Verdict.UNKNOWN]
    assert EvidenceKind.MASS in kinds(decisions[1])
