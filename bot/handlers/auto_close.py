"""Automatic closing: after a passing run, close the tracking issues its check has kept quiet.

Off unless the repository sets `auto_close: {passes, days}`. The hook runs on every pass,
so it starts with one store read (the open tracking issues of the check) and reads the
repository's settings (an ETag-cached call) only when there is one. A quiet or locked
issue is left open: closing needs a comment saying why, and people who quieted or locked
it have taken it in hand. The recurrence logic in `triage/tracking.py` reopens a closed issue
whose test fails again.
"""

from __future__ import annotations

import asyncio
import logging

from bot.config import AutoClose, RepoConfig
from bot.github import api
from bot.github.client import GitHubClient
from bot.handlers.context import BotContext
from bot.handlers.quarantine import end_fixed
from bot.handlers.scope import Scope
from bot.report.auto_close import close_comment
from bot.store.models import TrackingIssue
from bot.store.tracking_rows import member_keys
from bot.triage import auto_close
from bot.triage.auto_close import Kept
from bot.triage.models import RunRecord

log = logging.getLogger(__name__)


async def close_quiet_issues(scope: Scope, record: RunRecord) -> None:
    """Close each open tracking issue of this passing run's check whose tests have passed
    enough runs over enough days since they last failed."""
    if record.conclusion != "success":
        return
    ctx, gh, repo = scope.ctx, scope.gh, scope.repo
    candidates = await ctx.store.open_tracking_issues(repo, record.check_name)
    if not candidates:
        return
    config = await scope.config()
    rule = config.auto_close
    if rule is None or not config.tracking_issues:
        return
    for candidate in candidates:
        async with ctx.store.tracking_lock(repo):
            # Read again under the lock: a failure handled meanwhile may have updated it.
            issue = await ctx.store.tracking_issue(repo, candidate.key)
            if issue is not None and issue.closed_at is None:
                await _close_if_quiet(ctx, gh, repo, issue, rule, config, record.completed_at)


async def _close_if_quiet(
    ctx: BotContext,
    gh: GitHubClient,
    repo: str,
    issue: TrackingIssue,
    rule: AutoClose,
    config: RepoConfig,
    now: float,
) -> None:
    quiet = await _quiet(ctx, repo, issue, rule, config, now)
    if quiet is None:
        return
    kept = auto_close.kept_open(
        await api.get_issue(gh, repo, issue.issue_number), config.quiet_label
    )
    if kept is Kept.CLOSED:
        # Closed by people: remember it, so later passes skip it.
        await ctx.store.save_tracking_issue(issue.model_copy(update={"closed_at": now}))
    elif kept in (Kept.LOCKED, Kept.QUIETED):
        why = "locked" if kept is Kept.LOCKED else f"labelled {config.quiet_label}"
        log.info("%s: not closing #%d (%s): it is %s", repo, issue.issue_number, issue.key, why)
    elif kept is None:
        await _close(ctx, gh, repo, issue, quiet, rule, config, now)


async def _quiet(
    ctx: BotContext,
    repo: str,
    issue: TrackingIssue,
    rule: AutoClose,
    config: RepoConfig,
    now: float,
) -> auto_close.Quiet | None:
    """The issue's tests' record since their last failure, when it is enough to close it."""
    since = auto_close.lookback(rule.days, config.history_days, now)
    async with asyncio.TaskGroup() as tg:
        failures = tg.create_task(ctx.store.occurrences(repo, member_keys(issue), since))
        runs = [tg.create_task(ctx.store.runs(repo, name, since)) for name in issue.checks]
    return auto_close.quiet_enough(
        passes=rule.passes,
        days=rule.days,
        failures=failures.result(),
        runs=[run for task in runs for run in task.result()],
        since=since,
        now=now,
    )


async def _close(
    ctx: BotContext,
    gh: GitHubClient,
    repo: str,
    issue: TrackingIssue,
    quiet: auto_close.Quiet,
    rule: AutoClose,
    config: RepoConfig,
    now: float,
) -> None:
    if config.quarantine is not None:
        # Fixed: its quarantine ends, shown on the issue before it closes.
        await end_fixed(Scope(ctx, gh, repo), issue, config.quarantine)
    # The comment goes first: if closing then fails, a retry explains itself again rather
    # than an issue closing with no word.
    await api.create_comment(
        gh,
        repo,
        issue.issue_number,
        close_comment(
            quiet,
            issue.checks,
            passes=rule.passes,
            days=rule.days,
            reopen_days=config.reopen_days,
        ),
    )
    await api.update_issue(gh, repo, issue.issue_number, state="closed", state_reason="completed")
    await ctx.store.save_tracking_issue(issue.model_copy(update={"closed_at": now}))
    ctx.metrics.tracking_issues.labels("closed").inc()
    log.info(
        "%s: closed tracking issue #%d (%s): %d passing runs over %.0f days",
        repo,
        issue.issue_number,
        issue.key,
        quiet.passes,
        quiet.days,
    )
