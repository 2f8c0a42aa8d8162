"""Typed reads of a parsed JSON report's fields: a field of the wrong type reads as empty."""

from __future__ import annotations

import json


def text(value: object) -> str:
    return value if isinstance(value, str) else ""


def dicts(value: object) -> list[dict[str, object]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def mapping(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def number(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def count(value: object) -> int | None:
    """A counter a report keeps of itself (`numFailedTests`, `stats.failures`); None when
    it does not say, or says it in a shape that is not a count."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def items(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def strings(value: object) -> list[str]:
    return [v for v in items(value) if isinstance(v, str)]


def json_line(line: str) -> dict[str, object] | None:
    """One line of a JSON-lines stream (go test -json, Dart's events) as an object; None
    for a line that is not one (output a runner printed between events)."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        event = json.loads(line)
    except ValueError:
        return None
    return event if isinstance(event, dict) else None
