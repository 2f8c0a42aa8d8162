"""The sticky PR comment: headline, table, details, outdated section, cap, determinism.

Modelled on what PyTorch's Dr. CI comment does well (docs: /work/shared/style.md):
one comment found by marker, a headline that says the outcome with counts,
failures grouped by verdict with evidence, details collapsed.
"""

from __future__ import annotations

import re

import pytest

from bot.report.comment import COMMANDS, MARKER, MAX_LENGTH, ROWS_SHOWN, render_comment
from bot.report.models import CheckReport, CommentInput
from bot.triage.models import (
    Confidence,
    Decision,
    Evidence,
    EvidenceKind,
    Failure,
    PastOccurrence,
    RunRate,
    Verdict,
)
from bot.triage.verdict import decide

HEAD = "0123456789abcdef0123456789abcdef01234567"
OLD_HEAD = "fedcba9876543210fedcba9876543210fedcba98"
JOB_URL = "https://github.com/octo/bus/actions/runs/11/job/22"


def failure(
    test_id: str = "tests/bus/test_core.py::TestBus::test_publish",
    message: str = "AssertionError: assert 1 == 2",
) -> Failure:
    return Failure(
        test_id=test_id,
        name=test_id.rpartition("::")[2],
        framework="pytest",
        location="src/bus/core.py:42",
        message=message,
        trace_paths=["src/bus/core.py"],
    )


def check(
    decisions: list[Decision],
    *,
    name: str = "unit (3.11)",
    conclusion: str = "failure",
    attempt: int = 1,
    rerun_note: str | None = None,
    head_sha: str = HEAD,
    url: str = JOB_URL,
) -> CheckReport:
    return CheckReport(
        check_name=name,
        html_url=url,
        head_sha=head_sha,
        attempt=attempt,
        conclusion=conclusion,
        decisions=decisions,
        rerun_note=rerun_note,
    )


def comment(*checks: CheckReport, outdated: list[CheckReport] | None = None) -> str:
    inp = CommentInput(
        repo="octo/bus", pr_number=7, head_sha=HEAD, checks=list(checks), outdated=outdated or []
    )
    return render_comment(inp)


def headline_of(text: str) -> str:
    return text.split("\n")[1]


def outside_code(text: str) -> str:
    """The comment with fenced blocks and code spans removed: the parts GitHub
    scans for mentions, references and HTML."""
    text = re.sub(r"^(`{3,})text\n.*?\n\1$", "", text, flags=re.MULTILINE | re.DOTALL)
    return re.sub(r"(?<!\\)(`+)(?!`).*?(?<!`)\1(?!`)", "", text)


UNRELATED = decide([failure()], ["docs/index.md"])
FLAKY = decide([failure()], ["docs/index.md"], passed_on_rerun=True)
RELATED = decide([failure()], ["src/bus/core.py"])
NO_TEST = decide([], ["docs/index.md"])
UNKNOWN_PASSED = decide([failure()], ["src/bus/wire.py"], passed_on_rerun=True, imports={})


@pytest.mark.parametrize(
    ("checks", "headline"),
    [
        ([check(FLAKY)], "**1 failure — likely flaky, unrelated to this PR**"),
        (
            [check(RELATED), check(UNRELATED, name="lint")],
            "**2 failures — 1 related to this PR**",
        ),
        ([check(RELATED)], "**1 failure — related to this PR**"),
        (
            [check(UNRELATED, rerun_note="rerun requested (attempt 2)")],
            "**1 failure — unrelated to this PR (rerun pending)**",
        ),
        (
            [check(decide([failure()], ["x.md"], reproduced_on_rerun=True), attempt=2)],
            "**1 failure — unrelated to this PR (failed again on rerun)**",
        ),
        ([check(UNRELATED)], "**1 failure — unrelated to this PR**"),
        (
            [check(FLAKY, conclusion="success", attempt=2, rerun_note="passed on rerun")],
            "**All checks pass after rerun — likely flaky, unrelated to this PR**",
        ),
        (
            [
                check(
                    decide([failure()], ["src/bus/core.py"], passed_on_rerun=True),
                    conclusion="success",
                )
            ],
            "**1 failure — related to this PR; all checks pass after rerun**",
        ),
        (
            [check(UNKNOWN_PASSED, conclusion="success", attempt=2)],
            "**All checks pass after rerun — flaky, but this PR's changes could not be ruled out**",
        ),
        (
            [check(UNKNOWN_PASSED, conclusion="success", attempt=2), check(FLAKY, name="e2e")],
            "**2 failures — 1 flaky, but this PR's changes could not be ruled out; "
            "1 likely flaky, unrelated to this PR**",
        ),
        ([check(NO_TEST)], "**1 check failed — no failed test identified**"),
        (
            [check([Decision(failure=None, verdict=Verdict.INFRA, evidence="runner lost")])],
            "**1 check failed — infrastructure failure, not a test**",
        ),
        ([check([])], "**1 check failed — no failed test identified**"),
        (
            [
                check([Decision(failure=None, verdict=Verdict.INFRA, evidence="runner lost")]),
                check(NO_TEST, name="e2e"),
            ],
            "**2 checks failed — 1 with no failed test identified; 1 infrastructure, not a test**",
        ),
        (
            [check(FLAKY), check(UNRELATED * 2, name="e2e", rerun_note="rerun requested")],
            "**3 failures — 1 likely flaky, unrelated to this PR; "
            "2 unrelated to this PR (rerun pending)**",
        ),
        (
            [check(FLAKY), check(NO_TEST, name="build")],
            "**1 failure — likely flaky, unrelated to this PR; "
            "1 more check with no test identified**",
        ),
        ([], "**No failed checks on this commit**"),
    ],
)
def test_headline_says_the_outcome_with_counts(checks: list[CheckReport], headline: str) -> None:
    text = comment(*checks)

    assert text.split("\n")[0] == MARKER
    assert headline_of(text) == headline


