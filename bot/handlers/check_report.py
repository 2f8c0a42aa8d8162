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
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import cachetools
from gidgethub import BadRequest

from bot.config import CheckRunConclusion
from bot.events import CheckRun
from bot.github import api
from bot.handlers.context import BotContext
from bot.handlers.pulls import read_pull
from bot.handlers.quarantine import keep_up
from bot.handlers.refused import UNPROCESSABLE, refused_alone
from bot.handlers.scope import Scope
from bot.handlers.sticky import comment_input
from bot.report import gate
from bot.report.check_run import (
    CHECK_NAME,
    IN_PROGRESS,
    Annotation,
    CheckRunReport,
    batches,
    check_run_report,
    listed_keys,
)
from bot.report.dashboard_pull import pull_page
from bot.store import CheckAttempt, TriageCheckRun
from bot.store.gated_runs import triaged
from bot.triage.failures import match_key
from bot.triage.gate import Gate, HeadRun, decide_gate

log = logging.getLogger(__name__)
_T = TypeVar("_T")

# Repositories whose installation refused to write check runs: said once an hour, not on
# every delivery (an installation accepts the App's new `checks: write` when its owner does).
_REFUSED: cachetools.TTLCache[str, bool] = cachetools.TTLCache(4096, 3600)
# The stored output hash while a request carrying annotations is out: what GitHub holds is
# not known until its answer comes back.
UNSURE = ""


def is_own(ctx: BotContext, run: CheckRun) -> bool:
    """The bot's own check run: never triaged (in `strict` its `failure` would be triaged,
    and every update would start again)."""
    return run.app is not None and run.app.id == ctx.github.app_id


async def update_check_run(scope: Scope, pull: api.PullSummary, head_sha: str) -> None:
    """Write the check run of `head_sha` (the run's commit) from that head's recorded
    attempts, when it is asked for and its text or annotations changed. A head the PR moved
    on from keeps a run of its own, concluded by its own reruns; the comment describes the
    current head."""
    config = await scope.config()
    gated = config.quarantine is not None  # the merge gate: written on every head
    if not config.check_run and not gated:
        return
    ctx, repo = scope.ctx, scope.repo
    strict = config.check_run_conclusion is CheckRunConclusion.STRICT
    if config.quarantine is not None:
        await keep_up(scope, config.quarantine)
    async with ctx.store.pr_lock(repo, pull.number):
        attempts = await ctx.store.check_attempts_for_pr(repo, pull.number)
        if head_sha != pull.head_sha:
            # Not the PR's head: its run says nothing of the newer heads.
            attempts = [attempt for attempt in attempts if attempt.head_sha == head_sha]
        if not gated and not any(attempt.head_sha == head_sha for attempt in attempts):
            return  # nothing triaged on this head
        keys = [match_key(d.failure.test_id) for a in attempts for d in a.decisions if d.failure]
        tracking = await ctx.store.tracking_numbers(repo, keys)
        inp = comment_input(repo, pull.number, head_sha, attempts, tracking)
        if ctx.dashboard_url:
            inp.dashboard_url = pull_page(ctx.dashboard_url, repo, pull.number)
        report = check_run_report(inp, strict=strict)
        if gated:
            on_head = [a for a in attempts if a.head_sha == head_sha]
            report = gate.gated(report, await _gate(scope, head_sha, on_head, keys))
        known = await ctx.store.get_triage_check_run(repo, head_sha)
        if report.conclusion is None and known is not None:
            report = _still_blocking(report, known)
        try:
            async with refused_alone(repo, f"the {CHECK_NAME} check run"):
                await _publish(scope, _Target(pull.number, head_sha), report, known)
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


async def _gate(
    scope: Scope, head_sha: str, attempts: Sequence[CheckAttempt], keys: Sequence[str]
) -> Gate:
    """The merge gate of the head: its check runs as GitHub lists them now (one paginated
    call), the attempts the bot recorded and the quarantines on."""
    ctx, repo = scope.ctx, scope.repo
    listed = [CheckRun.model_validate(r) for r in await api.check_runs_of(scope.gh, repo, head_sha)]
    runs = [
        HeadRun(name=r.name, run_id=r.id, status=r.status or "", conclusion=r.conclusion)
        for r in listed
        if not is_own(ctx, r)
    ]
    on = await ctx.store.active_quarantines(repo, time.time(), keys)
    return decide_gate(runs, [triaged(a) for a in attempts], {q.test_key: q for q in on})


async def update_gate_on_pass(scope: Scope, run: CheckRun) -> None:
    """A check passed with no failure before it: the gate of each PR it heads may now be
    clear. Costs the settings (cached) and, with quarantine on, the PR's read and the
    head's check runs."""
    if (await scope.config()).quarantine is None:
        return
    ctx, gh, repo = scope.ctx, scope.gh, scope.repo
    numbers = [pr.number for pr in run.pull_requests] or await api.pulls_for_commit(
        gh, repo, run.head_sha
    )
    for number in numbers:
        pull = await read_pull(ctx, gh, repo, number)
        if pull.head_sha == run.head_sha:
            await update_check_run(scope, pull, run.head_sha)


