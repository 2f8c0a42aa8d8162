"""GitHub's issue as the tracking decisions read it."""

from __future__ import annotations

from bot.github.api import issue_from
from bot.shared import GitHubIssue


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
