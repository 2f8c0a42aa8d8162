"""The bot's own check run on a PR's head (`check_run: true` in flaky.yml): created once per
head, updated in place as verdicts change, so the Checks tab and "Files changed" show them.

One per head even with replicas: its id is kept in the store and written under the PR's
lock, and when the store has none GitHub is asked first (a crash after the create, a new
database), as the sticky comment does.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import cachetools
from gidgethub import BadRequest

from bot.config import CheckRunConclusion
from bot.events import CheckRun
from bot.github import api
from bot.handlers.context import BotContext
from bot.handlers.refused import UNPROCESSABLE, refused_alone
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
_T = TypeVar("_T")

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
            async with refused_alone(repo, f"the {CHECK_NAME} check run"):
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
    run_id = await _write_run(scope, pull, report, known, first)

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

    async def append(batch: Sequence[Annotation]) -> None:
        await api.update_check_run(gh, repo, run_id, {"output": _output(report, batch)})

    await saved(first)
    for batch in rest:
        # GitHub takes 50 annotations a request and appends each update's to the others.
        await _annotating(repo, append, batch)
        await saved(batch)


async def _write_run(
    scope: Scope,
    pull: api.PullSummary,
    report: CheckRunReport,
    known: TriageCheckRun | None,
    first: Sequence[Annotation],
) -> int:
    """Update the head's check run (the store's, else the one GitHub has) or create it, with
    the first batch of annotations; its id."""
    ctx, gh, repo = scope.ctx, scope.gh, scope.repo
    details = pull_page(ctx.dashboard_url, repo, pull.number) if ctx.dashboard_url else ""
    run_id = known.check_run_id if known is not None else None
    if run_id is None:
        run_id = await api.find_check_run(gh, repo, pull.head_sha, CHECK_NAME, ctx.github.app_id)
    if run_id is not None:
        found = run_id

        async def update(batch: Sequence[Annotation]) -> int:
            await api.update_check_run(gh, repo, found, _fields(report, batch, details))
            return found

        return await _annotating(repo, update, first)

    async def create(batch: Sequence[Annotation]) -> int:
        created = {"name": CHECK_NAME, "head_sha": pull.head_sha}
        return await api.create_check_run(gh, repo, {**created, **_fields(report, batch, details)})

    run_id = await _annotating(repo, create, first)
    log.info("created the %s check run on %s@%s", CHECK_NAME, repo, pull.head_sha[:7])
    return run_id


async def _annotating(
    repo: str, send: Callable[[Sequence[Annotation]], Awaitable[_T]], batch: Sequence[Annotation]
) -> _T:
    """`send` with the batch's annotations; when GitHub refuses the request (422) and it
    carried some, the same without them: a refused annotation loses its batch (kept as sent,
    not to be refused again), never the check run's text or the other batches."""
    try:
        return await send(batch)
    except BadRequest as exc:
        if exc.status_code != UNPROCESSABLE or not batch:
            raise
        log.warning(
            "%s: GitHub refused %d annotation(s) of the %s check run (422: %s): sent without",
            repo,
            len(batch),
            CHECK_NAME,
            exc,
        )
        return await send([])


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
