"""Tracking issues: one per flaky test (or cluster), opened at the threshold, kept accurate.

Runs after a check's decisions are recorded. Each trackable failure (a test or a cluster of
tests sharing one signature) is found in the store, else on GitHub by the hidden block in
the issue body (the store may have lost track), else created when the evidence meets the
threshold and the repository's hourly cap allows. The body's bot section is rendered from
the store's history and written only when it changed; titles change only on creation,
adoption, or when a cluster's membership changes.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import time
from collections.abc import Sequence
from enum import StrEnum
from typing import Any, NamedTuple

from gidgethub import BadRequest, routing, sansio
from pydantic import BaseModel

from bot.config import OwnersMode, RepoConfig
from bot.events import InstallationRef
from bot.github import api
from bot.github.client import GitHubClient
from bot.handlers.context import BotContext
from bot.handlers.refused import refused_alone
from bot.handlers.scope import Scope
from bot.inbox import INTERNAL_EVENT_PREFIX
from bot.report import issue as render
from bot.report.dashboard import page_of_test
from bot.report.markdown import code_span, escape_inline, shorten
from bot.report.models import CheckRate, IssueInput, IssueOccurrence
from bot.shared import GitHubIssue
from bot.store.recorded_runs import recorded_runs
from bot.triage import mentions, tracking
from bot.triage.failures import match_key
from bot.triage.footprint import locate_test_file
from bot.triage.models import Decision, Failure, Occurrence, RunHint, RunRate, RunRecord
from bot.triage.owners import OwnerKind, owner_of
from bot.triage.run_context import RunContext
from bot.triage.stats import outcomes_of, run_rate
from bot.triage.tracking import TrackingIssue

log = logging.getLogger(__name__)
router = routing.Router()

# The bot's own deliveries (never GitHub's): refresh one tracking issue's section.
REFRESH_EVENT = INTERNAL_EVENT_PREFIX + "tracking_refresh"

LABEL_COLOR = "d93f0b"
LABEL_DESCRIPTION = "A test that fails intermittently, tracked by flaky-triage"
HOUR = 3600.0
DAY = tracking.DAY
# A run with more trackable failures than this is handled in part; the rest wait for the
# next run (a mass failure never gets here: its failures are never flaky or unrelated).
MAX_UNITS_PER_RUN = 10
# The longest text people wrote that an adopted issue may have: the rest of GitHub's limit
# is the bot's section's room.
ADOPTABLE_TEXT = render.MAX_LENGTH - render.SECTION_ROOM
# GitHub's answers to an edit it does not allow: no permission (403), the issue or the
# repository's issues gone (404, 410), an edit it refuses (422).
EDIT_REFUSED = frozenset({403, 404, 410, 422})
MAX_ASSIGNEES = 10  # GitHub's limit per issue


async def track_failures(
    scope: Scope,
    author: str | None,
    decisions: Sequence[Decision],
    conclusion: str,
) -> None:
    """Open or update the tracking issue of every trackable failure of one recorded attempt
    (`conclusion` "success": the rerun of a failed attempt passed)."""
    ctx, repo = scope.ctx, scope.repo
    config = await scope.config()
    if not config.tracking_issues:
        return
    passed = conclusion == "success"
    for unit in tracking.units(decisions, config.generic_messages)[:MAX_UNITS_PER_RUN]:
        reason = tracking.threshold_reason(unit, passed_on_rerun=passed, author=author)
        async with ctx.store.tracking_lock(repo), refused_alone(repo, f"the issue of {unit.key}"):
            await _track(scope, unit, reason, config, time.time())


class NotAdopted(StrEnum):
    """Why an issue may not become a test's tracking issue."""

    NOT_A_WRITER = "not-a-writer"
    MISSING = "missing"
    PULL_REQUEST = "pull-request"
    LOCKED = "locked"
    CLOSED = "closed"
    TEST_TRACKED_ELSEWHERE = "test-tracked-elsewhere"
    TRACKS_ANOTHER_TEST = "tracks-another-test"
    TEXT_TOO_LONG = "text-too-long"


