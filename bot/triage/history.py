"""What the store knows about each failed test, turned into the TestContext a verdict reads.

Pure: the handler fetches the rows, this decides what they show.

- History: earlier failures of the same test (by match key) on other PRs by other authors,
  or on the PR's base branch or in its merge queue (runs GitHub said were the queue's:
  `queue_branch`), inside the window the rows were read for. Failures judged
  RELATED at the time are left out: their own PR's change explains them. Whether each had
  the same signature is recorded; a generic signature ("exit code 1") is never the same as
  anything, so it never counts as a known flake on its own.
- Base: the same test failing on the PR's base commit (any check: the same code), or in the
  latest run of this check on the base branch. Same signature there makes it BROKEN_BASE.
- Rate: the test's failures over the check's recorded runs (this one included), and its
  flips between attempts of one commit. A run where the check failed for another reason
  counts as a run this test did not fail; cancelled runs do not count.
- Disputes: the logins that said `/flaky wrong` about the test, or about the whole PR ("*").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial

from pydantic import BaseModel

from bot.triage.failures import match_key
from bot.triage.models import (
    BaseResult,
    Failure,
    Occurrence,
    PastOccurrence,
    RunRate,
    RunRecord,
    TestContext,
    Verdict,
)
from bot.triage.signature import is_generic
from bot.triage.stats import Outcome, outcomes_of, run_rate

WHOLE_PR = "*"
# The branch a merge queue's runs are kept under: one per base branch (`queue_branch`).
_QUEUE_PREFIX = "gh-readonly-queue/"
RATED_CONCLUSIONS = frozenset({"success", "failure", "timed_out"})
_FAILED = frozenset({"failure", "timed_out"})
# Fewer runs than this and there is no rate worth showing: "failed 1 of 1 run" says nothing.
MIN_RUNS_FOR_CONTEXT = 2


class ThisRun(BaseModel):
    """The run being triaged, on the PR it is judged for."""

    check_run_id: int
    check_name: str
    head_sha: str
    attempt: int
    failed: bool  # False: a pass after a failed attempt, judged for that attempt's failures
    pr_number: int
    author: str
    base_sha: str
    base_branch: str


def contexts_for(
    failures: Sequence[Failure],
    this: ThisRun,
    *,
    occurrences: Sequence[Occurrence],
    runs: Sequence[RunRecord],
    latest_base_run: RunRecord | None,
    disputes: Mapping[str, Sequence[str]],
    generic_messages: Sequence[str] = (),
) -> dict[str, TestContext]:
    """One TestContext per failed test, keyed by match_key(test_id).

    `occurrences` are the recorded failures of these tests, `runs` the recorded runs of this
    check, both over the history window; `latest_base_run` is the newest run of this check
    on the base branch outside any PR.
    """
    disputed: dict[str, list[str]] = {}
    for key, logins in disputes.items():
        normal = key if key == WHOLE_PR else match_key(key)
        disputed.setdefault(normal, []).extend(logins)
    rerun_outcomes = _rerun_outcomes(runs)
    contexts: dict[str, TestContext] = {}
    for failure in failures:
        key = match_key(failure.test_id)
        mine = [o for o in occurrences if o.test_key == key and o.check_run_id != this.check_run_id]
        generic = is_generic(failure.message, generic_messages) or not failure.signature
        same = partial(_same_failure, failure.signature, generic)
        history = [
            PastOccurrence(
                pr_number=o.pr_number,
                branch=o.branch,
                author=o.author,
                head_sha=o.head_sha,
                check_name=o.check_name,
                at=o.at,
                same_signature=same(o),
                passed_on_rerun=rerun_outcomes.get((o.head_sha, o.check_name, o.attempt)),
                html_url=o.html_url,
            )
            for o in mine
            if _elsewhere(o, this) and o.verdict != Verdict.RELATED
        ]
        contexts[key] = TestContext(
            history=history,
            base=_base(mine, this, latest_base_run, same),
            rate=_rate(key, this, runs, occurrences),
            disputed_by=sorted({*disputed.get(key, []), *disputed.get(WHOLE_PR, [])}),
        )
    return contexts


def queue_branch(base: str) -> str:
    """The branch the runs of `base`'s merge queue are kept under, once GitHub said they are
    the queue's (`handlers/queues.py`)."""
    return _QUEUE_PREFIX + base


