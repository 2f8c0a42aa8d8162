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
from bot.github.downloads import stream_job_log
from bot.handlers.context import BotContext
from bot.handlers.sticky import update_sticky_comment
from bot.store import CheckAttempt
from bot.triage.attempts import FAILED_CONCLUSIONS, EarlierAttempt, rerun_evidence
from bot.triage.failures import extract_failures
from bot.triage.models import Decision, Failure, Verdict
from bot.triage.verdict import decide

log = logging.getLogger(__name__)
router = routing.Router()

RERUNNABLE = frozenset({Verdict.UNRELATED, Verdict.INFRA})
TRIAGED_CONCLUSIONS = FAILED_CONCLUSIONS | {"success"}


@router.register("check_run", action="completed")
async def on_check_run_completed(
    event: sansio.Event, gh: GitHubClient | None, ctx: BotContext
) -> None:
    payload = CheckRunEvent.model_validate(event.data)
    run = payload.check_run
    if gh is None or run.conclusion not in TRIAGED_CONCLUSIONS:
        return
    repo = payload.repository.full_name
    earlier = await ctx.store.check_attempts_for(repo, run.head_sha, run.name)
    earlier = [a for a in earlier if a.check_run_id != run.id]
    if run.conclusion == "success" and not any(a.conclusion in FAILED_CONCLUSIONS for a in earlier):
        return  # a pass we have nothing to say about
    pr_numbers = [pr.number for pr in run.pull_requests] or await api.pulls_for_commit(
        gh, repo, run.head_sha
    )
    for number in pr_numbers:
        await triage_for_pull(ctx, gh, repo, number, run, earlier)


async def triage_for_pull(
    ctx: BotContext,
    gh: GitHubClient,
    repo: str,
    number: int,
    run: CheckRun,
    earlier: list[CheckAttempt],
) -> None:
    # Gather.
    failed = run.conclusion in FAILED_CONCLUSIONS
    pull, changed, config_text, failures = await asyncio.gather(
        api.get_pull(gh, repo, number),
        api.changed_files(gh, repo, number),
        api.get_file(gh, repo, REPO_CONFIG_PATH),
        _failures_from_log(ctx, gh, repo, run) if failed else _no_failures(),
    )
    config = parse_repo_config(config_text)
    for problem in config.errors + [f"unknown key {k!r}" for k in config.unknown_keys]:
        log.warning("%s %s: %s (ignored)", repo, REPO_CONFIG_PATH, problem)

    # Decide.
    evidence = rerun_evidence(
        run.conclusion or "",
        failures,
        [
            EarlierAttempt(attempt=a.attempt, conclusion=a.conclusion, decisions=a.decisions)
            for a in earlier
        ],
    )
    if evidence is None:
        return
    decisions = decide(
        evidence.failures,
        changed.paths,
        changed_complete=changed.complete(pull.changed_files),
        passed_on_rerun=evidence.passed_on_rerun,
        reproduced_on_rerun=evidence.reproduced_on_rerun,
    )
    for decision in decisions:
        ctx.metrics.verdicts.labels(str(decision.verdict)).inc()
    attempt = max((a.attempt for a in earlier), default=0) + 1
    rerun_note = (
        f"passed on rerun (attempt {attempt}, after attempt {evidence.failed_attempt} failed)"
        if evidence.passed_on_rerun
        else None
    )

    # Act.
    if failed and _may_rerun(run, pull, decisions, config):
        rerun_note = await _rerun(ctx, gh, repo, run, attempt, config)
    await ctx.store.record_check_attempt(
        CheckAttempt(
            repo=repo,
            pr_number=number,
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


async def _no_failures() -> list[Failure]:
    return []


async def _failures_from_log(
    ctx: BotContext, gh: GitHubClient, repo: str, run: CheckRun
) -> list[Failure]:
    job_id = run.actions_job_id
    if job_id is None:
        return []
    chunks: list[bytes] = []
    await stream_job_log(
        ctx.github.session,
        api_url=ctx.github.api_url,
        token=await ctx.github.token(gh.installation_id or 0),
        repo=repo,
        job_id=job_id,
        cap_bytes=ctx.log_cap_bytes,
        sink=chunks.append,
    )
    return extract_failures(b"".join(chunks).decode("utf-8", errors="replace"))


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
