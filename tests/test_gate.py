"""The merge gate's decision (pure), every branch; the quarantine's expiry words and its
automatic rule; the gate's text on the check run."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.report.check_run import CheckRunReport
from bot.report.gate import gated
from bot.report.replies import quarantine_week
from bot.triage.gate import Gate, HeadRun, Triaged, decide_gate
from bot.triage.models import Decision, Failure, RunRate, Verdict
from bot.triage.quarantine import (
    DAY,
    Quarantine,
    earns_auto_quarantine,
    expiry,
    owner_for,
    split_expiry,
)

T0 = datetime(2026, 12, 7, 12, tzinfo=UTC).timestamp()
TEST = "tests/bus/test_core.py::test_publish_waits_for_ack"
KEY = "tests.bus.test_core.test_publish_waits_for_ack"
OTHER = "tests/bus/test_wire.py::test_frame"
QUARANTINED = {
    KEY: Quarantine(
        repo="acme/bus",
        test_key=KEY,
        test_id=TEST,
        issue_number=3,
        by="mo",
        owner="@acme/bus",
        since=T0,
        expires_at=T0 + 14 * DAY,
    )
}


def decision(verdict: Verdict, test: str | None = TEST) -> Decision:
    failure = Failure(test_id=test, name=test, framework="pytest") if test else None
    return Decision(failure=failure, verdict=verdict, evidence="e")


def run(conclusion: str | None, status: str = "completed", run_id: int = 10) -> HeadRun:
    return HeadRun(name="tests", run_id=run_id, status=status, conclusion=conclusion)


def triaged(*decisions: Decision, run_id: int = 10, attempt: int = 1) -> Triaged:
    return Triaged(
        check_name="tests",
        check_run_id=run_id,
        attempt=attempt,
        conclusion="failure",
        decisions=list(decisions),
    )


def failed_with(*decisions: Decision, quarantined: bool = True) -> Gate:
    return decide_gate([run("failure")], [triaged(*decisions)], QUARANTINED if quarantined else {})


def whys(gate: Gate) -> tuple[list[str], list[str], list[str]]:
    return (
        [p.why for p in gate.let_through],
        [b.why for b in gate.blocking],
        [w.why for w in gate.waiting],
    )


@pytest.mark.parametrize("verdict", [Verdict.FLAKY, Verdict.UNRELATED, Verdict.BROKEN_BASE])
def test_a_quarantined_failure_not_the_prs_doing_is_let_through(verdict: Verdict) -> None:
    gate = failed_with(decision(verdict))
    assert gate.conclusion == "success"
    assert whys(gate) == (["quarantined until 2026-12-21 (#3), owner @acme/bus"], [], [])


def test_a_related_failure_blocks_even_when_quarantined() -> None:
    gate = failed_with(decision(Verdict.RELATED))
    assert gate.conclusion == "failure"
    assert whys(gate) == ([], ["related to this PR, though quarantined"], [])
    unquarantined = failed_with(decision(Verdict.RELATED), quarantined=False)
    assert whys(unquarantined)[1] == ["related to this PR"]


def test_an_unknown_failure_of_a_quarantined_test_blocks() -> None:
    gate = failed_with(decision(Verdict.UNKNOWN))
    assert gate.conclusion == "failure"
    assert whys(gate)[1] == ["quarantined, but judged unknown: this PR's change is not ruled out"]


def test_a_flaky_failure_not_quarantined_blocks() -> None:
    gate = failed_with(decision(Verdict.FLAKY), quarantined=False)
    assert (gate.conclusion, whys(gate)[1]) == ("failure", ["not quarantined (flaky)"])


def test_one_quarantined_failure_does_not_clear_another_that_is_not() -> None:
    gate = failed_with(decision(Verdict.FLAKY), decision(Verdict.UNRELATED, OTHER))
    assert gate.conclusion == "failure"
    assert [p.test_id for p in gate.let_through] == [TEST]
    assert [b.test_id for b in gate.blocking] == [OTHER]


def test_failures_with_no_test_identified_block() -> None:
    infra = decision(Verdict.INFRA, None)
    assert whys(failed_with(infra))[1] == ["an infrastructure failure: the tests did not all run"]
    unknown = decision(Verdict.UNKNOWN, None)
    assert whys(failed_with(unknown))[1] == ["failed with no failed test identified"]
    nothing = failed_with()
    assert (nothing.conclusion, whys(nothing)[1]) == (
        "failure",
        ["failed with no failed test identified"],
    )


def test_a_failed_check_not_triaged_yet_makes_the_gate_wait() -> None:
    earlier = triaged(decision(Verdict.FLAKY), run_id=9)
    gate = decide_gate([run("failure")], [earlier], QUARANTINED)
    assert (gate.conclusion, whys(gate)) == (None, ([], [], ["not triaged yet"]))


def test_a_check_still_running_makes_the_gate_wait_and_a_block_still_fails_it() -> None:
    running = HeadRun(name="lint", run_id=11, status="in_progress")
    waiting = decide_gate([run("success"), running], [], {})
    assert (waiting.conclusion, whys(waiting)[2]) == (None, ["still running"])
    blocked = decide_gate([run("failure"), running], [triaged(decision(Verdict.RELATED))], {})
    assert blocked.conclusion == "failure"


def test_a_pass_on_rerun_of_the_same_commit_is_let_through_unless_related() -> None:
    first = triaged(decision(Verdict.UNRELATED), run_id=9)
    gate = decide_gate([run("success", run_id=10)], [first], {})
    assert whys(gate) == (["passed on rerun of the same commit (attempt 1 failed)"], [], [])
    assert gate.conclusion == "success"
    related = triaged(decision(Verdict.RELATED), run_id=9)
    blocked = decide_gate([run("success", run_id=10)], [related], QUARANTINED)
    assert blocked.conclusion == "failure"
    assert whys(blocked)[1] == ["related to this PR; a pass on rerun does not clear it"]


def test_a_green_head_is_clear_and_a_cancelled_check_is_not() -> None:
    assert decide_gate([run("success"), run("skipped", run_id=12)], [], {}).conclusion == "success"
    assert decide_gate([], [], {}).conclusion == "success"
    cancelled = decide_gate([run("cancelled")], [], {})
    assert (cancelled.conclusion, whys(cancelled)[1]) == ("failure", ["concluded cancelled"])


def test_the_gate_text_names_what_it_let_through_and_what_holds_it() -> None:
    report = CheckRunReport(title="t", summary="table", conclusion="neutral", annotations=[])
    gate = failed_with(decision(Verdict.FLAKY), decision(Verdict.RELATED, OTHER))
    shown = gated(report, gate)
    assert shown.conclusion == "failure"
    assert shown.title == "Blocked: 1 failure not cleared; 1 failure let through"
    assert "**Not cleared:**\n- `tests` `tests/bus/test_wire.py::test_frame`: related" in (
        shown.summary
    )
    assert "**Let through:**\n- `tests` `" + TEST + "`: quarantined until" in shown.summary
    assert shown.summary.endswith("table")
    clear = gated(report, decide_gate([run("success")], [], {}))
    assert (clear.title, clear.conclusion) == ("Clear to merge", "success")
    wait = gated(report, decide_gate([run(None, status="queued")], [], {}))
    assert (wait.title, wait.conclusion) == ("Waiting for 1 check", None)


# --- the quarantine's words and rules ---------------------------------------------------------


def test_expiry_words() -> None:
    assert expiry(None, T0) == T0 + 14 * DAY
    assert expiry(None, T0, default_days=3) == T0 + 3 * DAY
    assert expiry("7d", T0) == T0 + 7 * DAY
    assert expiry("2W", T0) == T0 + 14 * DAY
    # A date lasts to the end of its day, UTC.
    assert expiry("2026-12-31", T0) == datetime(2027, 1, 1, tzinfo=UTC).timestamp()
    assert expiry("2026-12-01", T0) == "2026-12-01 is in the past"
    assert expiry("2026-02-30", T0) == "2026-02-30 is not a date"
    assert expiry("400d", T0) == "400d is more than 365 days away"
    assert expiry("soon", T0) == "soon is not an expiry (7d, 2w or a date such as 2026-12-31)"


def test_the_expiry_is_the_last_word_when_it_reads_as_one() -> None:
    assert split_expiry(f"{TEST} 7d") == (TEST, "7d")
    assert split_expiry(f"`{TEST}` 2026-12-31") == (TEST, "2026-12-31")
    assert split_expiry("7d") == ("", "7d")
    assert split_expiry("") == ("", None)
    assert split_expiry("suite › waits 7 days") == ("suite › waits 7 days", None)  # noqa: RUF001 (jest's separator)


def test_the_owner_is_codeowners_first_else_who_quarantined() -> None:
    assert owner_for(["@acme/bus", "@lee"], "mo") == "@acme/bus"
    assert owner_for([], "mo") == "mo"


def test_automatic_quarantine_needs_both_the_rate_and_the_prs() -> None:
    sure = RunRate(failures=8, runs=20, low=0.22, high=0.61)
    assert earns_auto_quarantine(sure, 3, min_rate=0.2, min_prs=3)
    assert not earns_auto_quarantine(sure, 2, min_rate=0.2, min_prs=3)
    assert not earns_auto_quarantine(sure, 3, min_rate=0.25, min_prs=3)
    # Two failures in two runs: 100 %, but its interval's lower bound says little.
    lucky = RunRate(failures=2, runs=2, low=0.34, high=1.0)
    assert not earns_auto_quarantine(lucky, 5, min_rate=0.5, min_prs=1)
    assert not earns_auto_quarantine(
        RunRate(failures=0, runs=0, low=0, high=1), 9, min_rate=0.01, min_prs=1
    )


def test_the_weekly_digest_says_whether_the_test_still_fails() -> None:
    still = quarantine_week(
        TEST, [("tests", RunRate(failures=2, runs=3, low=0.2, high=0.94))], [7, 9], "2026-12-21"
    )
    assert still == (
        f"Quarantine of `{TEST}`, the last 7 days: still failing: failed 2 of 3 runs of "
        "`tests`, on #7, #9. It ends on 2026-12-21; `/flaky quarantine` on this issue renews it."
    )
    quiet = quarantine_week(
        TEST, [("tests", RunRate(failures=0, runs=1, low=0, high=0.79))], [], "2026-12-21"
    )
    assert quiet.startswith(
        f"Quarantine of `{TEST}`, the last 7 days: no failure in 1 recorded run."
    )
