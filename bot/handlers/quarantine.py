"""Quarantined tests: begun and ended by `/flaky` commands or automatically, shown on their
tracking issue (a label and a line in the bot's section), ended at their expiry (when next
read) and by the automatic closing of a fixed test's issue.

A quarantine is shown where the test is tracked, so a test needs a tracking issue to be
quarantined. Writes per command: the label's check (one GET, a POST the first time), one
label write on the issue, and the section's edit when it changed; an expiry or an end costs
the issue's read and one PATCH of its labels, and the section's edit; a reminder one comment.
No job waits days in the inbox for an expiry: it would count as a delivery waiting all that
time.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

from bot.config import OwnersMode, QuarantineSettings
from bot.github import api
from bot.github.client import GitHubClient
from bot.handlers.scope import Scope
from bot.handlers.tracking import refresh_issue
from bot.report import replies
from bot.report.issue import day
from bot.store.tracking_rows import member_keys
from bot.triage import quarantine
from bot.triage.failures import match_key
from bot.triage.models import Decision, RunRate
from bot.triage.quarantine import Quarantine, Source
from bot.triage.stats import describe_rate, outcomes_of, run_rate
from bot.triage.tracking import TRACKABLE, TrackingIssue

log = logging.getLogger(__name__)

LABEL_COLOR = "fbca04"
LABEL_DESCRIPTION = "A flaky test quarantined by flaky-triage: its failures do not block merges"
AUTO_BY = "flaky-triage"  # who quarantined a test automatically


@dataclass(frozen=True)
class Target:
    """What a command is about: tests of one tracking issue."""

    issue: TrackingIssue
    tests: list[str]  # test ids


async def target_of(scope: Scope, issue_number: int | None, test_id: str) -> Target | str:
    """The tests a command names: on a tracking issue (`issue_number`), its tests, or the one
    named among them; on a PR, the named test, which needs a tracking issue. Else the reply
    saying why there is none."""
    store, repo, key = scope.store, scope.repo, match_key(test_id)
    if issue_number is None:
        number = (await store.tracking_numbers(repo, [key])).get(key)
        record = await store.tracking_issue_numbered(repo, number) if number else None
        if record is None:
            return replies.not_tracked(test_id)
        named = [t for t in record.tests if match_key(t) == key]
        return Target(record, named or [test_id])
    record = await store.tracking_issue_numbered(repo, issue_number)
    assert record is not None  # the command handler only comes here for one
    if not test_id:
        return Target(record, record.tests)
    named = [t for t in record.tests if match_key(t) == key]
    return Target(record, named) if named else replies.not_in_issue(test_id, issue_number)


async def begin(
    scope: Scope,
    target: Target,
    settings: QuarantineSettings,
    by: str,
    until: float,
    *,
    source: Source = Source.COMMAND,
    reason: str = "",
) -> str:
    """Quarantine (or renew) the target's tests until `until`, show it on the issue, and
    schedule its expiry; the reply line."""
    ctx, repo, issue = scope.ctx, scope.repo, target.issue
    now = time.time()
    owner = quarantine.owner_for(issue.owners, by)
    renewed = False
    for test_id in target.tests:
        kept, again = await ctx.store.quarantine(
            Quarantine(
                repo=repo,
                test_key=match_key(test_id),
                test_id=test_id,
                issue_number=issue.issue_number,
                by=by,
                owner=owner,
                since=now,
                expires_at=until,
                source=source,
                reason=reason,
            ),
            now,
        )
        renewed = renewed or again
        owner = kept.owner
    async with ctx.store.tracking_lock(repo):
        await show(scope, issue, settings)
    log.info("%s: quarantined %s until %s (%s)", repo, ", ".join(target.tests), day(until), by)
    return replies.quarantined(target.tests, day(until), owner, issue.issue_number, renewed=renewed)


async def end(scope: Scope, target: Target, settings: QuarantineSettings, by: str) -> str:
    """End the target's quarantines that are on, and show it; the reply line."""
    keys = [match_key(t) for t in target.tests]
    ended = await scope.store.end_quarantines(scope.repo, keys, by, time.time())
    if ended:
        async with scope.store.tracking_lock(scope.repo):
            await show(scope, target.issue, settings)
    return replies.unquarantined([q.test_id for q in ended], target.issue.issue_number)


async def end_fixed(scope: Scope, issue: TrackingIssue, settings: QuarantineSettings) -> None:
    """The issue's test was fixed (its issue is closing, under the tracking lock): its
    quarantine ends."""
    now = time.time()
    ended = await scope.store.end_quarantines(
        scope.repo, member_keys(issue), quarantine.Ended.FIXED, now
    )
    if ended:
        await show(scope, issue, settings)


async def show(scope: Scope, issue: TrackingIssue, settings: QuarantineSettings) -> None:
    """The label on the issue while any of its tests is quarantined, off otherwise, and the
    section's line; the caller holds the repository's tracking lock, as every section
    write does."""
    ctx, gh, repo, number = scope.ctx, scope.gh, scope.repo, issue.issue_number
    on = await ctx.store.active_quarantines(repo, time.time(), member_keys(issue))
    if on:
        await api.ensure_label(gh, repo, settings.label, LABEL_COLOR, LABEL_DESCRIPTION)
        await api.add_labels(gh, repo, number, [settings.label])
    else:
        await _take_label_off(gh, repo, number, settings.label)
    await refresh_issue(scope, issue.key)


