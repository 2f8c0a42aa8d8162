"""Failed check runs: gather the evidence, decide, rerun when policy allows, update the comment."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from dataclasses import dataclass

from gidgethub import routing, sansio
from gidgethub.abc import GitHubAPI

from bot.config import CommentMode, RepoConfig
from bot.events import CheckRun, CheckRunEvent
from bot.github import api
from bot.github.client import GitHubClient
from bot.handlers.auto_close import close_quiet_issues
from bot.handlers.check_report import is_own, update_check_run, update_gate_on_pass
from bot.handlers.context import BotContext
from bot.handlers.history import failure_contexts, occurrences_of, run_record, with_runner
from bot.handlers.job_evidence import read_job, read_key
from bot.handlers.pulls import pull_at_head
from bot.handlers.quarantine import quarantine_automatically
from bot.handlers.queues import merge_queue_of
from bot.handlers.refused import refused_alone
from bot.handlers.reruns import rerun_if_allowed
from bot.handlers.scope import Scope
from bot.handlers.sources import Compared, SourceCache, files_at, import_walks, inert_changes
from bot.handlers.sticky import note_passing_head, update_sticky_comment
from bot.handlers.tracking import track_failures
from bot.logs import bind
from bot.store import CheckAttempt, Store
from bot.triage.attempts import FAILED_CONCLUSIONS, EarlierAttempt, RerunEvidence, rerun_evidence
from bot.triage.footprint import mass_walk
from bot.triage.imports import WalkLimits
from bot.triage.models import Decision, Extraction, RunRecord
from bot.triage.reports.locations import resolve_in_tree
from bot.triage.verdict import Rules, decide_extraction

log = logging.getLogger(__name__)
router = routing.Router()

TRIAGED_CONCLUSIONS = FAILED_CONCLUSIONS | {"success"}


@router.register("check_run", action="completed")
async def on_check_run_completed(
    event: sansio.Event, gh: GitHubClient | None, ctx: BotContext
) -> None:
    payload = CheckRunEvent.model_validate(event.data)
    if gh is None:
        return
    await triage_run(Scope(ctx, gh, payload.repository.full_name), payload.check_run)


async def triage_run(scope: Scope, run: CheckRun) -> None:
    """Triage one completed check run on every PR whose head it is: the whole recipe, also
    what `/flaky status` runs again for the head's checks."""
    if run.conclusion not in TRIAGED_CONCLUSIONS or is_own(scope.ctx, run):
        return
    ctx, gh, repo = scope.ctx, scope.gh, scope.repo
    async with asyncio.TaskGroup() as tg:
        earlier_task = tg.create_task(ctx.store.check_attempts_for(repo, run.head_sha, run.name))
        commit_runs_task = tg.create_task(ctx.store.runs_at(repo, run.head_sha))
        queue_task = tg.create_task(merge_queue_of(scope, run))
    attempts = earlier_task.result()
    queue = queue_task.result()
    own = next((a for a in attempts if a.check_run_id == run.id), None)
    # A retried delivery (or `/flaky status`) reads this run again: only what came before it
    # counts, not its own rerun whose result may have been handled in the meantime.
    earlier = [
        a for a in attempts if a.check_run_id != run.id and (own is None or a.attempt < own.attempt)
    ]
    # Every run counts in the history, a pass too: the denominator of failure rates.
    record = run_record(repo, run, commit_runs_task.result(), queue)
    if run.conclusion == "success" and not any(a.conclusion in FAILED_CONCLUSIONS for a in earlier):
        await ctx.store.record_run(record, [])
        if queue is None:
            await note_passing_head(scope, run)
            await update_gate_on_pass(scope, run)
        await close_quiet_issues(scope, record)
        return  # a pass with no failure to describe
    if queue is not None:
        # No pull request, never a comment: the queue's history. (Once merged, its commit
        # would name the PR it merged, so `pulls_for_commit` is not asked.)
        await _record_outside_pr(scope, run, record)
        return
    pr_numbers = [pr.number for pr in run.pull_requests] or await api.pulls_for_commit(
        gh, repo, run.head_sha
    )
    if not pr_numbers:
        # A push to a branch: its failures are the base-branch results and history of PRs.
        await _record_outside_pr(scope, run, record)
        return

    # Gather: the repo's settings, the job's evidence (once), each PR and its changes.
    async with asyncio.TaskGroup() as tg:
        config_task = tg.create_task(scope.config())
        job_task = tg.create_task(_read_job_when_failed(scope, run))
        pull_tasks = [
            tg.create_task(
                pull_and_changes(gh, repo, n, pull_at_head(ctx, gh, repo, n, run.head_sha))
            )
            for n in pr_numbers
        ]
    config, extraction = config_task.result(), job_task.result()
    record = with_runner(record, extraction)
    for task in pull_tasks:
        pull, changed = task.result()
        gathered = Gathered(config, extraction, pull, changed, record)
        await decide_and_act(scope, run, earlier, gathered)


