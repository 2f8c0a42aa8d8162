"""The one sticky comment per PR: found by marker and author, edited only when it changes."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Mapping

from gidgethub import BadRequest

from bot.config import CommentMode
from bot.events import CheckRun
from bot.github import api
from bot.github.client import GitHubClient
from bot.handlers.context import BotContext
from bot.handlers.history import DAY
from bot.handlers.pulls import read_pull
from bot.handlers.scope import Scope, settings_from
from bot.report.comment import MARKER, render_comment
from bot.report.dashboard_pull import pull_page
from bot.report.flake_lines import usual_of
from bot.report.models import CheckReport, CommentInput
from bot.store import CheckAttempt, StickyComment, Store
from bot.store.recorded_runs import RecordedRuns, runs_of_jobs
from bot.triage.failures import match_key
from bot.triage.models import Decision

log = logging.getLogger(__name__)


def comment_input(
    repo: str,
    pr_number: int,
    head_sha: str,
    attempts: list[CheckAttempt],
    tracking: Mapping[str, int] | None = None,
    runs: RecordedRuns | None = None,
) -> CommentInput:
    """The latest attempt of every check, current head first, older heads as outdated;
    each failure linked to its tracking issue (`tracking`: match key -> issue number), and
    each job with its run's context and its check's usual duration where `runs` has them."""
    latest: dict[tuple[str, str], CheckAttempt] = {}
    for attempt in sorted(attempts, key=lambda a: (a.attempt, a.recorded_at)):
        latest[(attempt.head_sha, attempt.check_name)] = attempt
    current: list[CheckReport] = []
    outdated: list[CheckReport] = []
    for (sha, name), attempt in sorted(latest.items(), key=lambda item: item[0][1]):
        report = CheckReport(
            check_name=name,
            html_url=attempt.html_url,
            head_sha=sha,
            attempt=attempt.attempt,
            conclusion=attempt.conclusion,
            decisions=[_linked(d, tracking or {}) for d in attempt.decisions],
            rerun_note=attempt.rerun_note,
            run_context=runs.contexts.get(attempt.check_run_id) if runs else None,
            usual=usual_of(runs.usual, name) if runs else None,
        )
        (current if sha == head_sha else outdated).append(report)
    return CommentInput(
        repo=repo, pr_number=pr_number, head_sha=head_sha, checks=current, outdated=outdated
    )


def _failed_jobs(attempts: list[CheckAttempt]) -> list[tuple[int, str]]:
    """The jobs whose failed tests the comment details: their runs are described there (a
    store read, no call to GitHub)."""
    ordered = sorted(attempts, key=lambda a: a.recorded_at)
    return [(a.check_run_id, a.check_name) for a in ordered if any(d.failure for d in a.decisions)]


def _linked(decision: Decision, tracking: Mapping[str, int]) -> Decision:
    if decision.failure is None:
        return decision
    number = tracking.get(match_key(decision.failure.test_id))
    return decision.model_copy(update={"tracking_issue": number}) if number else decision


async def update_sticky_comment(
    scope: Scope, pull: api.PullSummary, *, passing_checks: int = 0
) -> None:
    """Write the PR's comment from every recorded attempt, unless its text is unchanged.

    `passing_checks`: with nothing failed, how many checks passed (`comment: always`)."""
    config = await scope.settings()
    if config.config.comment is CommentMode.NEVER:
        return
    ctx, gh, repo = scope.ctx, scope.gh, scope.repo
    async with ctx.store.pr_lock(repo, pull.number):
        pull = await _newest(ctx.store, repo, pull)
        attempts = await ctx.store.check_attempts_for_pr(repo, pull.number)
        keys = [match_key(d.failure.test_id) for a in attempts for d in a.decisions if d.failure]
        since = time.time() - config.config.history_days * DAY
        async with asyncio.TaskGroup() as tg:
            tracking = tg.create_task(ctx.store.tracking_numbers(repo, keys))
            runs = tg.create_task(runs_of_jobs(ctx.store, repo, _failed_jobs(attempts), since))
        inp = comment_input(
            repo, pull.number, pull.head_sha, attempts, tracking.result(), runs.result()
        )
        inp.passing_checks = passing_checks
        inp.config_problems = list(config.shown_errors)
        inp.settings_from = settings_from(config)
        if ctx.dashboard_url:
            inp.dashboard_url = pull_page(ctx.dashboard_url, repo, pull.number)
        body = render_comment(inp)
        body_sha = hashlib.sha256(body.encode()).hexdigest()
        known = await ctx.store.get_sticky_comment(repo, pull.number)
        if known is not None and known.body_sha == body_sha:
            return
        comment_id = await _write(ctx, gh, repo, pull, known, body)
        await ctx.store.save_sticky_comment(
            StickyComment(
                repo=repo, pr_number=pull.number, comment_id=comment_id, body_sha=body_sha
            )
        )


async def _write(
    ctx: BotContext,
    gh: GitHubClient,
    repo: str,
    pull: api.PullSummary,
    known: StickyComment | None,
    body: str,
) -> int:
    """Edit the PR's comment, or post it; its id."""
    if known is not None and known.comment_id is not None:
        if await _edit(gh, repo, known.comment_id, body):
            return known.comment_id
        # someone deleted it: write a new one
    elif known is None and pull.comments == 0:
        # GitHub showed no comment on the PR, and the bot never set out to post one here.
        return await _post(ctx, gh, repo, pull.number, body)
    # The store may have lost track (a crash after posting, a new database): GitHub is the
    # truth, so look there before posting.
    found = await api.find_comment(gh, repo, pull.number, MARKER, await ctx.github.bot_login())
    if found is None:
        return await _post(ctx, gh, repo, pull.number, body)
    if found.get("body") != body:
        await api.edit_comment(gh, repo, int(found["id"]), body)
    return int(found["id"])


