"""Failed check runs: gather the evidence, decide, rerun when policy allows, update the comment."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from dataclasses import dataclass

import cachetools
from gidgethub import routing, sansio
from gidgethub.abc import GitHubAPI

from bot.config import (
    REPO_CONFIG_PATH,
    CommentMode,
    LoadedRepoConfig,
)
from bot.events import CheckRun, CheckRunEvent
from bot.github import api
from bot.github.client import GitHubClient
from bot.handlers.auto_close import close_quiet_issues
from bot.handlers.context import BotContext
from bot.handlers.history import failure_contexts, occurrences_of, run_record
from bot.handlers.job_evidence import read_job
from bot.handlers.offloop import read_repo_config
from bot.handlers.pulls import pull_at_head
from bot.handlers.reruns import rerun_if_allowed
from bot.handlers.sources import SourceCache, files_at, import_walks
from bot.handlers.sticky import config_problems, note_passing_head, update_sticky_comment
from bot.handlers.tracking import track_failures
from bot.logs import bind
from bot.store import CheckAttempt, Store
from bot.triage.attempts import FAILED_CONCLUSIONS, EarlierAttempt, rerun_evidence
from bot.triage.models import Decision, Extraction, RunRecord
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
    await triage_run(ctx, gh, payload.repository.full_name, payload.check_run)


async def triage_run(ctx: BotContext, gh: GitHubClient, repo: str, run: CheckRun) -> None:
    """Triage one completed check run on every PR whose head it is: the whole recipe, also
    what `/flaky status` runs again for the head's checks."""
    if run.conclusion not in TRIAGED_CONCLUSIONS:
        return
    async with asyncio.TaskGroup() as tg:
        earlier_task = tg.create_task(ctx.store.check_attempts_for(repo, run.head_sha, run.name))
        commit_runs_task = tg.create_task(ctx.store.runs_at(repo, run.head_sha))
    attempts = earlier_task.result()
    own = next((a for a in attempts if a.check_run_id == run.id), None)
    # A retried delivery (or `/flaky status`) reads this run again: only what came before it
    # counts, not its own rerun whose result may have been handled in the meantime.
    earlier = [
        a for a in attempts if a.check_run_id != run.id and (own is None or a.attempt < own.attempt)
    ]
    # Every run counts in the history, a pass too: the denominator of failure rates.
    record = run_record(repo, run, commit_runs_task.result())
    if run.conclusion == "success" and not any(a.conclusion in FAILED_CONCLUSIONS for a in earlier):
        await ctx.store.record_run(record, [])
        await note_passing_head(ctx, gh, repo, run)
        await close_quiet_issues(ctx, gh, repo, record)
        return  # a pass with no failure to describe
    pr_numbers = [pr.number for pr in run.pull_requests] or await api.pulls_for_commit(
        gh, repo, run.head_sha
    )
    if not pr_numbers:
        # A push to a branch: its failures are the base-branch results and history of PRs.
        await _record_outside_pr(ctx, gh, repo, run, record)
        return

    # Gather: the repo's settings, the job's evidence (once), each PR and its changes.
    async with asyncio.TaskGroup() as tg:
        config_task = tg.create_task(repo_config(gh, repo))
        job_task = tg.create_task(_read_job_when_failed(ctx, gh, repo, run, config_task))
        pull_tasks = [
            tg.create_task(
                pull_and_changes(gh, repo, n, pull_at_head(ctx, gh, repo, n, run.head_sha))
            )
            for n in pr_numbers
        ]
    config, extraction = config_task.result(), job_task.result()
    for task in pull_tasks:
        pull, changed = task.result()
        await decide_and_act(ctx, gh, repo, run, earlier, config, extraction, pull, changed, record)