@dataclass(frozen=True)
class Gathered:
    """What a check run's triage on one PR read before deciding."""

    config: RepoConfig
    extraction: Extraction
    pull: api.PullSummary
    changed: api.ChangedFiles
    record: RunRecord


async def decide_and_act(
    scope: Scope, run: CheckRun, earlier: list[CheckAttempt], gathered: Gathered
) -> None:
    ctx, gh, repo = scope.ctx, scope.gh, scope.repo
    config, pull, record = gathered.config, gathered.pull, gathered.record
    bind(pr=pull.number)
    decided = await decide(
        ctx.store,
        repo,
        run,
        earlier,
        config,
        gathered.extraction,
        pull,
        gathered.changed,
        record,
        sources=Sources(gh, ctx.sources),
    )
    if decided is None:
        return
    for decision in decided.decisions:
        ctx.metrics.verdicts.labels(str(decision.verdict)).inc()

    # Record the run before acting, so tallies read from the store include it. A commit heading
    # two PRs is recorded with the first PR's verdicts: recording a run again is a no-op.
    on_pr = record.model_copy(update={"pr_number": pull.number, "author": pull.author})
    failed_now = decided.extraction if run.conclusion in FAILED_CONCLUSIONS else Extraction()
    await ctx.store.record_run(
        on_pr, occurrences_of(on_pr, failed_now, decided.decisions, config.generic_messages)
    )

    # Act.
    rerun_note = decided.rerun_note
    if run.conclusion in FAILED_CONCLUSIONS:
        # The failure is on record before its rerun is asked for: if this delivery dies after
        # GitHub started the rerun (a crash, an answer lost), the rerun's result, which may
        # be handled first, still finds the failure it follows.
        await ctx.store.record_check_attempt(
            check_attempt(repo, run, pull, decided, None, time.time())
        )
        rerun_note = await rerun_if_allowed(scope, run, pull, decided.decisions, decided.attempt)
    await ctx.store.record_check_attempt(
        check_attempt(repo, run, pull, decided, rerun_note, time.time())
    )
    await track_failures(scope, pull.author, decided.decisions, run.conclusion or "")
    await quarantine_automatically(scope, decided.decisions)
    if config.comment is not CommentMode.NEVER:
        async with refused_alone(repo, "the comment"):
            await update_sticky_comment(scope, pull)
    await update_check_run(scope, pull, run.head_sha)


@dataclass(frozen=True)
class Decided:
    """What one attempt of a check shows on one PR, before anything is written."""

    attempt: int
    extraction: Extraction  # the failures judged: after a pass on rerun, the failed attempt's
    decisions: list[Decision]
    rerun_note: str | None  # set when this attempt is the pass on rerun


def check_attempt(
    repo: str,
    run: CheckRun,
    pull: api.PullSummary,
    decided: Decided,
    rerun_note: str | None,
    recorded_at: float,
) -> CheckAttempt:
    """This attempt of the check as the PR's record keeps it."""
    return CheckAttempt(
        repo=repo,
        pr_number=pull.number,
        head_sha=run.head_sha,
        check_name=run.name,
        check_run_id=run.id,
        html_url=run.html_url or "",
        attempt=decided.attempt,
        conclusion=run.conclusion or "",
        decisions=decided.decisions,
        rerun_note=rerun_note,
        recorded_at=recorded_at,
    )


@dataclass(frozen=True)
class Sources:
    """Where a decision reads the failed tests' source files from."""

    gh: GitHubAPI
    cache: SourceCache


