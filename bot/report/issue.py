"""Render a tracking issue: its title, and the section of its body the bot owns.

The bot's section sits between two hidden markers; the first carries a JSON block (the
tracking key and the tests), so the bot finds its issue on GitHub when its store lost
track. Everything outside the markers belongs to people and is kept as it is.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from bot.report.flake_lines import (
    FLAG,
    JobKey,
    cause_line,
    explain_occurrences,
    job_key,
    run_cell,
    usual_of,
    where_line,
)
from bot.report.markdown import (
    code_span,
    escape_inline,
    fenced_block,
    neutralise,
    one_line,
    shorten,
)
from bot.report.models import IssueInput, IssueOccurrence
from bot.report.quarantine_list import marker
from bot.triage.flake_context import Explanation
from bot.triage.mentions import mentionable
from bot.triage.models import RunHint
from bot.triage.quarantine import Source
from bot.triage.stats import describe_rate

MAX_LENGTH = 65_536  # GitHub refuses longer issue bodies
# What adopting an issue keeps free of that limit for the bot's section (a busy test's, with
# every row shown, fits in it): longer text people wrote is refused, never cut.
SECTION_ROOM = 20_480
MAX_TITLE = 256  # GitHub's limit on issue titles
START = "<!-- flaky-triage:tracking-issue "
END = "<!-- /flaky-triage:tracking-issue -->"
OCCURRENCES_SHOWN = 10  # rows: a handful, newest first; the rest counted, on the dashboard
MODES_SHOWN = 15
TESTS_LISTED = 25

_SIGNATURE_IN_TITLE = 80
_SIGNATURE_LIMIT = 160
_TEST_LIMIT = 200
# The hidden block names a test only when it is this short as JSON (3,000 emoji are 36,000
# characters escaped), and the names together take at most _LISTED_ROOM: the key, not the
# names, is what finds the issue again.
_TEST_IN_DATA = 1_000
_LISTED_ROOM = 8_000
_LOCATION_LIMIT = 200
_COMMAND_LIMIT = 2_000
_SHORT_SHA = 7
_START_RE = re.compile(re.escape(START) + r"(\{.*?\}) -->")
_URL_SAFE = re.compile(r"^https?://[^\s()<>\[\]|]+$")


def title(tests: Sequence[str], signature: str = "") -> str:
    """`Flaky test: <id>`; several tests sharing one failure: `Flaky failure: <sig> (<n> tests)`."""
    if len(tests) == 1:
        text = f"Flaky test: {one_line(tests[0])}"
    else:
        short = shorten(one_line(signature), _SIGNATURE_IN_TITLE)
        text = f"Flaky failure: {short} ({len(tests):,} tests)"
    # Titles render references and mentions too.
    return shorten(neutralise(text), MAX_TITLE)


def hidden_data(body: str | None) -> dict[str, Any] | None:
    """The JSON block of the bot's section, or None when the body has none."""
    found = _START_RE.search(body or "")
    if found is None:
        return None
    try:
        data = json.loads(found[1])
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def tracking_key(body: str | None) -> str | None:
    data = hidden_data(body)
    key = data.get("key") if data is not None else None
    return key if isinstance(key, str) else None


def compose(existing: str | None, section: str) -> str:
    """`existing` with the bot's section replaced by `section`, or put on top when it has none
    (an adopted issue): the text people wrote stays as it is."""
    before, after = _outside(existing or "")
    if before is None:
        human = (existing or "").strip("\n")
        return section + ("\n\n" + human if human else "") + "\n"
    return before + section + after


def render_body(inp: IssueInput, existing: str | None = None) -> str | None:
    """The whole body: `existing` with a fresh section, showing fewer occurrences until it
    fits GitHub's cap; None when even the shortest section does not fit beside the text
    people wrote, which is never cut."""
    shown = OCCURRENCES_SHOWN
    explained = explain_occurrences(inp.occurrences, inp.run_contexts, inp.usual)
    while True:
        body = compose(existing, _section(inp, shown, explained))
        if len(body) <= MAX_LENGTH:
            return body
        if shown == 0:
            return None
        shown //= 2


def human_text(body: str | None) -> str:
    """The text people wrote: the body without the bot's section."""
    before, after = _outside(body or "")
    return body or "" if before is None else before + after


