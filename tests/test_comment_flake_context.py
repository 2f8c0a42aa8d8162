"""The PR comment's details show the job's run and the cause its message suggests (issue 28).

Failure messages are real (tests/fixtures/flake_messages/INDEX.md).
"""

from __future__ import annotations

from pathlib import Path

from bot.report.comment import render_comment
from bot.report.models import CheckReport, CommentInput
from bot.triage.models import Decision, Failure, Verdict
from bot.triage.run_context import RunContext, UsualDuration

MESSAGES = Path(__file__).parent / "fixtures" / "flake_messages"
HEAD = "0123456789abcdef0123456789abcdef01234567"
USUAL = UsualDuration(check_name="unit", runs=40, median=120.0, p90=150.0)


def details(message: str, run: RunContext | None, attempt: int = 1) -> list[str]:
    failure = Failure(
        test_id="src/app.test.ts > loads",
        name="loads",
        framework="jest",
        message=message,
    )
    decision = Decision(failure=failure, verdict=Verdict.UNRELATED, evidence="not imported")
    check = CheckReport(
        check_name="unit",
        html_url="https://github.com/octo/app/actions/runs/1/job/2",
        head_sha=HEAD,
        attempt=attempt,
        conclusion="failure",
        decisions=[decision],
        run_context=run,
        usual=USUAL if run is not None else None,
    )
    text = render_comment(CommentInput(repo="octo/app", pr_number=3, head_sha=HEAD, checks=[check]))
    return [line for line in text.split("\n") if line.startswith("- **")]


def test_the_run_and_the_suspected_cause_show_in_the_details() -> None:
    run = RunContext(runner_os="Linux", runner_image="ubuntu-24.04 20250105.1.0", job_seconds=130.0)
    lines = details((MESSAGES / "jest_timeout_element_web.txt").read_text(), run)

    assert "- **Run:** Linux, ubuntu-24.04, 2 min 10 s (usual 2 min), attempt 1" in lines
    assert (
        "- **Suspected cause:** timing and asynchronous waits (confidence: low); signals: "
        "Jest test timeout in 1 of 1 failure (timing and asynchronous waits)."
    ) in lines


def test_a_job_three_times_its_usual_length_is_flagged_and_weighed_half() -> None:
    run = RunContext(runner_os="Windows", job_seconds=400.0)
    lines = details((MESSAGES / "jest_timeout_element_web.txt").read_text(), run, attempt=2)

    assert (
        "- **Run:** Windows, 6 min 40 s (usual 2 min), attempt 2 \u26a0 not comparable: took "
        "6 min 40 s, 3.3 times the check's usual 2 min"
    ) in lines
    assert any(
        line.startswith("- **Suspected cause:** unclear (the signals are too weak)")
        for line in lines
    )


def test_without_a_run_or_a_marker_the_details_say_nothing_of_either() -> None:
    lines = details("AssertionError: expected 2 to be 3", None)

    assert not any(line.startswith(("- **Run:**", "- **Suspected cause:**")) for line in lines)