def test_an_unknown_failure_that_passed_on_rerun_is_flaky_but_never_unrelated() -> None:
    text = comment(check(UNKNOWN_PASSED, conclusion="success", attempt=2))

    assert "| flaky, change not ruled out |" in text
    assert "- **Verdict:** flaky, change not ruled out (confidence: low)" in text
    assert (
        "passed on rerun, so flaky, but the bot could not rule out the changes of this PR "
        "named below: look at them before merging."
    ) in text
    assert "this PR's change to src/bus/wire.py could not be ruled out" in text
    assert "unrelated" not in text
    # Still failing, it is unknown as before.
    failing = comment(check(decide([failure()], ["src/bus/wire.py"], imports={})))
    assert "| unknown |" in failing and "flaky" not in headline_of(failing)


def test_table_row_links_the_check_and_shows_test_verdict_and_evidence() -> None:
    text = comment(check(RELATED))

    assert (
        "| [unit (3.11)](https://github.com/octo/bus/actions/runs/11/job/22) "
        "| `tests/bus/test_core.py::TestBus::test_publish` | related "
        "| this PR changes src/bus/core.py, which is in its traceback |  |"
    ) in text.split("\n")


def test_rows_are_ordered_by_what_needs_attention_first() -> None:
    text = comment(
        check(FLAKY, name="a-flaky"), check(UNRELATED, name="b-unrelated"), check(RELATED, name="z")
    )

    rows = [line for line in text.split("\n") if line.startswith("| [")]
    assert [row.split("|")[3].strip() for row in rows] == ["related", "unrelated", "likely flaky"]


def test_details_show_footprint_changed_paths_message_location_and_rerun() -> None:
    text = comment(check(RELATED, rerun_note="rerun requested (attempt 2)"))

    details = text[text.index("<details>") : text.index("</details>")]
    assert "<summary>test_publish in unit (3.11): related</summary>" in details
    assert "- **Changed paths in its footprint:** `src/bus/core.py` (in traceback)" in details
    assert "`tests/bus/` (test package directory)" in details
    assert "- **Location:** `src/bus/core.py:42`" in details
    assert "- **Rerun:** rerun requested (attempt 2)" in details
    assert "```text\nAssertionError: assert 1 == 2\n```" in details


def test_no_details_section_for_a_check_without_an_identified_test() -> None:
    assert "<details>" not in comment(check(NO_TEST))


def test_hostile_test_names_and_messages_stay_inert() -> None:
    hostile = "tests/test_x.py::test_`a|b`<script>alert(1)</script>@everyone #1"
    message = "boom | <img src=x onerror=alert(1)>\n```\n@everyone see #1 and GH-2\n```\n</details>"
    decisions = decide([failure(hostile, message)], ["docs/index.md"])

    text = comment(check(decisions, name="build | <b>@everyone</b> #1", url=JOB_URL + ")|x"))

    (row,) = [line for line in text.split("\n") if line.startswith("| [")]
    assert len(re.findall(r"(?<!\\)\|", row)) == 6, "a cell was split"
    assert "(https://github.com/octo/bus/actions/runs/11/job/22%29%7Cx)" in row
    visible = outside_code(text)
    assert re.search(r"<(script|img|b)\b", visible) is None
    assert re.search(r"@everyone|#\d|GH-\d", visible) is None
    assert visible.count("</details>") == visible.count("<details>") == 1
    excerpt = re.search(r"^(`{3,})text\n(.*?)\n\1$", text, re.MULTILINE | re.DOTALL)
    assert excerpt is not None and "</details>" in excerpt[2], "the excerpt was cut or lost"
    assert re.search(r"@everyone|#\d|GH-\d", excerpt[2]) is None


