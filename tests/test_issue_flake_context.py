"""The tracking issue explains the flake (issue 28): each occurrence's run, the not-comparable
flag, where failures concentrate and the suspected cause with its signals.

Failure messages are real (tests/fixtures/flake_messages/INDEX.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.report.issue import MAX_LENGTH, SECTION_ROOM, render_body, render_section
from bot.report.models import CheckRate, IssueInput, IssueOccurrence
from bot.triage.models import RunRate
from bot.triage.run_context import RunContext, UsualDuration

MESSAGES = Path(__file__).parent / "fixtures" / "flake_messages"
T0 = 1_714_000_000.0  # 2024-04-24 23:06 UTC
CHECK = "tests (3.12)"
TEST = "tests/bus/test_core.py::test_publish"
USUAL = UsualDuration(check_name=CHECK, runs=40, median=540.0, p90=600.0)


def message(name: str) -> str:
    return (MESSAGES / name).read_text(encoding="utf-8")


def context(
    os: str = "Linux",
    label: str = "ubuntu-latest",
    image: str = "ubuntu-22.04 20240422.1.0",
    seconds: float = 540.0,
) -> RunContext:
    return RunContext(
        runner_os=os,
        labels=[label],
        runner_image=image,
        job_seconds=seconds,
        check_name=CHECK,
    )


def windows(seconds: float = 540.0) -> RunContext:
    return context("Windows", "windows-latest", "windows-2022 20240421.1", seconds)


def occurrence(n: int, text: str, ran: RunContext | None) -> IssueOccurrence:
    return IssueOccurrence(
        at=T0 + n * 3600,
        test_id=TEST,
        signature=text.splitlines()[0][:80],
        pr_number=7 + n,
        head_sha=f"{n:040x}",
        check_name=CHECK,
        html_url=f"https://github.com/acme/bus/actions/runs/1/job/{n}",
        message=text,
        context=ran,
    )


def issue(
    occurrences: list[IssueOccurrence], runs: list[RunContext], tests: list[str] | None = None
) -> IssueInput:
    return IssueInput(
        key="tests.bus.test_core.test_publish",
        tests=tests or [TEST],
        occurrences=occurrences,
        rates=[
            CheckRate(check_name=CHECK, rate=RunRate(failures=9, runs=120, low=0.04, high=0.14))
        ],
        run_contexts=runs,
        usual=[USUAL],
    )


def rows(body: str) -> list[str]:
    return [line for line in body.split("\n") if line.startswith("| 2024")]


def test_windows_only_timeouts_are_suspected_timing_with_the_platform_counted() -> None:
    runs = [windows() for _ in range(30)] + [context() for _ in range(90)]
    text = message("go_timeout_gocql.txt")
    body = render_section(issue([occurrence(n, text, runs[n]) for n in range(9)], runs))

    assert (
        "**Where failures concentrate:** all 9 failures on windows-latest (30 of 120 runs)."
    ) in body
    assert (
        "### Suspected cause\n\n**Suspected cause:** timing and asynchronous waits "
        "(confidence: medium); signals: Go test timeout in 9 of 9 failures (timing and "
        "asynchronous waits); all 9 failures on windows-latest (30 of 120 runs)."
    ) in body
    assert "| Rerun | Run |" in body
    assert rows(body)[0].endswith("| not rerun | Windows, windows-2022, 9 min (usual 9 min) |")


def test_a_run_three_times_its_usual_length_is_flagged_in_its_row() -> None:
    runs = [context() for _ in range(40)]
    slow = context(seconds=1_860.0)
    body = render_section(
        issue([occurrence(0, message("java_cme_jetty.txt"), slow)], [*runs, slow])
    )

    assert rows(body)[0].endswith(
        "| Linux, ubuntu-22.04, 31 min (usual 9 min) \u26a0 not comparable: took 31 min, "
        "3.4 times the check's usual 9 min |"
    )
    assert (
        "**Where failures concentrate:** not enough runs to say: 1 failed run with its "
        "context recorded, 3 needed."
    ) in body
    # One failure, from a run unlike the others, weighs half: too little to suspect a cause.
    assert "**Suspected cause:** unclear (the signals are too weak); signals: " in body


def test_a_test_with_mixed_evidence_says_unclear_with_each_signal_counted() -> None:
    runs = [context() for _ in range(60)]
    race = message("go_race_apm_server.txt")
    refused = message("econnrefused_metamask.txt")
    occurrences = [occurrence(n, race if n % 2 else refused, runs[n]) for n in range(6)]

    body = render_section(issue(occurrences, runs))

    assert (
        "**Suspected cause:** unclear (the signals point to different causes); signals: "
        "data race detected in 3 of 6 failures (concurrency (races, deadlocks)); connection "
        "refused in 3 of 6 failures (network)."
    ) in body
    assert (
        "**Where failures concentrate:** nowhere in particular: the 6 failures spread like "
        "the 60 runs by platform, duration, attempt and workflow size."
    ) in body


@pytest.mark.parametrize("name", sorted(p.name for p in MESSAGES.glob("*.txt")))
def test_no_cause_is_ever_stated_without_its_signals(name: str) -> None:
    text = message(name)
    body = render_section(issue([occurrence(n, text, None) for n in range(3)], []))

    (line,) = [line for line in body.split("\n") if line.startswith("**Suspected cause:**")]
    assert "; signals: " in line
    assert " in 3 of 3 failures (" in line


def test_an_older_record_without_run_context_shows_no_run_column_nor_concentration() -> None:
    text = message("go_timeout_gocql.txt")
    body = render_section(issue([occurrence(n, text, None) for n in range(3)], []))

    assert "| Rerun |\n" in body
    assert "Where failures concentrate" not in body
    assert "**Suspected cause:** timing and asynchronous waits (confidence: high)" in body


def test_runner_labels_in_a_row_are_inert() -> None:
    hostile = RunContext(labels=["@octocat | #1 <b>x</b>"], job_seconds=60.0, check_name=CHECK)
    body = render_section(issue([occurrence(0, "AssertionError", hostile)], [hostile]))

    (row,) = rows(body)
    assert "@\u200boctocat \\| \\#\u200b1 &lt;b&gt;x&lt;/b&gt;, 1 min (usual 9 min) |" in row


def test_a_busy_clusters_section_with_every_context_fits_its_room() -> None:
    tests = [f"tests/{'x' * 200}_{n}.py::test_y" for n in range(30)]
    labels = ["self-hosted", "linux", "x64", "gpu-" + "a" * 200]
    runs = [
        RunContext(
            runner_name="r" * 100,
            runner_os="Linux",
            runner_image="ubuntu-22.04 " + "9" * 100,
            labels=labels,
            job_seconds=5_000.0 + n,
            attempt=1 + n % 3,
            jobs_in_run=n,
            check_name=CHECK,
        )
        for n in range(400)
    ]
    messages = [message(p.name) for p in sorted(MESSAGES.glob("*.txt"))]
    occurrences = [
        occurrence(n, messages[n % len(messages)], runs[n]).model_copy(
            update={"test_id": tests[n % 30], "html_url": f"https://github.com/a/b/job/{n // 2}"}
        )
        for n in range(200)
    ]
    inp = issue(occurrences, runs, tests=tests)

    assert len(render_section(inp)) <= SECTION_ROOM
    body = render_body(inp)
    assert body is not None and len(body) <= MAX_LENGTH
