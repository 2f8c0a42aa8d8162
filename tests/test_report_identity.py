"""Test identity and stated locations in reports: nested suites, suite-level failures, TRX
rows and aggregations, `file`/`line` attributes, runner paths and bare file names."""

from __future__ import annotations

from pathlib import Path
from xml.sax.saxutils import quoteattr

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.handlers.checks import _placed_in_tree
from bot.handlers.sources import SourceCache
from bot.shared import Tree, TreeFile
from bot.triage.failures import merge
from bot.triage.models import Extraction, Failure
from bot.triage.reports import parse_report, read_report
from bot.triage.reports.locations import place_in_tree, resolve_in_tree, stated_path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "reports"
SEP = " \u203a "


def _fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def _suites(*suites: tuple[str, str, str, bool]) -> bytes:
    """A JUnit document of nested-suite shape: (outer suite, inner suite, case, failed)."""
    body = "".join(
        f"<testsuite name={quoteattr(outer)}><testsuite name={quoteattr(inner)}>"
        f'<testcase classname="" name={quoteattr(case)}>'
        + ('<failure message="boom">boom</failure>' if failed else "")
        + "</testcase></testsuite></testsuite>"
        for outer, inner, case, failed in suites
    )
    return f"<testsuites>{body}</testsuites>".encode()


def test_a_failure_and_a_pass_of_namesakes_in_two_suites_are_two_tests_not_a_flake() -> None:
    data = _suites(("Root", "Suite1", "check", True), ("Root", "Suite2", "check", False))

    result = parse_report("nested.xml", data)

    [failure] = result.failures
    assert failure.test_id == f"Root{SEP}Suite1{SEP}check"
    # Before: one test "check" that "failed 1 of 2 tries, then passed", a false flaky.
    assert (failure.attempts_failed, failure.attempts_total) == (1, 1)
    assert result.tests_total == 2


def test_a_case_repeated_in_one_suite_is_a_retry() -> None:
    data = (
        b'<testsuite name="S"><testcase classname="" name="check"><failure message="x"/>'
        b'</testcase><testcase classname="" name="check"/></testsuite>'
    )

    [failure] = parse_report("rerun.xml", data).failures

    assert (failure.test_id, failure.attempts_failed, failure.attempts_total) == (
        f"S{SEP}check",
        1,
        2,
    )


def test_one_classname_in_two_suites_is_two_tests_named_by_their_suites() -> None:
    data = (
        b'<testsuites><testsuite name="chromium"><testcase classname="a.spec.ts" name="t">'
        b'<failure message="x"/></testcase></testsuite><testsuite name="firefox">'
        b'<testcase classname="a.spec.ts" name="t"/></testsuite></testsuites>'
    )

    result = parse_report("projects.xml", data)

    [failure] = result.failures
    assert failure.test_id.startswith(f"chromium{SEP}")
    assert (failure.attempts_failed, failure.attempts_total, result.tests_total) == (1, 1, 2)


_NAME = st.text(
    alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E, blacklist_characters="<>&\"'"),
    min_size=1,
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(
    outer=st.lists(_NAME, min_size=2, max_size=2, unique=True),
    inner=_NAME,
    case=_NAME,
    failed=st.tuples(st.booleans(), st.booleans()),
)
def test_results_differing_only_in_suite_path_are_never_merged(
    outer: list[str], inner: str, case: str, failed: tuple[bool, bool]
) -> None:
    data = _suites((outer[0], inner, case, failed[0]), (outer[1], inner, case, failed[1]))

    result = parse_report("property.xml", data)
    # Neither in the report's reading nor when sources are merged for the job.
    failures = merge(result.failures)

    assert result.tests_total == 2
    assert len(failures) == sum(failed)
    assert len({f.test_id for f in failures}) == len(failures)
    assert all((f.attempts_failed, f.attempts_total) == (1, 1) for f in failures)


def test_an_error_under_a_suite_is_a_failed_case_named_after_the_suite() -> None:
    # Jenkins' JENKINS-6700 fixture: the class failed to load, no <testcase> at all.
    [failure] = parse_report("6700.xml", _fixture("jenkins-junit-report-6700.xml")).failures

    assert failure.test_id == "gda.device.detector.XHDetectorTest"
    assert failure.message.startswith("java.lang.NoClassDefFoundError")


def test_a_nested_suites_own_error_counts_beside_its_namesake_cases() -> None:
    # Jenkins' JENKINS-6545 fixture: three suites with one case each, one of them an error.
    result = parse_report("nested.xml", _fixture("jenkins-junit-report-nested-testsuites.xml"))

    assert [f.test_id for f in result.failures] == ["test.3rdlevel"]
    assert result.tests_total == 3