def test_a_non_http_link_is_not_linked() -> None:
    text = comment(check(RELATED, url="javascript:alert(1)"))

    assert "javascript:" not in text
    assert "| unit (3.11) |" in text


def test_outdated_results_are_one_collapsed_section() -> None:
    old = check(UNRELATED, head_sha=OLD_HEAD, name="old-check")

    text = comment(check(RELATED), outdated=[old, old.model_copy(update={"check_name": "lint"})])

    section = text[text.index("Outdated (earlier commits)") :]
    assert text.count("Outdated (earlier commits)") == 1
    assert "<details>\n<summary>Outdated (earlier commits)</summary>" in text
    assert "| fedcba9 | [old-check](" in section
    assert "| fedcba9 | [lint](" in section
    assert "Outdated" not in comment(check(RELATED))


def test_footer_lists_commands_on_one_line_with_the_short_head_sha() -> None:
    footer = comment(check(RELATED)).rstrip("\n").split("\n")[-1]

    assert all(f"`{command}`" in footer for command in COMMANDS)
    assert "0123456" in footer and HEAD not in footer


def test_same_input_same_text_whatever_the_order_of_checks() -> None:
    checks = [check(RELATED, name="z"), check(FLAKY, name="a"), check(NO_TEST, name="m")]

    first = comment(*checks)

    assert comment(*checks) == first
    assert comment(*reversed(checks)) == first


def test_the_bot_writes_no_exclamation_marks() -> None:
    texts = [
        comment(
            check(RELATED), check(FLAKY, name="a"), outdated=[check(UNRELATED, head_sha=OLD_HEAD)]
        ),
        comment(check(NO_TEST)),
        comment(check(FLAKY, conclusion="success")),
        comment(check(UNRELATED, rerun_note="rerun requested")),
    ]

    for text in texts:
        assert "!" not in text.replace(MARKER, "")


def test_five_thousand_failures_show_a_handful_of_rows_and_count_the_rest() -> None:
    # Each failure has its own error, so none share a row: the table stops at ROWS_SHOWN
    # and says how many it left out, well under GitHub's cap (it used to fill the cap).
    failures = [
        failure(f"tests/pkg{n % 50}/test_mod{n}.py::test_case_{n}", "E   " + "x" * 500 + "\nmore")
        for n in range(5000)
    ]
    current = check(decide(failures, ["docs/index.md"]), rerun_note="rerun requested")
    older = check(decide(failures[:300], ["docs/index.md"]), head_sha=OLD_HEAD)

    text = comment(current, outdated=[older])

    assert len(text.encode()) < 16_000
    assert headline_of(text) == "**5,000 failures — unrelated to this PR (rerun pending)**"
    rows = [line for line in text.split("\n") if line.startswith("| [unit")]
    assert len(rows) == ROWS_SHOWN
    assert len([line for line in text.split("\n") if line.startswith("| fedcba9 |")]) == ROWS_SHOWN
    assert text.count("<details>") == ROWS_SHOWN + 1  # one per row shown, and the outdated
    assert "_4,992 more rows not shown (4,992 unrelated); 292 more outdated rows" in text
    assert "Left out to fit" not in text
    assert text.rstrip("\n").endswith("This comment describes 0123456.</sub>")
    assert comment(current, outdated=[older]) == text


def test_details_go_before_rows_when_the_cap_is_near() -> None:
    # Details say the evidence whole: eight of them with long evidence overflow the cap.
    items = [Evidence(kind=EvidenceKind.HISTORY, text=f"{k} " + "y" * 1990) for k in range(8)]
    decisions = [
        Decision(
            failure=failure(f"tests/test_{n}.py::test_{n}", "y" * 2900),
            verdict=Verdict.UNRELATED,
            evidence="e",
            items=items,
        )
        for n in range(ROWS_SHOWN)
    ]

    text = comment(check(decisions))

    assert len(text) <= MAX_LENGTH
    assert len([line for line in text.split("\n") if line.startswith("| [")]) == ROWS_SHOWN
    assert 0 < text.count("<details>") < ROWS_SHOWN
    assert f"{ROWS_SHOWN - text.count('<details>')} of {ROWS_SHOWN} failure details" in text


