"""The sticky comment at a glance: failures of one job that share an error in one row, a
handful of rows worst first, and the first lines saying what to do, group by group.

Rendered with GitHub's own markdown parser (tests/github_markdown.py) where the shape of the
HTML is what matters: one table row, one collapsed section, the list of test ids inside it.
"""

from __future__ import annotations

import re

from bot.report.comment import ROWS_SHOWN, render_comment
from bot.report.models import CheckReport, CommentInput
from bot.triage.models import Decision, Evidence, EvidenceKind, Extraction, Failure, Verdict
from bot.triage.signature import signature
from bot.triage.verdict import decide_extraction
from tests.github_markdown import shown_text, to_html

HEAD = "0123456789abcdef0123456789abcdef01234567"
REFUSED = (
    'sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server at "db", '
    "port 5432 failed: Connection refused"
)
PAGE = "https://triage.example.org/octo/bus/pull/7"


def failure(test_id: str, message: str = REFUSED) -> Failure:
    return Failure(
        test_id=test_id,
        name=test_id.rpartition("::")[2],
        framework="pytest",
        message=message,
        signature=signature(message),
    )


def check(
    decisions: list[Decision],
    *,
    name: str = "unit",
    conclusion: str = "failure",
    attempt: int = 1,
    rerun_note: str | None = None,
) -> CheckReport:
    return CheckReport(
        check_name=name,
        html_url=f"https://github.com/octo/bus/actions/runs/1/job/{abs(hash(name)) % 1000}",
        head_sha=HEAD,
        attempt=attempt,
        conclusion=conclusion,
        decisions=decisions,
        rerun_note=rerun_note,
    )


def comment(*checks: CheckReport, dashboard_url: str = "") -> str:
    return render_comment(
        CommentInput(
            repo="octo/bus",
            pr_number=7,
            head_sha=HEAD,
            checks=list(checks),
            dashboard_url=dashboard_url,
        )
    )


def mass(count: int, message: str = REFUSED) -> list[Decision]:
    failures = [failure(f"tests/db/test_m{n:03d}.py::test_{n}", message) for n in range(count)]
    return decide_extraction(Extraction(failures=failures, mass_failure=True), ["docs/index.md"])


def decision(test_id: str, verdict: Verdict, evidence: str = "e", **extra: object) -> Decision:
    return Decision(
        failure=failure(test_id, f"AssertionError: {test_id}"),
        verdict=verdict,
        evidence=evidence,
        **extra,
    )


def table_rows(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.startswith("| [")]


def test_forty_failures_with_one_error_are_one_row_and_one_section() -> None:
    text = comment(check(mass(40)))
    rendered = to_html(text)

    (row,) = table_rows(text)
    assert "| 40 tests | unknown | 40 tests failed with `sqlalchemy.exc.OperationalError" in row
    assert row.endswith("— mass failure, not judged test by test |  |")
    assert rendered.count("<tr>") == 2  # the header and one row
    assert rendered.count("<details>") == 1
    (ids,) = re.findall(r"<strong>The 40 tests:</strong>\s*<ul>(.*?)</ul>", rendered, re.DOTALL)
    assert ids.count("<li>") == 40
    assert text.count(REFUSED) == 1  # the error once, whole, in the section
    assert len(text.encode()) < 5_000


def test_four_hundred_list_fifty_ids_and_send_the_rest_to_the_dashboard() -> None:
    text = comment(check(mass(400)), dashboard_url=PAGE)

    assert len(table_rows(text)) == 1
    assert text.count("  - `tests/db/") == 50
    assert f"  - and 350 more (every one on [the dashboard]({PAGE}))" in text
    assert f"[Every result on the dashboard]({PAGE})." in text
    assert len(text.encode()) < 6_000


def test_rows_gather_only_one_jobs_failures_with_the_same_verdict_and_error() -> None:
    other_error = failure("tests/db/test_z.py::test_z", "TimeoutError: the pool is exhausted")
    same_job = [
        *mass(3),
        Decision(failure=other_error, verdict=Verdict.UNKNOWN, evidence="e"),
        Decision(failure=failure("tests/a.py::test_a"), verdict=Verdict.RELATED, evidence="r"),
    ]
    text = comment(check(same_job), check(mass(2), name="integration"))

    rows = table_rows(text)
    assert len(rows) == 4  # related; unknown x3 (one error); unknown (other error); other job
    assert rows[0].split(" | ")[2] == "related"
    assert [("3 tests" in r, "2 tests" in r) for r in rows[1:]].count((True, False)) == 1
    assert sum("| 2 tests |" in r for r in rows) == 1