def test_junit_cases_are_cleared_as_they_are_read() -> None:
    cases = "".join(f'<testcase classname="c" name="t{i}"/>' for i in range(2000))
    data = f'<testsuite name="s">{cases}<testcase classname="c" name="x"><failure/></testcase>'
    chunks = [data.encode()[i : i + 512] for i in range(0, len(data), 512)]

    result = read_report("big.xml", iter([*chunks, b"</testsuite>"]))

    assert (result.tests_total, [f.test_id for f in result.failures]) == (2001, ["c#x"])
    assert result.elements == 2003


def test_testcase_file_and_line_attributes_are_the_location_when_no_frame_says_more() -> None:
    data = (
        b'<testsuite name="ParserTests"><testcase classname="ParserTests" name="testParse" '
        b'file="/home/runner/work/kit/kit/Sources/Kit/Parser%20Tests.swift" line="12">'
        b'<failure message="XCTAssertEqual failed">XCTAssertEqual failed</failure>'
        b"</testcase></testsuite>"
    )

    [failure] = parse_report("xcode.xml", data).failures

    assert failure.location == "Sources/Kit/Parser Tests.swift:12"
    assert failure.location_source == "attribute"


def test_a_bare_file_name_in_the_failure_text_is_kept_as_printed() -> None:
    # go-junit-report: the test's output, `t.Errorf`'s bare file name first.
    data = (
        b'<testsuite name="example.com/store"><testcase classname="example.com/store" '
        b'name="TestPut"><failure message="Failed">    store_test.go:41: got 2, want 1'
        b"</failure></testcase></testsuite>"
    )

    [failure] = parse_report("go.xml", data).failures

    assert (failure.location, failure.location_source) == ("store_test.go:41", "stack")


def test_a_library_frame_is_never_taken_for_a_bare_location() -> None:
    [failure] = parse_report("6700.xml", _fixture("jenkins-junit-report-6700.xml")).failures

    assert failure.location is None  # `at java.lang.Class.forName(Class.java:169)`


def test_runner_paths_are_made_repository_relative() -> None:
    assert stated_path(r"C:\a\repo\repo\src\X.cs") == "src/X.cs"
    assert stated_path(r"D:\a\R\R\tests\Y.cs") == "tests/Y.cs"
    assert stated_path(r"C:\actions-runner\_work\R\R\src\Z.cs") == "src/Z.cs"
    assert stated_path("/home/runner/work/R/R/pkg/a_test.go") == "pkg/a_test.go"
    assert stated_path("$GITHUB_WORKSPACE/lib/a.rb") == "lib/a.rb"
    assert stated_path("${{ github.workspace }}/lib/a.rb") == "lib/a.rb"
    assert stated_path("src%2Fmy%20app%2Fa.py") == "src/my app/a.py"
    assert stated_path("store_test.go") == "store_test.go"
    assert stated_path("/usr/lib/python3.11/unittest/case.py") is None
    assert stated_path("/Users/dev/kit/Tests/A.swift", keep_name=True) == "A.swift"


def test_a_windows_runner_path_in_a_trx_stack_is_the_location() -> None:
    trx = (
        _fixture("azure-pipelines-agent-ordered-test.trx")
        .replace(
            rb"C:\Users\somerandomusername\Source\Repos\Projectx\UnitTestProject4",
            rb"C:\a\Projectx\Projectx",
        )
        .replace(b'outcome = "Pending"', b'outcome = "Failed"')
    )

    [failure] = parse_report("run.trx", trx).failures

    assert failure.location == "UnitTestProject4/UnitTest1.cs:21"
    assert failure.location_source == "stack"


def test_an_aggregations_inner_results_are_tests_of_their_own() -> None:
    # azure-pipelines-agent's ordered test: a TestResultAggregation of two inner results.
    trx = _fixture("azure-pipelines-agent-ordered-test.trx")
    assert parse_report("ordered.trx", trx).tests_total == 3  # the web test and two rows

    failed = trx.replace(
        b'testName="02- CodedUITestMethod2 (OrderedTest1)" computerName="random-DT" '
        b'duration="00:00:00.0448870" startTime="2017-12-14T10:57:25.3480349+05:30" '
        b'endTime="2017-12-14T10:57:25.3950371+05:30" testType="13cdc9d9-ddb5-4fa4-a97d-'
        b'd965ccfc6d4b" outcome="Passed"',
        b'testName="02- CodedUITestMethod2 (OrderedTest1)" outcome="Failed"',
    )
    [failure] = parse_report("ordered.trx", failed).failures
    assert (
        failure.test_id == "CodedUITestProject1.CodedUITest1.02- CodedUITestMethod2 (OrderedTest1)"
    )