def adoption_refusal(
    issue: GitHubIssue | None,
    key: str,
    *,
    may_write: bool,
    tracked_in: int | None,
    stored_key: str | None,
) -> NotAdopted | None:
    """Why `issue` may not become the tracking issue of the test `key`; None when it may.

    Adopting rewrites an issue someone else wrote (its title, a section on top of its body, a
    label), so it takes write access, not just authorship of the PR, and an issue still open to
    discussion: not a pull request, not locked (its conversation was frozen on purpose), not
    closed (adopting it would have the bot reopen it at the next failure: people reopen it
    first if they mean that). The text people wrote must leave room for the bot's section, as
    it is never cut. `tracked_in`: the issue the store tracks the test in; `stored_key`: the
    test the store tracks in this issue (else the bot's section in its body says which).
    """
    if not may_write:
        return NotAdopted.NOT_A_WRITER
    if issue is None:
        return NotAdopted.MISSING
    if issue.is_pull_request:
        return NotAdopted.PULL_REQUEST
    if issue.locked:
        return NotAdopted.LOCKED
    if issue.state != "open":
        return NotAdopted.CLOSED
    if tracked_in is not None and tracked_in != issue.number:
        return NotAdopted.TEST_TRACKED_ELSEWHERE
    tracks = stored_key or render.tracking_key(issue.body)
    if tracks is not None and tracks != key:
        return NotAdopted.TRACKS_ANOTHER_TEST
    if len(render.human_text(issue.body)) > ADOPTABLE_TEXT:
        return NotAdopted.TEXT_TOO_LONG
    return None


class Adoption(NamedTuple):
    adopted: bool
    text: str  # one line of markdown, escaped


async def adopt_issue(
    scope: Scope,
    issue_number: int,
    test_id: str,
    pr_number: int,
    requester: str,
    *,
    may_write: bool | None = None,
) -> Adoption:
    """Make an issue people wrote the tracking issue of `test_id` at `requester`'s word: retitle
    it, put the bot's section on top of their text, label it. Says what changed, or why
    nothing did, in one line of markdown. `may_write`: the requester's write access, when
    the caller has already asked GitHub."""
    ctx, gh, repo = scope.ctx, scope.gh, scope.repo
    config = await scope.config()
    test = code_span(shorten(test_id, 200))
    key = match_key(test_id)
    if may_write is None:
        may_write = await api.can_write(gh, repo, requester)
    async with ctx.store.tracking_lock(repo):
        found = await api.get_issue(gh, repo, issue_number)
        current = await ctx.store.tracking_issue(repo, key)
        stored = await ctx.store.tracking_issue_numbered(repo, issue_number)
        tracked_in = current.issue_number if current is not None else None
        refusal = adoption_refusal(
            found,
            key,
            may_write=may_write,
            tracked_in=tracked_in,
            stored_key=stored.key if stored is not None else None,
        )
        if refusal is not None:
            return Adoption(False, _not_adopted(refusal, issue_number, test, tracked_in))
        assert found is not None  # else refused as missing
        hint = await _hint_from_pr(ctx, repo, pr_number, key)
        record = TrackingIssue(
            repo=repo,
            key=key,
            issue_number=issue_number,
            title=render.title([test_id]),
            tests=[test_id],
            hint=hint,
            created_at=found.created_at,
        )
        return await _adopt(scope, found, record, config, test, tracked_in)


async def _adopt(
    scope: Scope,
    found: GitHubIssue,
    record: TrackingIssue,
    config: RepoConfig,
    test: str,
    tracked_in: int | None,
) -> Adoption:
    """Retitle `found`, put the section of the test `record` tracks on top of its text, label
    it, and save the record: `adopt_issue`'s acting part, under the repository's lock."""
    ctx, gh = scope.ctx, scope.gh
    repo, number = record.repo, record.issue_number
    inp = await _issue_input(scope, record, config, time.time())
    record.checks = sorted({o.check_name for o in inp.occurrences})
    section = render.render_section(inp)
    body = render.render_body(inp, found.body)
    if body is None:  # a section bigger than its room: the text is still not cut
        return Adoption(False, _not_adopted(NotAdopted.TEXT_TOO_LONG, number, test, tracked_in))
    await api.ensure_label(gh, repo, config.issue_label, LABEL_COLOR, LABEL_DESCRIPTION)
    try:
        await api.update_issue(gh, repo, number, title=record.title, body=body)
    except BadRequest as exc:
        # A rate limit never arrives here: the client raises it as RateLimited.
        if exc.status_code not in EDIT_REFUSED:
            raise
        why = escape_inline(shorten(str(exc), 200))
        return Adoption(
            False,
            f"Not tracked: GitHub did not let the bot edit #{number} "
            f"({int(exc.status_code)}: {why}).",
        )
    if config.issue_label not in found.labels:
        await api.add_labels(gh, repo, number, [config.issue_label])
    record.body_sha = _sha(section)
    await ctx.store.save_tracking_issue(record)
    done = _what_changed(found, record.title, config.issue_label, body, len(inp.occurrences))
    return Adoption(
        True, f"Now tracking {test} in #{number}: {done}. The text people wrote is kept."
    )