def test_failures_without_a_signature_keep_a_row_each() -> None:
    decisions = [
        Decision(
            failure=Failure(test_id=f"t::{n}", name=str(n), framework="pytest"),
            verdict=Verdict.UNRELATED,
            evidence="e",
        )
        for n in range(3)
    ]
    assert len(table_rows(comment(check(decisions)))) == 3


def test_a_handful_of_rows_worst_first_and_the_rest_counted_with_a_link() -> None:
    flaky = [decision(f"tests/f.py::test_{n}", Verdict.FLAKY) for n in range(10)]
    related = [decision("tests/r.py::test_r", Verdict.RELATED, matched_paths=["src/r.py"])]
    text = comment(
        check(flaky, name="flaky-job", conclusion="success", attempt=2),
        check(related, name="zz-last-by-name"),
        dashboard_url=PAGE,
    )

    rows = table_rows(text)
    assert len(rows) == ROWS_SHOWN
    assert "zz-last-by-name" in rows[0]  # related comes first whatever the check's name
    hidden = 11 - ROWS_SHOWN
    assert (
        f"_{hidden} more rows not shown ({hidden} likely flaky): every result, with its "
        f"evidence, is on [the dashboard]({PAGE})._"
    ) in text
    assert text.count("<details>") == ROWS_SHOWN


def test_the_first_lines_say_what_to_do_in_the_order_to_act() -> None:
    text = comment(
        check([decision("tests/f.py::test_f", Verdict.FLAKY, tracking_issue=12)], name="a"),
        check([decision("tests/b.py::test_b", Verdict.BROKEN_BASE)], name="b"),
        check(
            [Decision(failure=None, verdict=Verdict.INFRA, evidence="runner lost")],
            name="c",
            rerun_note="rerun requested (attempt 2)",
        ),
        check(mass(12), name="d"),
        check(
            [decision("tests/r.py::test_r", Verdict.RELATED, matched_paths=["src/r.py"])],
            name="e",
        ),
    )
    advice = [line for line in text.split("\n") if line.startswith("- **")][:5]

    assert advice == [
        "- **Related to this PR** (1 failure) — look at these changed files first: `src/r.py`.",
        "- **Not judged** (12 failures) — many tests failed at once in one job: look for the "
        "cause they share (a service that did not start, a setup step) before the tests "
        "themselves.",
        "- **Failing on the base branch too** (1 failure) — not your PR: the base branch fails "
        "the same way. Rebase once it is green.",
        "- **Infrastructure** (1 check) — not a test: a rerun was requested, nothing to do.",
        "- **Likely flaky or unrelated to this PR** (1 failure) — nothing points at this PR: "
        "`/flaky rerun` to run them again. Tracked in #12.",
    ]
    rendered = to_html(text)
    assert rendered.index("<ul>") < rendered.index("<table>")  # advice before the table
    (first_list,) = re.findall(r"<ul>(.*?)</ul>", rendered, re.DOTALL)[:1]
    assert first_list.count("<li>") == 5
    assert "look at these changed files first" in shown_text(first_list)


def test_failing_again_on_rerun_says_so() -> None:
    text = comment(check([decision("tests/u.py::test_u", Verdict.UNRELATED)], attempt=2))
    assert (
        "— they failed again on rerun: try `/flaky rerun` once more, or ask a maintainer." in text
    )


def test_flaky_after_a_passing_rerun_asks_nothing() -> None:
    text = comment(
        check(
            [decision("tests/f.py::test_f", Verdict.FLAKY, tracking_issue=3)],
            conclusion="success",
            attempt=2,
            rerun_note="passed on rerun",
        )
    )
    assert (
        "- **Likely flaky or unrelated to this PR** (1 failure) — nothing to do: the rerun "
        "passed. Tracked in #3." in text
    )


def test_the_table_shortens_the_evidence_and_the_details_say_it_whole() -> None:
    long = "this PR changes none of the paths it depends on: " + ", ".join(
        f"src/module_{n}.py" for n in range(40)
    )
    item = Evidence(kind=EvidenceKind.NO_OVERLAP, text=long)
    text = comment(
        check([decision("tests/u.py::test_u", Verdict.UNRELATED, evidence=long, items=[item])])
    )

    (row,) = table_rows(text)
    cell = row.split(" | ")[3]
    assert cell.endswith("…") and len(cell) < 200
    assert "src/module\\_39.py" in text.split("<details>", 1)[1]