MSTEST_ROWS = b"""<TestRun xmlns="http://microsoft.com/schemas/VisualStudio/TeamTest/2010">
<Results>
<UnitTestResult testId="p" testName="Adds" outcome="Failed" resultType="DataDrivenTest">
<InnerResults>
<UnitTestResult testId="p" testName="Adds (1)" outcome="Passed" parentExecutionId="e"
 resultType="DataDrivenDataRow"/>
<UnitTestResult testId="p" testName="Adds (2)" outcome="Failed" parentExecutionId="e"
 resultType="DataDrivenDataRow"><Output><ErrorInfo><Message>Assert.AreEqual failed.</Message>
<StackTrace>at Calc.Tests.Adds(Int32 a) in D:\\a\\calc\\calc\\Calc.Tests\\AddTests.cs:line 32
</StackTrace></ErrorInfo></Output></UnitTestResult>
</InnerResults></UnitTestResult>
</Results>
<TestDefinitions><UnitTest id="p"><TestMethod className="Calc.Tests, Calc.Tests" name="Adds"/>
</UnitTest></TestDefinitions>
</TestRun>"""


def test_mstest_data_rows_are_results_of_their_own() -> None:
    result = parse_report("rows.trx", MSTEST_ROWS)

    [failure] = result.failures
    assert failure.test_id == "Calc.Tests.Adds (2)"
    assert failure.location == "Calc.Tests/AddTests.cs:32"
    assert result.tests_total == 2


def _tree(*paths: str) -> Tree:
    return Tree(files={p: TreeFile(sha="0" * 40, size=1) for p in paths})


def test_a_bare_name_is_placed_in_the_tree_when_one_file_has_it() -> None:
    tree = _tree("pkg/store/store_test.go", "pkg/store/store.go")

    placed = place_in_tree("store_test.go:41", tree)

    assert placed is not None
    assert (placed.location, placed.source) == ("pkg/store/store_test.go:41", "tree")
    assert place_in_tree("pkg/store/store.go:3", tree) is None  # not bare: left as it is


def test_a_bare_name_of_several_files_is_kept_and_says_so() -> None:
    failure = Failure(
        test_id="t", name="t", framework="go", location="a_test.go:3", location_source="stack"
    )
    tree = _tree("x/a_test.go", "y/a_test.go")

    [kept] = resolve_in_tree([failure], tree)

    assert (kept.location, kept.location_source) == ("a_test.go:3", "stack")
    assert kept.location_note == (
        "a_test.go is 2 files in the tree (x/a_test.go, y/a_test.go): kept as printed"
    )


def test_the_check_handler_places_bare_names_only_with_a_tree_it_already_has() -> None:
    failure = Failure(test_id="t", name="t", framework="go", location="store_test.go:41")
    extraction = Extraction(failures=[failure])
    cache = SourceCache()

    assert _placed_in_tree(extraction, cache, "acme/store", "abc") == extraction
    cache.trees[("acme/store", "abc")] = _tree("pkg/store/store_test.go")
    [placed] = _placed_in_tree(extraction, cache, "acme/store", "abc").failures
    assert (placed.location, placed.location_source) == ("pkg/store/store_test.go:41", "tree")


def test_a_file_attribute_without_a_line_is_no_location() -> None:
    data = (
        b'<testsuite name="s" file="test/cart.spec.js"><testcase classname="cart" name="adds">'
        b'<failure message="expected 2 to equal 3"/></testcase></testsuite>'
    )

    [failure] = parse_report("mocha.xml", data).failures

    assert (failure.file, failure.location) == ("test/cart.spec.js", None)


def test_a_data_driven_summary_beside_its_rows_is_not_a_test() -> None:
    # The flat layout some writers use: the summary and its rows are siblings.
    trx = b"""<TestRun xmlns="http://microsoft.com/schemas/VisualStudio/TeamTest/2010"><Results>
<UnitTestResult testId="p" testName="Rows" outcome="Failed" resultType="DataDrivenTest"/>
<UnitTestResult testId="p" testName="Rows (Data Row 0)" outcome="Passed"
 resultType="DataDrivenDataRow"/>
<UnitTestResult testId="p" testName="Rows (Data Row 1)" outcome="Failed"
 resultType="DataDrivenDataRow"/>
</Results></TestRun>"""

    result = parse_report("flat.trx", trx)

    assert [f.test_id for f in result.failures] == ["Rows (Data Row 1)"]
    assert result.tests_total == 2
