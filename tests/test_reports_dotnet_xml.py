"""NUnit 2/3 and xUnit.net v1/v2 XML, judged by the results their peers expect, and the
counters every report format keeps checked against what was read."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bot.triage.models import Extraction, Failure, Verdict
from bot.triage.parsers.paths import PathMap
from bot.triage.reports import FORMATS, ReportResult, parse_report, read_report
from bot.triage.verdict import decide_extraction

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "reports"
# EnricoMi's annotation titles: `name (class) failed`, `full.name with error`, and
# `n out of m runs failed: name (class)` for a test it groups by method.
_TITLE = re.compile(r"^(?:\d+ out of \d+ runs failed: )?(?P<test>.*?)(?: failed| with error)?$")
_IN_CLASS = re.compile(r"^(?P<name>.*) \((?P<cls>[^()]*)\)$")

PEER_FILES = [
    "nunit/NUnit-correct.xml",  # NUnit 2.5: a failure and an error, ignored and invalid
    "nunit/NUnit-issue5674.xml",  # NUnit 2: no `result`, only `success="False"`
    "nunit/NUnit-issue6353.xml",  # NUnit 2: no `result` nor `success`, a `<failure>`
    "nunit/NUnitUnicode.xml",
    "nunit/pickles-v2.xml",
    "nunit/NUnit-issue50162.xml",  # NUnit 3 `<test-run>`, parameterized cases
    "nunit/NUnit-issue33493.xml",
    "nunit/NUnit-issue48478.xml",
    "nunit/timewarpinc.xml",  # NUnit 3 from Unity
    "nunit/clicketyclackety.xml",  # NUnit 3's bare `<test-suite>`, 10 failed of 23
    "xunit/fixie.xml",  # v2 written by Fixie, a generic test's rows
    "xunit/pickles-v1.xml",  # xUnit.net 1.9 `<assembly>`
    "xunit/testcase1.xml",
    "xunit/testcase3.xml",
    "xunit/testcase5.xml",
]


def _read(relative: str) -> ReportResult:
    path = FIXTURES / relative
    return parse_report(path.name, path.read_bytes())


def _expected(relative: str) -> list[dict[str, str]]:
    """The failed-test annotations publish-unit-test-result-action expects for the file."""
    results = json.loads((FIXTURES / relative).with_suffix(".results.json").read_text("utf-8"))
    return [a for a in results["annotations"] if a["annotation_level"] in ("warning", "failure")]


def _names(annotation: dict[str, str], failure: Failure) -> bool:
    match = _TITLE.match(annotation["title"])
    assert match is not None
    test = match.group("test")
    in_class = _IN_CLASS.match(test)
    if in_class is None:
        return failure.test_id == test
    cls, name = in_class.group("cls"), in_class.group("name")
    return failure.test_id.startswith(cls + ".") and name in (
        failure.name,
        failure.test_id[len(cls) + 1 :],
    )


@pytest.mark.parametrize("relative", PEER_FILES)
def test_peer_files_fail_the_tests_their_peer_expects(relative: str) -> None:
    result = _read(relative)
    expected = _expected(relative)
    assert result.problems == []
    assert result.format == relative.split("/")[0]
    assert len(result.failures) == len(expected)
    for annotation in expected:
        found = [f for f in result.failures if _names(annotation, f)]
        assert len(found) == 1, annotation["title"]
        # The peer's details open with the failure's message.
        first = found[0].message.splitlines()[0] if found[0].message else ""
        assert first in annotation.get("raw_details", "")


def test_nunit_counts_of_nunit_2_5() -> None:
    result = _read("nunit/NUnit-correct.xml")
    # 28 cases (the peer's count), 7 not run (ignored, not runnable): 21 ran, as the root says.
    assert result.tests_total == 21
    by_id = {f.test_id: f for f in result.failures}
    assert by_id["NUnit.Tests.Assemblies.MockTestFixture.FailingTest"].message == (
        "Intentional failure"
    )
    error = by_id["NUnit.Tests.Assemblies.MockTestFixture.TestWithException"]
    assert error.message == "System.ApplicationException : Intentional Exception"
    assert error.framework == "dotnet" and error.source == "nunit"


def test_nunit_3_as_test_reporter_lists_it() -> None:
    """dorny/test-reporter's expected output for its NUnit 3 fixture: 3 passed, 5 failed,
    1 skipped, the failed ones named."""
    result = _read("nunit/dorny-dotnet-nunit.xml")
    page = (FIXTURES / "nunit/dorny-dotnet-nunit.md").read_text("utf-8")
    failed = {
        line.split("\u274c ", 1)[1] for line in page.splitlines() if line.startswith("  \u274c ")
    }
    passed = [line for line in page.splitlines() if line.startswith("  \u2705 ")]
    assert {f.name for f in result.failures} == failed
    assert result.tests_total == len(failed) + len(passed)
    timeout = next(f for f in result.failures if f.name == "Timeout_Test")
    assert timeout.message == "Test exceeded Timeout value 1ms."


def test_xunit_error_with_no_class_and_a_truncated_file() -> None:
    unknown = _read("xunit/testcase6.xml")
    assert [f.test_id for f in unknown.failures] == ["collection1\\test.xml"]
    assert unknown.failures[0].message.startswith("OK: TestProcess.Execution.ExitCode == 0")
    # The assembly counts a failed test the file does not hold (the peer counts a failed
    # run, no failed test): said, never clean.
    truncated = _read("xunit/testcase2.xml")
    assert truncated.failures == []
    assert truncated.problems == ["testcase2.xml: the report counts 1 failures, 0 were read"]


_XUNIT_V2 = b"""<?xml version="1.0" encoding="utf-8"?>
<assemblies><assembly name="T.dll" total="2" passed="0" failed="1" skipped="0" errors="1">
<errors><error type="test-class-cleanup" name="App.Tests.FixtureTests">
<failure exception-type="System.Exception"><message>cleanup broke</message>
<stack-trace>   at App.Tests.FixtureTests.Dispose()
 in /_/tests/App.Tests/FixtureTests.cs:line 21</stack-trace>
