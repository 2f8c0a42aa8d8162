"""The dashboard's page of a repository's quarantined tests (pure): what is quarantined, whose
it is, since when and until when, and why."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from bot.report.dashboard import page, page_of_test
from bot.report.issue import day
from bot.report.text import reveal
from bot.triage.quarantine import Quarantine, Source


def render_quarantined(repo: str, on: Sequence[Quarantine]) -> str:
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
    rows = "".join(_row(repo, q) for q in sorted(on, key=lambda q: q.expires_at))
    return page(
        f"Quarantined tests in {repo}",
        '<p class="muted">Their failures do not fail the flaky-triage check unless related to '
        "the pull request; soonest to expire first.</p><table><thead><tr><th>Test</th>"
        "<th>Tracking issue</th><th>Owner</th><th>Since</th><th>Expires</th><th>By</th>"
        f'<th>Why</th></tr></thead><tbody id="quarantined">{rows}</tbody></table>{json_link}',
        crumbs=crumbs,
    )


def _row(repo: str, q: Quarantine) -> str:
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
        f"<td>{_text(q.reason)}</td></tr>"
    )


def _text(value: str) -> str:
    return escape(reveal(value))