def test_verdict_words_cover_every_verdict() -> None:
    for verdict in Verdict:
        decision = Decision(failure=failure(), verdict=verdict, evidence="e")
        assert comment(check([decision])).count("| e |") == 1


def rich(decision: Decision, **update: object) -> list[Decision]:
    return [decision.model_copy(update=update)]


def test_the_tracking_issue_is_linked_from_the_row_and_the_details() -> None:
    text = comment(check(rich(FLAKY[0], tracking_issue=12)))

    (row,) = [line for line in text.split("\n") if line.startswith("| [")]
    assert row.endswith("| #12 |")
    assert "- **Tracking issue:** #12" in text


def test_details_list_every_evidence_item_caveat_rate_and_earlier_runs() -> None:
    decision = rich(
        UNRELATED[0],
        confidence=Confidence.LOW,
        items=[
            Evidence(kind=EvidenceKind.NO_OVERLAP, text="no changed path in its footprint"),
            Evidence(kind=EvidenceKind.RISKY, text="this PR changes uv.lock | deps"),
        ],
        caveats=["uv.lock can break any test"],
        rate=RunRate(failures=3, runs=20, low=0.05, high=0.36, flips=2, flip_commits=2),
        history=[
            PastOccurrence(
                pr_number=5, author="ann", head_sha="a" * 40, check_name="unit",
                at=1_714_000_000, same_signature=True, passed_on_rerun=True,
            ),
            PastOccurrence(
                pr_number=None, branch="main", head_sha="b" * 40, check_name="unit",
                at=1_714_500_000, same_signature=False,
            ),
        ],
    )  # fmt: skip

    details = comment(check(decision))

    assert "- **Verdict:** unrelated (confidence: low)" in details
    assert "  - no changed path in its footprint\n  - this PR changes uv.lock \\| deps" in details
    assert "- **Caveats:** uv.lock can break any test" in details
    assert "- **Failure rate:** failed 3 of 20 runs (15 %, 95 % CI 5\u201336 %)" in details
    assert "flipped between pass and fail 2 times on 2 commits" in details
    assert (
        "- **Seen before:** 1 other PR by 1 author, on `main`; 1 of 2 with the same error, "
        "1 passed on rerun; last 2024-04-30"
    ) in details
    # Counts, not references: naming other PRs would link each back to this one.
    assert "#5" not in details


def test_all_checks_pass_when_nothing_failed_and_comment_is_always() -> None:
    inp = CommentInput(repo="octo/bus", pr_number=7, head_sha=HEAD, checks=[], passing_checks=3)

    assert headline_of(render_comment(inp)) == "**All checks pass (3 checks)**"


def test_footer_names_the_problems_in_the_repository_settings_harmlessly() -> None:
    inp = CommentInput(
        repo="octo/bus",
        pr_number=7,
        head_sha=HEAD,
        checks=[check(RELATED)],
        config_problems=["unknown key 'comments'", "max_reruns: ping @admin about #3 | x"],
    )

    footer = render_comment(inp).split("</details>")[-1]

    assert "Ignored in `.github/flaky.yml`: unknown key 'comments'; max\\_reruns" in footer
    assert "@admin" not in footer and "#3" not in footer and "\\| x" in footer


def test_footer_names_the_settings_files_only_when_given() -> None:
    inp = CommentInput(repo="octo/bus", pr_number=7, head_sha=HEAD, checks=[check(RELATED)])
    assert "Settings from" not in render_comment(inp)

    inp.settings_from = ["octo/bus", "octo/.github", "other/base_set:ci/flaky.yml"]
    footer = render_comment(inp).split("</details>")[-1]

    (line,) = [line for line in footer.splitlines() if "Settings from" in line]
    assert line == (
        "<sub>Settings from `.github/flaky.yml` of octo/bus over octo/.github over "
        "other/base\\_set:ci/flaky.yml.</sub>"
    )


def test_a_log_line_with_a_mention_and_pipes_renders_harmless() -> None:
    line = "| pipes | in a table @someone said see #42 and `ticks`"
    decisions = decide([failure(message=line)], ["docs/index.md"])
    decisions = rich(decisions[0], items=[Evidence(kind=EvidenceKind.HISTORY, text=line)])

    text = comment(check(decisions))

    (row,) = [row for row in text.split("\n") if row.startswith("| [")]
    assert len(re.findall(r"(?<!\\)\|", row)) == 6, "a cell was split"
    visible = outside_code(text)
    assert "@someone" not in visible and "#42" not in visible
    assert "@\u200bsomeone" in visible