def _not_adopted(reason: NotAdopted, number: int, test: str, tracked_in: int | None) -> str:
    why = {
        NotAdopted.NOT_A_WRITER: "`/flaky track` rewrites an issue's title and body, so it "
        "needs write access to the repository",
        NotAdopted.MISSING: f"issue #{number} does not exist in this repository",
        NotAdopted.PULL_REQUEST: f"#{number} is a pull request, not an issue",
        NotAdopted.LOCKED: f"#{number} is locked; the bot leaves locked issues as they are",
        NotAdopted.CLOSED: f"#{number} is closed; reopen it first if it should track {test}",
        NotAdopted.TEST_TRACKED_ELSEWHERE: f"{test} is already tracked in #{tracked_in}",
        NotAdopted.TRACKS_ANOTHER_TEST: f"#{number} already tracks another test",
        NotAdopted.TEXT_TOO_LONG: f"the text of #{number} is longer than "
        f"{ADOPTABLE_TEXT:,} characters, which would leave the bot's section no room within "
        f"GitHub's {render.MAX_LENGTH:,}, and the bot does not cut text people wrote",
    }[reason]
    return f"Not tracked: {why}."


def _what_changed(issue: GitHubIssue, title: str, label: str, body: str, failures: int) -> str:
    """What adopting did to the issue GitHub showed before, in words."""
    old_title, old_body = issue.title, issue.body
    recorded = f"{failures:,} recorded {'failure' if failures == 1 else 'failures'}"
    section = ""
    if body != old_body:
        section = (
            f"the bot's section ({recorded}) put on top of the body"
            if render.tracking_key(old_body) is None
            else f"the bot's section brought up to date ({recorded})"
        )
    changes = [
        f"retitled from “{escape_inline(shorten(old_title, 120))}”" if old_title != title else "",
        f"labelled {code_span(label)}" if label not in issue.labels else "",
        section,
    ]
    return "; ".join(change for change in changes if change) or "nothing needed changing"


async def _track(
    scope: Scope,
    unit: tracking.Unit,
    reason: str | None,
    config: RepoConfig,
    now: float,
) -> None:
    ctx, gh, repo = scope.ctx, scope.gh, scope.repo
    known = await ctx.store.tracking_issue(repo, unit.key)
    if known is None and reason is None:
        return  # below the threshold, and no issue the store knows of
    found: GitHubIssue | None = None
    if known is None:
        known, found = await _recover(scope, unit, config.issue_label, now)
    if known is None:
        if reason is not None:
            await _create(scope, unit, reason, config, now, previous=None)
        return
    record = _merged(known, unit)
    if found is None and known.closed_at is None and gh.installation_id is not None:
        # Open as last seen: the new tally is written by a refresh a little later, one edit
        # for every failure of the test until then (a burst of jobs failing together).
        if record != known:
            await ctx.store.save_tracking_issue(record)  # what the refresh cannot know
        await schedule_refresh(ctx, gh.installation_id, repo, known.key, now)
        return
    failed = _Failed(unit, reason)
    await _bring_up_to_date(scope, known, record, found, config, now, failed)
    if found is not None:
        await ctx.store.opened_tracking_issue(repo, unit.key)


async def _recover(
    scope: Scope, unit: tracking.Unit, label: str, now: float
) -> tuple[TrackingIssue | None, GitHubIssue | None]:
    """The issue of a unit the store does not know, as the store should have known it, and
    as GitHub shows it when it was found there only now."""
    ctx, gh, repo = scope.ctx, scope.gh, scope.repo
    if not await ctx.store.tracking_synced(repo, label):
        # A store that never read GitHub's issues (a new database, a new label) reads them
        # all once: then it knows every one, and opening the next needs no search.
        await _sync_from_github(scope, label, now)
        return await ctx.store.tracking_issue(repo, unit.key), None
    if not await ctx.store.tracking_issue_opening(repo, unit.key):
        return None, None
    # An earlier try was opening it and may have died before saving its number.
    found = await _find_on_github(gh, repo, label, unit.key)
    if found is None:
        return None, None
    known = TrackingIssue(
        repo=repo,
        key=unit.key,
        issue_number=found.number,
        title=found.title,
        tests=unit.tests,
        signature=unit.signature,
        created_at=found.created_at,
    )
    return known, found


