"""What history keeps of a check run, and what the store knows about each failed test."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

from bot.config import RepoConfig
from bot.events import CheckRun
from bot.github import api
from bot.store import Store
from bot.triage.attempts import FAILED_CONCLUSIONS
from bot.triage.failures import match_key
from bot.triage.history import ThisRun, contexts_for
from bot.triage.models import (
    Decision,
    Extraction,
    Failure,
    Occurrence,
    RunRecord,
    TestContext,
    Verdict,
)
from bot.triage.signature import is_generic

log = logging.getLogger(__name__)

DAY = 86_400.0


def run_record(
    repo: str, run: CheckRun, commit_runs: Sequence[RunRecord], queue: str | None = None
) -> RunRecord:
    """The run as history keeps it, outside any PR until one is known. Its attempt counts
    the runs of the same check on the same commit recorded before it. `queue` is the merge
    queue GitHub said the run is of (`queues.merge_queue_of`): its branch in the history."""
    recorded = next((r for r in commit_runs if r.check_run_id == run.id), None)
    before = [r for r in commit_runs if r.check_name == run.name and r.check_run_id != run.id]
    pr_numbers = [pr.number for pr in run.pull_requests]
    return RunRecord(
        repo=repo,
        check_run_id=run.id,
        check_name=run.name,
        head_sha=run.head_sha,
        # A merge queue's runs are kept as the queue's, one branch per base branch.
        branch=queue or (run.check_suite.head_branch if run.check_suite else None),
        pr_number=pr_numbers[0] if pr_numbers else None,
        attempt=recorded.attempt if recorded else max((r.attempt for r in before), default=0) + 1,
        conclusion=run.conclusion or "",
        completed_at=epoch(run.completed_at),
        html_url=run.html_url or "",
        started_at=api.epoch(run.started_at) or None,
    )


def with_runner(record: RunRecord, extraction: Extraction) -> RunRecord:
    """The run with the runner its failed job's log names (none for a pass: its log is not
    read)."""
    runner = extraction.runner
    if runner is None:
        return record
    return record.model_copy(
        update={"runner_name": runner.name, "runner_os": runner.os, "runner_image": runner.image}
    )


def occurrences_of(
    record: RunRecord,
    extraction: Extraction,
    decisions: Sequence[Decision],
    generic_messages: Sequence[str],
) -> list[Occurrence]:
    """The failed tests of a run, each with the verdict it got (UNKNOWN without a PR: there
    is no change to judge it against)."""
    verdicts = {d.failure.test_id: d.verdict for d in decisions if d.failure is not None}
    return [
        Occurrence(
            repo=record.repo,
            check_run_id=record.check_run_id,
            check_name=record.check_name,
            test_key=match_key(failure.test_id),
            test_id=failure.test_id,
            signature=failure.signature,
            generic=is_generic(failure.message, generic_messages),
            location=failure.location,
            message=failure.message,
            head_sha=record.head_sha,
            branch=record.branch,
            pr_number=record.pr_number,
            author=record.author,
            attempt=record.attempt,
            at=record.completed_at,
            verdict=str(verdicts.get(failure.test_id, Verdict.UNKNOWN)),
            html_url=record.html_url,
            test_seconds=failure.seconds,
        )
        for failure in extraction.failures
    ]


async def failure_contexts(
    store: Store,
    repo: str,
    record: RunRecord,
    pull: api.PullSummary,
    failures: Sequence[Failure],
    config: RepoConfig,
) -> dict[str, TestContext]:
    """History, base-branch result, rate and disputes of each failed test, from the store."""
    if not failures:
        return {}
    since = record.completed_at - config.history_days * DAY
    keys = [match_key(failure.test_id) for failure in failures]
    async with asyncio.TaskGroup() as tg:
        occurrences = tg.create_task(store.occurrences(repo, keys, since))
        runs = tg.create_task(store.runs(repo, record.check_name, since))
        latest = tg.create_task(store.latest_branch_run(repo, record.check_name, pull.base_ref))
        disputes = tg.create_task(store.feedback_for_pr(repo, pull.number))
    this = ThisRun(
        check_run_id=record.check_run_id,
        check_name=record.check_name,
        head_sha=record.head_sha,
        attempt=record.attempt,
        failed=record.conclusion in FAILED_CONCLUSIONS,
        pr_number=pull.number,
        author=pull.author,
        base_sha=pull.base_sha,
        base_branch=pull.base_ref,
    )
    return contexts_for(
        failures,
        this,
        occurrences=occurrences.result(),
        runs=runs.result(),
        latest_base_run=latest.result(),
        disputes=disputes.result(),
        generic_messages=config.generic_messages,
    )


def epoch(timestamp: str | None) -> float:
    """An ISO 8601 time from a payload as epoch seconds; now when it is missing or unreadable."""
    at = api.epoch(timestamp)
    if at:
        return at
    if timestamp:
        log.warning("unreadable completed_at %r: using the current time", timestamp)
    return time.time()
