"""Tracking issues, the pure parts: titles, the bot's section, people's text, the threshold."""

from __future__ import annotations

import re

import pytest

from bot.report.issue import (
    END,
    MAX_LENGTH,
    MAX_TITLE,
    OCCURRENCES_SHOWN,
    SECTION_ROOM,
    START,
    compose,
    hidden_data,
    human_text,
    render_body,
    render_section,
    run_command,
    title,
    tracking_key,
)
from bot.report.models import CheckRate, IssueInput, IssueOccurrence
from bot.triage.models import (
    Decision,
    Evidence,
    EvidenceKind,
    Failure,
    PastOccurrence,
    RunHint,
    RunRate,
    Verdict,
)
from bot.triage.tracking import CLUSTER_PREFIX, threshold_reason, units

T0 = 1_714_000_000.0  # 2024-04-24 23:06 UTC
DAY = 86_400.0
TEST = "tests/bus/test_core.py::test_publish"


def occurrence(n: int, **update: object) -> IssueOccurrence:
    base = IssueOccurrence(
        at=T0 + n * 3600,
        test_id=TEST,
        signature="TimeoutError: ack not received within <duration>",
        location="src/bus/core.py:112",
        pr_number=7 + n,
        head_sha=f"{n:040x}",
        check_name="tests (3.12)",
        html_url=f"https://github.com/acme/bus/actions/runs/1/job/{n}",
    )
    return base.model_copy(update=update)


def issue_input(occurrences: list[IssueOccurrence], **update: object) -> IssueInput:
    inp = IssueInput(
        key="tests.bus.test_core.test_publish",
        tests=[TEST],
        occurrences=occurrences,
        rates=[
            CheckRate(
                check_name="tests (3.12)",
                rate=RunRate(failures=3, runs=20, low=0.052, high=0.36),
            )
        ],
        hint=RunHint(framework="pytest", file="tests/bus/test_core.py", name="test_publish",
                     test_id=TEST),
    )  # fmt: skip
    return inp.model_copy(update=update)


# --- titles ------------------------------------------------------------------------------


def test_titles_name_the_test_or_the_cluster() -> None:
    assert title([TEST]) == f"Flaky test: {TEST}"
    assert title(["a", "b", "c"], "ConnectionResetError: peer reset") == (
        "Flaky failure: ConnectionResetError: peer reset (3 tests)"
    )


def test_titles_are_inert_and_within_githubs_limit() -> None:
    hostile = title(["tests/x.py::test_@admin_#12\nsecond line" + "y" * 400])

    assert len(hostile) <= MAX_TITLE
    assert "@admin" not in hostile and "#12" not in hostile and "\n" not in hostile
    assert hostile.endswith("…")


# --- the bot's section and people's text ---------------------------------------------------


def test_the_hidden_block_round_trips_even_a_key_that_could_end_the_comment() -> None:
    key = "tests/x.py::test_a[-->]<script>&"
    body = render_section(issue_input([]).model_copy(update={"key": key}))

    assert tracking_key(body) == key
    hidden = body[: body.index("-->") + 3]
    assert hidden.startswith(START) and hidden.count("-->") == 1
    assert "<script>" not in body
    data = hidden_data(body)
    assert data is not None and data["tests"] == [TEST] and data["v"] == 1


def test_no_hidden_block_no_key() -> None:
    assert tracking_key("a human issue") is None
    assert tracking_key(None) is None
    assert tracking_key(START + "{not json} -->") is None


def test_compose_replaces_only_the_section_and_keeps_text_around_it() -> None:
    old = compose(None, render_section(issue_input([occurrence(1)])))
    edited = "Summary people wrote first.\n\n" + old + "\nNotes below, with @bob and | pipes |.\n"

    new = compose(edited, render_section(issue_input([occurrence(1), occurrence(2)])))

    assert new.startswith("Summary people wrote first.\n\n" + START)
    assert new.endswith(END + "\n\nNotes below, with @bob and | pipes |.\n")
    assert new.count(START) == 1 and new.count(END) == 1
    assert "2 failures recorded" in new and "1 failure recorded" not in new


