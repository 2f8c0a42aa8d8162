"""How a kept pull request is written and read back, the same on both backends."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.shared import PullSummary

_FIELDS = (
    "number",
    "state",
    "author",
    "head_sha",
    "base_sha",
    "base_ref",
    "changed_files",
    "updated_at",
    "comments",
)
# `number` is the row's pr_number.
PULL_COLUMNS = ", ".join("pr_number" if f == "number" else f for f in _FIELDS)
# Every kept field but the key, taken from the row being inserted.
PULL_UPDATES = ", ".join(f"{f} = excluded.{f}" for f in _FIELDS if f != "number")


def pull_values(pull: PullSummary) -> tuple[Any, ...]:
    """The pull's values in PULL_COLUMNS order."""
    return tuple(getattr(pull, f) for f in _FIELDS)


def pull_from_row(row: Sequence[Any]) -> PullSummary:
    return PullSummary.model_validate(dict(zip(_FIELDS, row, strict=True)))