class _Failed(NamedTuple):
    """The failure in hand when a unit's issue is brought up to date inline."""

    unit: tracking.Unit
    reason: str | None  # why its evidence earns a new issue; None when it does not


async def _bring_up_to_date(
    scope: Scope,
    known: TrackingIssue,
    record: TrackingIssue,
    found: GitHubIssue | None,
    config: RepoConfig,
    now: float,
    failed: _Failed | None,
) -> None:
    """Write the issue's section from the store's history when it changed, and do what
    `tracking.next_step` says the issue, as GitHub shows it, needs: edit, reopen, replace
    or mark closed. `failed`: the failure in hand; None for a refresh."""
    ctx, gh, repo = scope.ctx, scope.gh, scope.repo
    new_tests = failed.unit.tests if failed is not None else []
    rewrite = await _rewrite(scope, known, record, new_tests, config, now)
    if rewrite is None:
        return  # nothing new to say
    issue = found if found is not None else await api.get_issue(gh, repo, known.issue_number)
    step = tracking.next_step(
        known,
        issue,
        max((o.at for o in rewrite.inp.occurrences), default=0.0),
        reopen_days=config.reopen_days,
        failed_now=failed is not None,
        reason=failed.reason if failed is not None else None,
        now=now,
    )
    match step:
        case tracking.OpenIssue(reason=reason, previous=previous):
            assert failed is not None  # only a failure in hand opens one
            await _create(scope, failed.unit, reason, config, now, previous=previous)
        case tracking.MarkClosed(at=at):
            await ctx.store.save_tracking_issue(known.model_copy(update={"closed_at": at}))
        case tracking.Reopen(closed_at=closed_at):
            assert issue is not None
            await _reopen(gh, repo, issue, rewrite.inp, config, closed_at, rewrite.title)
            ctx.metrics.tracking_issues.labels("reopened").inc()
            record.closed_at = None
            await ctx.store.save_tracking_issue(record)
        case tracking.Edit(closed_at=closed_at):
            assert issue is not None
            await _edit(gh, repo, known.issue_number, issue, rewrite.inp, rewrite.title)
            record.closed_at = closed_at  # as GitHub shows it now: auto_close skips closed ones
            await ctx.store.save_tracking_issue(record)


class _Rewrite(NamedTuple):
    inp: IssueInput  # what the section is rendered from
    title: str | None  # the new title, when a cluster's members changed


async def _rewrite(
    scope: Scope,
    known: TrackingIssue,
    record: TrackingIssue,
    new_tests: Sequence[str],
    config: RepoConfig,
    now: float,
) -> _Rewrite | None:
    """Bring `record` (a copy of `known`) up to the store's history: its checks, a cluster's
    members and title, the hash of its section. None when the section and title are as
    last written."""
    inp = await _issue_input(scope, record, config, now)
    record.checks = sorted(set(record.checks) | {o.check_name for o in inp.occurrences})
    if record.is_cluster:
        # Members are the tests that failed with the cluster's signature in the window.
        record.tests = sorted({o.test_id for o in inp.occurrences} | set(new_tests))
        inp.tests = record.tests
    retitle = record.is_cluster and sorted(known.tests) != record.tests
    record.title = render.title(record.tests, record.signature) if retitle else known.title
    section_sha = _sha(render.render_section(inp))
    if section_sha == known.body_sha and not retitle:
        return None
    record.body_sha = section_sha
    return _Rewrite(inp, record.title if retitle else None)


async def _edit(
    gh: GitHubClient,
    repo: str,
    number: int,
    issue: GitHubIssue,
    inp: IssueInput,
    title: str | None,
) -> None:
    """Write the section, and `title` when given, where GitHub (`issue`) shows them
    differently."""
    fields: dict[str, Any] = {}
    body = render.render_body(inp, issue.body)
    if body is None:
        log.warning(
            "%s: tracking issue #%d: the text people wrote leaves no room for the bot's "
            "section; not updated",
            repo,
            number,
        )
    elif body != issue.body:
        fields["body"] = body
    if title is not None and issue.title != title:
        fields["title"] = title
    if fields:
        await api.update_issue(gh, repo, number, **fields)