async def decide(
    store: Store,
    repo: str,
    run: CheckRun,
    earlier: list[CheckAttempt],
    config: RepoConfig,
    extraction: Extraction,
    pull: api.PullSummary,
    changed: api.ChangedFiles,
    record: RunRecord,
    *,
    sources: Sources,
) -> Decided | None:
    """The verdicts, read against the earlier attempts, the store's history and the failed
    tests' imports (reads only); None when there is nothing to say (a pass with no failure
    before it)."""
    previous = [
        EarlierAttempt(attempt=a.attempt, conclusion=a.conclusion, decisions=a.decisions)
        for a in earlier
    ]
    evidence = rerun_evidence(run.conclusion or "", extraction.failures, previous)
    if evidence is None:
        return None
    attempt = max((a.attempt for a in earlier), default=0) + 1
    rerun_note = None
    testless: list[Decision] = []
    if evidence.passed_on_rerun:
        rerun_note = (
            f"passed on rerun (attempt {attempt}, after attempt {evidence.failed_attempt} failed)"
        )
        extraction, testless = _failed_before(evidence, previous, config)
    contexts = await failure_contexts(store, repo, record, pull, extraction.failures, config)
    changed_complete = changed.complete(pull.changed_files)
    # A mass failure's tests are never cleared one by one, but a regression among them is
    # found related: the imports of a bounded number of its test files are followed.
    walked = [] if testless else extraction.failures
    if extraction.mass_failure:
        walked = mass_walk(walked, changed.paths, changed_complete)
    compared = Compared.of(pull.base_sha, changed.modified)
    walks = await import_walks(
        sources.gh,
        store,
        repo,
        run.head_sha,
        walked,
        changed.paths,
        changed_complete,
        sources.cache,
        _walk_limits(sources.cache.limits, config),
        compared,
    )
    inert = await inert_changes(
        sources.gh, store, repo, run.head_sha, walks, compared, sources.cache
    )
    extraction = _placed_in_tree(extraction, sources.cache, repo, run.head_sha)
    decisions = testless or decide_extraction(
        extraction,
        changed.paths,
        changed_complete=changed_complete,
        passed_on_rerun=evidence.passed_on_rerun,
        reproduced_on_rerun=evidence.reproduced_on_rerun,
        contexts=contexts,
        rules=_rules(config),
        imports=walks,
        files=files_at(sources.cache, repo, run.head_sha),
        inert=inert,
    )
    return Decided(attempt, extraction, decisions, rerun_note)


def _walk_limits(app: WalkLimits, config: RepoConfig) -> WalkLimits:
    budget = config.imports
    return app if budget is None else app.within(budget.files, budget.bytes)


def _rules(config: RepoConfig) -> Rules:
    return Rules(
        footprints=config.footprints,
        risky_paths=config.risky_paths,
        history_days=config.history_days,
    )


def _placed_in_tree(extraction: Extraction, cache: SourceCache, repo: str, sha: str) -> Extraction:
    """The failures' bare file names placed in the commit's tree when the walks read it (now
    or for an earlier delivery): never a call of its own."""
    tree = cache.trees.get((repo, sha))
    if tree is None:
        return extraction
    placed = resolve_in_tree(extraction.failures, tree)
    return extraction.model_copy(update={"failures": placed})


def _failed_before(
    evidence: RerunEvidence, previous: list[EarlierAttempt], config: RepoConfig
) -> tuple[Extraction, list[Decision]]:
    """After a pass on rerun: the failures of the attempt that failed, judged again, and its
    decisions on failures with no test (infrastructure, unidentified), which keep their
    verdict: the pass shows the job can pass, not what failed."""
    extraction = Extraction(
        failures=evidence.failures,
        mass_failure=len(evidence.failures) > config.mass_failure_threshold,
    )
    failed_before = next(a for a in previous if a.attempt == evidence.failed_attempt)
    return extraction, [d for d in failed_before.decisions if d.failure is None]


async def _read_job_when_failed(scope: Scope, run: CheckRun) -> Extraction:
    """The failed job's evidence, read once: a completed job's log never changes, so a
    delivery retried after a rate limit or a fault (or `/flaky status`) finds it stored."""
    if run.conclusion not in FAILED_CONCLUSIONS:
        return Extraction()
    config = await scope.config()
    key = read_key(config, scope.ctx.log_cap_bytes)
    kept = await scope.store.job_extraction(scope.repo, run.id, key)
    if kept is not None:
        return kept
    found = await read_job(scope.gh, scope.repo, run, config, log_cap_bytes=scope.ctx.log_cap_bytes)
    await scope.store.save_job_extraction(scope.repo, run.id, key, found, time.time())
    return found


async def pull_and_changes(
    gh: GitHubClient,
    repo: str,
    number: int,
    pull: Coroutine[object, object, api.PullSummary] | None = None,
) -> tuple[api.PullSummary, api.ChangedFiles]:
    """The PR (read now unless `pull` gives it) and the paths it changes."""
    found, changed = await asyncio.gather(
        pull or api.get_pull(gh, repo, number), api.changed_files(gh, repo, number)
    )
    return found, changed


async def _record_outside_pr(scope: Scope, run: CheckRun, record: RunRecord) -> None:
    if run.conclusion not in FAILED_CONCLUSIONS:
        # A pass after a failed attempt whose PR is gone (closed, or the head moved on).
        await scope.store.record_run(record, [])
        return
    config = await scope.config()
    extraction = await _read_job_when_failed(scope, run)
    record = with_runner(record, extraction)
    await scope.store.record_run(
        record, occurrences_of(record, extraction, [], config.generic_messages)
    )