def _still_blocking(report: CheckRunReport, known: TriageCheckRun) -> CheckRunReport:
    """A gate that waits again (a check rerun, a quarantine given while one runs) after it was
    completed: GitHub never lets a completed check run go back to in progress, so it stays a
    failure, its title saying what it waits for, until the gate can conclude."""
    if known.output_sha.startswith(IN_PROGRESS):
        return report
    return report.model_copy(update={"conclusion": "failure"})


@dataclass(frozen=True)
class _Target:
    pr_number: int
    head_sha: str


async def _publish(
    scope: Scope, target: _Target, report: CheckRunReport, known: TriageCheckRun | None
) -> None:
    """Send what changed. GitHub appends every request's annotations and never removes one,
    so each is sent once: the store keeps the keys sent, marked UNSURE while a request that
    carries some is out."""
    ctx, repo = scope.ctx, scope.repo
    run_id, sent = await _held(scope, target, known)
    new = [note for note in report.annotations if note.key not in sent]
    if known is not None and known.output_sha == report.output_sha and not new:
        return
    first, *rest = batches(new) or [[]]
    details = pull_page(ctx.dashboard_url, repo, target.pr_number) if ctx.dashboard_url else ""

    async def save(run: int, output_sha: str) -> None:
        await ctx.store.save_triage_check_run(
            TriageCheckRun(
                repo=repo,
                head_sha=target.head_sha,
                pr_number=target.pr_number,
                check_run_id=run,
                output_sha=output_sha,
                annotations=sorted(sent),
            )
        )

    if run_id is None:
        # Nothing to mark before a create: a lost answer leaves no record, and the run
        # found by name is then read back.
        run_id = await _create(scope, target, report, first, details)
    else:
        if first:
            await save(run_id, UNSURE)
        await _update(scope, run_id, first, lambda batch: _fields(report, batch, details))
    sent.update(note.key for note in first)
    for batch in rest:
        # GitHub takes 50 annotations a request.
        await save(run_id, UNSURE)
        await _update(scope, run_id, batch, lambda batch: {"output": _output(report, batch)})
        sent.update(note.key for note in batch)
    await save(run_id, report.output_sha)


async def _create(
    scope: Scope,
    target: _Target,
    report: CheckRunReport,
    first: Sequence[Annotation],
    details: str,
) -> int:
    gh, repo = scope.gh, scope.repo

    async def create(batch: Sequence[Annotation]) -> int:
        created = {"name": CHECK_NAME, "head_sha": target.head_sha}
        return await api.create_check_run(gh, repo, {**created, **_fields(report, batch, details)})

    run_id = await _annotating(repo, create, first)
    log.info("created the %s check run on %s@%s", CHECK_NAME, repo, target.head_sha[:7])
    return run_id


async def _update(
    scope: Scope,
    run_id: int,
    batch: Sequence[Annotation],
    fields: Callable[[Sequence[Annotation]], dict[str, Any]],
) -> None:
    """One PATCH of the run; one that carries annotations is never repeated by the client
    (a lost answer is read back on the delivery's retry instead: `_held`)."""
    gh, repo = scope.gh, scope.repo

    async def send(sent: Sequence[Annotation]) -> None:
        await api.update_check_run(gh.unrepeated() if sent else gh, repo, run_id, fields(sent))

    await _annotating(repo, send, batch)


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


async def _held(
    scope: Scope, target: _Target, known: TriageCheckRun | None
) -> tuple[int | None, set[str]]:
    """The run's id (None: there is none yet) and the keys of the annotations it holds: as
    recorded, or read back from GitHub (one paginated list) when the record is UNSURE (an
    answer lost, a crash) or missing while the run exists (a create's answer lost, a new
    database)."""
    if known is not None and known.output_sha != UNSURE:
        return known.check_run_id, set(known.annotations)
    gh, repo = scope.gh, scope.repo
    if known is not None:
        run_id: int | None = known.check_run_id
    else:
        app_id = scope.ctx.github.app_id
        run_id = await api.find_check_run(gh, repo, target.head_sha, CHECK_NAME, app_id)
    if run_id is None:
        return None, set()
    listed = await api.check_annotations(gh, repo, run_id, limit=None)
    recorded = set(known.annotations) if known is not None else set()
    return run_id, recorded | listed_keys(listed)


def _fields(
    report: CheckRunReport, batch: Sequence[Annotation], details_url: str
) -> dict[str, Any]:
    fields: dict[str, Any] = {"status": "in_progress", "output": _output(report, batch)}
    if report.conclusion is not None:
        fields["status"] = "completed"
        fields["conclusion"] = report.conclusion
        fields["completed_at"] = datetime.fromtimestamp(time.time(), UTC).strftime(
            "%Y-%m-%dT%H:%M:%SZ"
        )
    if details_url:
        fields["details_url"] = details_url
    return fields


def _output(report: CheckRunReport, batch: Sequence[Annotation]) -> dict[str, Any]:
    return {
        "title": report.title,
        "summary": report.summary,
        "annotations": [note.model_dump() for note in batch],
    }
