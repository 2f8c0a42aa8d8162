"""The first lines of the sticky comment: what the author should do, one line per group.

The groups come in the order the author must act: failures this PR likely caused, then those
the bot could not judge, then those the base branch already has, then the infrastructure's,
then the flaky and unrelated ones, which ask nothing of the author. This is the shape of
Dr. CI's comment on PyTorch PRs ("NEW FAILURES", "BROKEN TRUNK", "FLAKY"), which maintainers
already know how to read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bot.report.groups import Row
from bot.report.markdown import code_span
from bot.triage.models import Verdict

RERUN_REQUESTED = "rerun requested"  # how the note of a rerun GitHub accepted begins
_PATHS_NAMED = 5
_ISSUES_NAMED = 5


def advice_lines(rows: Sequence[Row]) -> list[str]:
    """One Markdown list item per group that has failures, in the order to act on them."""
    lines: list[str] = []
    for verdicts, label, advise in _GROUPS:
        mine = [row for row in rows if row.verdict in verdicts]
        if mine:
            lines.append(f"- **{label}** ({_size(mine)}) — {advise(mine)}")
    return lines


def _size(rows: Sequence[Row]) -> str:
    tests = sum(len(row.tests) for row in rows)
    checks = len({(row.check.check_name, row.check.html_url) for row in rows if not row.tests})
    parts = [_count(tests, "failure")] if tests else []
    if checks:
        parts.append(_count(checks, "check") + (" with no test identified" if tests else ""))
    return " and ".join(parts)


def _related(rows: Sequence[Row]) -> str:
    paths: list[str] = []
    for row in rows:
        for decision in row.decisions:
            paths += [p for p in decision.matched_paths if p not in paths]
    if not paths:
        return "look at the failures below first."
    named = ", ".join(code_span(path) for path in paths[:_PATHS_NAMED])
    more = len(paths) - _PATHS_NAMED
    return f"look at these changed files first: {named}" + (
        f", and {more:,} more." if more > 0 else "."
    )


def _unknown(rows: Sequence[Row]) -> str:
    parts: list[str] = []
    if any(row.mass for row in rows):
        parts.append(
            "many tests failed at once in one job: look for the cause they share (a service "
            "that did not start, a setup step) before the tests themselves"
        )
    if any(not row.mass and row.tests and not row.flaky_unknown for row in rows):
        parts.append("the bot cannot tell whether this PR caused them: read their errors below")
    if any(not row.mass and row.flaky_unknown for row in rows):
        parts.append(
            "passed on rerun, so flaky, but the bot could not rule out the changes of this PR "
            "named below: look at them before merging"
        )
    if any(not row.tests for row in rows):
        parts.append("no failed test could be read from the job: open its log")
    return "; ".join(parts) + "."


def _broken_base(rows: Sequence[Row]) -> str:
    return "not your PR: the base branch fails the same way. Rebase once it is green."


def _infra(rows: Sequence[Row]) -> str:
    if all(_state(row) == "pending" for row in rows):
        return "not a test: a rerun was requested, nothing to do."
    return "not a test: rerun the job (`/flaky rerun`) once the runner or network is back."


def _not_yours(rows: Sequence[Row]) -> str:
    states = {_state(row) for row in rows}
    if states == {"passed"}:
        text = "nothing to do: the rerun passed."
    elif states <= {"passed", "pending"}:
        text = "nothing to do: a rerun was requested."
    elif "again" in states:
        text = "they failed again on rerun: try `/flaky rerun` once more, or ask a maintainer."
    else:
        text = "nothing points at this PR: `/flaky rerun` to run them again."
    issues = sorted({number for row in rows for number in row.tracking_issues})
    if issues:
        named = ", ".join(f"#{n}" for n in issues[:_ISSUES_NAMED])
        more = len(issues) - _ISSUES_NAMED
        text += f" Tracked in {named}" + (f" and {more:,} more." if more > 0 else ".")
    return text


def _state(row: Row) -> str:
    """Where the row's check stands with reruns: passed, again (failed again), pending, none."""
    check = row.check
    if check.conclusion == "success":
        return "passed"
    if check.attempt > 1:
        return "again"
    if (check.rerun_note or "").startswith(RERUN_REQUESTED):
        return "pending"
    return "none"


_GROUPS: tuple[tuple[frozenset[Verdict], str, Callable[[Sequence[Row]], str]], ...] = (
    (frozenset({Verdict.RELATED}), "Related to this PR", _related),
    (frozenset({Verdict.UNKNOWN}), "Not judged", _unknown),
    (frozenset({Verdict.BROKEN_BASE}), "Failing on the base branch too", _broken_base),
    (frozenset({Verdict.INFRA}), "Infrastructure", _infra),
    (
        frozenset({Verdict.FLAKY, Verdict.UNRELATED}),
        "Likely flaky or unrelated to this PR",
        _not_yours,
    ),
)


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}" if number == 1 else f"{number:,} {noun}s"
