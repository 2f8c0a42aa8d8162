"""The tracking-issue table's columns, shared by both backends: named after the model fields."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bot.store.models import TrackingIssue
from bot.triage.failures import match_key

TRACKING_FIELDS = (
    "repo", "key", "issue_number", "title", "tests", "signature", "checks", "hint",
    "created_at", "body_sha", "closed_at", "owners",
)  # fmt: skip
TRACKING_COLUMNS = ", ".join(TRACKING_FIELDS)
TRACKING_JSON_FIELDS = frozenset({"tests", "checks", "hint", "owners"})


def tracking_values(issue: TrackingIssue) -> list[Any]:
    """Column values in TRACKING_FIELDS order; lists and the hint as JSON text."""
    data = issue.model_dump(mode="json")
    return [json.dumps(data[f]) if f in TRACKING_JSON_FIELDS else data[f] for f in TRACKING_FIELDS]


def tracking_from_row(row: Sequence[Any]) -> TrackingIssue:
    values = dict(zip(TRACKING_FIELDS, row, strict=True))
    for name in TRACKING_JSON_FIELDS:
        if isinstance(values[name], str):
            values[name] = json.loads(values[name])
    return TrackingIssue.model_validate(values)


def member_keys(issue: TrackingIssue) -> list[str]:
    """The match keys of the tests the issue tracks (for a test, its own key)."""
    if not issue.is_cluster:
        return [issue.key]
    return sorted({match_key(test_id) for test_id in issue.tests})
