"""The CI time the gate saved (pure): which failed runs count as a rerun saved, and for how
long; the page's words for it."""

from __future__ import annotations

from bot.report.dashboard_quarantine import render_quarantined
from bot.triage.gate_savings import FailedAttempt, gate_savings
from bot.triage.models import Verdict
from bot.triage.quarantine import DAY
from tests.test_gate import KEY, OTHER, QUARANTINED, T0, decision, triaged

ON = list(QUARANTINED.values())


def failed(*verdicts: tuple[Verdict, str], run_id: int, at: float = T0 + DAY) -> FailedAttempt:
    decisions = [decision(verdict, test) for verdict, test in verdicts]
    return FailedAttempt(triaged=triaged(*decisions, run_id=run_id), at=at)


TEST = ON[0].test_id


def test_only_runs_the_gate_let_through_while_quarantined_count() -> None:
    attempts = [
        failed((Verdict.FLAKY, TEST), run_id=1),  # saved
        failed((Verdict.UNRELATED, TEST), run_id=2),  # saved, duration not recorded
        failed((Verdict.FLAKY, TEST), run_id=3, at=T0 - 60),  # before the quarantine began
        failed((Verdict.FLAKY, TEST), run_id=4, at=T0 + 15 * DAY),  # after it expired
        failed((Verdict.FLAKY, TEST), (Verdict.UNRELATED, OTHER), run_id=5),  # OTHER blocks
        failed((Verdict.RELATED, TEST), run_id=6),  # the PR's doing: blocks
        failed((Verdict.UNKNOWN, TEST), run_id=7),  # not ruled out: blocks
    ]
    seconds = {1: 300.0, 3: 280.0, 4: 290.0, 5: 310.0, 6: 320.0, 7: 330.0}

    saved = gate_savings(attempts, ON, seconds)

    assert [(r.check_run_id, r.seconds, r.test_keys) for r in saved.reruns] == [
        (1, 300.0, [KEY]),
        (2, None, [KEY]),
    ]
    assert (saved.seconds, saved.unmeasured) == (300.0, 1)
    assert saved.of_test(KEY) == saved and saved.of_test("other.key").reruns == []


def test_an_ended_quarantine_saves_nothing_after_its_end() -> None:
    ended = ON[0].model_copy(update={"ended_at": T0 + DAY / 2, "ended_by": "mo"})
    saved = gate_savings([failed((Verdict.FLAKY, TEST), run_id=1)], [ended], {1: 300.0})
    assert saved.reruns == []


def test_the_page_says_how_much_and_how_it_is_estimated() -> None:
    attempts = [failed((Verdict.FLAKY, TEST), run_id=n) for n in (1, 2, 3)]
    saved = gate_savings(attempts, ON, {1: 300.0, 2: 450.0})
    html = render_quarantined("acme/bus", ON, saved)
    assert "CI time saved: 3 reruns, 12 min 30 s (1 more without a recorded duration)." in html
    assert "estimated at the failed job's own duration" in html
    assert "<td>3 reruns, 12 min 30 s (1 more without a recorded duration)</td></tr>" in html
    none = render_quarantined("acme/bus", ON, gate_savings([], ON, {}))
    assert "CI time saved: 0 reruns." in none