class _RepoName(BaseModel):
    full_name: str


class _RefreshJob(BaseModel):
    installation: InstallationRef
    repository: _RepoName
    key: str


async def schedule_refresh(
    ctx: BotContext, installation_id: int, repo: str, key: str, now: float
) -> None:
    """Queue a refresh of the issue's section at the end of the current window; the failures
    of one window share it (the job's id names the window)."""
    window = ctx.tracking_refresh_seconds
    due = (math.floor(now / window) + 1) * window if window > 0 else now
    name = hashlib.sha256(f"{repo}\0{key}".encode()).hexdigest()[:20]
    job = _RefreshJob(
        installation=InstallationRef(id=installation_id),
        repository=_RepoName(full_name=repo),
        key=key,
    )
    await ctx.store.schedule(
        f"{REFRESH_EVENT}-{name}-{due:.3f}", REFRESH_EVENT, job.model_dump_json().encode(), now, due
    )


@router.register(REFRESH_EVENT)
async def on_refresh(event: sansio.Event, gh: GitHubClient | None, ctx: BotContext) -> None:
    job = _RefreshJob.model_validate(event.data)
    if gh is None:
        return
    repo = job.repository.full_name
    scope = Scope(ctx, gh, repo)
    config = await scope.config()
    if not config.tracking_issues:
        return
    async with ctx.store.tracking_lock(repo):
        await refresh_issue(scope, job.key)


async def refresh_issue(scope: Scope, key: str) -> None:
    """Write the section of `key`'s open issue from the store now, when it changed; the
    caller holds the repository's tracking lock."""
    known = await scope.store.tracking_issue(scope.repo, key)
    if known is None or known.closed_at is not None:
        return  # closed meanwhile: its next failure takes the inline path
    record = known.model_copy(deep=True)
    config = await scope.config()
    await _bring_up_to_date(scope, known, record, None, config, time.time(), None)


async def _create(
    scope: Scope,
    unit: tracking.Unit,
    reason: str,
    config: RepoConfig,
    now: float,
    previous: int | None,
) -> None:
    ctx, gh, repo = scope.ctx, scope.gh, scope.repo
    created = await ctx.store.tracking_created_since(repo, now - HOUR)
    if created >= config.max_new_issues_per_hour:
        log.info(
            "%s: not opening a tracking issue for %s: %d opened in the last hour (the limit)",
            repo,
            unit.key,
            created,
        )
        return
    record = TrackingIssue(
        repo=repo,
        key=unit.key,
        issue_number=0,
        title=render.title(unit.tests, unit.signature),
        tests=unit.tests,
        signature=unit.signature,
        hint=_hint(unit.failures[0]) if not unit.is_cluster else None,
        created_at=now,
    )
    inp = await _issue_input(scope, record, config, now, previous=previous)
    record.checks = sorted({o.check_name for o in inp.occurrences})
    section = render.render_section(inp)
    body = render.render_body(inp)
    if body is None:  # not expected: each part of the section is bounded
        log.warning("%s: the tracking issue of %s would be too long: not opened", repo, unit.key)
        return
    await ctx.store.opening_tracking_issue(repo, unit.key, now)
    assignees = owners_to_assign(inp.owners) if config.owners == OwnersMode.ASSIGN else []
    opened, refused = await api.create_issue(
        gh, repo, record.title, body, [config.issue_label], assignees
    )
    if refused:
        log.info(
            "%s: GitHub would not assign %s (no access to the repository?): left unassigned",
            repo,
            ", ".join(refused),
        )
    record.issue_number = opened.number
    ctx.metrics.tracking_issues.labels("created").inc()
    record.body_sha = _sha(section)
    await ctx.store.save_tracking_issue(record)
    await ctx.store.opened_tracking_issue(repo, unit.key)
    log.info(
        "%s: opened tracking issue #%d for %s (%s)", repo, record.issue_number, unit.key, reason
    )


