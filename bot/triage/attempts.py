"""Reading several attempts of one check on one commit: did a rerun pass or reproduce?"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from bot.triage.models import Decision, Failure

FAILED_CONCLUSIONS = frozenset({"failure", "timed_out"})


class EarlierAttempt(BaseModel):
    attempt: int
    conclusion: str
    decisions: list[Decision] = Field(default_factory=list)


class RerunEvidence(BaseModel):
    failures: list[Failure]  # what to decide on
    passed_on_rerun: bool = False
    reproduced_on_rerun: bool = False
    failed_attempt: int | None = None  # the attempt whose failures passed on rerun


def rerun_evidence(
    conclusion: str, failures: Sequence[Failure], earlier: Sequence[EarlierAttempt]
) -> RerunEvidence | None:
    """What this attempt, read with the earlier ones of the same commit and check, shows.

    None when there is nothing to report: a pass with no failed attempt before it.
    """
    failed_before = sorted(
        (a for a in earlier if a.conclusion in FAILED_CONCLUSIONS), key=lambda a: a.attempt
    )
    if conclusion not in FAILED_CONCLUSIONS:
        if not failed_before:
            return None
        last = failed_before[-1]
        return RerunEvidence(
            failures=[d.failure for d in last.decisions if d.failure is not None],
            passed_on_rerun=True,
            failed_attempt=last.attempt,
        )
    seen = {
        (d.failure.test_id, d.failure.signature)
        for a in failed_before
        for d in a.decisions
        if d.failure is not None
    }
    reproduced = any((f.test_id, f.signature) in seen for f in failures)
    return RerunEvidence(failures=list(failures), reproduced_on_rerun=reproduced)