</failure></error></errors>
<collection name="c" total="2" passed="0" failed="1" skipped="0">
<test name="App.Tests.CalcTests.Adds(a: 1)" type="App.Tests.CalcTests" method="Adds" result="Fail">
<failure exception-type="Xunit.Sdk.EqualException"><message>Assert.Equal() Failure</message>
<stack-trace>   at App.Tests.CalcTests.Adds(Int32 a)
 in /_/tests/App.Tests/CalcTests.cs:line 12</stack-trace>
</failure></test>
<test name="Says hello" type="App.Tests.CalcTests" method="Hello" result="Skip">
<reason>no</reason></test>
</collection></assembly></assemblies>"""


def test_xunit_v2_errors_display_names_and_deterministic_paths() -> None:
    result = parse_report("r.xml", _XUNIT_V2)
    by_id = {f.test_id: f for f in result.failures}
    assert set(by_id) == {"App.Tests.CalcTests.Adds(a: 1)", "App.Tests.FixtureTests"}
    assert result.problems == []
    # .NET's deterministic builds print the repository's root as `/_/`.
    assert by_id["App.Tests.CalcTests.Adds(a: 1)"].location == "tests/App.Tests/CalcTests.cs:12"
    assert by_id["App.Tests.FixtureTests"].trace_paths == ["tests/App.Tests/FixtureTests.cs"]


def test_deterministic_build_prefix_is_the_repository_root() -> None:
    assert PathMap().to_repo("/_/src/Foo/Bar.cs") == "src/Foo/Bar.cs"
    trx = (
        b'<TestRun xmlns="http://microsoft.com/schemas/VisualStudio/TeamTest/2010"><Results>'
        b'<UnitTestResult testId="1" testName="Ns.T.M" outcome="Failed"><Output><ErrorInfo>'
        b"<Message>boom</Message><StackTrace>   at Ns.T.M() in /_/src/Foo/Bar.cs:line 12"
        b"</StackTrace></ErrorInfo></Output></UnitTestResult></Results></TestRun>"
    )
    assert parse_report("r.trx", trx).failures[0].location == "src/Foo/Bar.cs:12"


def test_formats_named_and_refused_over_the_element_cap() -> None:
    data = (FIXTURES / "nunit/clicketyclackety.xml").read_bytes()
    assert {"nunit", "xunit"} <= set(FORMATS)
    assert parse_report("r.xml", data, "nunit").format == "nunit"
    refused = read_report("r.xml", iter((data,)), max_elements=50)
    assert refused.failures == [] and "refused: over 50 XML elements" in refused.problems[0]


_TRX_NO_OUTCOME = b"""<?xml version="1.0" encoding="utf-8"?>
<TestRun xmlns="http://microsoft.com/schemas/VisualStudio/TeamTest/2010">
<Results><UnitTestResult testId="1" testName="Ns.T.Passes" outcome="Passed"/>
<UnitTestResult testId="2" testName="Ns.T.Breaks"><Output><ErrorInfo><Message>boom</Message>
</ErrorInfo></Output></UnitTestResult></Results>
<ResultSummary outcome="Failed"><Counters total="2" executed="2" passed="1" failed="0" error="1"
timeout="0"/></ResultSummary></TestRun>"""


def test_trx_counting_an_error_it_does_not_show_is_never_clean() -> None:
    result = parse_report("r.trx", _TRX_NO_OUTCOME)
    assert result.failures == []
    assert result.problems == ["r.trx: the report counts 1 failures, 0 were read"]
    extraction = Extraction(failures=result.failures, problems=result.problems)
    [decision] = decide_extraction(extraction, ["src/app.py"])
    assert decision.verdict == Verdict.UNKNOWN
    assert "the report counts 1 failures, 0 were read" in decision.evidence


def test_junit_counters_checked_against_the_cases() -> None:
    declared = (
        b'<testsuites><testsuite name="s" tests="2" failures="2" errors="0">'
        b'<testcase classname="a.B" name="one"><failure message="x"/></testcase>'
        b'<testcase classname="a.B" name="two"/></testsuite></testsuites>'
    )
    assert parse_report("r.xml", declared).problems == [
        "r.xml: the report counts 2 failures, 1 were read"
    ]
    # pytest counts a test that failed and then erred in its teardown twice.
    nested = parse_report("n.xml", (FIXTURES / "pytest-nested.xml").read_bytes())
    assert nested.problems == []


def test_codeception_class_attribute_names_the_class() -> None:
    # Codeception's shape (infection/codeception-adapter quotes it): `class`, no `classname`.
    report = (
        b'<testsuites><testsuite name="functional" tests="1" failures="1">'
        b'<testcase name="testAddition" class="App\\Tests\\functional\\CalculatorCest" '
        b'file="/home/runner/work/app/app/tests/functional/CalculatorCest.php" '
        b'time="0.000252" assertions="1">'
        b'<failure type="PHPUnit\\Framework\\ExpectationFailedException">'
        b"Failed asserting that 3 matches expected 4.</failure></testcase></testsuite></testsuites>"
    )
    [failure] = parse_report("r.xml", report).failures
    assert failure.test_id == "App.Tests.functional.CalculatorCest#testAddition"


@pytest.mark.parametrize("value", ["\u00b2", "9" * 5000, "-1", "", "x"])
def test_counters_that_are_not_counts_are_ignored(value: str) -> None:
    report = f'<test-run failed="{value}"><test-case fullname="A.b" result="Passed"/></test-run>'
    result = parse_report("r.xml", report.encode())
    assert (result.failures, result.problems, result.tests_total) == ([], [], 1)