async def _reopen(
    gh: GitHubClient,
    repo: str,
    issue: GitHubIssue,
    inp: IssueInput,
    config: RepoConfig,
    closed_at: float,
    new_title: str | None,
) -> None:
    number = issue.number
    fields: dict[str, Any] = {"state": "open", "state_reason": "reopened"}
    body = render.render_body(inp, issue.body)
    if body is not None:  # else the text people wrote leaves no room: never cut it
        fields["body"] = body
    if new_title is not None:
        fields["title"] = new_title
    await api.update_issue(gh, repo, number, **fields)
    if config.quiet_label in issue.labels:
        return
    latest = max(inp.occurrences, key=lambda o: o.at)
    where = f"#{latest.pr_number}" if latest.pr_number is not None else "a branch run"
    await api.create_comment(
        gh,
        repo,
        number,
        f"Failed again on {where} (commit {code_span(latest.head_sha[:7])}, "
        f"{render.day(latest.at)}), after this issue was closed on {render.day(closed_at)}: "
        f"reopened. The `{escape_inline(config.quiet_label)}` label stops these comments.",
    )


async def _issue_input(
    scope: Scope,
    record: TrackingIssue,
    config: RepoConfig,
    now: float,
    previous: int | None = None,
) -> IssueInput:
    """What the issue's section shows; also sets `record.owners` from CODEOWNERS."""
    ctx, repo = scope.ctx, record.repo
    codeowners = await scope.codeowners()
    record.owners = [o.text for o in codeowners.owners_of_all(tracked_files(record))]
    since = now - config.history_days * DAY
    keys = sorted({match_key(t) for t in record.tests})
    occurrences = await ctx.store.occurrences(repo, keys, since)
    if record.is_cluster:
        occurrences = [o for o in occurrences if o.signature == record.signature]
    checks = sorted({o.check_name for o in occurrences})
    async with asyncio.TaskGroup() as tg:
        tasks = {name: tg.create_task(ctx.store.runs(repo, name, since)) for name in checks}
        recorded_task = tg.create_task(recorded_runs(ctx.store, repo, checks, since))
        quarantines_task = tg.create_task(ctx.store.active_quarantines(repo, now, keys))
    runs = {name: task.result() for name, task in tasks.items()}
    contexts, usual = recorded_task.result()
    return IssueInput(
        key=record.key,
        tests=record.tests,
        signature=record.signature,
        occurrences=[
            _occurrence(o, runs.get(o.check_name, []), contexts.get(o.check_run_id))
            for o in occurrences
        ],
        rates=[
            CheckRate(check_name=name, rate=_rate(runs[name], occurrences))
            for name in checks
            if runs[name]
        ],
        hint=record.hint,
        window_days=config.history_days,
        previous_issue=previous,
        dashboard_url=_dashboard_page(ctx.dashboard_url, repo, record.tests),
        owners=record.owners,
        owners_file=codeowners.path,
        mentioned=await _mentions(scope, record, occurrences, now)
        if config.owners == OwnersMode.MENTION
        else [],
        run_contexts=list(contexts.values()),
        usual=usual,
        quarantines=quarantines_task.result(),
    )


async def _mentions(
    scope: Scope, record: TrackingIssue, occurrences: Sequence[Occurrence], now: float
) -> list[str]:
    """The owners the issue @-mentions (bot/triage/mentions.py decides which), recorded
    before the issue is written: a retry mentions the same and spends no more budget."""
    store, repo = scope.store, scope.repo
    owners = [o for o in record.owners if mentions.mentionable(o)]
    if not owners:
        return []
    before, spent = await asyncio.gather(
        store.owners_mentioned(repo, record.key),
        store.mentions_since(repo, owners, now - DAY),
    )
    if all(o.lower() in before for o in owners):
        evidence = True  # nobody new to mention: no need to ask who the author is
    else:
        evidence = mentions.corroborated(occurrences) or await _trusted(scope, occurrences)
    chosen = mentions.to_mention(owners, before, spent, evidence=evidence)
    new = [o for o in chosen if o.lower() not in before]
    if new:
        await store.add_mentions(repo, record.key, new, now)
    return chosen


async def _trusted(scope: Scope, occurrences: Sequence[Occurrence]) -> bool:
    """Whether the one author of the failing pull requests has write access or more."""
    author = mentions.sole_author(occurrences)
    return author is not None and await api.can_write(scope.gh, scope.repo, author)


def tracked_files(record: TrackingIssue) -> list[str]:
    """The files of the tests an issue tracks, as `locate_test_file` finds a failure's: its
    own file (known from the run hint for a single test), else a `path::name` id's path."""
    files: list[str] = []
    for test_id in record.tests:
        hint = record.hint if record.hint is not None and record.hint.test_id == test_id else None
        failure = Failure(
            test_id=test_id,
            name=hint.name if hint else test_id,
            file=hint.file if hint else None,
            framework=hint.framework if hint else "",
        )
        found = locate_test_file(failure)
        if found is not None and found not in files:
            files.append(found)
    return files