async def _post(ctx: BotContext, gh: GitHubClient, repo: str, number: int, body: str) -> int:
    """Post the comment, leaving a trace first (`StickyComment`: no id yet)."""
    intent = StickyComment(repo=repo, pr_number=number, comment_id=None, body_sha="")
    await ctx.store.save_sticky_comment(intent)
    comment_id = await api.create_comment(gh, repo, number, body)
    log.info("posted the triage comment on %s#%d", repo, number)
    return comment_id


async def _newest(store: Store, repo: str, pull: api.PullSummary) -> api.PullSummary:
    """The pull as the bot knows it now: a triage that read it before a push must not
    describe the old head as current when it writes last (under the PR's lock)."""
    kept = await store.pull(repo, pull.number)
    if kept is not None and kept.head_sha != pull.head_sha and kept.updated_at >= pull.updated_at:
        return kept
    return pull


async def _edit(gh: GitHubClient, repo: str, comment_id: int, body: str) -> bool:
    try:
        await api.edit_comment(gh, repo, comment_id, body)
    except BadRequest as exc:
        if exc.status_code == 404:
            return False
        raise
    return True


# Conclusions that leave nothing to triage.
PASSING_CONCLUSIONS = frozenset({"success", "neutral", "skipped"})


async def note_passing_head(scope: Scope, run: CheckRun) -> None:
    """`comment: always`: once every check of a PR's head has passed, the comment says so.

    Called for a pass with no failed attempt behind it; it costs the repository's settings
    (an ETag-cached read) and, with `always`, the list of the head's check runs.
    """
    ctx, gh, repo = scope.ctx, scope.gh, scope.repo
    pr_numbers = [pr.number for pr in run.pull_requests] or await api.pulls_for_commit(
        gh, repo, run.head_sha
    )
    if not pr_numbers:
        return
    if (await scope.config()).comment is not CommentMode.ALWAYS:
        return
    runs = await api.check_runs_of(gh, repo, run.head_sha)
    if any(
        r.get("status") != "completed" or r.get("conclusion") not in PASSING_CONCLUSIONS
        for r in runs
    ):
        return  # still running, or failed: that check's own event speaks
    for number in pr_numbers:
        pull = await read_pull(ctx, gh, repo, number)
        if pull.head_sha == run.head_sha:
            await update_sticky_comment(scope, pull, passing_checks=len(runs))
