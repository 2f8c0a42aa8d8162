"""The one sticky comment per PR: found by marker and author, edited only when it changes."""

from __future__ import annotations

import hashlib
import logging

from gidgethub import BadRequest

from bot.config import LoadedRepoConfig
from bot.github import api
from bot.github.client import GitHubClient
from bot.handlers.context import BotContext
from bot.report.comment import MARKER, render_comment
from bot.report.models import CheckReport, CommentInput
from bot.store import CheckAttempt, StickyComment

log = logging.getLogger(__name__)


def comment_input(
    repo: str, pr_number: int, head_sha: str, attempts: list[CheckAttempt]
) -> CommentInput:
    """The latest attempt of every check, current head first, older heads as outdated."""
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
            decisions=attempt.decisions,
            rerun_note=attempt.rerun_note,
        )
        (current if sha == head_sha else outdated).append(report)
    return CommentInput(
        repo=repo, pr_number=pr_number, head_sha=head_sha, checks=current, outdated=outdated
    )


async def update_sticky_comment(
    ctx: BotContext,
    gh: GitHubClient,
    repo: str,
    pull: api.PullRequest,
    config: LoadedRepoConfig,
) -> None:
    async with ctx.store.pr_lock(repo, pull.number):
        attempts = await ctx.store.check_attempts_for_pr(repo, pull.number)
        body = render_comment(comment_input(repo, pull.number, pull.head_sha, attempts))
        body_sha = hashlib.sha256(body.encode()).hexdigest()
        known = await ctx.store.get_sticky_comment(repo, pull.number)
        if known is not None and known.body_sha == body_sha:
            return
        comment_id = known.comment_id if known is not None else None
        if comment_id is not None and not await _edit(gh, repo, comment_id, body):
            comment_id = None  # someone deleted it: write a new one
        if comment_id is None:
            # The store may have lost track (a crash after posting, a new database):
            # GitHub is the truth, so look there before posting.
            found = await api.find_comment(
                gh, repo, pull.number, MARKER, await ctx.github.bot_login()
            )
            if found is not None:
                comment_id = int(found["id"])
                if found.get("body") != body:
                    await api.edit_comment(gh, repo, comment_id, body)
            else:
                comment_id = await api.create_comment(gh, repo, pull.number, body)
                log.info("posted the triage comment on %s#%d", repo, pull.number)
        await ctx.store.save_sticky_comment(
            StickyComment(
                repo=repo, pr_number=pull.number, comment_id=comment_id, body_sha=body_sha
            )
        )


async def _edit(gh: GitHubClient, repo: str, comment_id: int, body: str) -> bool:
    try:
        await api.edit_comment(gh, repo, comment_id, body)
    except BadRequest as exc:
        if exc.status_code == 404:
            return False
        raise
    return True
