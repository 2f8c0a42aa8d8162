"""The dashboard's pages: server-rendered HTML with inline SVG, readable without JavaScript.

Every string that came from a repository, a log or a person is shown through `_text`:
HTML-escaped, with bidi controls and invisible characters written out (`<U+202E>`), so a
hostile test name can neither run script nor display reversed or as another's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from html import escape
from typing import Protocol
from urllib.parse import quote

from bot.report.comment import NOT_RULED_OUT_WORDS, VERDICT_WORDS
from bot.report.flake_lines import cause_words, flagged, run_words, usual_of, where_words
from bot.report.flaky_tests import RepoSummary, TestSummary, day_label, owner_name
from bot.report.svg import outcome_chart, sparkline
from bot.report.text import reveal
from bot.triage.flake_context import Explanation, FailedRun, explain
from bot.triage.models import Occurrence, RunRecord, Verdict
from bot.triage.run_context import RunContext, UsualDuration
from bot.triage.stats import describe_rate

_STYLE = """
body{font:14px/1.5 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;
color:#1f2328}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.35rem .6rem;
border-bottom:1px solid #d0d7de;vertical-align:top}th{background:#f6f8fa}
code{font-size:90%;background:#f6f8fa;padding:.1rem .3rem;border-radius:4px;word-break:break-all}
.muted{color:#59636e}nav{margin-bottom:1rem}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;padding:.5rem;overflow:auto}
.decision{border-left:3px solid #d0d7de;padding-left:.75rem;margin:1rem 0;overflow-wrap:anywhere}
"""
_OCCURRENCES_SHOWN = 50


class DeadLetter(Protocol):
    """What the dead-letter page shows of a delivery given up on (the store's `Delivery`)."""

    @property
    def id(self) -> str: ...
    @property
    def event(self) -> str: ...
    @property
    def action(self) -> str | None: ...
    @property
    def attempts(self) -> int: ...
    @property
    def received_at(self) -> float: ...
    @property
    def finished_at(self) -> float | None: ...
    @property
    def last_error(self) -> str | None: ...


def _text(value: str) -> str:
    return escape(reveal(value))


def page_of_test(repo: str, test_key: str) -> str:
    return f"/{repo}/tests/{quote(test_key, safe='')}"


def page(title: str, body: str, *, crumbs: Sequence[tuple[str, str]] = ()) -> str:
    nav = " / ".join(
        f'<a href="{escape(href, quote=True)}">{_text(text)}</a>' for text, href in crumbs
    )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_text(title)} · flaky-triage</title><style>{_STYLE}</style></head><body>"
        f'<nav><a href="/">flaky-triage</a>{" / " + nav if nav else ""}</nav>'
        f"<h1>{_text(title)}</h1>{body}</body></html>\n"
    )


_DEAD_LETTERS_LINK = '<p><a href="/deliveries">Dead-lettered deliveries</a></p>'


def render_index(repos: Sequence[RepoSummary]) -> str:
    if not repos:
        return page(
            "Repositories",
            f'<p class="muted">No check runs recorded yet.</p>{_DEAD_LETTERS_LINK}',
        )
    rows = "".join(
        f'<tr><td><a href="/{escape(r.repo, quote=True)}">{_text(r.repo)}</a></td>'
        f"<td>{r.failed_tests:,}</td><td>{r.runs:,}</td><td>{day_label(r.last_run)}</td></tr>"
        for r in repos
    )
    return page(
        "Repositories",
        "<table><thead><tr><th>Repository</th><th>Tests that failed</th><th>Runs recorded</th>"
        f"<th>Last run</th></tr></thead><tbody>{rows}</tbody></table>{_DEAD_LETTERS_LINK}",
    )


def render_repo(
    repo: str, tests: Sequence[TestSummary], *, days: int, owner: str | None = None
) -> str:
    """The repository's ranking; `owner`: only that owner's tests were kept (`owned_by`)."""
    crumbs = [(repo, f"/{repo}")]
    scope = ""
    if owner is not None:
        scope = (
            f' owned by <code>{_text(owner_name(owner))}</code> (<a href="/{escape(repo, True)}">'
            "all tests</a>)"
        )
    if not tests:
        return page(
            f"Flaky tests in {repo}",
            f'<p class="muted">No test{scope} failed in the last {days} days.</p>',
            crumbs=crumbs,
        )
    rows = "".join(_test_row(repo, rank, test, days) for rank, test in enumerate(tests, 1))
    return page(
        f"Flaky tests in {repo}",
        f'<p class="muted">Tests{scope} that failed in the last {days} days, most pull '
        "requests hit first.</p><table><thead><tr><th>#</th><th>Test</th><th>PRs hit</th>"
        f"<th>Failure rate</th><th>Last seen</th><th>Daily failures ({days} days)</th>"
        "<th>Tracking issue</th><th>Owners</th></tr></thead>"
        f'<tbody id="flaky-tests">{rows}</tbody></table>',
        crumbs=crumbs,
    )


def _owner_links(repo: str, owners: Sequence[str]) -> str:
    """Each owner, linked to the ranking of their tests; named without `@`."""
    if not owners:
        return '<span class="muted">none</span>'
    return ", ".join(
        f'<a href="/{escape(repo, True)}?owner={quote(owner_name(o), safe="")}">'
        f"<code>{_text(owner_name(o))}</code></a>"
        for o in owners
    )


def render_test(
    repo: str,
    test: TestSummary,
    occurrences: Sequence[Occurrence],
    chart_days: Sequence[tuple[str, int, int]],
    runs: Sequence[RunRecord] = (),
    *,
    contexts: Mapping[int, RunContext] | None = None,
    run_contexts: Sequence[RunContext] = (),
    usual: Sequence[UsualDuration] = (),
) -> str:
    """`runs`: the repository's, from which an occurrence's later attempts are read;
    `contexts`: each failed job's run context, by check run id; `run_contexts`: every
    recorded run of the test's checks; `usual`: each check's usual duration."""
    crumbs = [(repo, f"/{repo}"), (test.test_id, page_of_test(repo, test.test_key))]
    where = [f"{test.prs:,} pull request{'s' if test.prs != 1 else ''}"] + [
        f"<code>{_text(branch)}</code>" for branch in test.branches
    ]
    summary = (
        f"<p><code>{_text(test.test_id)}</code> {escape(describe_rate(test.rate))}; "
        f"failed on {', '.join(where)}; first seen {day_label(test.first_seen)}, "
        f"last seen {day_label(test.last_seen)}.</p>"
    )
    if test.owners:
        summary += f'<p id="owners">Owners (CODEOWNERS): {_owner_links(repo, test.owners)}.</p>'
    if test.rate.flip_commits:
        summary += (
            f"<p>Flipped between pass and fail {test.rate.flips:,} time(s) on "
            f"{test.rate.flip_commits:,} commit(s) run more than once.</p>"
        )
    chart = outcome_chart(
        chart_days,
        label=f"Runs of its checks per day: {sum(f for _, f, _ in chart_days):,} failed, "
        f"{sum(p for _, _, p in chart_days):,} passed",
    )
    modes = "".join(
        f"<tr><td><code>{_text(m.signature or m.message or '(no message)')}</code></td>"
        f"<td>{_text(m.location or '')}</td><td>{m.count:,}</td>"
        f"<td>{day_label(m.last_seen)}</td></tr>"
        for m in test.modes
    )
    contexts = contexts or {}
    explained, flags = _explained(occurrences, contexts, run_contexts, usual)
    summary += f'<p id="cause">{_text(cause_words(explained.cause))}.</p>'
    if contexts or run_contexts:
        summary += (
            f'<p id="where">Where failures concentrate: {_text(where_words(explained.where))}.</p>'
        )
    shown = sorted(occurrences, key=lambda o: o.at, reverse=True)[:_OCCURRENCES_SHOWN]
    rows = "".join(
        _occurrence_row(repo, o, occurrence_words(o, runs))
        + (_run_cell(o, contexts, usual, flags) if contexts else "")
        + "</tr>"
        for o in shown
    )
    older = len(occurrences) - len(shown)
    more = f'<p class="muted">and {older:,} older.</p>' if older > 0 else ""
    return page(
        test.test_id,
        summary
        + f"<h2>Outcomes over time</h2>{chart}"
        + "<h2>Failure modes</h2><table><thead><tr><th>Signature</th><th>Location</th>"
        + f'<th>Count</th><th>Last seen</th></tr></thead><tbody id="modes">{modes}</tbody></table>'
        + "<h2>Occurrences</h2><table><thead><tr><th>When</th><th>Where</th><th>Commit</th>"
        + "<th>Check</th><th>Attempt</th><th>Verdict</th>"
        + ("<th>Run</th>" if contexts else "")
        + "</tr></thead>"
        + f'<tbody id="occurrences">{rows}</tbody></table>{more}',
        crumbs=crumbs,
    )


def render_login(error: str | None = None) -> str:
    problem = f'<p role="alert">{escape(error)}</p>' if error else ""
    return page(
        "Sign in",
        f'{problem}<form method="post" action="/login"><label>Dashboard token '
        '<input type="password" name="token" autocomplete="current-password" required>'
        '</label> <button type="submit">Sign in</button></form>',
    )


def chart_days(
    occurrences: Sequence[Occurrence], runs: Sequence[RunRecord], now: float, days: int
) -> list[tuple[str, int, int]]:
    """(day, failed, passed) runs of the checks the test failed in, per day, oldest first."""
    checks = {o.check_name for o in occurrences}
    failed = {o.check_run_id for o in occurrences}
    totals: dict[str, list[int]] = {
        day_label(now - back * 86_400.0): [0, 0] for back in range(days - 1, -1, -1)
    }
    for run in runs:
        counts = totals.get(day_label(run.completed_at))
        if run.check_name in checks and counts is not None:
            counts[0 if run.check_run_id in failed else 1] += 1
    return [(day, fails, passes) for day, (fails, passes) in totals.items()]


def _test_row(repo: str, rank: int, test: TestSummary, days: int) -> str:
    issue = (
        f'<a href="https://github.com/{escape(repo, quote=True)}/issues/{test.tracking_issue}">'
        f"#{test.tracking_issue}</a>"
        if test.tracking_issue
        else '<span class="muted">none</span>'
    )
    spark = sparkline(
        test.daily, label=f"{sum(test.daily):,} failures over the last {days} days, by day"
    )
    return (
        f"<tr><td>{rank}</td>"
        f'<td><a href="{escape(page_of_test(repo, test.test_key), quote=True)}">'
        f"<code>{_text(test.test_id)}</code></a></td><td>{test.prs:,}</td>"
        f"<td>{escape(describe_rate(test.rate))}</td><td>{day_label(test.last_seen)}</td>"
        f"<td>{spark}</td><td>{issue}</td><td>{_owner_links(repo, test.owners)}</td></tr>"
    )


def occurrence_words(o: Occurrence, runs: Sequence[RunRecord]) -> str:
    """The occurrence's verdict in the PR comment's words (report/comment.py), as the comment
    says it now: a failure whose check then passed on a rerun of the same commit is the
    "likely flaky" the comment then calls it, not the "unrelated" decided before the rerun."""
    try:
        verdict = Verdict(o.verdict)
    except ValueError:
        return o.verdict
    rerun_passed = any(
        r.check_name == o.check_name
        and r.head_sha == o.head_sha
        and r.attempt > o.attempt
        and r.conclusion == "success"
        for r in runs
    )
    if rerun_passed and verdict == Verdict.UNRELATED:
        return VERDICT_WORDS[Verdict.FLAKY]
    if rerun_passed and verdict == Verdict.UNKNOWN:
        return NOT_RULED_OUT_WORDS
    return VERDICT_WORDS[verdict]


def _occurrence_row(repo: str, o: Occurrence, verdict: str) -> str:
    if o.pr_number is not None:
        where = (
            f'<a href="https://github.com/{escape(repo, quote=True)}/pull/{o.pr_number}">'
            f"#{o.pr_number}</a>"
        )
    else:
        where = f"<code>{_text(o.branch or 'no branch')}</code>"
    check = (
        f'<a href="{escape(o.html_url, quote=True)}">{_text(o.check_name)}</a>'
        if o.html_url.startswith("https://")
        else _text(o.check_name)
    )
    return (
        f"<tr><td>{day_label(o.at)}</td><td>{where}</td><td><code>{escape(o.head_sha[:7])}"
        f"</code></td><td>{check}</td><td>{o.attempt}</td><td>{escape(verdict)}</td>"
    )


def _run_cell(
    o: Occurrence,
    contexts: Mapping[int, RunContext],
    usual: Sequence[UsualDuration],
    flags: Mapping[int, str | None],
) -> str:
    words = run_words(contexts.get(o.check_run_id), usual_of(usual, o.check_name))
    return f"<td>{_text(flagged(words, flags.get(o.check_run_id)))}</td>"


def _explained(
    occurrences: Sequence[Occurrence],
    contexts: Mapping[int, RunContext],
    run_contexts: Sequence[RunContext],
    usual: Sequence[UsualDuration],
) -> tuple[Explanation, dict[int, str | None]]:
    """The explanation of the test's failures, one failed run per job (check run)."""
    jobs: dict[int, Occurrence] = {}
    for o in occurrences:
        jobs.setdefault(o.check_run_id, o)
    failed = [
        FailedRun(check_name=o.check_name, message=o.message, context=contexts.get(run_id))
        for run_id, o in jobs.items()
    ]
    explained = explain(failed, run_contexts, usual)
    return explained, dict(zip(jobs, explained.not_comparable, strict=True))


def render_dead_letters(
    dead: Sequence[tuple[DeadLetter, str | None]], *, hidden: int, limit: int
) -> str:
    """Deliveries given up on, newest first, each with its repository (None: unknown), the
    error that stopped it and how to replay it. `hidden`: left out (private, or no
    repository) because the reader has not signed in."""
    note = (
        f'<p class="muted">{hidden:,} more (of private repositories, or about the installation) '
        "need the dashboard token.</p>"
        if hidden
        else ""
    )
    if not dead:
        return page(
            "Dead-lettered deliveries",
            f'<p class="muted">None: every delivery was handled or is still being tried.</p>{note}',
            crumbs=[("deliveries", "/deliveries")],
        )
    rows = "".join(_dead_row(delivery, repo) for delivery, repo in dead)
    more = (
        f'<p class="muted">The newest {limit:,} are shown; <code>flakybot deliveries --failed '
        "--limit N</code> lists more.</p>"
        if len(dead) >= limit
        else ""
    )
    return page(
        "Dead-lettered deliveries",
        '<p class="muted">Webhook deliveries the bot gave up on, newest first. Fix the cause, '
        "then replay one with <code>flakybot deliveries --replay ID</code>; they are deleted "
        "<code>DELIVERY_RETENTION_DAYS</code> after they failed.</p>"
        "<table><thead><tr><th>Failed</th><th>Delivery</th><th>Event</th><th>Repository</th>"
        f'<th>Attempts</th><th>Error</th></tr></thead><tbody id="dead-letters">{rows}</tbody>'
        f"</table>{more}{note}",
        crumbs=[("deliveries", "/deliveries")],
    )


def _dead_row(delivery: DeadLetter, repo: str | None) -> str:
    event = f"{delivery.event}.{delivery.action}" if delivery.action else delivery.event
    at = delivery.finished_at if delivery.finished_at is not None else delivery.received_at
    when = datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC")
    where = _text(repo) if repo else '<span class="muted">none</span>'
    return (
        f"<tr><td>{when}</td><td><code>{_text(delivery.id)}</code></td><td>{_text(event)}</td>"
        f"<td>{where}</td>"
        f"<td>{delivery.attempts}</td>"
        f'<td><code style="white-space:pre-wrap">{_text(delivery.last_error or "")}</code></td>'
        "</tr>"
    )