def render_section(inp: IssueInput, *, occurrences_shown: int = OCCURRENCES_SHOWN) -> str:
    explained = explain_occurrences(inp.occurrences, inp.run_contexts, inp.usual)
    return _section(inp, occurrences_shown, explained)


def _section(
    inp: IssueInput,
    occurrences_shown: int,
    explained: tuple[Explanation, dict[JobKey, str | None]],
) -> str:
    """The section, with the explanation of its failures decided once for every size tried."""
    data = {"v": 1, "key": inp.key, "tests": _listed_in_data(inp.tests[:TESTS_LISTED])}
    explanation, flags = explained
    summary = _summary(inp)
    if inp.occurrences and _context_recorded(inp):
        summary += "\n" + where_line(explanation.where)
    parts = [START + _inert_json(data) + " -->", summary]
    if inp.owners:
        parts.append(_owners(inp))
    if inp.quarantines:
        parts.append(_quarantined(inp))
    if len(inp.tests) > 1:
        parts.append(_cluster(inp))
    parts.append(_failure_modes(inp.occurrences))
    if inp.occurrences:
        parts.append("### Suspected cause\n\n" + cause_line(explanation.cause) + _cause_note(inp))
    parts.append(_occurrences(inp, occurrences_shown, flags))
    parts.append(_run_alone(inp))
    parts.append(
        "<sub>Kept up to date by flaky-triage from its record of the last "
        f"{_count(inp.window_days, 'day')}. Text outside this section is yours and "
        "stays as it is.</sub>"
    )
    parts.append(END)
    return "\n\n".join(parts)


def _outside(body: str) -> tuple[str | None, str]:
    """(text before the section, text after it); (None, "") when there is no section."""
    found = _START_RE.search(body)
    if found is None:
        return None, ""
    end = body.find(END, found.end())
    # No end marker: someone deleted it; everything after the start is taken as ours.
    after = body[end + len(END) :] if end >= 0 else "\n"
    return body[: found.start()], after


def _listed_in_data(tests: Sequence[str]) -> list[str]:
    listed: list[str] = []
    room = _LISTED_ROOM
    for test in tests:
        size = len(_inert_json({"t": test}))
        if size <= min(_TEST_IN_DATA, room):
            listed.append(test)
            room -= size
    return listed