def queue_base(branch: str | None) -> str | None:
    """The base branch whose merge queue `branch` keeps (`queue_branch`), else None."""
    if branch is None or not branch.startswith(_QUEUE_PREFIX):
        return None
    return branch.removeprefix(_QUEUE_PREFIX) or None


def _same_failure(signature: str, generic: bool, occurrence: Occurrence) -> bool:
    """The same signature, neither side generic: a generic one never matches on its own."""
    return not generic and not occurrence.generic and occurrence.signature == signature


def _elsewhere(occurrence: Occurrence, this: ThisRun) -> bool:
    """On another PR by another author, or on the base branch outside any PR (its merge
    queue too: the queue tests other PRs merged into it)."""
    if occurrence.pr_number is None:
        return occurrence.branch in (this.base_branch, queue_branch(this.base_branch))
    return occurrence.pr_number != this.pr_number and occurrence.author != this.author


def _base(
    mine: Sequence[Occurrence],
    this: ThisRun,
    latest_base_run: RunRecord | None,
    same: Callable[[Occurrence], bool],
) -> BaseResult | None:
    found: list[BaseResult] = []
    at_base = [o for o in mine if o.head_sha == this.base_sha]
    if at_base:
        best = next((o for o in at_base if same(o)), at_base[0])
        found.append(
            BaseResult(
                where=f"the base commit {this.base_sha[:7]}",
                head_sha=this.base_sha,
                same_signature=same(best),
                html_url=best.html_url,
            )
        )
    if latest_base_run is not None and latest_base_run.check_run_id != this.check_run_id:
        latest = [o for o in mine if o.check_run_id == latest_base_run.check_run_id]
        if latest:
            best = next((o for o in latest if same(o)), latest[0])
            found.append(
                BaseResult(
                    where=f"the latest run of {this.check_name} on {this.base_branch}",
                    head_sha=latest_base_run.head_sha,
                    same_signature=same(best),
                    html_url=best.html_url,
                )
            )
    return next((b for b in found if b.same_signature), found[0] if found else None)


def _rate(
    key: str, this: ThisRun, runs: Sequence[RunRecord], occurrences: Sequence[Occurrence]
) -> RunRate | None:
    failed_in = {o.check_run_id for o in occurrences if o.test_key == key}
    rated = (
        r for r in runs if r.conclusion in RATED_CONCLUSIONS and r.check_run_id != this.check_run_id
    )
    outcomes = outcomes_of(rated, failed_in)
    outcomes.append(Outcome(this.head_sha, this.attempt, this.failed, this.check_run_id))
    if len(outcomes) < MIN_RUNS_FOR_CONTEXT:
        return None
    return run_rate(outcomes)


def _rerun_outcomes(runs: Sequence[RunRecord]) -> dict[tuple[str, str, int], bool]:
    """(commit, check, attempt) of each failed run later rerun -> whether a rerun passed."""
    by_commit: dict[tuple[str, str], list[RunRecord]] = {}
    for run in runs:
        by_commit.setdefault((run.head_sha, run.check_name), []).append(run)
    outcomes: dict[tuple[str, str, int], bool] = {}
    for (sha, check), attempts in by_commit.items():
        for run in attempts:
            later = [
                r for r in attempts if r.attempt > run.attempt and r.conclusion in RATED_CONCLUSIONS
            ]
            if run.conclusion in _FAILED and later:
                outcomes[(sha, check, run.attempt)] = any(r.conclusion == "success" for r in later)
    return outcomes