def owners_to_assign(owners: Sequence[str]) -> list[str]:
    """The users among a test's owners, as logins: GitHub assigns users, never teams, and
    an email address names nobody it can assign. At most 10, GitHub's limit."""
    users = [o.name for o in map(owner_of, owners) if o is not None and o.kind == OwnerKind.USER]
    return users[:MAX_ASSIGNEES]


def _dashboard_page(dashboard_url: str, repo: str, tests: list[str]) -> str:
    """The test's page on the dashboard, or for a cluster of tests the repository's."""
    if not dashboard_url:
        return ""
    if len(tests) == 1:
        return dashboard_url + page_of_test(repo, match_key(tests[0]))
    return f"{dashboard_url}/{repo}"  # owner and repository names need no escaping


def _occurrence(
    o: Occurrence, runs: list[RunRecord], context: RunContext | None
) -> IssueOccurrence:
    later = sorted(
        (r for r in runs if r.head_sha == o.head_sha and r.attempt > o.attempt),
        key=lambda r: r.attempt,
    )
    rerun = None
    if later:
        rerun = "passed on rerun" if later[0].conclusion == "success" else "failed again on rerun"
    return IssueOccurrence(
        at=o.at,
        test_id=o.test_id,
        signature=o.signature or o.message.partition("\n")[0],
        location=o.location,
        pr_number=o.pr_number,
        branch=o.branch,
        head_sha=o.head_sha,
        check_name=o.check_name,
        html_url=o.html_url,
        attempt=o.attempt,
        rerun=rerun,
        message=o.message,
        context=None
        if context is None
        else context.model_copy(update={"test_seconds": o.test_seconds}),
    )


def _rate(runs: list[RunRecord], occurrences: list[Occurrence]) -> RunRate:
    failed = {o.check_run_id for o in occurrences}
    return run_rate(outcomes_of(runs, failed))


def _merged(known: TrackingIssue, unit: tracking.Unit) -> TrackingIssue:
    record = known.model_copy(deep=True)
    if not record.is_cluster:
        record.tests = record.tests or unit.tests
    elif not record.signature:
        record.signature = unit.signature
    if record.hint is None and not record.is_cluster and unit.failures:
        record.hint = _hint(unit.failures[0])
    return record


async def _sync_from_github(scope: Scope, label: str, now: float) -> None:
    """Read every issue with the label that carries the bot's hidden block into the store
    (the newest of a key, as searching by key would find), then remember it was done. The
    label is made here too, once per store: should people delete it later, GitHub makes it
    again (grey) for the next issue that names it."""
    ctx, gh, repo = scope.ctx, scope.gh, scope.repo
    await api.ensure_label(gh, repo, label, LABEL_COLOR, LABEL_DESCRIPTION)
    async for issue in api.labelled_issues(gh, repo, label):
        data = render.hidden_data(issue.body)
        key = data.get("key") if data is not None else None
        if not isinstance(key, str) or await ctx.store.tracking_issue(repo, key) is not None:
            continue
        assert data is not None
        tests = data.get("tests")
        await ctx.store.save_tracking_issue(
            TrackingIssue(
                repo=repo,
                key=key,
                issue_number=issue.number,
                title=issue.title,
                tests=[t for t in tests if isinstance(t, str)] if isinstance(tests, list) else [],
                created_at=issue.created_at,
                closed_at=issue.closed_at,
            )
        )
    await ctx.store.mark_tracking_synced(repo, label, now)


async def _find_on_github(gh: GitHubClient, repo: str, label: str, key: str) -> GitHubIssue | None:
    async for issue in api.labelled_issues(gh, repo, label):
        if render.tracking_key(issue.body) == key:
            return issue
    return None


async def _hint_from_pr(ctx: BotContext, repo: str, pr_number: int, key: str) -> RunHint | None:
    for attempt in reversed(await ctx.store.check_attempts_for_pr(repo, pr_number)):
        for decision in attempt.decisions:
            if decision.failure is not None and match_key(decision.failure.test_id) == key:
                return _hint(decision.failure)
    return None


def _hint(failure: Failure) -> RunHint:
    return RunHint(
        framework=failure.framework, file=failure.file, name=failure.name, test_id=failure.test_id
    )


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
