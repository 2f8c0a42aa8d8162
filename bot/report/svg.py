"""Inline SVG charts for the dashboard: readable without JavaScript, no build step.

Every chart carries `role="img"`, an `aria-label` and a `<title>` that say in words what
the bars show, so a screen reader (or a test) reads the numbers, not the pixels.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

FAIL_COLOUR = "#cf222e"
PASS_COLOUR = "#2da44e"
EMPTY_COLOUR = "#d0d7de"


def sparkline(counts: Sequence[int], *, label: str, width: int = 120, height: int = 24) -> str:
    """One bar per day, oldest first, scaled to the busiest day; a day with none is a dot."""
    days = max(len(counts), 1)
    step = width / days
    peak = max(counts, default=0) or 1
    bars = []
    for index, count in enumerate(counts):
        x = index * step
        if count:
            bar = max(2.0, (height - 2) * count / peak)
            bars.append(
                f'<rect x="{x:.1f}" y="{height - bar:.1f}" width="{max(step - 1, 1):.1f}" '
                f'height="{bar:.1f}" fill="{FAIL_COLOUR}"><title>{count}</title></rect>'
            )
        else:
            bars.append(
                f'<rect x="{x:.1f}" y="{height - 1}" width="{max(step - 1, 1):.1f}" height="1" '
                f'fill="{EMPTY_COLOUR}"/>'
            )
    text = escape(label, quote=True)
    return (
        f'<svg class="sparkline" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="{text}">'
        f"<title>{text}</title>{''.join(bars)}</svg>"
    )


def outcome_chart(
    days: Sequence[tuple[str, int, int]], *, label: str, width: int = 600, height: int = 160
) -> str:
    """Stacked bars per day: failed runs (red, bottom) and passed runs (green, on top).

    `days` holds (day, failed, passed), oldest first.
    """
    columns = max(len(days), 1)
    step = width / columns
    peak = max((failed + passed for _, failed, passed in days), default=0) or 1
    scale = (height - 16) / peak
    parts = []
    for index, (day, failed, passed) in enumerate(days):
        x = index * step
        fail_height = failed * scale
        pass_height = passed * scale
        tip = escape(f"{day}: {failed} failed, {passed} passed")
        parts.append(
            f'<g><title>{tip}</title><rect x="{x:.1f}" y="{height - fail_height:.1f}" '
            f'width="{max(step - 2, 1):.1f}" height="{fail_height:.1f}" fill="{FAIL_COLOUR}"/>'
            f'<rect x="{x:.1f}" y="{height - fail_height - pass_height:.1f}" '
            f'width="{max(step - 2, 1):.1f}" height="{pass_height:.1f}" fill="{PASS_COLOUR}"/>'
            "</g>"
        )
    text = escape(label, quote=True)
    return (
        f'<svg class="outcomes" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="{text}">'
        f"<title>{text}</title>{''.join(parts)}</svg>"
    )
