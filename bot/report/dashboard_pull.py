"""The dashboard's page for one pull request: every check and test the bot triaged on it,
with the whole evidence the sticky comment shortens or leaves out (its table shows a handful
of rows and links here).

Strings from repositories, logs and people go through `_text` (HTML-escaped, hidden
characters written out), as on the dashboard's other pages.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from urllib.parse import quote

from bot.report.comment import verdict_words
from bot.report.dashboard import page, page_of_test
from bot.report.models import CheckReport
from bot.report.text import reveal
from bot.triage.failures import match_key
from bot.triage.models import Decision

_SHORT_SHA = 7


def _text(value: str) -> str:
    return escape(reveal(value))


def page_of_pull(repo: str, number: int) -> str:
    return f"/{repo}/pull/{number}"


def pull_page(dashboard_url: str, repo: str, number: int) -> str:
    """The address of a PR's page on the dashboard served at `dashboard_url`."""
    return dashboard_url.rstrip("/") + quote(page_of_pull(repo, number))


def test_keys(reports: Sequence[CheckReport]) -> list[str]:
    """The tracking keys of the failed tests in `reports`, to look up their issues."""
    return sorted({match_key(d.failure.test_id) for r in reports for d in r.decisions if d.failure})


def render_pull(
    repo: str, number: int, reports: Sequence[CheckReport], tracking: Mapping[str, int]
) -> str:
    """`reports`: every attempt the bot triaged on the PR, newest first."""
    crumbs = [(repo, f"/{repo}"), (f"#{number}", page_of_pull(repo, number))]
    commits: dict[str, list[CheckReport]] = {}
    for report in reports:
        commits.setdefault(report.head_sha, []).append(report)
    body = "".join(
        f"<h2>Commit <code>{_text(sha[:_SHORT_SHA])}</code>"
        f"{' (newest)' if index == 0 else ''}</h2>"
        + "".join(_check(repo, report, tracking) for report in checks)
        for index, (sha, checks) in enumerate(commits.items())
    )
    intro = (
        f'<p class="muted">Every check the bot triaged on pull request #{number}, each attempt '
        "with every failed test and the whole evidence behind its verdict.</p>"
    )
    return page(f"{repo} #{number}", intro + body, crumbs=crumbs)


def _check(repo: str, report: CheckReport, tracking: Mapping[str, int]) -> str:
    name = _text(report.check_name)
    if report.html_url.startswith(("https://", "http://")):
        name = f'<a href="{escape(report.html_url, quote=True)}">{name}</a>'
    note = f"; {_text(report.rerun_note)}" if report.rerun_note else ""
    decisions = "".join(_decision(repo, report, d, tracking) for d in report.decisions)
    if not report.decisions:
        decisions = '<p class="muted">No failed test identified.</p>'
    return (
        f'<section class="check"><h3>{name}</h3><p class="muted">attempt {report.attempt:,}, '
        f"{_text(report.conclusion)}{note}; {_count(len(report.decisions), 'failure')}</p>"
        f"{decisions}</section>"
    )


def _decision(
    repo: str, report: CheckReport, decision: Decision, tracking: Mapping[str, int]
) -> str:
    failure = decision.failure
    title = "no test identified"
    facts: list[str] = []
    if failure is not None:
        key = match_key(failure.test_id)
        link = escape(page_of_test(repo, key), quote=True)
        title = f'<a href="{link}"><code>{_text(failure.test_id)}</code></a>'
        if key in tracking:
            facts.append(f"Tracking issue: #{tracking[key]:,}")
        if failure.location:
            facts.append(f"Location: <code>{_text(failure.location)}</code>")
    items = [item.text for item in decision.items] or [decision.evidence]
    facts += [f"Caveat: {_text(caveat)}" for caveat in decision.caveats]
    changed = ", ".join(f"<code>{_text(p)}</code>" for p in decision.matched_paths) or "none"
    footprint = ", ".join(
        f"<code>{_text(e.path)}</code> ({_text(e.reason)})" for e in decision.footprint
    )
    facts += [f"Changed paths in its footprint: {changed}", f"Footprint: {footprint or 'unknown'}"]
    message = f"<pre>{_text(failure.message)}</pre>" if failure and failure.message else ""
    return (
        f'<div class="decision"><h4>{title}: {escape(verdict_words(report, decision))} '
        f"(confidence: {escape(decision.confidence.value)})</h4>"
        f"<ul>{''.join(f'<li>{_text(text)}</li>' for text in items)}</ul>"
        f"<p>{'<br>'.join(facts)}</p>{message}</div>"
    )


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}" if number == 1 else f"{number:,} {noun}s"
