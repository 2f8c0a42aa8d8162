"""A failed test read from a report, built one way for every format: its location chosen
from what the report states (`locations.choose`), its signature made from its message, the
repository files its stack names kept as trace paths. Pure."""

from __future__ import annotations

import math

from bot.triage.models import Failure
from bot.triage.reports.locations import Located
from bot.triage.reports.traces import Frame, trace_paths
from bot.triage.signature import signature


def reported_failure(
    *,
    test_id: str,
    name: str,
    framework: str,
    source: str,
    message: str,
    found: Located,
    frames: list[Frame],
    file: str | None = None,
    attempts: tuple[int, int] = (1, 1),
    seconds: float | None = None,
) -> Failure:
    """`attempts`: the runner's tries of the test, failed and in all (retries); `seconds`:
    how long it ran, as the report states."""
    return Failure(
        test_id=test_id,
        name=name,
        file=file,
        framework=framework,
        location=found.location,
        location_source=found.source,
        location_note=found.note,
        declared_at=found.declared,
        unplaced_frames=list(found.unplaced),
        message=message,
        signature=signature(message),
        trace_paths=trace_paths(frames),
        source=source,
        attempts_failed=attempts[0],
        attempts_total=attempts[1],
        seconds=seconds,
    )


def stated_seconds(value: object) -> float | None:
    """A duration a report states (`time="0.042"`, `"Elapsed": 1.5`), or None when it is
    missing, unreadable, negative or not finite."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    try:
        # A decimal comma ("0,042", some locales' writers) is not read: it could be a
        # thousands separator too.
        seconds = float(value)
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None
