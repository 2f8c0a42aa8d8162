"""Failed check runs: gather the evidence, decide, rerun when policy allows, update the comment."""

from __future__ import annotations

import asyncio
import logging
import time

from gidgethub import routing, sansio

from bot.config import REPO_CONFIG_PATH, CommentMode, LoadedRepoConfig, parse_repo_config
from bot.events import CheckRun, CheckRunEvent
from bot.github import api
from bot.github.client import GitHubClient
from bot.handlers.context import BotContext
from bot.handlers.job_evidence import read_job
from bot.handlers.sticky import update_sticky_comment
from bot.store import CheckAttempt
from bot.triage.attempts import FAILED_CONCLUSIONS, EarlierAttempt, rerun_evidence
from bot.triage.models import Decision, Extraction, Verdict
from bot.triage.verdict import decide_extraction

log = logging.getLogger(__name__)
router = routing.Router()

RERUNNABLE = frozenset({Verdict.UNRELATED, Verdict.INFRA})
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
    earlier = await ctx.store.check_attempts_for(repo, run.head_sha, run.name)
    earlier = [a for a in earlier if a.check_run_id != run.id]
    if run.conclusion == "success" and not any(a.conclusion in FAILED_CONCLUSIONS for a in earlier):
        return  # a pass we have nothing to say about
    pr_numbers = [pr.number for pr in run.pull_requests] or await api.pulls_for_commit(
        gh, repo, run.head_sha
    )
    if not pr_numbers:
        return

    # Gather: the repo's settings, the job's evidence (once), each PR and its changes.
    async with asyncio.TaskGroup() as tg:
        config_task = tg.create_task(_repo_config(gh, repo))
        job_task = tg.create_task(_read_job_when_failed(ctx, gh, repo, run, config_task))
        pull_tasks = [tg.create_task(_pull_and_changes(gh, repo, n)) for n in pr_numbers]
    config, extraction = config_task.result(), job_task.result()
    for task in pull_tasks:
        pull, changed = task.result()
        await decide_and_act(ctx, gh, repo, run, earlier, config, extraction, pull, changed)


async def decide_and_act(
    ctx: BotContext,
    gh: GitHubClient,
    repo: str,
    run: CheckRun,
    earlier: list[CheckAttempt],
    config: LoadedRepoConfig,
    extraction: Extraction,
    pull: api.PullRequest,
    changed: api.ChangedFiles,
) -> None:
    # Decide.
    previous = [
        EarlierAttempt(attempt=a.attempt, conclusion=a.conclusion, decisions=a.decisions)
        for a in earlier
    ]
    evidence = rerun_evidence(run.conclusion or "", extraction.failures, previous)
    if evidence is None:
        return
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
    decisions = testless or decide_extraction(
        extraction,
        changed.paths,
        changed_complete=changed.complete(pull.changed_files),
        passed_on_rerun=evidence.passed_on_rerun,
        reproduced_on_rerun=evidence.reproduced_on_rerun,
    )
    for decision in decisions:
        ctx.metrics.verdicts.labels(str(decision.verdict)).inc()

    # Act.
    if run.conclusion in FAILED_CONCLUSIONS and _may_rerun(run, pull, decisions, config):
        rerun_note = await _rerun(ctx, gh, repo, run, attempt, config)
    await ctx.store.record_check_attempt(
        CheckAttempt(
            repo=repo,
            pr_number=pull.number,
            head_sha=run.head_sha,
            check_name=run.name,
            check_run_id=run.id,
            html_url=run.html_url or "",
            attempt=attempt,
            conclusion=run.conclusion or "",
            decisions=decisions,
            rerun_note=rerun_note,
            recorded_at=time.time(),
        )
    )
    if config.config.comment is not CommentMode.NEVER:
        await update_sticky_comment(ctx, gh, repo, pull, config)


async def _repo_config(gh: GitHubClient, repo: str) -> LoadedRepoConfig:
    config = parse_repo_config(await api.get_file(gh, repo, REPO_CONFIG_PATH))
    for problem in config.errors + [f"unknown key {k!r}" for k in config.unknown_keys]:
        log.warning("%s %s: %s (ignored)", repo, REPO_CONFIG_PATH, problem)
    return config


async def _read_job_when_failed(
    ctx: BotContext,
    gh: GitHubClient,
    repo: str,
    run: CheckRun,
    config: asyncio.Task[LoadedRepoConfig],
) -> Extraction:
    if run.conclusion not in FAILED_CONCLUSIONS:
        return Extraction()
    return await read_job(ctx, gh, repo, run, (await config).config)


async def _pull_and_changes(
    gh: GitHubClient, repo: str, number: int
) -> tuple[api.PullRequest, api.ChangedFiles]:
    pull, changed = await asyncio.gather(
        api.get_pull(gh, repo, number), api.changed_files(gh, repo, number)
    )
    return pull, changed


def _may_rerun(
    run: CheckRun, pull: api.PullRequest, decisions: list[Decision], config: LoadedRepoConfig
) -> bool:
    return (
        config.config.rerun
        and run.actions_job_id is not None
        and pull.state == "open"
        and pull.head_sha == run.head_sha  # never rerun a commit that is no longer the head
        and bool(decisions)
        and all(d.verdict in RERUNNABLE for d in decisions)
    )


async def _rerun(
    ctx: BotContext,
    gh: GitHubClient,
    repo: str,
    run: CheckRun,
    attempt: int,
    config: LoadedRepoConfig,
) -> str | None:
    job_id = run.actions_job_id
    assert job_id is not None
    budget = config.config.max_reruns
    if not await ctx.store.reserve_rerun(repo, run.head_sha, run.name, job_id, budget, time.time()):
        return f"not rerun: the limit of {budget} rerun(s) per commit and check is reached"
    status, message = await api.rerun_job(gh, repo, job_id)
    await ctx.store.finish_rerun(repo, job_id, status)
    ctx.metrics.reruns.labels(str(status)).inc()
    if status == 201:
        log.info("rerun of %s job %d requested (attempt %d)", repo, job_id, attempt + 1)
        return f"rerun requested (attempt {attempt + 1})"
    return f"GitHub refused the rerun ({status}): {message}"
