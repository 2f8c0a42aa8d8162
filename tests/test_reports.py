"""Failed tests read from JUnit XML, TRX, mocha JSON and go test -json reports."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.triage.models import Failure
from bot.triage.reports import ReportResult, parse_report
from bot.triage.signature import signature

CORPUS = Path(__file__).resolve().parent / "fixtures" / "corpus"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "reports"
TEST_REPORTER = "reports/test-reporter/__tests__/fixtures"
BENCH = "package/name/benchfail"
SUBTEST = "package/name/subtest"
ENRICO = "reports/publish-unit-test-result-action/python/test/files"
GO = "logs/go-junit-report"
SEP = " \u203a "


def _corpus(relative: str) -> ReportResult:
    path = CORPUS / relative
    if not path.is_file():
        pytest.fail(f"{path} is absent: the corpus is in tests/fixtures/corpus")
    return parse_report(path.name, path.read_bytes())


def _fixture(name: str) -> ReportResult:
    return parse_report(name, (FIXTURES / name).read_bytes())


def _by_id(failures: list[Failure]) -> dict[str, Failure]:
    return {f.test_id: f for f in failures}


# Each corpus file's failing tests as its source states them (reports/INDEX.md, the peers'
# expected outputs, go-junit-report's expected XML), written in this bot's id forms.
CORPUS_EXPECTED: list[tuple[str, str, set[str]]] = [
    (
        f"{TEST_REPORTER}/python-xunit-pytest.xml",
        "junit",
        {"tests/test_lib.py::test_always_fail", "tests/test_lib.py::test_error"},
    ),
    (
        f"{TEST_REPORTER}/python-xunit-unittest.xml",
        "junit",
        {
            "tests/test_lib.py::TestAcme::test_always_fail",
            "tests/test_lib.py::TestAcme::test_error",
        },
    ),
    (
        f"{TEST_REPORTER}/jest-junit.xml",
        "junit",
        {
            f"__tests__/main.test.js{SEP}Test 1{SEP}Test 1.1{SEP}Failing test",
            f"__tests__/main.test.js{SEP}Test 1{SEP}Test 1.1{SEP}Exception in target unit",
            f"__tests__/main.test.js{SEP}Test 2{SEP}Exception in test",
            f"__tests__/second.test.js{SEP}Timeout test",
        },
    ),
    (
        f"{TEST_REPORTER}/test-errors/jest/jest-test-results.xml",
        "junit",
        {
            f"libs/bar.spec.ts{SEP}Test suite failed to run{SEP}libs/bar.spec.ts",
            f"libs/foo.spec.ts{SEP}Test suite failed to run{SEP}libs/foo.spec.ts",
        },
    ),
    (
        f"{TEST_REPORTER}/golang-json.json",
        "go-json",
        {
            f"_/home/james_t/git/test-reporter/reports/go.{name}"
            for name in (
                "TestFailing",
                "TestPanicInsideFunction",
                "TestPanicInsideTest",
                "TestCases",
                "TestCases/2_+_3_=_4",
                "TestCases/1_/_2_=_1",
            )
        },
    ),
    (
        f"{TEST_REPORTER}/mocha-json.json",
        "mocha-json",
        {
            f"test/main.test.js{SEP}Test 1 Test 1.1{SEP}Exception in target unit",
            f"test/main.test.js{SEP}Test 1 Test 1.1{SEP}Failing test",
            f"test/main.test.js{SEP}Test 2{SEP}Exception in test",
            f"test/second.test.js{SEP}Timeout test",
        },
    ),
    (
        f"{TEST_REPORTER}/dotnet-trx.trx",
        "trx",
        {
            "DotnetTests.XUnitTests.CalculatorTests.Exception_In_TargetTest",
            "DotnetTests.XUnitTests.CalculatorTests.Exception_In_Test",
            "DotnetTests.XUnitTests.CalculatorTests.Failing_Test",
            "DotnetTests.XUnitTests.CalculatorTests.Is_Even_Number(i: 3)",
            "DotnetTests.XUnitTests.CalculatorTests.Should be even number(i: 3)",
        },
    ),
    (
        f"{TEST_REPORTER}/dotnet-xunitv3.trx",
        "trx",
        {
            "DotnetTests.XUnitV3Tests.FixtureTests.Failing_Test",
            "[Test Class Cleanup Failure (DotnetTests.XUnitV3Tests.FixtureTests.Failing_Test)]",
            "[Test Class Cleanup Failure (DotnetTests.XUnitV3Tests.FixtureTests.Passing_Test)]",
        },
    ),
    (
        f"{TEST_REPORTER}/external/java/junit4-complete.xml",
        "junit",
        {"Tests.Registration#testCase5", "Tests.Registration#testCase6"},
    ),
    (
        f"{TEST_REPORTER}/external/java/pulsar-test-report.xml",
        "junit",
        {"org.apache.pulsar.AddMissingPatchVersionTest#testVersionStrings"},
    ),
    (
        f"{ENRICO}/junit-xml/pytest/junit.fail.xml",
        "junit",
        {"test/test_spark.py::SparkTests::test_rsh_events"},
    ),
    (f"{ENRICO}/junit-xml/pytest/junit.gloo.elastic.xml", "junit", set()),
    (f"{ENRICO}/junit-xml/jest/jest-junit.xml", "junit", set()),
    (f"{ENRICO}/junit-xml/mocha/latex-utensils.xml", "junit", set()),
    (f"{ENRICO}/junit-xml/bazel/suite-logs.xml", "junit", {"bazel/failing_absl_test"}),
    (
        f"{ENRICO}/junit-xml/junit.multiresult.xml",
        "junit",
        {f"test class{SEP}test that errors", f"test class{SEP}test that fails"},
    ),
    (
        f"{ENRICO}/junit-xml/with-xml-entities.xml",
        "junit",
        {"Test with 'apostrophe' in the test name", "Test with & in the test name"},
    ),
    (
        f"{ENRICO}/mocha/tests.json",
        "mocha-json",
        {
            f"test/unit/runner.spec.js{SEP}Runner instance method grep()"
            f"{SEP}should update the runner.total with number of matched tests",
            f"test/unit/test.spec.js{SEP}Test .clone(){SEP}should copy the title",
        },
    ),
    (
        f"{ENRICO}/trx/yami_YAMILEX_2015-10-24_04_18_59.trx",
        "trx",
        {
            "Prueba_Sistema.SIARAlgorithmTest.EST_INTER_TEMPTest",
            "Prueba_Sistema.SIARAlgorithmTest.EST_LAMB_TEMPTest",
        },
    ),
    (
        f"{GO}/012-report.xml",
        "junit",
        {
            "package/subtests.TestSubtests",
            "package/subtests.TestSubtests/Subtest#01",
            "package/subtests.TestFailingSubtestWithNestedSubtest",
            "package/subtests.TestFailingSubtestWithNestedSubtest/Subtest",
        },
    ),
    (f"{GO}/017-report.xml", "junit", {"package/race.TestRace"}),
    (f"{GO}/036-report.xml", "junit", {f"{BENCH}.BenchmarkError", f"{BENCH}.BenchmarkFatal"}),
    (f"{GO}/110-report.xml", "junit", {f"{BENCH}.BenchmarkError", f"{BENCH}.BenchmarkFatal"}),
    (
        f"{GO}/110-benchfail.gojson.txt",
        "go-json",
        {f"{BENCH}.BenchmarkError", f"{BENCH}.BenchmarkFatal"},
    ),
    (f"{GO}/037-report.xml", "junit", {"package/name.TestOne"}),
    (
        f"{GO}/103-report.xml",
        "junit",
        {f"{SUBTEST}.TestMultiple", f"{SUBTEST}.TestMultiple/Single"},
    ),
    (
        f"{GO}/103-subtests.gojson.txt",
        "go-json",
        {f"{SUBTEST}.TestMultiple", f"{SUBTEST}.TestMultiple/Single"},
    ),
    (
        f"{TEST_REPORTER}/rspec-json.json",
        "rspec-json",
        {
            "spec/config/check_env_vars_spec.rb"
            f"{SEP}CheckEnvVars#call when all env vars are defined behaves like success load"
            " fails in assertion"
        },
    ),
    (f"{GO}/101-report.xml", "junit", {"package/name/fail.TestOne"}),
    (f"{GO}/101-fail.gojson.txt", "go-json", {"package/name/fail.TestOne"}),
    # A binary that panics before any test: the package failed.
    (f"{GO}/105-report.xml", "junit", {"package/name/panic"}),
    (f"{GO}/105-panic.gojson.txt", "go-json", {"package/name/panic"}),
]


@pytest.mark.parametrize(
    ("relative", "fmt", "expected"), CORPUS_EXPECTED, ids=[c[0] for c in CORPUS_EXPECTED]
)
def test_corpus_reports_give_the_failing_tests_their_source_states(
    relative: str, fmt: str, expected: set[str]
) -> None:
    result = _corpus(relative)
    assert result.problems == []
    assert result.format == fmt
    assert {f.test_id for f in result.failures} == expected
    assert len(result.failures) == len(expected)
    assert all(f.source == fmt for f in result.failures)


def test_corpus_report_files_are_all_covered() -> None:
    if not CORPUS.is_dir():
        pytest.fail(f"{CORPUS} is absent: the corpus is in tests/fixtures/corpus")
    covered = {c[0] for c in CORPUS_EXPECTED} | {
        f"{ENRICO}/junit-xml/pytest/corrupt-xml.xml",
    }
    reports = {
        str(p.relative_to(CORPUS))
        for p in (CORPUS / "reports").rglob("*")
        if p.suffix in (".xml", ".trx", ".json")
        and not p.name.endswith(".results.json")
        and "__outputs__" not in p.parts
    }
    reports |= {str(p.relative_to(CORPUS)) for p in (CORPUS / GO).glob("*.gojson.txt")}
    reports |= {str(p.relative_to(CORPUS)) for p in (CORPUS / GO).glob("*-report.xml")}
    assert reports <= covered


def test_corpus_corrupt_xml_is_a_problem_naming_file_and_position() -> None:
    result = _corpus(f"{ENRICO}/junit-xml/pytest/corrupt-xml.xml")
    # The peer's own parser reports the same place: line 11, column 22.
    assert result.problems == ["corrupt-xml.xml: not well-formed XML (line 11, column 22)"]
    assert result.failures == []


def test_corpus_rspec_json_is_not_taken_for_mocha() -> None:
    result = _corpus(f"{TEST_REPORTER}/rspec-json.json")
    assert (result.format, len(result.failures)) == ("rspec-json", 1)
    unknown = parse_report("other.json", b'{"results": 1}')
    assert unknown.problems == ["other.json: JSON but not a test report format this bot reads"]
    as_mocha = parse_report("rspec.json", b'{"examples": [], "summary": {}}', fmt="mocha-json")
    assert as_mocha.problems == ["rspec.json: JSON but not mocha-json"]


def test_corpus_pytest_details() -> None:
    failure = _by_id(_corpus(f"{ENRICO}/junit-xml/pytest/junit.fail.xml").failures)[
        "test/test_spark.py::SparkTests::test_rsh_events"
    ]
    assert failure.file == "test/test_spark.py"
    assert failure.framework == "pytest"
    # pytest printed paths relative to test/: the file attribute anchors them.
    assert failure.location == "test/test_spark.py:852"
    assert failure.message == "AssertionError: 143 != 0"


def test_corpus_unittest_message_is_the_exception_line() -> None:
    failures = _by_id(_corpus(f"{TEST_REPORTER}/python-xunit-unittest.xml").failures)
    assert failures["tests/test_lib.py::TestAcme::test_error"].message == "Exception: error"
    assert failures["tests/test_lib.py::TestAcme::test_error"].framework == "unittest"


def test_corpus_go_messages_come_from_test_output() -> None:
    fail = _by_id(_corpus(f"{GO}/101-fail.gojson.txt").failures)["package/name/fail.TestOne"]
    report = _by_id(_corpus(f"{GO}/101-report.xml").failures)["package/name/fail.TestOne"]
    assert fail.message.splitlines()[0] == "main_test.go:6: Error message"
    assert fail.signature == report.signature
    panic = _corpus(f"{GO}/105-panic.gojson.txt").failures[0]
    assert panic.message == "panic: init"


def test_corpus_surefire_message_carries_the_exception_type() -> None:
    (failure,) = _corpus(f"{TEST_REPORTER}/external/java/pulsar-test-report.xml").failures
    assert failure.message == "java.lang.AssertionError: expected [1.2.1] but found [1.2.0]"


# --- own fixtures -------------------------------------------------------------------------


def test_pytest_nested_suites_parametrised_names_and_joined_messages() -> None:
    result = _fixture("pytest-nested.xml")
    failures = _by_id(result.failures)
    assert set(failures) == {
        "tests/bus/test_core.py::TestBus::test_publish",
        "tests/bus/test_core.py::TestBus::test_route[a b-[x]-ünï]",
    }
    assert result.tests_total == 4  # the skipped test never ran
    publish = failures["tests/bus/test_core.py::TestBus::test_publish"]
    assert publish.name == "TestBus::test_publish"
    assert publish.file == "tests/bus/test_core.py"
    assert publish.location == "tests/bus/test_core.py:42"
    assert publish.message.splitlines()[0] == "AssertionError: assert 3 == 4"
    assert publish.signature == signature(publish.message)
    assert publish.signature == (
        "AssertionError: assert 3 == 4 | + where 3 = "
        "<bound method Bus.publish of <bus.core.Bus object>>('topic', b'x')"
    )
    route = failures["tests/bus/test_core.py::TestBus::test_route[a b-[x]-ünï]"]
    assert route.message == "KeyError: 'ünï'\nOSError: [Errno 98] Address already in use"
    assert route.location == "src/bus/core.py:118"
    assert route.trace_paths == [
        "src/bus/core.py",
        "tests/bus/test_core.py",
        "tests/bus/conftest.py",
    ]


def test_surefire_flaky_and_rerun_failures_count_attempts() -> None:
    failures = _by_id(_fixture("surefire-retries.xml").failures)
    assert set(failures) == {
        "com.acme.store.CartTest#checksOutWithinTimeout",
        "com.acme.store.CartTest#appliesDiscount",
    }
    flaky = failures["com.acme.store.CartTest#checksOutWithinTimeout"]
    assert (flaky.attempts_failed, flaky.attempts_total) == (2, 3)
    assert flaky.message == "org.opentest4j.AssertionFailedError: Timed out after 1000 ms"
    broken = failures["com.acme.store.CartTest#appliesDiscount"]
    assert (broken.attempts_failed, broken.attempts_total) == (3, 3)
    assert broken.framework == "junit"


def test_nextest_flaky_failure() -> None:
    (failure,) = _fixture("nextest-flaky.xml").failures
    assert failure.test_id == "acme-core net::tests::reconnects_after_reset"
    assert failure.framework == "nextest"
    assert (failure.attempts_failed, failure.attempts_total) == (1, 2)
    assert failure.location == "src/net.rs:88"


def test_jest_junit_on_windows_runner() -> None:
    (failure,) = _fixture("jest-junit-windows.xml").failures
    assert (
        failure.test_id
        == f"src/widgets/button.test.ts{SEP}Button{SEP}when disabled{SEP}ignores clicks"
    )
    assert failure.file == "src/widgets/button.test.ts"
    assert failure.location == "src/widgets/button.test.ts:31"
    assert failure.trace_paths == ["src/widgets/button.test.ts", "src/widgets/button.ts"]
    assert failure.message.splitlines()[0] == "Error: expect(jest.fn()).not.toHaveBeenCalled()"


def test_go_json_reruns_subtests_and_panics() -> None:
    result = _fixture("go-rerun.gojson.txt")
    failures = _by_id(result.failures)
    assert set(failures) == {
        "github.com/acme/shop/cart.TestCheckout",
        "github.com/acme/shop/cart.TestTotals",
        "github.com/acme/shop/cart.TestTotals/ünïcode_[1]",
    }
    rerun = failures["github.com/acme/shop/cart.TestCheckout"]
    assert (rerun.attempts_failed, rerun.attempts_total) == (1, 2)
    assert (
        rerun.signature == "cart_test.go:40: dial tcp 127.0.0.1:<port>: connect: connection refused"
    )
    panic = failures["github.com/acme/shop/cart.TestTotals/ünïcode_[1]"]
    assert panic.location == "cart/total.go:18"
    assert panic.trace_paths == ["cart/total.go", "cart/total_test.go"]
    assert panic.message.startswith("panic: runtime error: index out of range")


def test_trx_on_windows_runner() -> None:
    result = _fixture("dotnet-windows.trx")
    (failure,) = result.failures
    assert failure.test_id == "Acme.Billing.Tests.InvoiceTests.Rounds_half_up(amount: 2.5)"
    assert failure.location == "tests/Acme.Billing.Tests/InvoiceTests.cs:42"
    assert failure.message == "Assert.Equal() Failure\nExpected: 3\nActual:   2"
    assert result.tests_total == 2


def test_mocha_retries() -> None:
    failures = _by_id(_fixture("mocha-retries.json").failures)
    failed = failures[f"test/autosave.spec.js{SEP}Editor autosave{SEP}saves the draft [offline]"]
    assert (failed.attempts_failed, failed.attempts_total) == (3, 3)
    assert failed.location == "test/autosave.spec.js:27"
    assert failed.message == "AssertionError: expected 'saving' to equal 'saved'"
    passed = failures[f"test/socket.spec.js{SEP}Editor socket{SEP}reconnects"]
    assert (passed.attempts_failed, passed.attempts_total) == (1, 2)
    assert len(failures) == 2


@pytest.mark.parametrize("name", ["billion-laughs.xml", "xxe.xml"])
def test_entities_are_refused(name: str) -> None:
    result = _fixture(name)
    assert result.problems == [f"{name}: refused: XML entities are not allowed"]
    assert result.failures == []


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (
            b"<testsuites>\n<testsuite>\n  <testcase",
            "r.xml: not well-formed XML (line 3, column 3)",
        ),
        (b"", "r.xml: not a test report this bot reads"),
        (b"\xff\xfe garbage", "r.xml: not UTF-8 text (byte 0)"),
        (b"<html><body/></html>", "r.xml: XML root <html> is not a test report"),
    ],
)
def test_unreadable_files_give_one_clear_problem(data: bytes, problem: str) -> None:
    assert parse_report("r.xml", data).problems == [problem]


def test_explicit_format_overrides_sniffing() -> None:
    data = (FIXTURES / "mocha-retries.json").read_bytes()
    assert parse_report("x", data, fmt="go-json").failures == []
    assert parse_report("x", data, fmt="yaml").problems == ["x: unknown report format 'yaml'"]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000))
def test_parse_report_never_raises_on_bytes(data: bytes) -> None:
    assert isinstance(parse_report("r", data), ReportResult)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["<testsuite>", "{", '{"Action":"fail"', "<TestRun>"]), st.text(max_size=500)
)
def test_parse_report_never_raises_on_near_reports(start: str, rest: str) -> None:
    for fmt in ("auto", "junit", "trx", "mocha-json", "go-json"):
        assert isinstance(parse_report("r", (start + rest).encode(), fmt), ReportResult)
