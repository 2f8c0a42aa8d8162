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


# The outcome chart's margins: the count axis's labels on the left, the days' below.
_LEFT, _BOTTOM, _TOP = 36, 18, 8
_AXIS_COLOUR = "#59636e"


def outcome_chart(
    days: Sequence[tuple[str, int, int]], *, label: str, width: int = 600, height: int = 160
) -> str:
    """Stacked bars per day: failed runs (red, bottom) and passed runs (green, on top), over
    axes: runs counted up the left (0 and the busiest day's), the first and last day below.

    `days` holds (day, failed, passed), oldest first.
    """
    columns = max(len(days), 1)
    step = (width - _LEFT) / columns
    base = height - _BOTTOM
    peak = max((failed + passed for _, failed, passed in days), default=0) or 1
    scale = (base - _TOP) / peak
    parts = [_axes(days, peak, width=width, height=height)]
    for index, (day, failed, passed) in enumerate(days):
        x = _LEFT + 1 + index * step
        fail_height = failed * scale
        pass_height = passed * scale
        tip = escape(f"{day}: {failed} failed, {passed} passed")
        parts.append(
            f'<g><title>{tip}</title><rect x="{x:.1f}" y="{base - fail_height:.1f}" '
            f'width="{max(step - 2, 1):.1f}" height="{fail_height:.1f}" fill="{FAIL_COLOUR}"/>'
            f'<rect x="{x:.1f}" y="{base - fail_height - pass_height:.1f}" '
            f'width="{max(step - 2, 1):.1f}" height="{pass_height:.1f}" fill="{PASS_COLOUR}"/>'
            "</g>"
        )
    text = escape(label, quote=True)
    return (
        f'<svg class="outcomes" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="{text}">'
        f"<title>{text}</title>{''.join(parts)}</svg>"
    )


def _axes(days: Sequence[tuple[str, int, int]], peak: int, *, width: int, height: int) -> str:
    base = height - _BOTTOM
    first, last = (days[0][0], days[-1][0]) if days else ("", "")
    label = f'font-size="10" fill="{_AXIS_COLOUR}"'
    return (
        f'<g class="axis" stroke="{_AXIS_COLOUR}" stroke-width="1">'
        f'<line x1="{_LEFT}" y1="{_TOP}" x2="{_LEFT}" y2="{base}"/>'
        f'<line x1="{_LEFT}" y1="{base}" x2="{width}" y2="{base}"/></g>'
        f'<g class="axis-labels" font-family="sans-serif">'
        f'<text x="{_LEFT - 4}" y="{base}" text-anchor="end" {label}>0</text>'
        f'<text x="{_LEFT - 4}" y="{_TOP + 8}" text-anchor="end" {label}>{peak:,}</text>'
        f'<text x="{_LEFT}" y="{height - 4}" text-anchor="start" {label}>{escape(first)}</text>'
        f'<text x="{width}" y="{height - 4}" text-anchor="end" {label}>{escape(last)}</text>'
        f'<text x="4" y="{_TOP + (base - _TOP) / 2:.0f}" {label} '
        f'transform="rotate(-90 4 {_TOP + (base - _TOP) / 2:.0f})" text-anchor="middle" '
        f'dominant-baseline="hanging">runs</text></g>'
    )
