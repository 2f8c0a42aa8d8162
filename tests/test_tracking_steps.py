"""What a tracking issue needs when its section has something new to say, and when a quiet one
is kept open: the rules, case by case. End to end they are exercised in
tests/test_tracking_e2e.py, test_tracking_refresh_e2e.py and test_auto_close_e2e.py."""

from __future__ import annotations

from typing import Any

import pytest

from bot.github.api import issue_from
from bot.shared import GitHubIssue
from bot.triage.auto_close import Kept, kept_open
from bot.triage.tracking import (
    DAY,
    RECURRED,
    Edit,
    MarkClosed,
    OpenIssue,
    Reopen,
    Step,
    TrackingIssue,
    next_step,
)

NOW = 1_780_000_000.0
REOPEN_DAYS = 14
CLOSED = NOW - 3 * DAY  # closed recently: a recurrence reopens it
LONG_AGO = NOW - (REOPEN_DAYS + 1) * DAY  # closed for good: a recurrence opens a new one
AFTER = CLOSED + 3600  # a failure after it was closed
BEFORE = CLOSED - 3600  # a failure from before (a re-triage of an old run)
REASON = "it passed on a rerun of the same commit"
RECORD = TrackingIssue(
    repo="acme/bus",
    key="tests.bus.test_core.test_publish",
    issue_number=5,
    title="Flaky test: test_publish",
    tests=["tests/bus/test_core.py::test_publish"],
    created_at=NOW - 40 * DAY,
)


def issue(**fields: Any) -> GitHubIssue:
    return GitHubIssue(number=5, **fields)


def closed(at: float = CLOSED, **fields: Any) -> GitHubIssue:
    return issue(**{"state": "closed", "state_reason": "completed", "closed_at": at, **fields})


# (what happened, GitHub's issue, the newest failure, the failure in hand: its threshold
# reason, or None below it; "refresh": none in hand, the next step)
CASES: list[tuple[str, GitHubIssue | None, float, str | None, Step | None]] = [
    ("gone, a failure over the threshold", None, AFTER, REASON, OpenIssue(REASON, None)),
    ("gone, a failure below it", None, AFTER, None, None),
    ("gone, at a refresh", None, AFTER, "refresh", MarkClosed(NOW)),
    ("open", issue(), AFTER, REASON, Edit(None)),
    ("open, at a refresh", issue(), AFTER, "refresh", Edit(None)),
    ("open and locked", issue(locked=True), AFTER, REASON, Edit(None)),
    ("closed, no failure since", closed(), BEFORE, REASON, Edit(CLOSED)),
    ("closed the second it last failed", closed(), CLOSED, REASON, Edit(CLOSED)),
    ("closed as not planned, failed since", closed(state_reason="not_planned"), AFTER, REASON,
     Edit(CLOSED)),
    ("closed, failed since", closed(), AFTER, REASON, Reopen(CLOSED)),
    ("closed, failed since, below the threshold", closed(), AFTER, None, Reopen(CLOSED)),
    ("closed, failed since, at a refresh", closed(), AFTER, "refresh", Reopen(CLOSED)),
    ("closed just reopen_days ago", closed(NOW - REOPEN_DAYS * DAY), NOW, REASON,
     Reopen(NOW - REOPEN_DAYS * DAY)),
    ("closed long ago, failed since", closed(LONG_AGO), AFTER, REASON, OpenIssue(REASON, 5)),
    ("closed long ago, below the threshold", closed(LONG_AGO), AFTER, None, OpenIssue(RECURRED, 5)),
    ("closed long ago, at a refresh", closed(LONG_AGO), AFTER, "refresh", MarkClosed(LONG_AGO)),
    ("closed long ago, no failure since", closed(LONG_AGO), LONG_AGO - 1, REASON, Edit(LONG_AGO)),
    ("closed and locked, failed since", closed(locked=True), AFTER, None, OpenIssue(RECURRED, 5)),
    ("closed and locked, at a refresh", closed(locked=True), AFTER, "refresh", MarkClosed(CLOSED)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("found", "last_failure", "reason", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_what_a_tracking_issue_needs_next(
    found: GitHubIssue | None, last_failure: float, reason: str | None, expected: Step | None
) -> None:
    refresh = reason == "refresh"

    step = next_step(
        RECORD,
        found,
        last_failure,
        reopen_days=REOPEN_DAYS,
        failed_now=not refresh,
        reason=None if refresh else reason,
        now=NOW,
    )

    assert step == expected


QUIET = "flaky:quiet"
KEPT: list[tuple[str, GitHubIssue | None, Kept | None]] = [
    ("open", issue(), None),
    ("open, other labels", issue(labels=frozenset({"flaky-test", "bug"})), None),
    ("gone", None, Kept.GONE),
    ("closed by people", closed(), Kept.CLOSED),
    ("closed and locked", closed(locked=True), Kept.CLOSED),
    ("locked", issue(locked=True), Kept.LOCKED),
    ("locked and quieted", issue(locked=True, labels=frozenset({QUIET})), Kept.LOCKED),
    ("quieted", issue(labels=frozenset({"flaky-test", QUIET})), Kept.QUIETED),
]


@pytest.mark.parametrize(
    ("found", "expected"), [case[1:] for case in KEPT], ids=[case[0] for case in KEPT]
)
def test_which_quiet_issues_stay_open(found: GitHubIssue | None, expected: Kept | None) -> None:
    assert kept_open(found, QUIET) is expected


def test_an_issue_as_github_shows_it() -> None:
    """GitHub's `GET /repos/{owner}/{repo}/issues/{number}` answer, in the fields the bot reads."""
    answer = {
        "number": 12,
        "title": "Flaky test: test_publish",
        "body": None,
        "state": "closed",
        "state_reason": "not_planned",
        "locked": True,
        "labels": [{"id": 1, "name": "flaky-test", "color": "d93f0b"}, {"name": "bug"}],
        "created_at": "2026-05-01T10:00:00Z",
        "closed_at": "2026-05-02T10:00:00Z",
        "pull_request": {"url": "https://api.github.com/repos/acme/bus/pulls/12"},
    }

    assert issue_from(answer) == GitHubIssue(
        number=12,
        title="Flaky test: test_publish",
        body=None,
        state="closed",
        state_reason="not_planned",
        locked=True,
        labels=frozenset({"flaky-test", "bug"}),
        created_at=1_777_629_600.0,
        closed_at=1_777_716_000.0,
        is_pull_request=True,
    )
    reopened = issue_from({**answer, "state": "open", "closed_at": None, "labels": []})
    assert (reopened.closed_at, reopened.labels) == (None, frozenset())
