"""The check run as the merge gate: its title, conclusion and the part of its summary that
says what it let through and what holds it (pure)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.report.check_run import MAX_SUMMARY, MAX_TITLE, CheckRunReport
from bot.report.markdown import code_span, escape_inline, shorten
from bot.triage.gate import Block, Gate, Passage

_LISTED = 50  # rows per list; the rest counted
_TEST_LIMIT = 200


def gated(report: CheckRunReport, gate: Gate) -> CheckRunReport:
    """The check run's report with the gate's conclusion, title and account on top."""
    account = gate_text(gate)
    summary = account + ("\n\n" + report.summary if report.summary else "")
    return report.model_copy(
        update={
            "title": shorten(_title(gate), MAX_TITLE),
            "summary": shorten(summary, MAX_SUMMARY),
            "conclusion": gate.conclusion,
        }
    )


def _title(gate: Gate) -> str:
    through = (
        f"; {_count(len(gate.let_through), 'failure')} let through" if gate.let_through else ""
    )
    if gate.conclusion == "failure":
        return f"Blocked: {_count(len(gate.blocking), 'failure')} not cleared{through}"
    if gate.conclusion is None:
        return f"Waiting for {_count(len(gate.waiting), 'check')}{through}"
    return "Clear to merge" + through


def gate_text(gate: Gate) -> str:
    parts = ["### Merge gate"]
    if gate.blocking:
        parts.append("**Not cleared:**\n" + _rows(gate.blocking))
    if gate.waiting:
        parts.append("**Waiting for:**\n" + _rows(gate.waiting))
    if gate.let_through:
        parts.append("**Let through:**\n" + _rows(gate.let_through))
    if len(parts) == 1:
        parts.append("Every check of this commit passed.")
    return "\n\n".join(parts)


def _rows(items: Sequence[Block | Passage]) -> str:
    rows = [
        f"- {code_span(item.check_name)}"
        + (f" {code_span(shorten(item.test_id, _TEST_LIMIT))}" if item.test_id else "")
        + f": {escape_inline(item.why)}"
        for item in items[:_LISTED]
    ]
    if len(items) > _LISTED:
        rows.append(f"- and {len(items) - _LISTED:,} more")
    return "\n".join(rows)


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")
