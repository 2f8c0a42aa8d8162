"""The dashboard's test page shows the suspected cause and, where recorded, each run and
where failures concentrate, in a line each (issue 28). Messages are real
(tests/fixtures/flake_messages/INDEX.md)."""

from __future__ import annotations

import re
from pathlib import Path

from bot.report.dashboard import chart_days, render_test
from bot.report.flaky_tests import summarise_tests
from bot.triage.models import Occurrence, RunRecord
from bot.triage.run_context import RunContext, UsualDuration

MESSAGES = Path(__file__).parent / "fixtures" / "flake_messages"
NOW = 1_796_000_000.0
REPO = "acme/shop"
CHECK = "tests"


def failure(run_id: int, text: str) -> Occurrence:
    return Occurrence(
        repo=REPO,
        check_run_id=run_id,
        check_name=CHECK,
        test_key="tests.a",
        test_id="tests/a",
        signature=text.splitlines()[0][:80],
        generic=False,
        message=text,
        head_sha="a" * 40,
        pr_number=run_id,
        at=NOW - run_id * 60,
        verdict="flaky",
    )


def record(run_id: int) -> RunRecord:
    return RunRecord(
        repo=REPO,
        check_run_id=run_id,
        check_name=CHECK,
        head_sha="a" * 40,
        pr_number=run_id,
        conclusion="failure",
        completed_at=NOW - run_id * 60,
    )


def page(
    occurrences: list[Occurrence],
    contexts: dict[int, RunContext] | None = None,
    every: list[RunContext] | None = None,
    usual: list[UsualDuration] | None = None,
) -> str:
    runs = [record(o.check_run_id) for o in occurrences]
    (test,) = summarise_tests(occurrences, runs, now=NOW)
    days = chart_days(occurrences, runs, NOW, 30)
    return render_test(
        REPO, test, occurrences, days, runs, contexts=contexts, run_contexts=every or (),
        usual=usual or (),
    )  # fmt: skip


def paragraph(html: str, ident: str) -> str:
    found = re.search(f'<p id="{ident}">(.*?)</p>', html)
    return found[1] if found else ""


def test_the_cause_is_read_from_the_failures_messages_alone() -> None:
    race = (MESSAGES / "go_race_apm_server.txt").read_text()
    html = page([failure(n, race) for n in range(1, 4)])

    assert paragraph(html, "cause") == (
        "Suspected cause: concurrency (races, deadlocks) (confidence: high); signals: data "
        "race detected in 3 of 3 failures (concurrency (races, deadlocks))."
    )
    assert paragraph(html, "where") == ""
    assert "<th>Run</th>" not in html


def test_recorded_runs_show_in_each_row_and_where_failures_concentrate() -> None:
    text = (MESSAGES / "eaddrinuse_socketio.txt").read_text()
    occurrences = [failure(n, text) for n in range(1, 5)]
    windows = RunContext(runner_os="Windows", labels=["windows-latest"], job_seconds=90.0)
    linux = RunContext(runner_os="Linux", labels=["ubuntu-latest"], job_seconds=80.0)
    contexts = {n: windows.model_copy(update={"check_name": CHECK}) for n in range(1, 5)}
    every = [contexts[1]] * 10 + [linux.model_copy(update={"check_name": CHECK})] * 30
    usual = [UsualDuration(check_name=CHECK, runs=30, median=80.0, p90=95.0)]

    html = page(occurrences, contexts, every, usual)

    assert paragraph(html, "where") == (
        "Where failures concentrate: all 4 failures on windows-latest (10 of 40 runs)."
    )
    assert paragraph(html, "cause").startswith(
        "Suspected cause: resource limits (memory, file descriptors, ports, disk) "
        "(confidence: medium); signals: port already in use in 4 of 4 failures"
    )
    assert html.count("<td>Windows, 1 min 30 s (usual 1 min 20 s)</td>") == 4
