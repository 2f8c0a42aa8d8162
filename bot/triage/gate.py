"""The merge gate: whether the head of a pull request may merge, given its checks, the bot's
verdicts and the quarantined tests.

The bot's check run is the gate when quarantine is on: the one check branch protection
requires in place of the test checks. It passes only when every check of the head completed
and each either passed, or failed only in tests that are quarantined and whose failure the
bot judged not to be the PR's doing, or passed on a rerun of the same commit. Everything
else blocks, and says why:

- a failure related to the PR (its change touches what the test depends on), quarantined
  or not, even when a rerun passed: the gate never lets the PR's own breakage through;
- a failure the bot could not tie to the PR nor rule out (`unknown`): a quarantined test
  that fails in a way the change may have caused is not the known flake;
- a failed check with no test identified, or an infrastructure failure: nothing says the
  tests that did not run would have passed (a rerun that passes clears it);
- a failed check not triaged yet, or a check still running: the gate waits (in progress);
- a check cancelled, stale or needing action: it did not pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field

from bot.triage.attempts import FAILED_CONCLUSIONS
from bot.triage.failures import match_key
from bot.triage.models import Decision, Verdict
from bot.triage.quarantine import Quarantine

PASSING = frozenset({"success", "neutral", "skipped"})
# Verdicts that say the failure is not the PR's doing: a quarantined test's is let through.
NOT_THE_PRS = frozenset({Verdict.FLAKY, Verdict.UNRELATED, Verdict.BROKEN_BASE})


class HeadRun(BaseModel):
    """One check run of the head as GitHub lists it (the bot's own left out)."""

    name: str
    run_id: int
    status: str  # "queued", "in_progress", "completed", ...
    conclusion: str | None = None


class Triaged(BaseModel):
    """One attempt of a check of the head as the bot recorded it."""

    check_name: str
    check_run_id: int
    attempt: int
    conclusion: str
    decisions: list[Decision] = Field(default_factory=list)


class Passage(BaseModel):
    """A failure the gate let through, and why."""

    check_name: str
    test_id: str
    why: str


class Block(BaseModel):
    """What keeps the gate red, and why; `test_id` None: the check as a whole."""

    check_name: str
    test_id: str | None
    why: str


class Gate(BaseModel):
    conclusion: Literal["success", "failure"] | None  # None: waiting (in progress)
    let_through: list[Passage] = Field(default_factory=list)
    blocking: list[Block] = Field(default_factory=list)
    waiting: list[Block] = Field(default_factory=list)


def decide_gate(
    runs: Sequence[HeadRun],
    triaged: Sequence[Triaged],
    quarantined: Mapping[str, Quarantine],
) -> Gate:
    """The gate of one head. `quarantined`: the active quarantines by test match key."""
    gate = Gate(conclusion=None)
    for run in sorted(runs, key=lambda r: (r.name, r.run_id)):
        ours = [t for t in triaged if t.check_name == run.name]
        if run.status != "completed":
            gate.waiting.append(Block(check_name=run.name, test_id=None, why="still running"))
        elif run.conclusion in PASSING:
            _passed(gate, run, ours)
        elif run.conclusion in FAILED_CONCLUSIONS:
            _failed(gate, run, ours, quarantined)
        else:
            why = f"concluded {run.conclusion or 'without a conclusion'}"
            gate.blocking.append(Block(check_name=run.name, test_id=None, why=why))
    if gate.blocking:
        gate.conclusion = "failure"
    elif not gate.waiting:
        gate.conclusion = "success"
    return gate


def _passed(gate: Gate, run: HeadRun, ours: Sequence[Triaged]) -> None:
    """A check that passed: a failure of an earlier attempt on this commit passed on rerun,
    unless it was related to the PR."""
    for attempt in ours:
        if attempt.conclusion not in FAILED_CONCLUSIONS:
            continue
        for decision in attempt.decisions:
            test = decision.failure.test_id if decision.failure else None
            if decision.verdict is Verdict.RELATED:
                why = "related to this PR; a pass on rerun does not clear it"
                gate.blocking.append(Block(check_name=run.name, test_id=test, why=why))
            elif test is not None:
                why = f"passed on rerun of the same commit (attempt {attempt.attempt} failed)"
                gate.let_through.append(Passage(check_name=run.name, test_id=test, why=why))


def _failed(
    gate: Gate, run: HeadRun, ours: Sequence[Triaged], quarantined: Mapping[str, Quarantine]
) -> None:
    attempt = next((t for t in ours if t.check_run_id == run.run_id), None)
    if attempt is None:
        gate.waiting.append(Block(check_name=run.name, test_id=None, why="not triaged yet"))
        return
    if not attempt.decisions:
        why = "failed with no failed test identified"
        gate.blocking.append(Block(check_name=run.name, test_id=None, why=why))
    for decision in attempt.decisions:
        passes, why = _judged(decision, quarantined)
        test = decision.failure.test_id if decision.failure else None
        if passes and test is not None:
            gate.let_through.append(Passage(check_name=run.name, test_id=test, why=why))
        else:
            gate.blocking.append(Block(check_name=run.name, test_id=test, why=why))


def _judged(decision: Decision, quarantined: Mapping[str, Quarantine]) -> tuple[bool, str]:
    """Whether one failure is let through, and why (or why not)."""
    failure = decision.failure
    if failure is None:
        if decision.verdict is Verdict.INFRA:
            return False, "an infrastructure failure: the tests did not all run"
        return False, "failed with no failed test identified"
    found = quarantined.get(match_key(failure.test_id))
    if decision.verdict is Verdict.RELATED:
        return False, "related to this PR" + (", though quarantined" if found else "")
    if found is None:
        return False, f"not quarantined ({decision.verdict})"
    if decision.verdict not in NOT_THE_PRS:
        return (
            False,
            f"quarantined, but judged {decision.verdict}: this PR's change is not ruled out",
        )
    issue = f" (#{found.issue_number})" if found.issue_number else ""
    return True, f"quarantined until {_day(found.expires_at)}{issue}, owner {found.owner}"


def _day(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d")