def test_adopting_puts_the_section_on_top_of_the_human_text() -> None:
    human = "It fails on Tuesdays.\n\n- [ ] check the broker"

    body = compose(human, render_section(issue_input([occurrence(1)])))

    assert body.startswith(START)
    assert body.endswith("\n\n" + human + "\n")
    assert compose(body, render_section(issue_input([occurrence(1)]))) == body


def test_a_deleted_end_marker_makes_the_rest_ours_not_a_second_section() -> None:
    section = render_section(issue_input([occurrence(1)]))
    broken = "Intro.\n\n" + section.replace(END, "")

    body = compose(broken, section)

    assert body == "Intro.\n\n" + section + "\n"


# --- what the section says -----------------------------------------------------------------


def test_summary_gives_the_rate_with_its_interval_and_the_span_seen() -> None:
    body = render_section(
        issue_input(
            [occurrence(0), occurrence(30, pr_number=None, branch="main")], previous_issue=3
        )
    )

    assert "**Failed 3 of 20 runs (15 %, 95 % CI 5\u201336 %) of `tests (3.12)`.**" in body
    assert (
        "First seen 2024-04-24, last seen 2024-04-26; 2 failures recorded, on "
        "1 pull request (#7), branch `main`."
    ) in body
    assert "Continues #3, closed earlier." in body


def test_failure_modes_tally_signature_and_location_most_frequent_first() -> None:
    occurrences = [
        occurrence(1),
        occurrence(2),
        occurrence(3, signature="KeyError: 'id'", location="src/bus/routing.py:40"),
        occurrence(4),
    ]

    body = render_section(issue_input(occurrences))

    rows = [line for line in body.split("\n") if line.startswith("| `")]
    assert rows == [
        "| `TimeoutError: ack not received within <duration>` | `src/bus/core.py:112` "
        "| 3 | 2024-04-25 |",
        "| `KeyError: 'id'` | `src/bus/routing.py:40` | 1 | 2024-04-25 |",
    ]


def test_occurrences_newest_first_with_pr_or_branch_commit_job_attempt_and_rerun() -> None:
    occurrences = [
        occurrence(1, rerun="passed on rerun"),
        occurrence(2, pr_number=None, branch="main", attempt=2, rerun="failed again on rerun"),
    ]

    body = render_section(issue_input(occurrences))

    rows = [line for line in body.split("\n") if line.startswith("| 2024")]
    assert rows == [
        "| 2024-04-25 01:06 | `main` | `0000000` "
        "| [tests (3.12)](https://github.com/acme/bus/actions/runs/1/job/2) | 2 "
        "| failed again on rerun |",
        "| 2024-04-25 00:06 | #8 | `0000000` "
        "| [tests (3.12)](https://github.com/acme/bus/actions/runs/1/job/1) | 1 "
        "| passed on rerun |",
    ]


def test_a_cluster_lists_its_tests_and_names_the_test_in_each_occurrence() -> None:
    tests = [f"tests/test_{n}.py::test_{n}" for n in range(30)]
    inp = issue_input([occurrence(1, test_id=tests[4])]).model_copy(
        update={"tests": tests, "signature": "OSError: [Errno 98] address in use", "hint": None}
    )

    body = render_section(inp)

    assert "Signature: `OSError: [Errno 98] address in use`" in body
    assert "- `tests/test_0.py::test_0`" in body
    assert "- and 5 more" in body
    assert "| When (UTC) | Test | Where |" in body
    assert "`tests/test_4.py::test_4` | #8 |" in body


def test_a_clusters_tests_that_failed_in_one_job_are_one_row() -> None:
    tests = [f"tests/test_{n}.py::test_{n}" for n in range(40)]
    same_job = [occurrence(1, test_id=test) for test in tests]  # one job, one attempt
    older_jobs = [occurrence(-n, test_id=test) for n in range(1, 13) for test in tests[:3]]
    inp = issue_input(
        same_job + older_jobs, dashboard_url="https://triage.example.org/acme/bus"
    ).model_copy(update={"tests": tests, "signature": "OSError: address in use", "hint": None})

    body = render_section(inp)

    rows = [line for line in body.split("\n") if line.startswith("| 2024-")]
    assert len(rows) == OCCURRENCES_SHOWN
    assert "| 40 tests | #8 |" in rows[0]
    assert all("| 3 tests |" in row for row in rows[1:])
    assert (
        "3 older job runs (9 failures) not shown: every one is on "
        "[the dashboard](https://triage.example.org/acme/bus)."
    ) in body


