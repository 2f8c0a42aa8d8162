"""The extraction orchestrator: sources merged, generic messages, annotations, job class."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.triage.annotations import failures_from_annotations
from bot.triage.failures import extract, extract_failures, match_key, merge
from bot.triage.logscan import INFRA
from bot.triage.models import Failure
from bot.triage.parsers.actions_log import clean_log
from bot.triage.parsers.custom import CustomPattern
from bot.triage.signature import is_generic, signature

REPORTS = Path(__file__).resolve().parent / "fixtures" / "corpus" / "reports"


def _report(relative: str) -> tuple[str, bytes]:
    path = REPORTS / relative
    if not path.is_file():
        pytest.fail(f"{path} is absent: the corpus is in tests/fixtures/corpus")
    return path.name, path.read_bytes()


def _log(*lines: str) -> list[str]:
    return clean_log("".join(f"2026-11-30T10:00:00.1234567Z {line}\n" for line in lines))


PYTEST_LOG = _log(
    "##[group]Run pytest",
    "============================= test session starts ==============================",
    "rootdir: /home/runner/work/lib/lib",
    "tests/test_lib.py::test_always_fail FAILED                                [ 50%]",
    "tests/test_lib.py::test_ok PASSED                                         [100%]",
    "=================================== FAILURES ===================================",
    "_______________________________ test_always_fail _______________________________",
    "",
    "    def test_always_fail():",
    ">       helper()",
    "",
    "tests/test_lib.py:25: ",
    "_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _",
    "lib/helpers.py:7: in helper",
    "    assert False",
    "E   assert False",
    "=========================== short test summary info ============================",
    "FAILED tests/test_lib.py::test_always_fail - assert False",
    "========================= 1 failed, 1 passed in 0.10s ==========================",
    "##[error]Process completed with exit code 1.",
)


# --- generic messages and signatures -------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "Process completed with exit code 1.",
        "##[error]Process completed with exit code 2.",
        "exit status 1",
        "Command failed with exit code 1: npm test",
        "Error: 1 test failed",
        "npm ERR! Test failed.  See above for more details.",
        "make: *** [Makefile:12: test] Error 2",
        "",
        "  \n ",
    ],
)
def test_messages_that_only_say_something_failed_are_generic(message: str) -> None:
    assert is_generic(message)


@pytest.mark.parametrize(
    "message",
    [
        "AssertionError: assert 41 == 42",
        "Process 0 terminated or timed out after 310 seconds",
        "Error: connect ECONNREFUSED 127.0.0.1:5432",
        "expected exit code 0, got exit code 1 from ./bin/cli",
    ],
)
def test_messages_with_a_cause_are_not_generic(message: str) -> None:
    assert not is_generic(message)


def test_repositories_add_their_own_generic_messages() -> None:
    extra = [r"make\[\d+\]: \*\*\* .*", r"[(broken"]  # a broken regex matches nothing

    assert is_generic("make[2]: *** [ci] Error 1", extra)
    assert not is_generic("make[2]: *** [ci] Error 1")
    assert not is_generic("ValueError: bad", extra)


@pytest.mark.parametrize(
    ("run_a", "run_b"),
    [
        (
            "AssertionError: <Session object at 0x7f3a2b1c9d90> served on 127.0.0.1:41873",
            "AssertionError: <Session object at 0x7f11aa02c4f0> served on 127.0.0.1:39011",
        ),
        (
            "TimeoutError: job 123e4567-e89b-12d3-a456-426614174000 timed out after 30.02s "
            "at 2026-11-30T10:00:00Z",
            "TimeoutError: job 9b2f1c3e-0d4a-4f5e-8c6b-7a8d9e0f1a2b timed out after 31.9s "
            "at 2026-12-01T08:12:44Z",
        ),
        (
            "OSError: cannot write /tmp/pytest-of-runner/pytest-12/test_export0/out.csv",
            "OSError: cannot write /tmp/pytest-of-runner/pytest-3/test_export0/out.csv",
        ),
        (
            "Error: listen EADDRINUSE: address already in use :::port 40231 (took 1204ms)",
            "Error: listen EADDRINUSE: address already in use :::port 40777 (took 88ms)",
        ),
    ],
)
def test_the_same_failure_in_two_runs_has_one_signature(run_a: str, run_b: str) -> None:
    assert signature(run_a) == signature(run_b)


@pytest.mark.parametrize(
    ("cause_a", "cause_b"),
    [
        ("AssertionError: assert 41 == 42", "KeyError: 'total'"),
        ("TimeoutError: read timed out", "ConnectionResetError: connection reset by peer"),
        ("expected 'EUR' to equal 'USD'", "expected 'EUR' to equal 'GBP'"),
    ],
)
def test_different_causes_of_one_test_keep_different_signatures(cause_a: str, cause_b: str) -> None:
    assert signature(cause_a) != signature(cause_b)


# --- annotations ---------------------------------------------------------------------------


def _annotation(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "path": "tests/test_cart.py",
        "start_line": 12,
        "end_line": 12,
        "annotation_level": "failure",
        "message": "AssertionError: assert 41 == 42",
        "title": "",
    }
    return base | fields


def test_the_runner_exit_code_annotation_is_never_a_test() -> None:
    annotation = _annotation(
        path=".github", start_line=0, message="Process completed with exit code 1.", title=""
    )

    assert failures_from_annotations([annotation]) == []


def test_a_publisher_title_names_the_test() -> None:
    # EnricoMi/publish-unit-test-result-action's shape: the error sits in raw_details.
    annotation = _annotation(
        path="test/test_spark.py",
        start_line=819,
        annotation_level="warning",
        message="pytest/junit.fail.xml\u2003[took 7s]",
        title="test_rsh_events (test.test_spark.SparkTests) failed",
        raw_details="self = <x>\n    def test_rsh_events(self):\nE AssertionError: 143 != 0",
    )

    (failure,) = failures_from_annotations([annotation])

    assert failure.test_id == "test.test_spark.SparkTests.test_rsh_events"
    assert failure.name == "test_rsh_events"
    assert failure.location == "test/test_spark.py:819"
    assert failure.message == "AssertionError: 143 != 0"
    assert failure.source == "annotation"


def test_a_suite_title_or_a_titled_annotation_on_a_test_file_names_the_test() -> None:
    suite = _annotation(path="src/cart.test.ts", title="[Cart] adds items")
    titled = _annotation(path="spec/cart_spec.rb", title="Cart totals with tax")

    failures = failures_from_annotations([suite, titled])

    assert [f.test_id for f in failures] == [
        "Cart \u203a adds items",
        "spec/cart_spec.rb \u203a Cart totals with tax",
    ]


@pytest.mark.parametrize(
    "annotation",
    [
        _annotation(path="src/cart.py", title="mypy", message="error: Incompatible types"),
        _annotation(annotation_level="notice", title="[Cart] adds items"),
        _annotation(title=""),  # a compiler error on a test file names no test
        _annotation(title="Error", message="Process completed with exit code 1."),
    ],
)
def test_annotations_that_name_no_test(annotation: dict[str, Any]) -> None:
    assert failures_from_annotations([annotation]) == []


# --- merging sources -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("tests/test_lib.py::TestX::test_y", "tests.test_lib.TestX.test_y"),
        ("src/a.test.ts \u203a Suite \u203a name", "src/a.test.ts > Suite > name"),
        ("com/acme/FooTest.java#bar", "com.acme.FooTest#bar"),
        ("./spec/x_spec.rb \u203a Widget renders", "spec/x_spec.rb \u203a Widget renders"),
    ],
)
def test_ids_from_two_sources_meet(one: str, other: str) -> None:
    assert match_key(one) == match_key(other)


def test_junit_beats_the_log_and_the_log_completes_it() -> None:
    name, data = _report("test-reporter/__tests__/fixtures/python-xunit-pytest.xml")

    extraction = extract(log_lines=PYTEST_LOG, reports=[(name, data)])

    by_id = {f.test_id: f for f in extraction.failures}
    assert set(by_id) == {"tests/test_lib.py::test_always_fail", "tests/test_lib.py::test_error"}
    merged = by_id["tests/test_lib.py::test_always_fail"]
    assert merged.source == "junit"
    assert "lib/helpers.py" in merged.trace_paths  # only the log's traceback shows it
    assert extraction.infra is None
    assert not extraction.mass_failure


def test_a_better_source_wins_where_sources_disagree() -> None:
    log = Failure(
        test_id="tests/test_a.py::test_x",
        name="test_x",
        framework="pytest",
        message="AssertionError: from the log",
        location="tests/test_a.py:3",
        trace_paths=["tests/test_a.py", "src/a.py"],
        attempts_failed=2,
        attempts_total=3,
    )
    junit = Failure(
        test_id="tests.test_a.test_x",
        name="test_x",
        framework="pytest",
        message="AssertionError: from the report",
        trace_paths=["tests/test_a.py"],
        source="junit",
    )
    annotation = Failure(
        test_id="tests.test_a.test_x",
        name="test_x",
        framework="annotation",
        message="Process completed with exit code 1.",
        location="tests/test_a.py:9",
        source="annotation",
    )

    (merged,) = merge([log, annotation, junit])

    assert merged.test_id == "tests.test_a.test_x"
    assert merged.message == "AssertionError: from the report"
    assert merged.location == "tests/test_a.py:9"  # the annotation's, next best
    assert merged.trace_paths == ["tests/test_a.py", "src/a.py"]
    assert (merged.attempts_failed, merged.attempts_total) == (2, 3)


def test_a_generic_message_is_replaced_by_a_telling_one() -> None:
    annotation = Failure(
        test_id="T.test_a",
        name="test_a",
        framework="x",
        message="exit status 1",
        source="annotation",
    )
    log = Failure(test_id="T.test_a", name="test_a", framework="x", message="ValueError: bad")

    (merged,) = merge([annotation, log])

    assert merged.message == "ValueError: bad"
    assert merged.signature == log.signature


def test_repository_generic_messages_apply_to_annotations_and_merging() -> None:
    harness = r"harness: \d+ checks? failed"
    annotation = _annotation(title="[Cart] adds items", message="harness: 2 checks failed")
    log = Failure(test_id="Cart.adds items", name="adds items", framework="x", message="E: 41")

    (plain,) = extract(log_lines=None, annotations=[annotation]).failures
    (merged,) = merge(
        [*failures_from_annotations([annotation], [harness]), log], generic_messages=[harness]
    )

    assert plain.message == "harness: 2 checks failed"
    assert merged.message == "E: 41"


def test_an_id_printed_from_a_subdirectory_meets_the_full_one() -> None:
    full = Failure(test_id="test/test_spark.py::SparkTests::test_rsh", name="n", framework="p")
    short = Failure(
        test_id="test_spark.SparkTests.test_rsh", name="n", framework="p", source="junit"
    )
    other = Failure(test_id="test_other.py::test_rsh", name="n", framework="p")

    merged = merge([full, short, other])

    assert [f.test_id for f in merged] == [
        "test_spark.SparkTests.test_rsh",
        "test_other.py::test_rsh",
    ]


# --- the job's class -----------------------------------------------------------------------


def test_no_failed_test_and_an_infra_line_makes_an_infra_job() -> None:
    lines = _log(
        "##[group]Run npm ci",
        "npm ERR! code ECONNRESET",
        "##[error]Process completed with exit code 1.",
    )

    extraction = extract(log_lines=lines)

    assert extraction.failures == []
    assert extraction.infra is not None
    assert extraction.infra.kind == "network"


def test_infra_beside_failed_tests_is_kept_as_a_note() -> None:
    lines = [*PYTEST_LOG, "##[error]The operation was canceled."]

    extraction = extract(log_lines=lines)

    assert [f.test_id for f in extraction.failures] == ["tests/test_lib.py::test_always_fail"]
    assert extraction.infra is not None
    assert extraction.infra.kind == "cancelled"


def test_only_the_active_parsers_and_infra_run() -> None:
    go_log = ["--- FAIL: TestCart (0.00s)", "FAIL\texample.com/cart\t0.1s"]
    lines = [*PYTEST_LOG, *go_log, "##[error]The operation was canceled."]

    everything = extract(log_lines=lines)
    pytest_only = extract(log_lines=lines, active_parsers={"pytest"})
    go_and_infra = extract(log_lines=lines, active_parsers={"go_test", INFRA})

    assert {f.framework for f in everything.failures} == {"pytest", "go"}
    assert everything.infra is not None
    assert [f.test_id for f in pytest_only.failures] == ["tests/test_lib.py::test_always_fail"]
    assert pytest_only.infra is None
    assert [f.test_id for f in go_and_infra.failures] == ["example.com/cart.TestCart"]
    assert go_and_infra.infra == everything.infra


def test_more_failed_tests_than_the_threshold_is_a_mass_failure() -> None:
    lines = _log(*(f"--- FAIL: TestCase{i} (0.00s)" for i in range(4)), "FAIL\texample.com/m\t0.1s")

    assert extract(log_lines=lines, mass_threshold=3).mass_failure
    assert not extract(log_lines=lines, mass_threshold=4).mass_failure


def test_unreadable_reports_are_problems_not_errors() -> None:
    name, data = _report(
        "publish-unit-test-result-action/python/test/files/junit-xml/pytest/corrupt-xml.xml"
    )

    extraction = extract(log_lines=None, reports=[(name, data)])

    assert extraction.failures == []
    assert len(extraction.problems) == 1
    assert extraction.problems[0].startswith("corrupt-xml.xml")


def test_repository_patterns_find_harness_failures() -> None:
    pattern = CustomPattern(name="scenarios", regex=r"^SCENARIO FAILED: (?P<test>\S+)")
    lines = _log("running 3 scenarios", "SCENARIO FAILED: checkout/guest", "2 of 3 passed")

    (failure,) = extract(log_lines=lines, custom=[pattern]).failures

    assert (failure.test_id, failure.framework) == ("checkout/guest", "scenarios")


def test_extract_failures_keeps_reading_a_raw_log() -> None:
    raw = "".join(f"2026-11-30T10:00:00.1234567Z {line}\n" for line in PYTEST_LOG)

    assert [f.test_id for f in extract_failures(raw)] == ["tests/test_lib.py::test_always_fail"]


@given(
    st.lists(st.text()),
    st.lists(
        st.dictionaries(
            st.sampled_from(["path", "title", "message", "annotation_level", "start_line"]),
            st.text() | st.integers(),
        )
    ),
)
def test_extract_never_raises_on_arbitrary_input(
    lines: list[str], annotations: list[dict[str, Any]]
) -> None:
    extraction = extract(log_lines=lines, annotations=annotations)

    assert len({match_key(f.test_id) for f in extraction.failures}) == len(extraction.failures)