def _inert_json(data: dict[str, Any]) -> str:
    # Inside an HTML comment: no `>` may appear, or the comment could end early.
    text = json.dumps(data, sort_keys=True, ensure_ascii=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _summary(inp: IssueInput) -> str:
    occurrences = inp.occurrences
    if not occurrences:
        return (
            f"**No failure recorded in the last {_count(inp.window_days, 'day')}.** "
            "New failures of this test are added here."
        )
    rates = "; ".join(
        f"{describe_rate(item.rate)} of {code_span(item.check_name)}" for item in inp.rates
    )
    first = min(o.at for o in occurrences)
    last = max(o.at for o in occurrences)
    prs = sorted({o.pr_number for o in occurrences if o.pr_number is not None})
    branches = sorted({o.branch for o in occurrences if o.pr_number is None and o.branch})
    where = (
        [f"{_count(len(prs), 'pull request')} ({', '.join(f'#{n}' for n in prs)})"] if prs else []
    )
    where += [f"branch {code_span(b)}" for b in branches]
    lines = [
        f"**{rates[:1].upper() + rates[1:]}.**" if rates else "",
        f"First seen {day(first)}, last seen {day(last)}; "
        f"{_count(len(occurrences), 'failure')} recorded"
        + (f", on {', '.join(where)}" if where else "")
        + ".",
    ]
    if inp.previous_issue is not None:
        lines.append(f"Continues #{inp.previous_issue}, closed earlier.")
    return "\n".join(line for line in lines if line)


def _owners(inp: IssueInput) -> str:
    """Who owns the test's file. Named without `@` (in code, so GitHub neither notifies nor
    links), unless it is one of those to mention; an email address never notifies."""
    names = [
        owner if owner in inp.mentioned and mentionable(owner) else code_span(owner.lstrip("@"))
        for owner in inp.owners
    ]
    return f"**Owners** (from {code_span(inp.owners_file)}): {', '.join(names)}."


def _quarantined(inp: IssueInput) -> str:
    """One line per quarantined test: until when, whose, since when and by whom; names in
    code, so nobody is notified by the line."""
    lines = []
    for q in inp.quarantines:
        test = f" {code_span(shorten(q.test_id, _TEST_LIMIT))}" if len(inp.tests) > 1 else ""
        how = "automatically" if q.source == Source.AUTO else f"by {code_span(q.by)}"
        lines.append(
            f"**Quarantined**{test} until {day(q.expires_at)}, owner {code_span(q.owner)} "
            f"(since {day(q.since)}, {how}): its failures do not fail the flaky-triage check "
            "unless related to the pull request. `/flaky unquarantine` ends it."
        )
    # For test runners: read with a workflow's GITHUB_TOKEN from the labelled issues.
    lines.extend(marker(q) for q in inp.quarantines)
    return "\n".join(lines)


def _cluster(inp: IssueInput) -> str:
    listed = [f"- {code_span(shorten(t, _TEST_LIMIT))}" for t in inp.tests[:TESTS_LISTED]]
    more = len(inp.tests) - len(listed)
    if more > 0:
        listed.append(f"- and {more:,} more")
    return (
        f"### Tests failing with this signature\n\n"
        f"Signature: {_message_span(inp.signature, in_table=False)}\n\n" + "\n".join(listed)
    )


def _failure_modes(occurrences: Sequence[IssueOccurrence]) -> str:
    modes: dict[tuple[str, str], list[IssueOccurrence]] = {}
    for occurrence in occurrences:
        modes.setdefault((occurrence.signature, occurrence.location or ""), []).append(occurrence)
    ranked = sorted(modes.items(), key=lambda item: (-len(item[1]), -max(o.at for o in item[1])))
    rows = [
        f"| {_message_span(signature or '(no message)')} "
        f"| {_location_span(location)} "
        f"| {len(seen):,} | {day(max(o.at for o in seen))} |"
        for (signature, location), seen in ranked[:MODES_SHOWN]
    ]
    more = len(ranked) - len(rows)
    note = f"\n\n{more:,} rarer failure modes not shown." if more > 0 else ""
    if not rows:
        return "### Failure modes\n\nNone recorded yet."
    return (
        "### Failure modes\n\n| Signature | Location | Count | Last seen |\n"
        "| --- | --- | --- | --- |\n" + "\n".join(rows) + note
    )


def _location_span(location: str) -> str:
    if not location:
        return "unknown"
    return code_span(shorten(location, _LOCATION_LIMIT), in_table=True)


def _message_span(text: str, *, in_table: bool = True) -> str:
    # Code spans neither ping nor link today; log text is neutralised anyway, so a change in
    # GitHub's renderer cannot turn it into a notification. After the span is made: it shows
    # the text's own zero-width spaces, not the ones that break a mention.
    return neutralise(code_span(shorten(text, _SIGNATURE_LIMIT), in_table=in_table))


def _cause_note(inp: IssueInput) -> str:
    if not _context_recorded(inp):
        return "\n\n<sub>Suspected from the failures' messages.</sub>"
    return (
        "\n\n<sub>Suspected from the failures' messages and where their runs differ from the "
        f"others; {FLAG} marks a run not comparable with the rest of its check, weighed "
        "half.</sub>"
    )


def _context_recorded(inp: IssueInput) -> bool:
    """Whether any run's context is on record: an older record shows no empty column."""
    return bool(inp.run_contexts) or any(o.context is not None for o in inp.occurrences)


def _occurrences(inp: IssueInput, shown: int, flags: dict[JobKey, str | None]) -> str:
    newest = sorted(inp.occurrences, key=lambda o: (o.at, o.html_url), reverse=True)
    cluster = len(inp.tests) > 1
    header = "| When (UTC) | Where | Commit | Job | Attempt | Rerun |"
    if cluster:
        header = "| When (UTC) | Test | Where | Commit | Job | Attempt | Rerun |"
    with_run = _context_recorded(inp)
    if with_run:
        header += " Run |"
    # A cluster's tests share one signature: those that failed in the same job are one row.
    rows_of = _by_job(newest) if cluster else [[o] for o in newest]
    rows = [
        _occurrence_row(row, cluster) + (_run_column(inp, row[0], flags) if with_run else "")
        for row in rows_of[:shown]
    ]
    if not rows:
        return "### Occurrences\n\nNone recorded yet."
    divider = "|" + " --- |" * header.count(" | ") + " --- |"
    return (
        f"### Occurrences\n\n{header}\n{divider}\n"
        + "\n".join(rows)
        + _older_note(rows_of[len(rows) :], inp.dashboard_url)
    )


def _run_column(inp: IssueInput, o: IssueOccurrence, flags: dict[JobKey, str | None]) -> str:
    return f" {run_cell(o.context, usual_of(inp.usual, o.check_name), flags.get(job_key(o)))} |"


def _by_job(occurrences: Sequence[IssueOccurrence]) -> list[list[IssueOccurrence]]:
    jobs: dict[JobKey, list[IssueOccurrence]] = {}
    for o in occurrences:
        jobs.setdefault(job_key(o), []).append(o)
    return list(jobs.values())


def _older_note(older: Sequence[Sequence[IssueOccurrence]], dashboard_url: str) -> str:
    if not older:
        return (
            f"\n\nEvery occurrence is on [the dashboard]({dashboard_url})." if dashboard_url else ""
        )
    failures = sum(len(row) for row in older)
    count = f"{len(older):,} older occurrences not shown"
    if failures != len(older):
        count = f"{len(older):,} older job runs ({failures:,} failures) not shown"
    where = f": every one is on [the dashboard]({dashboard_url})" if dashboard_url else ""
    return f"\n\n{count}{where}."


def _occurrence_row(row: Sequence[IssueOccurrence], cluster: bool) -> str:
    o = row[0]
    if o.pr_number is not None:
        where = f"#{o.pr_number}"
    else:
        where = code_span(o.branch, in_table=True) if o.branch else "outside a pull request"
    job = escape_inline(shorten(o.check_name, 100))
    if _URL_SAFE.match(o.html_url):
        job = f"[{job}]({o.html_url})"
    test = code_span(shorten(o.test_id, _TEST_LIMIT), in_table=True)
    if len(row) > 1:
        test = f"{len(row):,} tests"
    cells = [
        _minute(o.at),
        *([test] if cluster else []),
        where,
        code_span(o.head_sha[:_SHORT_SHA], in_table=True),
        job,
        str(o.attempt),
        o.rerun or "not rerun",
    ]
    return "| " + " | ".join(cells) + " |"


def _run_alone(inp: IssueInput) -> str:
    hint = inp.hint
    if hint is None:
        return (
            "### Run it alone\n\nRun the test on its own, many times in a row: a flaky failure "
            "rarely shows in one run."
        )
    command = run_command(hint)
    if command is None or len(command) > _COMMAND_LIMIT:
        return (
            "### Run it alone\n\n"
            f"Run {code_span(shorten(hint.test_id, _TEST_LIMIT))} on its own with "
            f"{escape_inline(hint.framework)}, many times in a row: a flaky failure rarely "
            "shows in one run."
        )
    return (
        "### Run it alone\n\n"
        + fenced_block(command, "sh")
        + "\n\nRepeat it many times in a row: a flaky failure rarely shows in one run."
    )


def run_command(hint: RunHint) -> str | None:
    """The shell command that runs only this test, for the runners whose ids we know."""
    q = shlex.quote
    name, file = hint.name, hint.file
    match hint.framework:
        case "pytest":
            return f"python -m pytest {q(hint.test_id)}"
        case "go":
            folder = "./" + file.rpartition("/")[0] if file and "/" in file else "."
            pattern = "/".join(f"^{re.escape(part)}$" for part in name.split("/"))
            return f"go test {q(folder)} -run {q(pattern)} -count=1"
        case "jest" | "vitest" | "bun" | "mocha" if file:
            runner = {"jest": "npx jest", "vitest": "npx vitest run", "bun": "bun test"}
            flag = "--grep" if hint.framework == "mocha" else "-t"
            return f"{runner.get(hint.framework, 'npx mocha')} {q(file)} {flag} {q(name)}"
        case "cargo" | "nextest":
            return f"cargo test -- --exact {q(name)}"
        case "rspec" if file:
            return f"bundle exec rspec {q(file)}"
        case "phpunit":
            return f"vendor/bin/phpunit --filter {q(name)}"
        case "maven":
            return f"mvn test -Dtest={q(hint.test_id)}"
        case "gradle":
            return f"./gradlew test --tests {q(hint.test_id.replace('#', '.'))}"
        case "dotnet":
            return f"dotnet test --filter {q('FullyQualifiedName=' + hint.test_id)}"
    return None


def day(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d")


def _minute(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M")


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}" if number == 1 else f"{number:,} {noun}s"
