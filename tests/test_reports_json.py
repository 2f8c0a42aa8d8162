"""Report formats of issue 26: Dart/Flutter JSON, RSpec JSON, jest --json, Playwright JSON,
CTRF, TAP and Cucumber JSON, each checked on files their producers wrote against what the
projects that keep those files expect (tests/fixtures/reports/PROVENANCE.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.triage.failures import extract
from bot.triage.models import Verdict
from bot.triage.reports import DOCUMENTS, FORMATS, STREAMS, parse_report, read_report
from bot.triage.verdict import decide_extraction

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "reports"
SEP = " \u203a "
# Field names the formats read, so that generated documents reach their parsers' insides.
FIELDS = [
    "type",
    "suite",
    "test",
    "testID",
    "result",
    "error",
    "stackTrace",
    "groupIDs",
    "examples",
    "summary",
    "status",
    "exception",
    "backtrace",
    "messages",
    "results",
    "tool",
    "tests",
    "retryAttempts",
    "retries",
    "flaky",
    "testResults",
    "numTotalTests",
    "assertionResults",
    "ancestorTitles",
    "invocations",
    "config",
    "suites",
    "specs",
    "projects",
    "elements",
    "uri",
    "steps",
    "failures",
    "passes",
    "Action",
    "Package",
    "Test",
    "name",
    "title",
    "file",
]


def _fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def test_dart_json_fails_the_four_tests_dorny_test_reporter_lists() -> None:
    # dorny/test-reporter __tests__/__outputs__/dart-json.md: 1 passed, 4 failed, 1 skipped.
    result = parse_report("dart-json.json", _fixture("dorny-dart-json.json"))
    assert result.format == "dart-json"
    assert result.problems == []
    assert result.tests_total == 5
    by_id = {f.test_id: f for f in result.failures}
    assert sorted(by_id) == [
        f"test/main_test.dart{SEP}Test 1 Test 1.1{SEP}Exception in target unit",
        f"test/main_test.dart{SEP}Test 1 Test 1.1{SEP}Failing test",
        f"test/main_test.dart{SEP}Test 2{SEP}Exception in test",
        f"test/second_test.dart{SEP}Timeout test",
    ]
    failing = by_id[f"test/main_test.dart{SEP}Test 1 Test 1.1{SEP}Failing test"]
    assert failing.message == "Expected: <2>\nActual: <1>"
    assert failing.location == "test/main_test.dart:13"
    assert failing.file == "test/main_test.dart"
    assert failing.framework == "dart"
    # The package's own frame (`package:darttest/main.dart`) is not a repository path.
    unit = by_id[f"test/main_test.dart{SEP}Test 1 Test 1.1{SEP}Exception in target unit"]
    assert unit.location == "test/main_test.dart:17"
    assert unit.trace_paths == ["test/main_test.dart"]
    timeout = by_id[f"test/second_test.dart{SEP}Timeout test"]
    assert timeout.message.startswith("TimeoutException after 0:00:00.000001")


def test_flutter_machine_output_reads_the_exception_flutter_printed_above_its_error() -> None:
    # dorny/test-reporter __outputs__/provider-test-results.md: 268 passed, 1 failed.
    result = parse_report("provider.json", _fixture("dorny-flutter-provider.json"))
    assert (result.format, result.tests_total) == ("dart-json", 269)
    [failure] = result.failures
    assert failure.test_id == (
        f"test/value_listenable_provider_test.dart{SEP}valueListenableProvider"
        f"{SEP}pass updateShouldNotify"
    )
    assert failure.message.startswith(
        "The following TestFailure object was thrown running a test:\nExpected: <2>"
    )
    # `file:///__w/provider/provider/test/...`: a container job's checkout, made relative.
    assert failure.location == "test/value_listenable_provider_test.dart:112"


def test_dart_json_retried_test_that_passed_is_flake_evidence() -> None:
    lines = [
        '{"protocolVersion":"0.1.1","type":"start","time":0}',
        '{"suite":{"id":0,"path":"test/a_test.dart"},"type":"suite","time":0}',
        '{"test":{"id":1,"name":"t","suiteID":0,"groupIDs":[]},"type":"testStart","time":1}',
        '{"testID":1,"error":"boom","stackTrace":"","type":"error","time":2}',
        '{"testID":1,"result":"error","skipped":false,"hidden":false,"type":"testDone"}',
        '{"test":{"id":2,"name":"t","suiteID":0,"groupIDs":[]},"type":"testStart","time":3}',
        '{"testID":2,"result":"success","skipped":false,"hidden":false,"type":"testDone"}',
    ]
    chunks = [(line + "\n").encode() for line in lines]
    [failure] = read_report("retried.json", iter(chunks)).failures
    assert (failure.test_id, failure.attempts_failed, failure.attempts_total) == (
        f"test/a_test.dart{SEP}t",
        1,
        2,
    )


def test_rspec_json_fails_the_example_dorny_test_reporter_lists() -> None:
    # dorny/test-reporter __outputs__/rspec-json.md: 1 passed, 1 failed, 1 skipped.
    result = parse_report("rspec.json", _fixture("dorny-rspec-json.json"))
    assert (result.format, result.tests_total, result.problems) == ("rspec-json", 2, [])
    [failure] = result.failures
    assert failure.test_id == (
        "spec/config/check_env_vars_spec.rb"
        f"{SEP}CheckEnvVars#call when all env vars are defined behaves like success load"
        " fails in assertion"
    )
    assert failure.message.startswith(
        "RSpec::Mocks::MockExpectationError: (#ActiveSupport::BroadcastLogger"
    )
    # The gem's frame is outside the repository; the innermost repository frame is the code's.
    assert failure.location == "config/check_env_vars.rb:11"
    assert failure.trace_paths == [
        "config/check_env_vars.rb",
        "spec/config/check_env_vars_spec.rb",
    ]


def test_rspec_json_file_that_failed_to_load_is_a_failure_of_that_file() -> None:
    document = (
        b'{"version":"3.13.0","messages":["\\nAn error occurred while loading ./spec/a_spec.rb.'
        b"\\nFailure/Error: require 'nope'\\n\\nLoadError:\\n  cannot load such file -- nope\\n"
        b'# ./spec/a_spec.rb:1:in `<top (required)>\'"],"examples":[],'
        b'"summary":{"example_count":0,"failure_count":0,"pending_count":0,'
        b'"errors_outside_of_examples_count":1}}'
    )
    [failure] = parse_report("load.json", document).failures
    assert (failure.test_id, failure.location) == ("spec/a_spec.rb", "spec/a_spec.rb:1")
    assert failure.message.startswith("Failure/Error: require 'nope'")


# tapjs/tapjs src/parser/tap-snapshots/test/parser/<name>.tap.test.cjs, `bail=false`: the
# top-level results tap-parser fails (a TODO or SKIP `not ok` is no failure).
TAP_EXPECTED = [
    # Every result counts, subtests too (tap-parser counts the top level's: 2).
    ("tapjs-node-test-mjs.tap", {"uhoh, this one throws", "A thing"}, 3),
    ("tapjs-yamlish.tap", {"Resolve address"}, 1),
    ("tapjs-simple_fail.tap", {"test 2", "test 5"}, 5),
    ("tapjs-not-ok-todo.tap", set(), 4),
    ("tapjs-skip-one-fail.tap", set(), 0),
]


@pytest.mark.parametrize(
    ("name", "failed", "total"), TAP_EXPECTED, ids=[c[0] for c in TAP_EXPECTED]
)
def test_tap_fails_the_results_tap_parser_fails(name: str, failed: set[str], total: int) -> None:
    result = parse_report(name, _fixture(name))
    assert (result.format, result.problems, result.tests_total) == ("tap", [], total)
    # A parent is failed through its failed subtests: the top of each chain is the result.
    assert {f.test_id.split(SEP)[0] for f in result.failures} == failed
    assert all(f.source == "tap" for f in result.failures)


# node-tap's own output when a test calls `t.bailout()` (tapjs/tapjs src/core tap-snapshots),
# and tap-parser's bailout fixture, whose final results count 3 results, none after the bail.
TAP_BAILED = [
    ("tapjs-core-bailout-kills-process.tap", " (do not continue)", 1),
    ("tapjs-core-bailout-subtest.tap", "", 1),
    ("tapjs-bailout.tap", " (GERONIMMMOOOOOO!!!)", 3),
]


@pytest.mark.parametrize(("name", "said", "total"), TAP_BAILED, ids=[c[0] for c in TAP_BAILED])
def test_a_tap_run_that_bailed_out_never_looks_clean(name: str, said: str, total: int) -> None:
    result = parse_report(name, _fixture(name))
    assert (result.format, result.failures, result.tests_total) == ("tap", [], total)
    assert result.problems == [f"{name}: the run bailed out{said}: no test ran after it"]

    extraction = extract(log_lines=None, parsed_reports=[result])
    (decision,) = decide_extraction(extraction, ["README.md"], passed_on_rerun=True)
    assert decision.verdict == Verdict.UNKNOWN
    assert f"not read: {result.problems[0]}" in decision.evidence


def test_a_failure_before_the_bail_out_is_kept_and_results_after_it_are_not_read() -> None:
    tap = b"TAP version 14\nnot ok 1 - adds\nBail out! db down\nnot ok 2 - after the bail\n1..2\n"
    result = parse_report("r.tap", tap)
    assert [f.test_id for f in result.failures] == ["adds"]
    assert result.problems == ["r.tap: the run bailed out (db down): no test ran after it"]


def test_tap_node_test_diagnostics_give_the_error_and_the_nested_chain() -> None:
    failures = {
        f.test_id: f for f in parse_report("n.tap", _fixture("tapjs-node-test-mjs.tap")).failures
    }
    assert sorted(failures) == [f"A thing{SEP}nesting suite", "uhoh, this one throws"]
    assert failures["uhoh, this one throws"].message == "RangeError: Invalid time value"
    yamlish = parse_report("y.tap", _fixture("tapjs-yamlish.tap")).failures[0]
    # TAP 13's own `message` diagnostic.
    assert yamlish.message == "Failed with error 'hostname peebles.example.com not found'"


def test_tap_in_a_runner_workspace_names_the_file_and_the_line_that_failed() -> None:
    tap = (
        b"TAP version 13\n# Subtest: adds\nnot ok 1 - adds\n  ---\n"
        b"  location: '/home/runner/work/app/app/test/math.test.js:3:1'\n"
        b"  error: 'Expected values to be strictly equal'\n  name: 'AssertionError'\n"
        b"  stack: |-\n"
        b"    TestContext.<anonymous> (/home/runner/work/app/app/test/math.test.js:4:10)\n"
        b"  ...\n1..1\n"
    )
    [failure] = parse_report("math.tap", tap).failures
    assert failure.test_id == f"test/math.test.js{SEP}adds"
    assert failure.location == "test/math.test.js:4"
    assert failure.message == "AssertionError: Expected values to be strictly equal"


def test_ctrf_fails_the_failed_test_and_keeps_the_flaky_one_as_flake_evidence() -> None:
    # ctrf-io/ctrf examples/comprehensive.json's summary: 3 tests, 2 passed, 1 failed, 1 flaky.
    result = parse_report("ctrf.json", _fixture("ctrf-comprehensive.json"))
    assert (result.format, result.problems, result.tests_total) == ("ctrf", [], 3)
    by_id = {f.test_id: f for f in result.failures}
    failed = by_id[
        f"tests/admin/dashboard.test.js{SEP}Admin{SEP}Dashboard{SEP}admin dashboard loads"
    ]
    assert (failed.attempts_failed, failed.attempts_total) == (1, 1)
    assert failed.message == "Element not found: .dashboard-metrics"
    # The trace's frames are bare names: the test's own file and line are where it failed.
    assert failed.location == "tests/admin/dashboard.test.js:42"
    flaky = by_id[f"tests/checkout/checkout.test.js{SEP}Checkout{SEP}user can checkout"]
    assert (flaky.attempts_failed, flaky.attempts_total) == (1, 2)
    assert flaky.message == "Payment gateway timeout"
    assert len(result.failures) == 2


def test_ctrf_retry_attempts_and_a_clean_run() -> None:
    # examples/with-retries.json: "flaky test" passed on its third attempt.
    [flaky] = parse_report("r.json", _fixture("ctrf-with-retries.json")).failures
    assert (flaky.test_id, flaky.attempts_failed, flaky.attempts_total) == ("flaky test", 2, 3)
    clean = parse_report("m.json", _fixture("ctrf-minimal.json"))
    assert (clean.format, clean.failures, clean.tests_total) == ("ctrf", [], 1)


def test_jest_json_fails_what_jest_counted_in_the_same_file() -> None:
    # jest 30's own counts in jest30-shop.json: numFailedTests 2, numRuntimeErrorTestSuites 1,
    # numTotalTests 5 with 1 pending; "eventually passes" ran twice (`invocations`).
    result = parse_report("jest.json", _fixture("jest30-shop.json"))
    assert (result.format, result.problems, result.tests_total) == ("jest-json", [], 4)
    by_id = {f.test_id: f for f in result.failures}
    assert sorted(by_id) == [
        "test/broken.test.js",
        f"test/cart.test.js{SEP}cart{SEP}discount refuses a negative amount",
        f"test/cart.test.js{SEP}cart{SEP}total{SEP}counts quantities",
        f"test/flaky.test.js{SEP}eventually passes",
    ]
    thrown = by_id[f"test/cart.test.js{SEP}cart{SEP}discount refuses a negative amount"]
    # The runner's checkout is dropped; the innermost frame is the code that threw.
    assert (thrown.location, thrown.message) == ("src/cart.js:5", "RangeError: negative amount: -5")
    assert thrown.trace_paths == ["src/cart.js", "test/cart.test.js"]
    flaky = by_id[f"test/flaky.test.js{SEP}eventually passes"]
    assert (flaky.attempts_failed, flaky.attempts_total) == (1, 2)
    broken = by_id["test/broken.test.js"]
    assert "Cannot find module './does-not-exist'" in broken.message


def test_playwright_json_fails_the_unexpected_test_and_keeps_the_flaky_one() -> None:
    # Playwright's own stats in playwright-shop.json: expected 1, unexpected 1, flaky 1,
    # skipped 1; `retries: 1`.
    result = parse_report("pw.json", _fixture("playwright-shop.json"))
    assert (result.format, result.problems, result.tests_total) == ("playwright-json", [], 3)
    by_id = {f.test_id: f for f in result.failures}
    failed = by_id[f"e2e/cart.spec.js{SEP}cart{SEP}refuses a negative discount"]
    assert (failed.attempts_failed, failed.attempts_total) == (2, 2)
    assert (failed.location, failed.message) == ("src/cart.js:5", "RangeError: negative amount: -5")
    flaky = by_id[f"e2e/cart.spec.js{SEP}cart{SEP}passes on retry"]
    assert (flaky.attempts_failed, flaky.attempts_total) == (1, 2)
    assert flaky.location == "e2e/cart.spec.js:12"
    assert len(result.failures) == 2


def test_cucumber_json_fails_the_scenarios_cucumber_js_failed() -> None:
    # cucumber-js 11's own summary of that run: "4 scenarios (2 failed, 2 passed)".
    result = parse_report("cucumber.json", _fixture("cucumber-js-shop.json"))
    assert (result.format, result.problems, result.tests_total) == ("cucumber-json", [], 4)
    by_id = {f.test_id: f for f in result.failures}
    assert sorted(by_id) == [
        f"features/cart.feature{SEP}Cart{SEP}A negative discount",
        # The outline's second row: its rows share the outline's name.
        f"features/cart.feature{SEP}Cart{SEP}Several items{SEP}example 2",
    ]
    thrown = by_id[f"features/cart.feature{SEP}Cart{SEP}A negative discount"]
    assert (thrown.location, thrown.message) == ("src/cart.js:5", "RangeError: negative amount: -5")
    row = by_id[f"features/cart.feature{SEP}Cart{SEP}Several items{SEP}example 2"]
    assert row.location == "features/step_definitions/steps.js:15"
    assert row.message.startswith("AssertionError [ERR_ASSERTION]: Expected values to be")


def test_cucumber_ruby_background_failure_is_the_next_scenarios_and_undefined_steps_fail() -> None:
    document = (
        b'[{"uri": "features/a.feature", "name": "A", "elements": ['
        b'{"type": "background", "name": "", "steps": [{"keyword": "Given ", "name": "x",'
        b' "result": {"status": "failed", "error_message": "boom"}}]},'
        b'{"type": "scenario", "name": "one", "steps": [{"keyword": "When ", "name": "y",'
        b' "result": {"status": "skipped"}}]},'
        b'{"type": "scenario", "name": "two", "steps": [{"keyword": "When ", "name": "z",'
        b' "result": {"status": "undefined"}}]}]}]'
    )
    result = parse_report("ruby.json", document)
    assert [(f.test_id, f.message) for f in result.failures] == [
        (f"features/a.feature{SEP}A{SEP}one", "boom"),
        (f"features/a.feature{SEP}A{SEP}two", "undefined step: When z"),
    ]


# Each format's files, as `auto` must tell them: by content alone.
DETECTED = [
    ("dorny-dart-json.json", "dart-json"),
    ("dorny-flutter-provider.json", "dart-json"),
    ("dorny-rspec-json.json", "rspec-json"),
    ("tapjs-node-test-mjs.tap", "tap"),
    ("tapjs-not-ok-todo.tap", "tap"),
    ("ctrf-comprehensive.json", "ctrf"),
    ("jest30-shop.json", "jest-json"),
    ("playwright-shop.json", "playwright-json"),
    ("cucumber-js-shop.json", "cucumber-json"),
    ("mocha-retries.json", "mocha-json"),
    ("go-rerun.gojson.txt", "go-json"),
]


@pytest.mark.parametrize(("name", "fmt"), DETECTED, ids=[d[0] for d in DETECTED])
def test_each_format_is_told_by_its_content_and_no_other_detector_takes_it(
    name: str, fmt: str
) -> None:
    assert fmt in FORMATS
    data = _fixture(name)
    assert parse_report(name, data).format == fmt
    document = _document(data)
    if document is not None:
        takers = [known.name for known in DOCUMENTS if known.detect(document)]
        assert takers == [fmt]
    else:
        first = next(line for line in data.decode().splitlines() if line.strip())
        assert [known.name for known in STREAMS if known.detect(first)] in ([fmt], [])


def _document(data: bytes) -> object:
    try:
        return json.loads(data)
    except ValueError:
        return None


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f not in ("junit", "trx")])
@settings(max_examples=60, deadline=None)
@given(
    document=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=8),
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=6), inner, max_size=6)
        ),
        max_leaves=30,
    )
)
def test_any_json_of_any_shape_is_read_without_an_exception(fmt: str, document: object) -> None:
    data = json.dumps(document).encode()
    for text in (data, data.replace(b", ", b",\n")):
        result = parse_report("x.json", text, fmt=fmt)
        assert all(f.test_id is not None for f in result.failures)


def test_flakybot_parse_lists_the_formats_and_reads_a_tap_file(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parent.parent
    run = [sys.executable, "-m", "bot.cli", "parse"]
    shown = subprocess.run(
        [*run, "--help"], cwd=root, capture_output=True, text=True, timeout=60, check=True
    )
    for fmt in FORMATS:
        assert fmt in shown.stdout
    # A `.txt` file is sniffed by its opening: TAP is a report, not a job log.
    copy = tmp_path / "results.txt"
    copy.write_bytes(_fixture("tapjs-yamlish.tap").replace(b"TAP Version", b"TAP version"))
    done = subprocess.run(
        [*run, "--json", str(copy)], cwd=root, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    [result] = json.loads(done.stdout)
    assert [f["test_id"] for f in result["failures"]] == ["Resolve address"]
    assert result["failures"][0]["source"] == "tap"


def test_dart_json_file_that_did_not_compile_is_a_failure_of_the_file() -> None:
    lines = [
        '{"protocolVersion":"0.1.1","type":"start","time":0}',
        '{"suite":{"id":0,"platform":"vm","path":"test\\\\broken_test.dart"},"type":"suite"}',
        '{"test":{"id":1,"name":"loading test\\\\broken_test.dart","suiteID":0,"groupIDs":[]},'
        '"type":"testStart","time":1}',
        '{"testID":1,"error":"Failed to load \\"test/broken_test.dart\\":\\n'
        "test/broken_test.dart:3:7: Error: Undefined name 'nope'.\","
        '"stackTrace":"","isFailure":false,"type":"error","time":2}',
        '{"testID":1,"result":"error","skipped":false,"hidden":false,"type":"testDone"}',
    ]
    [failure] = parse_report("broken.json", "\n".join(lines).encode()).failures
    assert (failure.test_id, failure.name) == ("test/broken_test.dart", "test/broken_test.dart")
    assert failure.location == "test/broken_test.dart:3"
    assert failure.message.startswith('Failed to load "test/broken_test.dart":')
