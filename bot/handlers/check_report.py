"""The bot's own check run on a PR's head (`check_run: true` in flaky.yml): created once per
head, updated in place as verdicts change, so the Checks tab and "Files changed" show them.

One per head even with replicas: its id is kept in the store and written under the PR's
lock, and when the store has none GitHub is asked first (a crash after the create, a new
database), as the sticky comment does.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import cachetools
from gidgethub import BadRequest

from bot.config import CheckRunConclusion
from bot.events import CheckRun
from bot.github import api
from bot.handlers.context import BotContext
from bot.handlers.scope import Scope
from bot.handlers.sticky import comment_input
from bot.report.check_run import (
    CHECK_NAME,
    Annotation,
    CheckRunReport,
    batches,
    check_run_report,
)
from bot.report.dashboard_pull import pull_page
from bot.store import TriageCheckRun
from bot.triage.failures import match_key

log = logging.getLogger(__name__)

# Repositories whose installation refused to write check runs: said once an hour, not on
# every delivery (an installation accepts the App's new `checks: write` when its owner does).
_REFUSED: cachetools.TTLCache[str, bool] = cachetools.TTLCache(4096, 3600)


def is_own(ctx: BotContext, run: CheckRun) -> bool:
    """The bot's own check run: never triaged (in `strict` its `failure` would be triaged,
    and every update would start again)."""
    return run.app is not None and run.app.id == ctx.github.app_id


async def update_check_run(scope: Scope, pull: api.PullSummary) -> None:
    """Write the head's check run from every recorded attempt, when it is asked for and its
    text or annotations changed."""
    config = await scope.config()
    if not config.check_run:
        return
    ctx, repo = scope.ctx, scope.repo
    strict = config.check_run_conclusion is CheckRunConclusion.STRICT
    async with ctx.store.pr_lock(repo, pull.number):
        attempts = await ctx.store.check_attempts_for_pr(repo, pull.number)
        if not any(attempt.head_sha == pull.head_sha for attempt in attempts):
            return  # nothing triaged on this head
        keys = [match_key(d.failure.test_id) for a in attempts for d in a.decisions if d.failure]
        tracking = await ctx.store.tracking_numbers(repo, keys)
        inp = comment_input(repo, pull.number, pull.head_sha, attempts, tracking)
        if ctx.dashboard_url:
            inp.dashboard_url = pull_page(ctx.dashboard_url, repo, pull.number)
        report = check_run_report(inp, strict=strict)
        known = await ctx.store.get_triage_check_run(repo, pull.head_sha)
        try:
            await _publish(scope, pull, report, known)
        except BadRequest as exc:
            if exc.status_code != 403:
                raise
            if repo not in _REFUSED:
                _REFUSED[repo] = True
                log.warning(
                    "%s: GitHub refused to write the %s check run (403: %s); the installation "
                    "needs the App's checks: write permission",
                    repo,
                    CHECK_NAME,
                    exc,
                )


async def _publish(
    scope: Scope, pull: api.PullSummary, report: CheckRunReport, known: TriageCheckRun | None
) -> None:
    ctx, gh, repo = scope.ctx, scope.gh, scope.repo
    sent = set(known.annotations) if known is not None else set()
    new = [note for note in report.annotations if note.key not in sent]
    if known is not None and known.output_sha == report.output_sha and not new:
        return
    first, *rest = batches(new) or [[]]
    details = pull_page(ctx.dashboard_url, repo, pull.number) if ctx.dashboard_url else ""
    fields = _fields(report, first, details)
    if known is not None:
        run_id = known.check_run_id
        await api.update_check_run(gh, repo, run_id, fields)
    else:
        found = await api.find_check_run(gh, repo, pull.head_sha, CHECK_NAME, ctx.github.app_id)
        if found is not None:
            run_id = found
            await api.update_check_run(gh, repo, run_id, fields)
        else:
            run_id = await api.create_check_run(
                gh, repo, {"name": CHECK_NAME, "head_sha": pull.head_sha, **fields}
            )
            log.info("created the %s check run on %s@%s", CHECK_NAME, repo, pull.head_sha[:7])

    async def saved(batch: Sequence[Annotation]) -> None:
        # After each request: a retried delivery sends only the annotations not yet sent.
        sent.update(note.key for note in batch)
        await ctx.store.save_triage_check_run(
            TriageCheckRun(
                repo=repo,
                head_sha=pull.head_sha,
                pr_number=pull.number,
                check_run_id=run_id,
                output_sha=report.output_sha,
                annotations=sorted(sent),
            )
        )

    await saved(first)
    for batch in rest:
        # GitHub takes 50 annotations a request and appends each update's to the others.
        await api.update_check_run(gh, repo, run_id, {"output": _output(report, batch)})
        await saved(batch)


def _fields(
    report: CheckRunReport, batch: Sequence[Annotation], details_url: str
) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "status": "completed",
        "conclusion": report.conclusion,
        "completed_at": datetime.fromtimestamp(time.time(), UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "output": _output(report, batch),
    }
    if details_url:
        fields["details_url"] = details_url
    return fields


def _output(report: CheckRunReport, batch: Sequence[Annotation]) -> dict[str, Any]:
    return {
        "title": report.title,
        "summary": report.summary,
        "annotations": [note.model_dump() for note in batch],
    }
