"""The CI time the merge gate saved: the reruns its quarantines made unnecessary (pure).

A failed check whose every failure the gate lets through (quarantined tests, not the PR's
doing) needs no rerun to merge. Each such failed run, from the moment its test's quarantine
began, is one rerun saved, estimated at the failed job's own duration: a rerun runs the same
job again. The gate's own rules decide (decide_gate on that one run, with the quarantines on
when it failed), so the figure never counts a run the gate would have blocked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from bot.triage.failures import match_key
from bot.triage.gate import HeadRun, Triaged, decide_gate
from bot.triage.quarantine import Quarantine


class FailedAttempt(BaseModel):
    """A failed attempt of a check on a pull request, as the bot recorded it."""

    triaged: Triaged
    at: float  # when the bot recorded it


class SavedRerun(BaseModel):
    check_name: str
    check_run_id: int
    test_keys: list[str]  # the quarantined tests it let through
    seconds: float | None  # the failed job's duration; None when not recorded


class Savings(BaseModel):
    reruns: list[SavedRerun] = Field(default_factory=list)

    @property
    def seconds(self) -> float:
        """The reruns' time, of those whose duration was recorded."""
        return sum(r.seconds for r in self.reruns if r.seconds is not None)

    @property
    def unmeasured(self) -> int:
        return sum(1 for r in self.reruns if r.seconds is None)

    def of_test(self, test_key: str) -> Savings:
        return Savings(reruns=[r for r in self.reruns if test_key in r.test_keys])


def gate_savings(
    attempts: Sequence[FailedAttempt],
    quarantines: Sequence[Quarantine],
    job_seconds: Mapping[int, float | None],
) -> Savings:
    """The reruns saved by `quarantines` among `attempts`; `job_seconds` by check run id."""
    saved = []
    for attempt in attempts:
        on = {q.test_key: q for q in quarantines if _on_at(q, attempt.at)}
        run = attempt.triaged
        head = HeadRun(
            name=run.check_name,
            run_id=run.check_run_id,
            status="completed",
            conclusion=run.conclusion,
        )
        gate = decide_gate([head], [run], on)
        if gate.conclusion == "success" and gate.let_through:
            keys = sorted({match_key(p.test_id) for p in gate.let_through})
            seconds = job_seconds.get(run.check_run_id)
            saved.append(
                SavedRerun(
                    check_name=run.check_name,
                    check_run_id=run.check_run_id,
                    test_keys=keys,
                    seconds=seconds,
                )
            )
    return Savings(reruns=saved)


def _on_at(q: Quarantine, at: float) -> bool:
    ends = min(q.expires_at, q.ended_at) if q.ended_at is not None else q.expires_at
    return q.since <= at < ends
