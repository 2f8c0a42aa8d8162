"""The quarantined tests of a repository as test runners read them (pure): JSON, one entry
per test, with the ids the runners print and the match key that ties them together."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from bot.triage.quarantine import Quarantine

VERSION = 1


def quarantine_list(repo: str, on: Sequence[Quarantine], now: float) -> dict[str, Any]:
    return {
        "version": VERSION,
        "repository": repo,
        "generated_at": _iso(now),
        "tests": [
            {
                "test_id": q.test_id,
                "test_key": q.test_key,
                "tracking_issue": q.issue_number,
                "owner": q.owner,
                "quarantined_by": q.by,
                "source": q.source,
                "since": _iso(q.since),
                "expires_at": _iso(q.expires_at),
            }
            for q in sorted(on, key=lambda q: q.test_key)
        ],
    }


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
