"""Which failures deserve a tracking issue, grouped the way the issues are kept, and what to
do with an issue when its test fails again.

One issue per flaky test, keyed by its match key; when many tests of one job fail with the
same (specific) signature, they share one cluster issue instead of filing one each. An issue
is only opened when the evidence shows flakiness beyond one red run: a pass on a rerun of
the same commit, failures on pull requests of two different authors, or a failure outside
any pull request (the default branch). Once open, an issue is edited, reopened when its test
fails after it was closed, or replaced by a new one when it is gone or closed for good
(`next_step`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

from bot.shared import GitHubIssue
from bot.triage.failures import match_key
from bot.triage.models import Decision, EvidenceKind, Failure, RunHint, Verdict
from bot.triage.signature import is_generic

# A test the PR touches, an infrastructure failure or an unidentified one says nothing
# about the test's own flakiness.
TRACKABLE = frozenset({Verdict.FLAKY, Verdict.UNRELATED, Verdict.BROKEN_BASE})
CLUSTER_MIN = 3  # tests of one job sharing a signature before they share one issue
CLUSTER_PREFIX = "cluster:"
DAY = 86_400.0
RECURRED = "it failed again after its issue was closed"


@dataclass(frozen=True)
class Unit:
    """What one tracking issue covers in this run: one test, or a cluster of them."""

    key: str
    decisions: tuple[Decision, ...]
    signature: str = ""  # a cluster's shared signature

    @property
    def failures(self) -> list[Failure]:
        return [d.failure for d in self.decisions if d.failure is not None]

    @property
    def tests(self) -> list[str]:
        return sorted({f.test_id for f in self.failures})

    @property
    def is_cluster(self) -> bool:
        return self.key.startswith(CLUSTER_PREFIX)


def cluster_key(signature: str) -> str:
    return CLUSTER_PREFIX + hashlib.sha256(signature.encode()).hexdigest()[:16]


def units(decisions: Sequence[Decision], generic_messages: Sequence[str] = ()) -> list[Unit]:
    """The trackable failures of one run, as tests and clusters, in a stable order."""
    trackable = [d for d in decisions if d.failure is not None and d.verdict in TRACKABLE]
    by_signature: dict[str, list[Decision]] = {}
    for decision in trackable:
        assert decision.failure is not None
        failure = decision.failure
        if failure.signature and not is_generic(failure.message, generic_messages):
            by_signature.setdefault(failure.signature, []).append(decision)
    found: list[Unit] = []
    clustered: set[int] = set()
    for signature, shared in by_signature.items():
        if len({match_key(d.failure.test_id) for d in shared if d.failure}) >= CLUSTER_MIN:
            found.append(Unit(cluster_key(signature), tuple(shared), signature))
            clustered.update(id(d) for d in shared)
    singles: dict[str, list[Decision]] = {}
    for decision in trackable:
        if id(decision) not in clustered and decision.failure is not None:
            singles.setdefault(match_key(decision.failure.test_id), []).append(decision)
    found.extend(Unit(key, tuple(group)) for key, group in singles.items())
    return sorted(found, key=lambda unit: unit.key)


def threshold_reason(unit: Unit, *, passed_on_rerun: bool, author: str | None) -> str | None:
    """Why this unit's evidence is enough to open an issue, in words; None when it is not."""
    for decision in unit.decisions:
        kinds = {item.kind for item in decision.items}
        if passed_on_rerun and decision.verdict is Verdict.FLAKY:
            return "it passed on a rerun of the same commit"
        if EvidenceKind.RETRIES in kinds:
            return "it failed, then passed when retried within the same run"
        same = [o for o in decision.history if o.same_signature]
        authors = {o.author for o in same if o.pr_number is not None and o.author}
        if author is not None and len(authors | {author}) >= 2:
            prs = {o.pr_number for o in same if o.pr_number is not None}
            return (
                f"it failed the same way on {len(prs) + 1} pull requests by "
                f"{len(authors | {author})} authors"
            )
        branches = sorted({o.branch or "" for o in same if o.pr_number is None})
        if branches or EvidenceKind.BASE in kinds:
            where = f"on {branches[0]}" if branches and branches[0] else "on the base branch"
            return f"it failed the same way {where}, outside any pull request"
    return None


class TrackingIssue(BaseModel):
    """The GitHub issue that tracks one flaky test, or one failure shared by many tests, as
    the store keeps it."""

    repo: str
    key: str  # the test's match key, or "cluster:<hash of the signature>"
    issue_number: int
    title: str  # the title the bot last gave it
    tests: list[str]  # test ids: one for a test, the members of a cluster
    signature: str = ""  # a cluster's shared signature
    checks: list[str] = Field(default_factory=list)  # checks it failed in
    hint: RunHint | None = None
    created_at: float  # when the issue was opened: the hourly cap counts the recent ones
    body_sha: str = ""  # hash of the bot's section last written, to skip identical edits
    closed_at: float | None = None  # when the bot last saw the issue closed; None: open
    # Its test's owners by CODEOWNERS (a cluster's: its members'), as written there.
    owners: list[str] = Field(default_factory=list)

    @property
    def is_cluster(self) -> bool:
        return self.key.startswith(CLUSTER_PREFIX)


@dataclass(frozen=True)
class OpenIssue:
    """Open a new issue for the test, in place of one deleted (`previous` None) or closed for
    good (its number, which the new one links)."""

    reason: str  # why, in words, for the log
    previous: int | None


@dataclass(frozen=True)
class MarkClosed:
    """Record the issue as closed at `at`, so the test's next failure opens its new issue."""

    at: float


@dataclass(frozen=True)
class Reopen:
    """Reopen the issue with its section brought up to date, saying it failed again."""

    closed_at: float  # when people closed it


@dataclass(frozen=True)
class Edit:
    """Write the issue's section (and title) where they changed; leave its state alone."""

    closed_at: float | None  # as GitHub shows it: closed with no failure since, it stays so


Step = OpenIssue | MarkClosed | Reopen | Edit


def next_step(
    record: TrackingIssue,
    issue: GitHubIssue | None,
    last_failure: float,
    *,
    reopen_days: int,
    failed_now: bool,
    reason: str | None,
    now: float,
) -> Step | None:
    """What to do with the tracking issue `record` whose section has something new to say,
    now that GitHub shows it as `issue` (None: deleted or transferred); None: nothing.

    `last_failure`: the newest failure in the section. `failed_now`: a failure of the test is
    in hand (else a refresh of the section, which has none); `reason`: why that failure's
    evidence earns a new issue (`threshold_reason`), None when it does not.

    A failure after the issue was closed is a recurrence; one from before it (a re-triage of
    an old run) is not. Closed as "not planned", people chose to live with it. A recurrence
    reopens the issue, unless it is locked or was closed more than `reopen_days` ago: then a
    new issue links the old one. Only a failure in hand opens a new issue; a refresh records
    the old one closed, and the test's next failure opens it.
    """
    if issue is None:  # start again, as for a test seen for the first time
        if not failed_now:
            return MarkClosed(now)
        return OpenIssue(reason, None) if reason is not None else None
    closed_at = issue.closed_at
    if closed_at is None or last_failure <= closed_at or issue.state_reason == "not_planned":
        return Edit(closed_at)
    if issue.locked or now - closed_at > reopen_days * DAY:
        if not failed_now:
            return MarkClosed(closed_at)
        return OpenIssue(reason or RECURRED, record.issue_number)
    return Reopen(closed_at)