def test_an_empty_record_says_so() -> None:
    body = render_section(issue_input([], rates=[]))

    assert "**No failure recorded in the last 30 days.**" in body
    assert "### Occurrences\n\nNone recorded yet." in body


def test_thousands_of_occurrences_are_capped_with_a_count_of_older_ones() -> None:
    body = render_body(issue_input([occurrence(n) for n in range(5000)]))

    assert body is not None and len(body) <= MAX_LENGTH
    assert "4,990 older occurrences not shown." in body  # a handful of rows, as in the PR comment
    assert "5,000 failures recorded" in body


def test_long_human_text_gets_fewer_occurrences_shown_beside_it_never_a_cut() -> None:
    human = "notes " * 9_000  # 54,000 characters people wrote
    inp = issue_input([occurrence(n) for n in range(200)])

    body = render_body(inp, existing=human)

    assert body is not None and len(body) <= MAX_LENGTH
    assert body.endswith(human.strip("\n") + "\n")
    assert "older occurrences not shown" in body
    assert tracking_key(body) == "tests.bus.test_core.test_publish"


def test_human_text_with_no_room_left_for_the_section_is_not_cut_but_not_written() -> None:
    human = "notes " * 10_800  # 64,800 characters people wrote

    assert render_body(issue_input([occurrence(n) for n in range(200)]), existing=human) is None


def test_a_busy_tests_section_fits_the_room_an_adopted_issue_keeps_for_it() -> None:
    test_id = "tests/" + "x" * 280 + ".py::test_y"  # about a command's longest argument
    checks = [f"integration / {'matrix-entry-' * 6}{n}" for n in range(4)]
    occurrences = [
        occurrence(
            n,
            test_id=test_id,
            signature=f"Error{n % 20}: " + "m" * 200,
            location="src/" + "d/" * 40 + f"f{n % 20}.py:1234",
            check_name=checks[n % 4],
            html_url="https://github.com/acme-corporation/a-rather-long-repository-name/"
            f"actions/runs/{10**10 + n}/job/{10**11 + n}",
            pr_number=10_000 + n,  # 200 pull requests, each listed in the summary
            rerun="failed again on rerun",
        )
        for n in range(200)
    ]
    rate = RunRate(failures=200, runs=900, low=0.2, high=0.25)
    inp = issue_input(
        occurrences,
        tests=[test_id],
        rates=[CheckRate(check_name=check, rate=rate) for check in checks],
        hint=RunHint(framework="pytest", file="tests/x.py", name="test_y", test_id=test_id),
    )

    assert len(render_section(inp)) <= SECTION_ROOM


def test_human_text_is_the_body_without_the_bots_section() -> None:
    section = render_section(issue_input([occurrence(1)]))

    assert human_text(None) == ""
    assert human_text("Only people's words.") == "Only people's words."
    assert human_text("Intro.\n\n" + section + "\n\nNotes.") == "Intro.\n\n\n\nNotes."


def test_the_section_writes_no_exclamation_marks_and_pings_no_one() -> None:
    hostile = occurrence(1, signature="AssertionError: @everyone look at #5 | x |")

    body = render_section(issue_input([hostile]))

    assert "!" not in body.replace("<!--", "")
    assert "@everyone" not in body and "#5" not in body
    (row,) = [line for line in body.split("\n") if line.startswith("| `Assert")]
    assert len(re.findall(r"(?<!\\)\|", row)) == 5


