"""The bot's own check run as report/check_run.py renders it (pure)."""

from __future__ import annotations

import pytest

from bot.report.check_run import (
    ANNOTATIONS_PER_REQUEST,
    MAX_ANNOTATIONS,
    MAX_SUMMARY,
    annotations_of,
    batches,
    check_run_report,
    conclusion,
)
from bot.report.comment import MARKER, render_comment
from bot.report.models import CheckReport, CommentInput
from bot.triage.models import Decision, Evidence, EvidenceKind, Failure, Verdict

HEAD = "0123456789abcdef0123456789abcdef01234567"


def failure(
    test_id: str = "tests/test_a.py::test_a",
    location: str | None = "src/a.py:42",
    file: str | None = None,
) -> Failure:
    return Failure(
        test_id=test_id,
        name=test_id.rpartition("::")[2],
        framework="pytest",
        file=file,
        location=location,
        message="AssertionError: assert 1 == 2\nmore",
    )


def decided(verdict: Verdict, found: Failure | None = None) -> Decision:
    return Decision(failure=found or failure(), verdict=verdict, evidence="the evidence")


def check(*decisions: Decision, conclusion: str = "failure", name: str = "unit") -> CheckReport:
    return CheckReport(
        check_name=name,
        html_url="https://github.com/o/r/actions/runs/1/job/2",
        head_sha=HEAD,
        conclusion=conclusion,
        decisions=list(decisions),
    )


def test_neutral_unless_strict_whatever_the_verdicts() -> None:
    checks = [check(decided(Verdict.RELATED))]
    assert conclusion(checks, strict=False) == "neutral"
    assert conclusion(checks, strict=True) == "failure"


@pytest.mark.parametrize(
    ("checks", "expected"),
    [
        # Every failure flaky and its check passed on rerun.
        ([check(decided(Verdict.FLAKY), conclusion="success")], "success"),
        # Flaky from history, but the check still fails: not cleared.
        ([check(decided(Verdict.FLAKY))], "failure"),
        # Unrelated, rerun pending.
        ([check(decided(Verdict.UNRELATED))], "failure"),
        # Related but passed on rerun ("flaky, but touches code this PR changed").
        ([check(decided(Verdict.RELATED), conclusion="success")], "failure"),
        # A check with no test identified.
        ([check(Decision(failure=None, verdict=Verdict.INFRA, evidence="runner lost"))], "failure"),
        # One cleared check and one not.
        (
            [
                check(decided(Verdict.FLAKY), conclusion="success"),
                check(decided(Verdict.BROKEN_BASE), name="lint"),
            ],
            "failure",
        ),
    ],
)
def test_strict_succeeds_only_when_every_failure_is_flaky_and_passed_on_rerun(
    checks: list[CheckReport], expected: str
) -> None:
    assert conclusion(checks, strict=True) == expected


@pytest.mark.parametrize(
    ("verdict", "level"),
    [
        (Verdict.FLAKY, "warning"),
        (Verdict.UNRELATED, "warning"),
        (Verdict.RELATED, "failure"),
        (Verdict.BROKEN_BASE, "notice"),
        (Verdict.INFRA, "notice"),
        (Verdict.UNKNOWN, "notice"),
    ],
)
def test_annotation_level_follows_the_verdict(verdict: Verdict, level: str) -> None:
    (note,) = annotations_of([check(decided(verdict))])
    assert (note.path, note.start_line, note.end_line) == ("src/a.py", 42, 42)
    assert note.annotation_level == level
    assert note.title == "tests/test_a.py::test_a"
    assert note.message.startswith("unit: ")
    assert "the evidence" in note.message and "AssertionError: assert 1 == 2 more" in note.message


def test_annotation_place_is_the_location_else_the_test_file_else_none() -> None:
    placed = [
        decided(Verdict.UNRELATED, failure("t::a", "src/a.py:7:13")),  # a column too
        decided(Verdict.UNRELATED, failure("t::b", None, file="tests/test_b.py")),
        decided(Verdict.UNRELATED, failure("t::c", "somewhere", file=None)),
        Decision(failure=None, verdict=Verdict.UNKNOWN, evidence="no test identified"),
    ]
    notes = annotations_of([check(*placed)])
    assert [(n.title, n.path, n.start_line) for n in notes] == [
        ("t::a", "src/a.py", 7),
        ("t::b", "tests/test_b.py", 1),
    ]


def test_the_same_failure_at_the_same_place_is_annotated_once() -> None:
    one = decided(Verdict.UNRELATED)
    notes = annotations_of([check(one, one), check(one, name="unit (3.13)")])
    assert len(notes) == 1 and notes[0].message.startswith("unit: ")


def test_a_verdict_changing_within_its_level_keeps_its_key_a_new_level_gets_a_new_one() -> None:
    (unrelated,) = annotations_of([check(decided(Verdict.UNRELATED))])
    (flaky,) = annotations_of([check(decided(Verdict.FLAKY), conclusion="success")])
    (related,) = annotations_of([check(decided(Verdict.RELATED))])
    assert unrelated.message != flaky.message
    assert unrelated.key == flaky.key != related.key


def test_at_most_max_annotations_related_first() -> None:
    unrelated = [decided(Verdict.UNRELATED, failure(f"t::u{n}")) for n in range(MAX_ANNOTATIONS)]
    related = decided(Verdict.RELATED, failure("t::related"))
    notes = annotations_of([check(*unrelated, related)])
    assert len(notes) == MAX_ANNOTATIONS
    assert notes[0].title == "t::related"


def test_batches_hold_at_most_fifty() -> None:
    notes = annotations_of(
        [check(*(decided(Verdict.UNKNOWN, failure(f"t::{n}")) for n in range(120)))]
    )
    assert [len(batch) for batch in batches(notes)] == [50, 50, 20]
    assert ANNOTATIONS_PER_REQUEST == 50
    assert batches([]) == []


def test_hidden_characters_in_a_test_name_are_shown() -> None:
    (note,) = annotations_of([check(decided(Verdict.FLAKY, failure("t::evil\u202egnp.exe")))])
    assert "\u202e" not in note.title and "<U+202E>" in note.title


def test_summary_is_the_comment_without_its_marker_and_within_githubs_limit() -> None:
    long = "y" * 1990
    items = [Evidence(kind=EvidenceKind.HISTORY, text=f"{k} {long}") for k in range(8)]
    decisions = [
        Decision(
            failure=failure(f"tests/test_{n}.py::test_{n}"),
            verdict=Verdict.UNRELATED,
            evidence="e",
            items=items,
        )
        for n in range(40)
    ]
    inp = CommentInput(repo="o/r", pr_number=7, head_sha=HEAD, checks=[check(*decisions)])

    report = check_run_report(inp, strict=False)

    assert report.summary == render_comment(inp).removeprefix(MARKER + "\n")
    assert MARKER not in report.summary and len(report.summary) <= MAX_SUMMARY
    assert report.title == "40 failures — unrelated to this PR"
    assert report.output_sha == check_run_report(inp, strict=False).output_sha
    assert report.output_sha != check_run_report(inp, strict=True).output_sha