async def decide_and_act(
    ctx: BotContext,
    gh: GitHubClient,
    repo: str,
    run: CheckRun,
    earlier: list[CheckAttempt],
    config: LoadedRepoConfig,
    extraction: Extraction,
    pull: api.PullSummary,
    changed: api.ChangedFiles,
    record: RunRecord,
) -> None:
    bind(pr=pull.number)
    decided = await decide(
        ctx.store,
        repo,
        run,
        earlier,
        config,
        extraction,
        pull,
        changed,
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
        on_pr, occurrences_of(on_pr, failed_now, decided.decisions, config.config.generic_messages)
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
        rerun_note = await rerun_if_allowed(
            ctx, gh, repo, run, pull, decided.decisions, config.config, decided.attempt
        )
    await ctx.store.record_check_attempt(
        check_attempt(repo, run, pull, decided, rerun_note, time.time())
    )
    await track_failures(
        ctx, gh, repo, pull.author, decided.decisions, run.conclusion or "", config.config
    )
    if config.config.comment is not CommentMode.NEVER:
        await update_sticky_comment(ctx, gh, repo, pull, config)


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
    config: LoadedRepoConfig,
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
        extraction = Extraction(
            failures=evidence.failures,
            mass_failure=len(evidence.failures) > config.config.mass_failure_threshold,
        )
        # A failure with no test (infrastructure, unidentified) keeps its verdict: the pass
        # shows the job can pass, not what failed.
        failed_before = next(a for a in previous if a.attempt == evidence.failed_attempt)
        testless = [d for d in failed_before.decisions if d.failure is None]
    contexts = await failure_contexts(store, repo, record, pull, extraction.failures, config.config)
    changed_complete = changed.complete(pull.changed_files)
    # A mass failure is never judged test by test: reading hundreds of tests' imports
    # would cost much and change little.
    walked = [] if testless or extraction.mass_failure else extraction.failures
    walks = await import_walks(
        sources.gh,
        repo,
        run.head_sha,
        walked,
        changed.paths,
        changed_complete,
        sources.cache,
    )
    decisions = testless or decide_extraction(
        extraction,
        changed.paths,
        changed_complete=changed_complete,
        passed_on_rerun=evidence.passed_on_rerun,
        reproduced_on_rerun=evidence.reproduced_on_rerun,
        contexts=contexts,
        rules=Rules(
            footprints=config.config.footprints,
            risky_paths=config.config.risky_paths,
            history_days=config.config.history_days,
        ),
        imports=walks,
        files=files_at(sources.cache, repo, run.head_sha),
    )
    return Decided(attempt, extraction, decisions, rerun_note)


async def repo_config(gh: GitHubClient, repo: str) -> LoadedRepoConfig:
    config = await read_repo_config(gh, repo)
    problems = tuple(config_problems(config))
    # Logged once per repository and version of the file, not on every delivery that reads
    # it; the PR comment's footer names them for as long as they stand.
    if problems and _CONFIG_WARNED.get(repo) != problems:
        _CONFIG_WARNED[repo] = problems
        for problem in problems:
            log.warning("%s %s: %s (ignored)", repo, REPO_CONFIG_PATH, problem)
    return config


_CONFIG_WARNED: cachetools.LRUCache[str, tuple[str, ...]] = cachetools.LRUCache(4096)


async def _read_job_when_failed(
    ctx: BotContext,
    gh: GitHubClient,
    repo: str,
    run: CheckRun,
    config: asyncio.Task[LoadedRepoConfig],
) -> Extraction:
    if run.conclusion not in FAILED_CONCLUSIONS:
        return Extraction()
    return await read_job(gh, repo, run, (await config).config, log_cap_bytes=ctx.log_cap_bytes)


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


async def _record_outside_pr(
    ctx: BotContext, gh: GitHubClient, repo: str, run: CheckRun, record: RunRecord
) -> None:
    if run.conclusion not in FAILED_CONCLUSIONS:
        # A pass after a failed attempt whose PR is gone (closed, or the head moved on).
        await ctx.store.record_run(record, [])
        return
    config = (await repo_config(gh, repo)).config
    extraction = await read_job(gh, repo, run, config, log_cap_bytes=ctx.log_cap_bytes)
    await ctx.store.record_run(
        record, occurrences_of(record, extraction, [], config.generic_messages)
    )
