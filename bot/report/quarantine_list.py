"""The quarantined tests of a repository as test runners read them (pure): JSON, one entry
per test, with the ids the runners print and the match key that ties them together; served
by the dashboard, and carried one entry a line in a hidden marker on each tracking issue, which
a workflow reads with its own GITHUB_TOKEN (docs/snippets/quarantined-from-issues.sh)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from bot.triage.quarantine import Quarantine

VERSION = 1
MARKER = "<!-- flaky-triage:quarantined "


def quarantine_list(repo: str, on: Sequence[Quarantine], now: float) -> dict[str, Any]:
    return {
        "version": VERSION,
        "repository": repo,
        "generated_at": _iso(now),
        "tests": [entry(q) for q in sorted(on, key=lambda q: q.test_key)],
    }


def entry(q: Quarantine) -> dict[str, Any]:
    return {
        "test_id": q.test_id,
        "test_key": q.test_key,
        "tracking_issue": q.issue_number,
        "owner": q.owner,
        "quarantined_by": q.by,
        "source": q.source,
        "since": _iso(q.since),
        "expires_at": _iso(q.expires_at),
    }


def marker(q: Quarantine) -> str:
    """The entry as one hidden line of Markdown. JSON has `-` only inside strings, where
    `\u002d` means the same: no `--` is left to end the comment early."""
    text = json.dumps(entry(q), ensure_ascii=True).replace("--", "-\\u002d")
    return f"{MARKER}{text} -->"


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
