"""The run-history tables' columns, shared by both backends: named after the model fields."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.triage.models import Occurrence, RunRecord

RUN_FIELDS = (
    "repo", "check_run_id", "check_name", "head_sha", "branch", "pr_number", "author",
    "attempt", "conclusion", "completed_at", "html_url", "started_at", "runner_name",
    "runner_os", "runner_image",
)  # fmt: skip
OCCURRENCE_FIELDS = (
    "repo", "check_run_id", "check_name", "test_key", "test_id", "signature", "generic",
    "location", "message", "head_sha", "branch", "pr_number", "author", "attempt", "at",
    "verdict", "html_url", "test_seconds",
)  # fmt: skip
RUN_COLUMNS = ", ".join(RUN_FIELDS)
OCCURRENCE_COLUMNS = ", ".join(OCCURRENCE_FIELDS)


def run_values(run: RunRecord) -> list[Any]:
    return [getattr(run, field) for field in RUN_FIELDS]


def occurrence_values(occurrence: Occurrence) -> list[Any]:
    return [getattr(occurrence, field) for field in OCCURRENCE_FIELDS]


def run_from_row(row: Sequence[Any]) -> RunRecord:
    return RunRecord.model_validate(dict(zip(RUN_FIELDS, row, strict=True)))


def occurrence_from_row(row: Sequence[Any]) -> Occurrence:
    values = dict(zip(OCCURRENCE_FIELDS, row, strict=True))
    # SQLite keeps booleans as 0/1.
    return Occurrence.model_validate({**values, "generic": bool(values["generic"])})
