"""Render the one sticky comment the bot keeps on a pull request.

Layout: hidden marker, a headline with the outcome and counts, one line of advice per
group of verdicts in the order the author must act (`advice.py`), a table of at most
ROWS_SHOWN rows (most serious verdict first; the failures of one job that share a verdict
and an error are one row, `groups.py`) with the evidence shortened, one collapsed section
of details per row with the evidence whole, a line counting the rows left out and linking
the dashboard's page for the PR, one collapsed section for earlier commits, a footer with
the commands, the commit described and any problem with the repository's settings. The
text is a pure function of the input, so the bot can skip the edit when nothing changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from urllib.parse import quote

from bot.report.advice import RERUN_REQUESTED as RERUN_REQUESTED  # read from here too
from bot.report.advice import advice_lines
from bot.report.flake_lines import cause_line, flagged, run_words
from bot.report.groups import Item, Row, flaky_not_ruled_out, rows_of
from bot.report.markdown import (
    code_span,
    escape_html,
    escape_inline,
    fenced_block,
    neutralise,
    shorten,
)
from bot.report.models import CheckReport, CommentInput
from bot.report.text import grapheme_prefix
from bot.triage.comparable import Peers, not_comparable
from bot.triage.footprint import (
    REASON_IMPORTED,
    REASON_RUNS,
    describe_chain,
    entry_contains,
)
from bot.triage.models import Decision, FootprintEntry, PastOccurrence, Verdict
from bot.triage.stats import describe_flips, describe_rate
from bot.triage.suspected_cause import FailureText, suspect
from bot.triage.verdict import NO_TEST_IDENTIFIED, summarise

MARKER = "<!-- flaky-triage:sticky-comment -->"
MAX_LENGTH = 65_536  # GitHub refuses longer comment bodies
COMMANDS = ("/flaky rerun", "/flaky status", "/flaky help", "/flaky wrong", "/flaky track")

FLAKY_PHRASE = "likely flaky, unrelated to this PR"
RELATED_PHRASE = "related to this PR"
# An unknown failure that passed on rerun: flaky, but never "unrelated to this PR".
NOT_RULED_OUT_PHRASE = "flaky, but this PR's changes could not be ruled out"
NOT_RULED_OUT_WORDS = "flaky, change not ruled out"

VERDICT_WORDS: dict[Verdict, str] = {
    Verdict.RELATED: "related",
    Verdict.UNKNOWN: "unknown",
    Verdict.BROKEN_BASE: "fails on the base branch too",
    Verdict.INFRA: "infrastructure",
    Verdict.UNRELATED: "unrelated",
    Verdict.FLAKY: "likely flaky",
}
# Table order: what needs the author's attention first.
_SEVERITY = {verdict: rank for rank, verdict in enumerate(VERDICT_WORDS)}

_SHORT_SHA = 7
_NAME_LIMIT = 120
_TEST_LIMIT = 200
_EVIDENCE_LIMIT = 400
_CELL_EVIDENCE_LIMIT = 160  # the table's cell: the details say it whole
_DETAILS_EVIDENCE_LIMIT = 2000  # a bound against hostile text, not a cut for reading
_ERROR_LIMIT = 80  # the shared error of a row of several tests
ROWS_SHOWN = 8  # table rows; the rest are counted and on the dashboard
_TESTS_LISTED = 50  # test ids in the details of a row of several tests
_ISSUES_IN_CELL = 3
_MESSAGE_CHARS = 3000
_MESSAGE_LINES = 30
_FOOTPRINT_LISTED = 12
_CHAINS_LISTED = 3  # import chains shown per failure
IMPORT_REASONS = frozenset({REASON_IMPORTED, REASON_RUNS})
_NOTE_RESERVE = 400  # room kept for the "left out" note while fitting the cap
_ITEMS_LISTED = 8
_PROBLEMS_LISTED = 5
# Everything else is percent-encoded: it could end the link or the table cell.
_URL_SAFE = ":/?#&=%+,;@$*'"


def render_comment(inp: CommentInput) -> str:
    """The full comment body, at most MAX_LENGTH characters."""
    rows = rows_of(_sorted_items(inp.checks))
    old_rows = rows_of(_items(inp.outdated))
    advice = advice_lines(rows)
    head = f"{MARKER}\n{headline(inp.checks, inp.passing_checks)}\n"
    if advice:
        head += "\n" + "\n".join(advice) + "\n"
    footer = _settings_line(inp.settings_from) + _footer(
        inp.head_sha, inp.config_problems, inp.dashboard_url
    )
    more = _more_note(rows[ROWS_SHOWN:], old_rows[ROWS_SHOWN:], inp.dashboard_url)
    shown = rows[:ROWS_SHOWN]
    table = [_row(row) for row in shown]
    details = [_details(row, inp.dashboard_url) for row in shown if row.tests]
    outdated = [_outdated_row(row) for row in old_rows[:ROWS_SHOWN]]

    budget = MAX_LENGTH - len(head) - len(more) - len(footer) - _NOTE_RESERVE
    kept_rows, budget = _fit(table, _TABLE_HEADER, budget)
    kept_details, budget = _fit(details, "", budget)
    kept_outdated, budget = _fit(outdated, _OUTDATED_OPEN + _OUTDATED_CLOSE, budget)

    parts = [head]
    if kept_rows:
        parts.append("\n" + _TABLE_HEADER + "".join(kept_rows))
    if more:
        parts.append("\n" + more)
    parts.extend("\n" + block for block in kept_details)
    if kept_outdated:
        parts.append("\n" + _OUTDATED_OPEN + "".join(kept_outdated) + _OUTDATED_CLOSE)
    note = _left_out_note(
        ("table rows", len(kept_rows), len(table)),
        ("failure details", len(kept_details), len(details)),
        ("outdated results", len(kept_outdated), len(outdated)),
    )
    if note:
        parts.append("\n" + note + "\n")
    parts.append(footer)
    return "".join(parts)


def _more_note(current: Sequence[Row], outdated: Sequence[Row], dashboard_url: str) -> str:
    """What the table leaves out, counted by verdict, and where to read all of it."""
    said: list[str] = []
    if current:
        counts: dict[Verdict, int] = {}
        for row in current:
            counts[row.verdict] = counts.get(row.verdict, 0) + max(len(row.tests), 1)
        by_verdict = ", ".join(f"{n:,} {VERDICT_WORDS[v]}" for v, n in counts.items())
        said.append(f"{_count(len(current), 'more row')} not shown ({by_verdict})")
    if outdated:
        said.append(f"{_count(len(outdated), 'more outdated row')} not shown")
    if not said:
        return ""
    where = f": every result, with its evidence, is on [the dashboard]({_url(dashboard_url)})"
    return f"_{'; '.join(said)}{where if dashboard_url else ''}._\n"


def headline(checks: Sequence[CheckReport], passing_checks: int = 0) -> str:
    """The outcome in words, with counts, in bold."""
    if not checks:
        if passing_checks:
            return f"**All checks pass ({_count(passing_checks, 'check')})**"
        return "**No failed checks on this commit**"
    items = _items(checks)
    tests = [item for item in items if item.decision.failure is not None]
    testless = [item for item in items if item.decision.failure is None]
    all_pass = all(check.conclusion == "success" for check in checks)
    counts = summarise(item.decision for item in tests)
    related = counts[Verdict.RELATED]
    if all_pass and not related:
        if not tests:
            return "**All checks pass after rerun**"
        # Say what the passing rerun showed, not only that the checks are green now.
        return f"**All checks pass after rerun — {'; '.join(_test_parts(tests))}**"

    parts: list[str] = []
    if tests:
        subject = _count(len(tests), "failure")
        if related:
            parts.append(_share(related, len(tests), RELATED_PHRASE))
            if all_pass:
                parts.append("all checks pass after rerun")
        else:
            parts.extend(_test_parts(tests))
        if testless:
            parts.append(f"{_count(_check_count(testless), 'more check')} with no test identified")
    else:
        checks_failed = _check_count(testless)
        subject = f"{_count(checks_failed, 'check')} failed"
        for verdict in VERDICT_WORDS:
            matching = [item for item in testless if item.decision.verdict == verdict]
            if matching:
                whole, share = _TESTLESS_PHRASES.get(verdict, (VERDICT_WORDS[verdict],) * 2)
                count = _check_count(matching)
                parts.append(whole if count == checks_failed else f"{count:,} {share}")
    return f"**{subject} — {'; '.join(parts)}**"


# (said of all failed checks, said of some of them)
_TESTLESS_PHRASES = {
    Verdict.UNKNOWN: ("no failed test identified", "with no failed test identified"),
    Verdict.INFRA: ("infrastructure failure, not a test", "infrastructure, not a test"),
}


def _test_parts(tests: Sequence[Item]) -> list[str]:
    total = len(tests)
    counts = summarise(item.decision for item in tests)
    passed = sum(flaky_not_ruled_out(item.check, item.decision) for item in tests)
    counts[Verdict.UNKNOWN] -= passed
    parts = [
        _share(count, total, phrase)
        for count, phrase in (
            (counts[Verdict.BROKEN_BASE], "failing on the base branch too"),
            (counts[Verdict.INFRA], "infrastructure failure"),
            (counts[Verdict.UNKNOWN], "could not be classified"),
            (passed, NOT_RULED_OUT_PHRASE),
            (counts[Verdict.FLAKY], FLAKY_PHRASE),
        )
        if count
    ]
    unrelated = [item for item in tests if item.decision.verdict == Verdict.UNRELATED]
    if unrelated:
        states = sorted({state for item in unrelated if (state := _rerun_state(item.check))})
        suffix = f" ({', '.join(states)})" if states else ""
        parts.append(_share(len(unrelated), total, "unrelated to this PR") + suffix)
    return parts


def verdict_words(check: CheckReport, decision: Decision) -> str:
    """The verdict as the table and details name it."""
    if flaky_not_ruled_out(check, decision):
        return NOT_RULED_OUT_WORDS
    return VERDICT_WORDS[decision.verdict]


def _rerun_state(check: CheckReport) -> str | None:
    if check.conclusion == "success":
        return None
    if check.attempt > 1:
        return "failed again on rerun"
    # Only a rerun GitHub accepted is pending; other notes say why there is none.
    requested = (check.rerun_note or "").startswith(RERUN_REQUESTED)
    return "rerun pending" if requested else None


def _items(checks: Iterable[CheckReport]) -> list[Item]:
    """Every decision with its check; a failed check with none counts as unknown."""
    items: list[Item] = []
    for check in checks:
        decisions = check.decisions
        if not decisions and check.conclusion != "success":
            decisions = [
                Decision(failure=None, verdict=Verdict.UNKNOWN, evidence=NO_TEST_IDENTIFIED)
            ]
        items.extend(Item(check, decision) for decision in decisions)
    return items


def _sorted_items(checks: Iterable[CheckReport]) -> list[Item]:
    # Sorted, not in arrival order: concurrent handlers may report checks in any
    # order, and the same results should give the same text.
    return sorted(
        _items(checks),
        key=lambda item: (
            _SEVERITY[item.decision.verdict],
            item.check.check_name,
            _test_id(item.decision),
            item.check.html_url,
        ),
    )


_TABLE_HEADER = (
    "| Check | Test | Verdict | Evidence | Tracking |\n| --- | --- | --- | --- | --- |\n"
)
_OUTDATED_OPEN = (
    "<details>\n<summary>Outdated (earlier commits)</summary>\n\n"
    "| Commit | Check | Test | Verdict |\n| --- | --- | --- | --- |\n"
)
_OUTDATED_CLOSE = "\n</details>\n"


def _row(row: Row) -> str:
    return (
        f"| {_check_link(row.check)} | {_tests_cell(row)} "
        f"| {verdict_words(row.check, row.lead)} "
        f"| {_row_evidence(row)} "
        f"| {_issues_cell(row)} |\n"
    )


def _tests_cell(row: Row) -> str:
    return f"{len(row.tests):,} tests" if row.grouped else _test_cell(row.lead)


def _row_evidence(row: Row) -> str:
    evidence = escape_inline(shorten(row.lead.evidence, _CELL_EVIDENCE_LIMIT))
    if not row.grouped:
        return evidence
    said = "mass failure, not judged test by test" if row.mass else evidence
    return f"{len(row.tests):,} tests failed with {_error_span(row.lead)} — {said}"


def _error_span(decision: Decision) -> str:
    """The error a row's tests share: the first line of the first one's message."""
    failure = decision.failure
    assert failure is not None  # rows of several tests are made of failures
    lines = failure.message.strip().splitlines()
    error = lines[0] if lines else failure.signature
    return neutralise(code_span(shorten(error, _ERROR_LIMIT), in_table=True))


def _issues_cell(row: Row) -> str:
    issues = row.tracking_issues
    named = ", ".join(f"#{n}" for n in issues[:_ISSUES_IN_CELL])
    more = len(issues) - _ISSUES_IN_CELL
    return named + (f" +{more:,}" if more > 0 else "")


def _outdated_row(row: Row) -> str:
    sha = escape_inline(row.check.head_sha[:_SHORT_SHA])
    return (
        f"| {sha} | {_check_link(row.check)} | {_tests_cell(row)} "
        f"| {VERDICT_WORDS[row.verdict]} |\n"
    )


def _details(row: Row, dashboard_url: str) -> str:
    if row.grouped:
        return _group_details(row, dashboard_url)
    return _test_details(Item(row.check, row.lead))


def _group_details(row: Row, dashboard_url: str) -> str:
    """One section for the tests of a row: what they share once, then every test id."""
    lead = row.lead
    tests = row.tests
    words = verdict_words(row.check, lead)
    summary = (
        f"{len(tests):,} tests in {escape_html(shorten(row.check.check_name, _NAME_LIMIT))}: "
        f"{words}"
    )
    lines = [
        f"- **Verdict:** {words} (confidence: {lead.confidence.value})",
        _evidence(lead).replace("**Evidence:**", "**Evidence** (the first test's):", 1),
    ]
    if row.tracking_issues:
        lines.append(f"- **Tracking issues:** {', '.join(f'#{n}' for n in row.tracking_issues)}")
    paths = sorted({path for d in row.decisions for path in d.matched_paths})
    if paths:
        named = [code_span(path) for path in paths[:_FOOTPRINT_LISTED]]
        lines.append(f"- **Changed paths in their footprints:** {_joined(named, len(paths))}")
    if row.check.rerun_note:
        lines.append(f"- **Rerun:** {escape_inline(shorten(row.check.rerun_note, _NAME_LIMIT))}")
    listed = [f"  - {code_span(shorten(test, _TEST_LIMIT))}" for test in tests[:_TESTS_LISTED]]
    more = len(tests) - _TESTS_LISTED
    if more > 0:
        where = f" (every one on [the dashboard]({_url(dashboard_url)}))" if dashboard_url else ""
        listed.append(f"  - and {more:,} more{where}")
    lines.append(f"- **The {len(tests):,} tests:**\n" + "\n".join(listed))
    return (
        f"<details>\n<summary>{summary}</summary>\n\n"
        + "\n".join(lines)
        + "\n"
        + _excerpt_block(lead)
        + "\n</details>\n"
    )


def _excerpt_block(decision: Decision) -> str:
    failure = decision.failure
    if failure is None or not failure.message.strip():
        return ""
    # Code blocks do not ping or link today; neutralised anyway so a change in GitHub's
    # renderer cannot turn a log line into a notification (after the block is made, which
    # shows the log's own zero-width spaces).
    return "\n" + neutralise(fenced_block(_excerpt(failure.message))) + "\n"


def _test_details(item: Item) -> str:
    decision = item.decision
    failure = decision.failure
    assert failure is not None  # only failures get a details section
    words = verdict_words(item.check, decision)
    summary = (
        f"{escape_html(shorten(failure.name or failure.test_id, _TEST_LIMIT))} in "
        f"{escape_html(shorten(item.check.check_name, _NAME_LIMIT))}: {words}"
    )
    lines = [
        f"- **Test:** {code_span(shorten(failure.test_id, _TEST_LIMIT))}",
        f"- **Verdict:** {words} (confidence: {decision.confidence.value})",
        _evidence(decision),
    ]
    if decision.caveats:
        caveats = "; ".join(escape_inline(shorten(c, _EVIDENCE_LIMIT)) for c in decision.caveats)
        lines.append(f"- **Caveats:** {caveats}")
    if decision.rate is not None:
        rate = describe_rate(decision.rate)
        flips = describe_flips(decision.rate)
        lines.append(f"- **Failure rate:** {rate}" + (f"; {flips}" if flips else ""))
    if decision.history:
        lines.append(f"- **Seen before:** {_history(decision.history)}")
    if decision.tracking_issue is not None:
        lines.append(f"- **Tracking issue:** #{decision.tracking_issue}")
    lines += _import_chains(decision)
    lines += [
        f"- **Changed paths in its footprint:** {_changed_paths(decision)}",
        f"- **Footprint:** {_footprint(decision.footprint)}",
    ]
    if failure.location:
        lines.append(f"- **Location:** {code_span(shorten(failure.location, _TEST_LIMIT))}")
    if item.check.rerun_note:
        lines.append(f"- **Rerun:** {escape_inline(shorten(item.check.rerun_note, _NAME_LIMIT))}")
    lines += _flake_lines(item.check, failure.message)
    return (
        f"<details>\n<summary>{summary}</summary>\n\n"
        + "\n".join(lines)
        + "\n"
        + _excerpt_block(decision)
        + "\n</details>\n"
    )


def _flake_lines(check: CheckReport, message: str) -> list[str]:
    """The job's run (flagged when unlike its check's usual) and the cause its message
    suggests, as the tracking issue says them; the cause only when a marker shows one."""
    reason = None
    lines = []
    if check.run_context is not None:
        reason = not_comparable(check.run_context, check.usual, Peers.of(()))
        words = flagged(
            f"{run_words(check.run_context, check.usual)}, attempt {check.attempt}", reason
        )
        lines.append(f"- **Run:** {escape_inline(shorten(words, _EVIDENCE_LIMIT))}")
    cause = suspect([FailureText(message=message, comparable=reason is None)])
    if cause.signals:
        lines.append("- " + cause_line(cause))
    return lines


def _evidence(decision: Decision) -> str:
    items = [item.text for item in decision.items] or [decision.evidence]
    if len(items) == 1:
        return f"- **Evidence:** {escape_inline(shorten(items[0], _DETAILS_EVIDENCE_LIMIT))}"
    listed = [f"  - {escape_inline(shorten(text, _DETAILS_EVIDENCE_LIMIT))}" for text in items]
    more = len(listed) - _ITEMS_LISTED
    listed = listed[:_ITEMS_LISTED] + ([f"  - and {more:,} more"] if more > 0 else [])
    return "- **Evidence:**\n" + "\n".join(listed)


def _history(history: Sequence[PastOccurrence]) -> str:
    """Counts and dates, not references: naming other PRs here would link every one of them
    back to this one. The tracking issue lists them."""
    prs = {(o.pr_number, o.author) for o in history if o.pr_number is not None}
    authors = {author for _, author in prs if author}
    branches = sorted({o.branch for o in history if o.pr_number is None and o.branch})
    parts = []
    if prs:
        parts.append(
            f"{_count(len({n for n, _ in prs}), 'other PR')}"
            + (f" by {_count(len(authors), 'author')}" if authors else "")
        )
    parts += [f"on {code_span(branch)}" for branch in branches]
    if not parts:
        parts.append(_count(len(history), "earlier run"))
    same = sum(1 for o in history if o.same_signature)
    rerun_passed = sum(1 for o in history if o.passed_on_rerun)
    last = max(o.at for o in history)
    text = f"{', '.join(parts)}; {same:,} of {len(history):,} with the same error"
    if rerun_passed:
        text += f", {rerun_passed:,} passed on rerun"
    return text + f"; last {datetime.fromtimestamp(last, UTC).strftime('%Y-%m-%d')}"


def _changed_paths(decision: Decision) -> str:
    if not decision.matched_paths:
        return "none"
    reasons = _reasons_by_path(decision)
    named = [
        f"{code_span(path)} ({escape_inline(reasons[path])})"
        if path in reasons
        else code_span(path)
        for path in decision.matched_paths[:_FOOTPRINT_LISTED]
    ]
    return _joined(named, len(decision.matched_paths))


def _import_chains(decision: Decision) -> list[str]:
    """How the test reaches each changed file it imports: "`tests/test_invoice.py` imports
    `billing.tax` (`src/billing/tax.py`), which this PR changes"; for a folder that runs for
    it (a C# project, a Rust crate), which changed file is in it."""
    entries = [entry for entry in decision.footprint if entry.reason in IMPORT_REASONS]
    lines: list[str] = []
    for path in decision.matched_paths[:_CHAINS_LISTED]:
        entry = next((e for e in entries if entry_contains(e, path)), None)
        if entry is None:
            continue
        chain = describe_chain(entry, code_span)
        if entry.path == path:
            lines.append(f"- **Imports:** {chain}, which this PR changes")
        else:  # a folder that runs for the test
            lines.append(f"- **Imports:** {chain}, and this PR changes {code_span(path)} in it")
    return lines


def _reasons_by_path(decision: Decision) -> dict[str, str]:
    reasons: dict[str, str] = {}
    for path in decision.matched_paths:
        for entry in decision.footprint:
            if entry_contains(entry, path):
                reasons[path] = entry.reason
                break
    return reasons


def _footprint(entries: Sequence[FootprintEntry]) -> str:
    if not entries:
        return "unknown"
    named = [
        f"{code_span(entry.path)} ({escape_inline(entry.reason)})"
        for entry in entries[:_FOOTPRINT_LISTED]
    ]
    return _joined(named, len(entries))


def _joined(named: Sequence[str], total: int) -> str:
    more = total - len(named)
    return ", ".join(named) + (f", and {more:,} more" if more > 0 else "")


def _excerpt(message: str) -> str:
    lines = message.splitlines()
    text = "\n".join(lines[:_MESSAGE_LINES])
    cut = len(lines) > _MESSAGE_LINES
    if len(text) > _MESSAGE_CHARS:
        text, cut = grapheme_prefix(text, _MESSAGE_CHARS), True
    return text + ("\n[… cut]" if cut else "")


def _check_link(check: CheckReport) -> str:
    name = escape_inline(shorten(check.check_name, _NAME_LIMIT))
    url = check.html_url
    if not url.startswith(("https://", "http://")):
        return name
    return f"[{name}]({_url(url)})"


def _url(url: str) -> str:
    return quote(url, safe=_URL_SAFE)


def _test_cell(decision: Decision) -> str:
    if decision.failure is None:
        return "_no test identified_"
    return code_span(shorten(decision.failure.test_id, _TEST_LIMIT), in_table=True)


def _test_id(decision: Decision) -> str:
    return decision.failure.test_id if decision.failure is not None else ""


def _settings_line(files: Sequence[str]) -> str:
    """Which files the settings came from, the one that wins first: said only when one is
    not the repository's own, since nobody looks for a repository's settings elsewhere."""
    if not files:
        return ""
    named = " over ".join(escape_inline(shorten(f, _EVIDENCE_LIMIT)) for f in files)
    return f"\n<sub>Settings from `.github/flaky.yml` of {named}.</sub>\n"


def _footer(head_sha: str, config_problems: Sequence[str] = (), dashboard_url: str = "") -> str:
    commands = ", ".join(code_span(command) for command in COMMANDS)
    sha = escape_inline(head_sha[:_SHORT_SHA])
    problems = ""
    if config_problems:
        named = [escape_inline(shorten(p, _EVIDENCE_LIMIT)) for p in config_problems]
        more = len(named) - _PROBLEMS_LISTED
        listed = "; ".join(named[:_PROBLEMS_LISTED]) + (f"; and {more:,} more" if more > 0 else "")
        problems = f"\n<sub>Ignored in `.github/flaky.yml`: {listed}.</sub>\n"
    page = f" [Every result on the dashboard]({_url(dashboard_url)})." if dashboard_url else ""
    return f"{problems}\n<sub>Commands: {commands}. This comment describes {sha}.{page}</sub>\n"


def _fit(pieces: Sequence[str], wrapper: str, budget: int) -> tuple[list[str], int]:
    """The longest prefix of ``pieces`` that fits the budget, and what is left."""
    kept: list[str] = []
    spent = len(wrapper) + 1  # the blank line before a section
    for piece in pieces:
        if spent + len(piece) + 1 > budget:
            break
        kept.append(piece)
        spent += len(piece) + 1
    if not kept:
        return [], budget
    return kept, budget - spent


def _left_out_note(*tiers: tuple[str, int, int]) -> str:
    cut = [f"{total - kept:,} of {total:,} {what}" for what, kept, total in tiers if kept < total]
    if not cut:
        return ""
    return f"_Left out to fit GitHub's {MAX_LENGTH:,}-character limit: {', '.join(cut)}._"


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}" if number == 1 else f"{number:,} {noun}s"


def _share(part: int, total: int, phrase: str) -> str:
    return phrase if part == total else f"{part:,} {phrase}"


def _check_count(items: Iterable[Item]) -> int:
    return len({(item.check.check_name, item.check.html_url) for item in items})
