"""The dashboard's page of a repository's quarantined tests (pure): what is quarantined, whose
it is, since when and until when, why, and the CI time the gate saved by letting their
failures through."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from bot.report.dashboard import page, page_of_test
from bot.report.issue import day
from bot.report.text import reveal
from bot.triage.comparable import duration
from bot.triage.gate_savings import Savings
from bot.triage.quarantine import Quarantine, Source


def render_quarantined(repo: str, on: Sequence[Quarantine], saved: Savings) -> str:
    crumbs = [(repo, f"/{repo}"), ("quarantined", f"/{repo}/quarantined")]
    json_link = (
        f'<p><a href="/{escape(repo, True)}/quarantined.json">As JSON</a>, for test runners.</p>'
    )
    if not on:
        return page(
            f"Quarantined tests in {repo}",
            f'<p class="muted">No test is quarantined.</p>{json_link}',
            crumbs=crumbs,
        )
    rows = "".join(_row(repo, q, saved) for q in sorted(on, key=lambda q: q.expires_at))
    return page(
        f"Quarantined tests in {repo}",
        '<p class="muted">Their failures do not fail the flaky-triage check unless related to '
        "the pull request; soonest to expire first.</p>"
        f'<p id="saved">CI time saved: {_saved(saved)}. {SAVED_NOTE}</p>'
        "<table><thead><tr><th>Test</th>"
        "<th>Tracking issue</th><th>Owner</th><th>Since</th><th>Expires</th><th>By</th>"
        "<th>Why</th><th>Reruns saved</th></tr></thead>"
        f'<tbody id="quarantined">{rows}</tbody></table>{json_link}',
        crumbs=crumbs,
    )


SAVED_NOTE = (
    "A failed check whose every failure the gate let through, since the quarantine began, "
    "needed no rerun to merge; each is estimated at the failed job's own duration, as "
    "recorded from GitHub's workflow_job events."
)


def _saved(saved: Savings) -> str:
    """`3 reruns, 12 min`, saying how many had no recorded duration."""
    count = len(saved.reruns)
    words = f"{count:,} rerun" + ("" if count == 1 else "s")
    if count == 0:
        return words
    if saved.unmeasured == count:
        return f"{words}, duration not recorded"
    words += f", {duration(saved.seconds)}"
    if saved.unmeasured:
        words += f" ({saved.unmeasured:,} more without a recorded duration)"
    return words


def _row(repo: str, q: Quarantine, saved: Savings) -> str:
    href = escape(page_of_test(repo, q.test_key), True)
    test = f'<a href="{href}"><code>{_text(q.test_id)}</code></a>'
    issue = (
        f'<a href="https://github.com/{escape(repo, True)}/issues/{q.issue_number}">'
        f"#{q.issue_number}</a>"
        if q.issue_number
        else ""
    )
    by = "automatically" if q.source is Source.AUTO else _text(q.by)
    return (
        f"<tr><td>{test}</td><td>{issue}</td><td><code>{_text(q.owner)}</code></td>"
        f"<td>{day(q.since)}</td><td>{day(q.expires_at)}</td><td>{by}</td>"
        f"<td>{_text(q.reason)}</td><td>{_saved(saved.of_test(q.test_key))}</td></tr>"
    )


def _text(value: str) -> str:
    return escape(reveal(value))