@pytest.mark.parametrize(
    ("hint", "command"),
    [
        (RunHint(framework="pytest", name="t", test_id="tests/a b.py::t[x]"),
         "python -m pytest 'tests/a b.py::t[x]'"),
        (RunHint(framework="go", file="pkg/bus/bus_test.go", name="TestAck/slow", test_id="x"),
         "go test ./pkg/bus -run '^TestAck$/^slow$' -count=1"),
        (RunHint(framework="jest", file="src/a.test.ts", name="adds one", test_id="x"),
         "npx jest src/a.test.ts -t 'adds one'"),
        (RunHint(framework="cargo", name="bus::tests::ack", test_id="x"),
         "cargo test -- --exact bus::tests::ack"),
        (RunHint(framework="gradle", name="m", test_id="com.acme.BusTest#ack"),
         "./gradlew test --tests com.acme.BusTest.ack"),
        (RunHint(framework="scenario", name="boot", test_id="boot"), None),
    ],
)  # fmt: skip
def test_run_alone_commands_are_quoted_for_the_shell(hint: RunHint, command: str | None) -> None:
    assert run_command(hint) == command


# --- the threshold and the units ------------------------------------------------------------


def failed(
    test_id: str, signature: str = "ValueError: bad frame 0x<hex>", **update: object
) -> Decision:
    failure = Failure(
        test_id=test_id, name=test_id, framework="pytest",
        message=signature.replace("<hex>", "1f"), signature=signature,
    )  # fmt: skip
    decision = Decision(failure=failure, verdict=Verdict.UNRELATED, evidence="e")
    return decision.model_copy(update=update)


def past(
    author: str | None, pr: int | None, *, same: bool = True, branch: str | None = None
) -> PastOccurrence:
    return PastOccurrence(
        pr_number=pr, author=author, branch=branch, head_sha="f" * 40, check_name="unit",
        at=T0, same_signature=same,
    )  # fmt: skip


def test_only_flaky_unrelated_and_broken_base_failures_are_trackable() -> None:
    decisions = [
        failed("t.py::a", verdict=Verdict.RELATED),
        failed("t.py::b", verdict=Verdict.INFRA),
        failed("t.py::c", verdict=Verdict.FLAKY),
        failed("t.py::d", verdict=Verdict.BROKEN_BASE),
        Decision(failure=None, verdict=Verdict.UNKNOWN, evidence="none"),
    ]

    assert [unit.tests for unit in units(decisions)] == [["t.py::c"], ["t.py::d"]]


def test_three_tests_sharing_a_specific_signature_make_one_cluster() -> None:
    shared = [failed(f"t.py::t{n}") for n in range(3)]
    generic = [failed(f"g.py::g{n}", "Process completed with exit code 1.") for n in range(3)]
    two = [failed(f"u.py::u{n}", "KeyError: 'x'") for n in range(2)]

    found = units(shared + generic + two)

    clusters = [unit for unit in found if unit.is_cluster]
    assert len(clusters) == 1 and clusters[0].key.startswith(CLUSTER_PREFIX)
    assert clusters[0].tests == ["t.py::t0", "t.py::t1", "t.py::t2"]
    assert clusters[0].signature == "ValueError: bad frame 0x<hex>"
    assert sorted(unit.tests[0] for unit in found if not unit.is_cluster) == [
        "g.py::g0", "g.py::g1", "g.py::g2", "u.py::u0", "u.py::u1",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("decision", "passed", "reason"),
    [
        (failed("a", verdict=Verdict.FLAKY), True, "it passed on a rerun of the same commit"),
        (failed("a"), False, None),
        (failed("a", history=[past("ann", 3)]), False, None),  # the same author
        (failed("a", history=[past("bob", 3, same=False)]), False, None),  # another failure
        (failed("a", history=[past("bob", 3)]), False,
         "it failed the same way on 2 pull requests by 2 authors"),
        (failed("a", history=[past(None, None, branch="main")]), False,
         "it failed the same way on main, outside any pull request"),
        (failed("a", items=[Evidence(kind=EvidenceKind.BASE, text="fails on main")]), False,
         "it failed the same way on the base branch, outside any pull request"),
        (failed("a", items=[Evidence(kind=EvidenceKind.RETRIES, text="1 of 3")]), False,
         "it failed, then passed when retried within the same run"),
    ],
)  # fmt: skip
def test_threshold(decision: Decision, passed: bool, reason: str | None) -> None:
    (unit,) = units([decision])

    assert threshold_reason(unit, passed_on_rerun=passed, author="ann") == reason