async def _take_label_off(gh: GitHubClient, repo: str, number: int, label: str) -> None:
    """The issue's labels without this one (GitHub's issue update sets the whole list: a
    label people add between the read and the write is lost, a window of one request)."""
    found = await api.get_issue(gh, repo, number)
    if found is None or label not in found.labels:
        return
    await api.update_issue(gh, repo, number, labels=[n for n in found.labels if n != label])


# --- expiry -------------------------------------------------------------------------------


async def keep_up(scope: Scope, settings: QuarantineSettings) -> None:
    """End the repository's quarantines whose expiry passed, taking them off their issues;
    remind the owners of those ending within REMIND_DAYS; post each quarantine's weekly
    digest. All on the tracking issues.

    Read time is where this happens: an expired quarantine is never active, whoever reads
    it, and the next gate written in the repository (or command given) ends it on record and
    on its issue. Three store writes; GitHub is written to only when one is due.
    """
    now = time.time()
    await _end_expired(scope, settings, now)
    await _remind(scope, now)
    await _digest(scope, now)


async def _end_expired(scope: Scope, settings: QuarantineSettings, now: float) -> None:
    store, repo = scope.store, scope.repo
    ended = await store.end_expired_quarantines(repo, now)
    for number in sorted({q.issue_number for q in ended if q.issue_number is not None}):
        issue = await store.tracking_issue_numbered(repo, number)
        if issue is not None:
            async with store.tracking_lock(repo):
                await show(scope, issue, settings)
    for q in ended:
        log.info("%s: the quarantine of %s expired", repo, q.test_id)


async def _remind(scope: Scope, now: float) -> None:
    ending = await scope.store.quarantines_to_remind(
        scope.repo, now, quarantine.REMIND_DAYS * quarantine.DAY
    )
    if not ending:
        return
    config = await scope.config()
    for q in ending:
        if q.issue_number is not None:
            # The person who quarantined it asked for it; CODEOWNERS' owners are notified
            # only where the repository has them @-mentioned.
            mention = q.owner == q.by or config.owners is OwnersMode.MENTION
            text = replies.quarantine_ending(q.test_id, day(q.expires_at), q.owner, mention=mention)
            await api.create_comment(scope.gh, scope.repo, q.issue_number, text)


async def _digest(scope: Scope, now: float) -> None:
    """Each quarantine's week on its issue: is the test still failing, and how often."""
    store, repo = scope.store, scope.repo
    due = await store.quarantines_to_digest(repo, now, quarantine.DIGEST_DAYS * quarantine.DAY)
    since = now - quarantine.DIGEST_DAYS * quarantine.DAY
    for q in due:
        issue = (
            await store.tracking_issue_numbered(repo, q.issue_number) if q.issue_number else None
        )
        if issue is None:
            continue
        rates, prs = await _record(scope, q.test_key, issue.checks, since)
        text = replies.quarantine_week(q.test_id, rates, prs, day(q.expires_at))
        await api.create_comment(scope.gh, repo, issue.issue_number, text)


async def _record(
    scope: Scope, key: str, checks: Sequence[str], since: float
) -> tuple[list[tuple[str, RunRate]], list[int]]:
    """The test's failure rate in each check it failed in (and `checks`) since `since`, and
    the pull requests its failures hit."""
    store, repo = scope.store, scope.repo
    occurrences = await store.occurrences(repo, [key], since)
    rates = []
    for check in sorted({o.check_name for o in occurrences} | set(checks)):
        runs = await store.runs(repo, check, since)
        failed = {o.check_run_id for o in occurrences if o.check_name == check}
        rates.append((check, run_rate(outcomes_of(runs, failed))))
    return rates, sorted({o.pr_number for o in occurrences if o.pr_number is not None})


# --- automatic quarantine -----------------------------------------------------------------


async def quarantine_automatically(scope: Scope, decisions: Sequence[Decision]) -> None:
    """Quarantine each tracked test of these failures that earns it by the repository's
    `quarantine.auto` rule and was never quarantined before (after one ends, people decide).
    Store reads only, unless a test earns it."""
    config = await scope.config()
    settings = config.quarantine
    if settings is None or settings.auto is None:
        return
    rule, store, repo, now = settings.auto, scope.store, scope.repo, time.time()
    keys = sorted(
        {match_key(d.failure.test_id) for d in decisions if d.failure and d.verdict in TRACKABLE}
    )
    numbers = await store.tracking_numbers(repo, keys)
    since = now - config.history_days * quarantine.DAY
    for key, number in sorted(numbers.items()):
        if await store.quarantine_history(repo, key):
            continue
        rates, prs = await _record(scope, key, [], since)
        earned = [
            (check, rate)
            for check, rate in rates
            if quarantine.earns_auto_quarantine(
                rate, len(prs), min_rate=rule.min_rate, min_prs=rule.min_prs
            )
        ]
        issue = await store.tracking_issue_numbered(repo, number) if earned else None
        if issue is None:
            continue
        check, rate = earned[0]
        tests = [t for t in issue.tests if match_key(t) == key] or [key]
        plural = "s" if len(prs) != 1 else ""
        reason = f"{describe_rate(rate)} of {check}, on {len(prs)} pull request{plural}"
        until = now + settings.days * quarantine.DAY
        await begin(
            scope, Target(issue, tests), settings, AUTO_BY, until, source=Source.AUTO, reason=reason
        )
