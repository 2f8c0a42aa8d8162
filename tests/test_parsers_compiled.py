"""Log parsers for go test, cargo/nextest, Maven, Gradle, RSpec, PHPUnit, dotnet test,
unittest and repo-supplied patterns, read from fixture logs with real Actions framing."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from bot.triage.models import Failure
from bot.triage.parsers import PARSERS
from bot.triage.parsers.actions_log import clean_log
from bot.triage.parsers.cargo import MARKER as CARGO_MARKER
from bot.triage.parsers.cargo import parse_cargo
from bot.triage.parsers.custom import MAX_LINE, CustomPattern, parse_custom
from bot.triage.parsers.dotnet import MARKER as DOTNET_MARKER
from bot.triage.parsers.dotnet import parse_dotnet
from bot.triage.parsers.go_test import MARKER as GO_MARKER
from bot.triage.parsers.go_test import parse_go_test
from bot.triage.parsers.gradle import MARKER as GRADLE_MARKER
from bot.triage.parsers.gradle import parse_gradle
from bot.triage.parsers.maven import MARKER as MAVEN_MARKER
from bot.triage.parsers.maven import parse_maven
from bot.triage.parsers.phpunit import MARKER as PHPUNIT_MARKER
from bot.triage.parsers.phpunit import parse_phpunit
from bot.triage.parsers.rspec import MARKER as RSPEC_MARKER
from bot.triage.parsers.rspec import parse_rspec
from bot.triage.parsers.unittest import MARKER as UNITTEST_MARKER
from bot.triage.parsers.unittest import parse_unittest
from bot.triage.reports import parse_report

CORPUS = Path(__file__).resolve().parent / "fixtures" / "corpus"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "logs"

Parse = Callable[[Sequence[str]], list[Failure]]

# Each parser, the pre-filter regex it exports, and the fixture folders that are its own.
RUNNERS: dict[str, tuple[Parse, re.Pattern[str], frozenset[str]]] = {
    "go_test": (parse_go_test, GO_MARKER, frozenset({"go_test"})),
    "maven": (parse_maven, MAVEN_MARKER, frozenset({"maven"})),
    "gradle": (parse_gradle, GRADLE_MARKER, frozenset({"gradle"})),
    "cargo": (parse_cargo, CARGO_MARKER, frozenset({"cargo", "nextest"})),
    "unittest": (parse_unittest, UNITTEST_MARKER, frozenset({"unittest"})),
    "dotnet": (parse_dotnet, DOTNET_MARKER, frozenset({"dotnet"})),
    "rspec": (parse_rspec, RSPEC_MARKER, frozenset({"rspec"})),
    "phpunit": (parse_phpunit, PHPUNIT_MARKER, frozenset({"phpunit"})),
}


def _read(path: Path) -> list[str]:
    if not path.is_file():
        pytest.fail(f"{path} is absent: the corpus is in tests/fixtures/corpus")
    return clean_log(path.read_text(encoding="utf-8"))


def _fixture(runner: str, name: str) -> list[str]:
    return _read(FIXTURES / runner / name)


def _corpus(relative: str) -> list[str]:
    return _read(CORPUS / "logs" / relative)


def _by_id(failures: list[Failure]) -> dict[str, Failure]:
    return {f.test_id: f for f in failures}


def _keep_windows(
    lines: Sequence[str],
    marker: re.Pattern[str],
    before: int = 40,
    after: int = 300,
    tail: int = 2000,
) -> list[str]:
    """What the streaming pre-filter passes on: marker lines with their surroundings, and
    the log's tail."""
    keep = [False] * len(lines)
    for i, line in enumerate(lines):
        if marker.search(line):
            for j in range(max(0, i - before), min(len(lines), i + after + 1)):
                keep[j] = True
    for j in range(max(0, len(lines) - tail), len(lines)):
        keep[j] = True
    return [line for line, kept in zip(lines, keep, strict=True) if kept]


def _padded(lines: list[str]) -> list[str]:
    """The log with 3,000 lines of build noise before it, so only the windows survive."""
    return [f"compiling unit {i} of 3000" for i in range(3000)] + lines


def _own_fixtures(runner: str) -> list[tuple[str, Path]]:
    _, _, dirs = RUNNERS[runner]
    return [(runner, path) for d in sorted(dirs) for path in sorted((FIXTURES / d).glob("*.log"))]


def _foreign_fixtures(runner: str) -> list[tuple[str, Path]]:
    _, _, dirs = RUNNERS[runner]
    return [
        (runner, path) for path in sorted(FIXTURES.glob("*/*.log")) if path.parent.name not in dirs
    ]


# --- go test --------------------------------------------------------------------------------


def _report_failures(name: str) -> set[str]:
    """The `classname.name` of each failed case in one of go-junit-report's expected reports."""
    xml = (CORPUS / "logs" / "go-junit-report" / name).read_text(encoding="utf-8")
    cases = re.findall(r'<testcase name="([^"]+)" classname="([^"]+)"[^>]*>\s*<failure', xml)
    return {f"{classname}.{name}" for name, classname in cases}


def test_go_corpus_subtests_report_the_leaves_and_their_parents_as_the_report_xml() -> None:
    failures = parse_go_test(_corpus("go-junit-report/012-subtests.txt"))

    # 012-report.xml fails 4 cases: two leaves and their parents, which failed only because a
    # subtest did; `go test -json` reports the parents too.
    assert {f.test_id for f in failures} == _report_failures("012-report.xml")
    assert len(failures) == 4
    by_id = _by_id(failures)
    assert by_id["package/subtests.TestSubtests/Subtest#01"].message == "error message"
    assert by_id["package/subtests.TestSubtests"].message == ""


@pytest.mark.parametrize(
    ("log", "report"),
    [("036-benchfail.txt", "036-report.xml"), ("037-legacy-fail.txt", "037-report.xml")],
)
def test_go_corpus_failing_benchmarks_and_go_1_4_results_are_the_tests_the_report_fails(
    log: str, report: str
) -> None:
    failures = parse_go_test(_corpus(f"go-junit-report/{log}"))
    assert {f.test_id for f in failures} == _report_failures(report)
    assert len(failures) == len(_report_failures(report))


def test_go_corpus_benchmark_and_legacy_messages() -> None:
    bench = _by_id(parse_go_test(_corpus("go-junit-report/036-benchfail.txt")))
    fatal = bench["package/name/benchfail.BenchmarkFatal"]
    assert (fatal.message, fatal.location) == ("fatal message", "bench_test.go:10")
    [legacy] = parse_go_test(_corpus("go-junit-report/037-legacy-fail.txt"))
    # The last message, its tab-indented further lines with it.
    assert (legacy.message, legacy.location) == ("Longer\nerror\nmessage.", "file_test.go:11")


def test_go_v_and_go_json_of_one_run_agree() -> None:
    as_log = parse_go_test(_corpus("go-junit-report/036-benchfail.txt"))
    as_json = parse_report(
        "110.json", (CORPUS / "logs" / "go-junit-report" / "110-benchfail.gojson.txt").read_bytes()
    )
    assert {f.test_id for f in as_log} == {f.test_id for f in as_json.failures}


def test_go_corpus_race_is_a_failure_of_the_racing_test() -> None:
    (failure,) = parse_go_test(_corpus("go-junit-report/017-race.txt"))

    assert failure.test_id == "package/race.TestRace"
    assert failure.message == "WARNING: DATA RACE"
    # The racing frames lie outside any runner workspace: nothing maps into the repo.
    assert failure.trace_paths == []


def test_go_subtests_parent_messages_and_panics() -> None:
    failures = _by_id(parse_go_test(_fixture("go_test", "subtests_panic.log")))

    cart, queue = "example.com/shop/internal/cart", "example.com/shop/internal/queue"
    assert list(failures) == [
        f"{cart}.TestDiscount",  # failed with its subtests, as go test -json says
        f"{cart}.TestDiscount/ten_percent",
        f"{cart}.TestDiscount/coupon_[EU]_ünïcode",
        f"{cart}.TestRefund",  # its subtest passed; it failed on its own line
        f"{queue}.TestQueueDrain",
    ]
    ten = failures[f"{cart}.TestDiscount/ten_percent"]
    # The t.Log line before the assertion is not the message; the indented diff belongs to it.
    assert ten.message == "Discount(100) = 80, want 90\ndiff: -want +got\n-90\n+80"
    assert ten.signature == "Discount(100) = 80, want 90 | diff: -want +got"
    # Only the basename is printed and no frame names the file: no guessed path; the name is
    # kept as printed, for the tree to place in the package's folder.
    assert ten.file is None
    assert ten.location == "discount_test.go:34"

    panic = failures[f"{queue}.TestQueueDrain"]
    assert panic.message == (
        "panic: runtime error: invalid memory address or nil pointer dereference"
    )
    assert panic.file == "internal/queue/queue_test.go"
    assert panic.location == "internal/queue/queue.go:88"
    # The second goroutine's helper.go frame is not part of the panic.
    assert panic.trace_paths == ["internal/queue/queue.go", "internal/queue/queue_test.go"]


def test_go_testify_error_trace_in_the_runner_workspace_is_the_location() -> None:
    """A real testify failure: `Error Trace:` frames under /home/runner/work/R/R/, the
    helper first, the test's own file last."""
    [failure] = parse_go_test(_fixture("go_test", "testify_runner_workspace.log"))

    test_file = "internal/serviceapi/cloudbackupcollectionrestorejob/resource_test.go"
    assert failure.file == test_file
    assert failure.location == f"{test_file}:122"
    assert failure.trace_paths == [
        "internal/testutil/acc/cloud_backup_collection_restore_fixture.go",
        test_file,
    ]
    # The frames are where, not what: the message is testify's Error and Messages lines.
    assert failure.message.startswith("Error:      \tExpected value not to be nil.")
    assert "Error Trace" not in failure.message and "/home/runner" not in failure.message


def test_go_testify_outside_a_runner_workspace_keeps_the_printed_name() -> None:
    """A real testify failure run from /home/seaweedfs: no frame maps into the repository,
    so the location is the `ec_integration_test.go:41:` line as printed."""
    failures = _by_id(parse_go_test(_fixture("go_test", "testify_outside_workspace.log")))

    package = "github.com/seaweedfs/seaweedfs/test/erasure_coding"
    timing = failures[f"{package}.TestECEncodingVolumeLocationTimingBug"]
    assert timing.location == "ec_integration_test.go:41"
    assert timing.file is None and timing.trace_paths == []
    assert timing.message.startswith("Error:      \tReceived unexpected error:")
    assert failures[f"{package}.TestECEncodingMasterTimingRaceCondition"].location == (
        "ec_integration_test.go:244"
    )


def test_go_windows_fullpath_and_build_failure() -> None:
    failures = _by_id(parse_go_test(_fixture("go_test", "windows_build.log")))

    assert list(failures) == [
        "example.com/shop/internal/tax",
        "example.com/shop/internal/store.TestOpenStore",
    ]
    build = failures["example.com/shop/internal/tax"]
    assert build.message == "build failed: undefined: RoundHalfEven"
    assert build.location == "internal/tax/rates_test.go:14"
    store = failures["example.com/shop/internal/store.TestOpenStore"]
    assert store.file == "internal/store/store_test.go"
    assert store.location == "internal/store/store_test.go:41"
    assert store.signature.startswith("open <tmp> The process cannot access the file")


def test_go_passing_packages_give_nothing() -> None:
    lines = [
        "=== RUN   TestA",
        "    a_test.go:3: just logging",
        "--- PASS: TestA (0.00s)",
        "PASS",
        "ok  \texample.com/a\t0.01s",
    ]
    assert parse_go_test(lines) == []


# --- maven -----------------------------------------------------------------------------------


def test_maven_surefire3_failures_errors_reruns_and_flakes() -> None:
    failures = _by_id(parse_maven(_fixture("maven", "surefire3_reruns.log")))

    assert list(failures) == [
        "com.acme.cart.CartTest#discountApplies",
        "com.acme.cart.CartTest#rounds(double)[2] 0.005 €",
        "com.acme.cart.CartTest#loadsPrices",
        "com.acme.cart.RetryTest#alwaysFails",
    ]  # CheckoutTest$WhenPaid#capturesOnce failed once, then passed: a flake, not a failure
    discount = failures["com.acme.cart.CartTest#discountApplies"]
    assert discount.name == "CartTest#discountApplies"
    assert discount.framework == "maven"
    assert discount.message == "org.opentest4j.AssertionFailedError: expected: <90> but was: <80>"
    assert discount.signature == discount.message
    # Frames name CartTest.java but not its directory: the location is kept as stated.
    assert discount.file is None
    assert discount.location == "CartTest.java:42"
    retried = failures["com.acme.cart.RetryTest#alwaysFails"]
    assert (retried.attempts_failed, retried.attempts_total) == (3, 3)
    assert retried.signature == (
        "org.opentest4j.AssertionFailedError: queue not drained after <duration>"
    )
    assert (discount.attempts_failed, discount.attempts_total) == (1, 1)


def test_maven_surefire2_names_and_windows_temp_paths() -> None:
    (failure,) = parse_maven(_fixture("maven", "surefire2_windows.log"))

    assert failure.test_id == "org.acme.ledger.FileStoreTest#writesJournal"
    assert failure.signature == "java.nio.file.AccessDeniedException: <tmp>"


def test_maven_class_level_error_is_reported_under_the_class() -> None:
    lines = [
        "[INFO] Running com.acme.db.MigrationIT",
        "[ERROR] Tests run: 1, Failures: 0, Errors: 1, Skipped: 0, Time elapsed: 2.1 s"
        " <<< FAILURE! -- in com.acme.db.MigrationIT",
        "[ERROR] com.acme.db.MigrationIT -- Time elapsed: 2.1 s  <<< ERROR!",
        "org.testcontainers.containers.ContainerLaunchException: Container startup failed",
        "\tat org.testcontainers.containers.GenericContainer.start(GenericContainer.java:351)",
    ]
    (failure,) = parse_maven(lines)

    assert failure.test_id == "com.acme.db.MigrationIT"
    assert failure.message.startswith("org.testcontainers.containers.ContainerLaunchException")


def test_maven_rerun_that_passed_in_the_end_is_not_a_failure() -> None:
    lines = [
        "[ERROR] com.acme.A.b -- Time elapsed: 0.1 s  <<< FAILURE!",
        "java.lang.AssertionError: nope",
        "",
        "[INFO] Results:",
        "[WARNING] Flakes: ",
        "[WARNING] com.acme.A.b",
        "[ERROR]   Run 1: A.b:3 nope",
        "[INFO]   Run 2: PASS",
        "[WARNING] Tests run: 1, Failures: 0, Errors: 0, Skipped: 0, Flakes: 1",
    ]
    assert parse_maven(lines) == []


# --- gradle ----------------------------------------------------------------------------------


def test_gradle_full_exceptions_nested_parameters_and_retries() -> None:
    failures = _by_id(parse_gradle(_fixture("gradle", "full_retry.log")))

    assert list(failures) == [
        "com.acme.cart.CartTest#discountApplies()",
        "com.acme.cart.CartTest#rounds(double) > [2] 0.005 €",
        "com.acme.queue.QueueTest#drains()",
    ]  # CheckoutTest > WhenPaid > capturesOnce() passed on the retry
    discount = failures["com.acme.cart.CartTest#discountApplies()"]
    assert discount.name == "CartTest#discountApplies()"
    assert discount.message == "org.opentest4j.AssertionFailedError: expected: <90> but was: <80>"
    assert discount.file is None
    # The test's own frame, not the assertion library's above it.
    assert discount.location == "CartTest.java:42"
    drains = failures["com.acme.queue.QueueTest#drains()"]
    # The last attempt's message, without the `Caused by:` chain.
    assert (
        drains.message == "java.util.concurrent.TimeoutException: queue not drained after 3001 ms"
    )
    assert drains.signature == (
        "java.util.concurrent.TimeoutException: queue not drained after <duration>"
    )
    assert (drains.attempts_failed, drains.attempts_total) == (2, 2)


def test_gradle_short_exceptions_keep_the_printed_class() -> None:
    (failure,) = parse_gradle(_fixture("gradle", "short_windows.log"))

    assert failure.test_id == "org.acme.ledger.FileStoreTest#writesJournal"
    assert failure.message == "java.nio.file.AccessDeniedException at FileStoreTest.java:33"


def test_gradle_unqualified_class_without_frames_stays_unqualified() -> None:
    lines = [
        "> Task :app:test",
        "",
        "WidgetTest > renders() FAILED",
        "    AssertionError at W.kt:3",
    ]
    (failure,) = parse_gradle(lines)

    assert failure.test_id == "WidgetTest#renders()"


def test_gradle_shapes_outside_a_gradle_log_are_ignored() -> None:
    assert parse_gradle(["step 3 > deploy FAILED"]) == []


# --- cargo test and nextest --------------------------------------------------------------------


def test_cargo_test_panics_with_repo_and_dependency_locations() -> None:
    failures = _by_id(parse_cargo(_fixture("cargo", "cargo_test.log")))

    assert list(failures) == [
        "cart::tests::discount",
        "cart::tests::rounds::half_cent_€",
        "queue::tests::drain",
    ]
    discount = failures["cart::tests::discount"]
    assert discount.framework == "cargo"
    assert discount.file is None  # a unit test: its module's file is not printed
    assert discount.location == "src/cart.rs:42"
    assert (
        discount.message
        == "assertion `left == right` failed: discount for 100\nleft: 80\nright: 90"
    )
    assert discount.signature == "assertion `left == right` failed: discount for 100 | left: 80"
    assert discount.trace_paths == ["src/cart.rs"]
    # The panic is inside a dependency in ~/.cargo: no repo location.
    assert failures["queue::tests::drain"].location is None
    assert failures["queue::tests::drain"].message == (
        "A Tokio 1.x context was found, but timers are disabled."
    )


def test_cargo_old_panic_format_on_windows_names_the_integration_test_file() -> None:
    (failure,) = parse_cargo(_fixture("cargo", "cargo_windows_old.log"))

    assert failure.test_id == "open_store"
    assert failure.file == "tests/api.rs"
    assert failure.location == "tests/api.rs:17"
    assert failure.message.startswith("called `Result::unwrap()` on an `Err` value: Os { code: 32")


def test_nextest_retries_crashes_and_flaky_passes() -> None:
    failures = _by_id(parse_cargo(_fixture("nextest", "nextest_retries.log")))

    assert list(failures) == ["shop cart::tests::discount", "shop-ffi ffi::tests::crash_on_null"]
    # server::accepts_under_load failed once and passed on its retry: not a failure.
    discount = failures["shop cart::tests::discount"]
    assert discount.framework == "nextest"
    assert discount.name == "cart::tests::discount"
    assert (discount.attempts_failed, discount.attempts_total) == (3, 3)
    assert discount.location == "src/cart.rs:42"
    crash = failures["shop-ffi ffi::tests::crash_on_null"]
    assert crash.message == "SIGSEGV"
    assert (crash.attempts_failed, crash.attempts_total) == (1, 1)


def test_nextest_failure_that_passed_on_retry_is_not_reported() -> None:
    lines = [
        "   TRY 1 FAIL [   0.006s] shop a::b",
        "   TRY 2 PASS [   0.006s] shop a::b",
        "     Summary [   0.010s] 1 test run: 1 passed (1 flaky), 0 skipped",
        "   FLAKY 2/2 [   0.006s] shop a::b",
    ]
    assert parse_cargo(lines) == []


# --- unittest ------------------------------------------------------------------------------


def test_unittest_blocks_subtests_and_pytest_style_ids_from_the_traceback() -> None:
    failures = _by_id(parse_unittest(_fixture("unittest", "unittest_py312.log")))

    cart, queue = "src/shop/tests/test_cart.py", "src/shop/tests/test_queue.py"
    assert list(failures) == [
        f"{queue}::QueueTests::test_drain",
        f"{cart}::CartTests::test_discount",
        f"{cart}::CartTests::test_rounding [half cent €]",
        f"{cart}::CartTests::test_rounding (value=0.015)",
    ]
    drain = failures[f"{queue}::QueueTests::test_drain"]
    assert drain.name == "QueueTests.test_drain"
    assert drain.file == queue
    assert drain.location == "src/shop/queue.py:88"
    assert drain.message == "TimeoutError: queue not drained after 3 s"
    assert drain.signature == "TimeoutError: queue not drained after <duration>"
    assert drain.trace_paths == [queue, "src/shop/queue.py"]
    # The docstring line and the caret line are not the message.
    assert failures[f"{cart}::CartTests::test_discount"].message == "AssertionError: 80 != 90"


def test_unittest_old_header_form_on_windows_django() -> None:
    (failure,) = parse_unittest(_fixture("unittest", "django_windows_py310.log"))

    assert failure.test_id == "ledger/tests.py::FileStoreTests::test_writes_journal"
    assert failure.location == "ledger/store.py:77"
    assert failure.signature.endswith("being used by another process: '<tmp>'")


def test_unittest_without_a_repo_traceback_keeps_the_dotted_id() -> None:
    lines = [
        "=" * 70,
        "ERROR: setUpClass (shop.tests.test_db.DbTests)",
        "-" * 70,
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3.12/socket.py", line 850, in create_connection',
        "    sock.connect(sa)",
        "ConnectionRefusedError: [Errno 111] Connection refused",
        "",
        "-" * 70,
        "Ran 0 tests in 0.001s",
    ]
    (failure,) = parse_unittest(lines)

    assert failure.test_id == "shop.tests.test_db.DbTests.setUpClass"
    assert failure.file is None
    assert failure.location is None
    assert failure.message == "ConnectionRefusedError: [Errno 111] Connection refused"


def test_unittest_header_without_its_rule_is_not_a_block() -> None:
    assert parse_unittest(["FAIL: test_x (a.B.test_x)", "-" * 70, "AssertionError"]) == []


# --- custom patterns -------------------------------------------------------------------------

SCENARIO = CustomPattern(name="scenario", regex=r"^scenario (?P<test>[\w-]+) failed")
CHECK = CustomPattern(
    name="check",
    regex=r"^\[check\] (?P<file>\S+):(?P<line>\d+) (?P<test>[\w-]+): (?P<message>.+)",
)


def test_custom_patterns_name_harness_failures() -> None:
    failures = _by_id(parse_custom(_fixture("custom", "scenarios.log"), [SCENARIO, CHECK]))

    # A scenario printed twice is one failure; `passed` and `started` lines are not failures;
    # an `echo "::error::..."` line is the harness's own output.
    assert list(failures) == ["captain-idle-wakeup", "dock-überfüllt", "storm-reroute"]
    wakeup = failures["captain-idle-wakeup"]
    assert wakeup.framework == "scenario"
    assert wakeup.message == "scenario captain-idle-wakeup failed"
    assert wakeup.file is None
    dock = failures["dock-überfüllt"]
    assert dock.framework == "check"
    assert dock.file == "harness/scenarios/dock.yaml"
    assert dock.location == "harness/scenarios/dock.yaml:12"
    assert dock.message == "queue depth 7 > 5"
    assert dock.signature == "queue depth 7 > 5"


def test_custom_without_patterns_finds_nothing() -> None:
    assert parse_custom(_fixture("custom", "scenarios.log"), []) == []


@pytest.mark.parametrize(
    ("regex", "complaint"),
    [
        ("scenario (?P<test>[\\w-]+ failed", "missing ): scenario (?P<test>[\\w-]+ failed"),
        ("scenario ([\\w-]+) failed", "needs a named group `test`"),
        ("(?P<test>\\w+) (?P<reason>.*)", "unknown named groups ['reason']"),
        # Only a backtracking engine has these; RE2 refuses them, saying why.
        ("(?P<test>\\w+) again \\1", "invalid escape sequence: \\1 (backreferences"),
        ("(?P<test>\\w+)(?= failed)", "invalid perl operator: (?= (backreferences"),
        ("(?P<test>\\w++) failed", "bad repetition operator: ++ (backreferences"),
        ("(?P<test>\\pL{999})", "too large to run in bounded time and memory"),
    ],
)
def test_custom_pattern_rejects_what_re2_cannot_run(regex: str, complaint: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(complaint)):
        CustomPattern(name="bad", regex=regex)


@pytest.mark.parametrize(
    "regex",
    [
        "(?P<test>(a+)+)b",  # exponential for a backtracking engine, linear for RE2
        "(?P<test>(a|a)*)!",
        "(?P<test>(?:\\w+\\s?)*) failed",
        "(?P<test>[(a+)+]+)",
    ],
)
def test_custom_pattern_accepts_repeats_re2_runs_in_linear_time(regex: str) -> None:
    pattern = CustomPattern(name="ok", regex=regex)
    # A backtracking engine would not return from this line in our lifetime.
    line = "a" * MAX_LINE

    assert pattern.regex == regex
    parse_custom([line, line + "!"], [pattern])


def test_custom_pattern_word_classes_take_letters_of_any_script() -> None:
    pattern = CustomPattern(name="w", regex="(?P<test>\\w+)\\W+(?P<message>[\\w ]+)$")

    (failure,) = parse_custom(["Überfüllt: ожидание истекло"], [pattern])

    assert (failure.test_id, failure.message) == ("Überfüllt", "ожидание истекло")


def test_custom_patterns_only_see_the_head_of_a_long_line() -> None:
    pattern = CustomPattern(name="tail", regex=r"(?P<test>needle-\d+)")
    head = "x" * (MAX_LINE - 20) + " needle-1"
    beyond = "x" * MAX_LINE + " needle-2"

    assert [f.test_id for f in parse_custom([head, beyond], [pattern])] == ["needle-1"]


@given(lines=st.lists(st.text()))
def test_custom_never_raises_on_arbitrary_text(lines: list[str]) -> None:
    for failure in parse_custom(lines, [SCENARIO, CHECK]):
        assert failure.test_id


# --- dotnet test -------------------------------------------------------------------------------


def test_dotnet_vstest_failures_with_messages_frames_and_theories() -> None:
    failures = _by_id(parse_dotnet(_fixture("dotnet", "vstest_xunit.log")))

    assert list(failures) == [
        "Shop.Tests.CartTests.DiscountApplies",
        'Shop.Tests.CartTests.Rounds(value: 0.005, label: "half cent €")',
        "Shop.Tests.Queues.QueueTests.DrainsWithinTimeout",
    ]
    discount = failures["Shop.Tests.CartTests.DiscountApplies"]
    assert discount.file == "tests/Shop.Tests/CartTests.cs"
    assert discount.location == "tests/Shop.Tests/CartTests.cs:42"
    assert discount.message == "Assert.Equal() Failure: Values differ\nExpected: 90\nActual:   80"
    assert discount.signature == "Assert.Equal() Failure: Values differ | Expected: 90"
    drain = failures["Shop.Tests.Queues.QueueTests.DrainsWithinTimeout"]
    # Raised in the code under test; the test's own frame gives the file.
    assert drain.location == "src/Shop/Queues/Queue.cs:88"
    assert drain.file == "tests/Shop.Tests/Queues/QueueTests.cs"
    assert drain.trace_paths == [
        "src/Shop/Queues/Queue.cs",
        "tests/Shop.Tests/Queues/QueueTests.cs",
    ]
    assert drain.signature == "System.TimeoutException : queue not drained after <duration>"


def test_dotnet_method_only_names_on_windows() -> None:
    (failure,) = parse_dotnet(_fixture("dotnet", "mstest_windows.log"))

    assert failure.test_id == "WritesJournal"
    assert failure.file == "tests/Ledger.Tests/FileStoreTests.cs"
    assert failure.location == "src/Ledger/FileStore.cs:77"
    assert "'<tmp>' because it is being used by another process" in failure.signature


def test_dotnet_failed_line_without_vstest_sections_is_not_a_test() -> None:
    assert parse_dotnet(["  Failed to restore packages [see above]", "next step"]) == []


# --- rspec -----------------------------------------------------------------------------------


def test_rspec_failures_pending_and_retries() -> None:
    failures = _by_id(parse_rspec(_fixture("rspec", "failures_retry.log")))

    widget = "spec/models/widget_spec.rb \u203a Widget renders the title"
    cart = "spec/models/cart_spec.rb \u203a Cart#total with a coupon [EU] applies € rounding"
    queue = "spec/models/queue_spec.rb \u203a Queue drains under load"
    # The pending example is not a failure; health_spec passed on its retry.
    assert list(failures) == [widget, cart, queue]
    title = failures[widget]
    assert title.name == "Widget renders the title"
    assert title.file == "spec/models/widget_spec.rb"
    # The webmock frame lies in vendor/bundle: a library, not the repo's code.
    assert title.location == "spec/models/widget_spec.rb:12"
    assert title.trace_paths == ["spec/models/widget_spec.rb"]
    assert title.message == 'expected: "Shop"\ngot: "Shop "'
    assert title.signature == 'expected: "Shop" | got: "Shop "'
    timeout = failures[cart]
    assert timeout.location == "app/models/queue.rb:88"
    assert timeout.signature == "Timeout::Error: | queue not drained after <duration>"
    retried = failures[queue]
    assert (retried.attempts_failed, retried.attempts_total) == (3, 3)
    assert retried.signature == "expected `#<Queue:0x<addr> size=3>.empty?` to be truthy, got false"


def test_rspec_file_that_fails_to_load_is_reported_under_its_path() -> None:
    (failure,) = parse_rspec(_fixture("rspec", "load_error.log"))

    assert failure.test_id == "spec/services/billing_spec.rb"
    assert failure.location == "spec/services/billing_spec.rb:3"
    assert failure.message == "LoadError:\ncannot load such file -- billing/stripe_gateway"


def test_rspec_without_failed_examples_list_uses_the_spec_frame() -> None:
    lines = [
        "  1) Widget renders",
        "     Failure/Error: expect(1).to eq(2)",
        "       expected: 2",
        "     # ./spec/widget_spec.rb:4:in `block (2 levels)'",
    ]
    (failure,) = parse_rspec(lines)

    assert failure.test_id == "spec/widget_spec.rb \u203a Widget renders"


# --- phpunit ---------------------------------------------------------------------------------


def test_phpunit_errors_failures_diffs_and_data_sets() -> None:
    failures = _by_id(parse_phpunit(_fixture("phpunit", "phpunit10.log")))

    # The risky test's section is not a failure section.
    assert list(failures) == [
        "Tests\\Unit\\QueueTest::testDrain",
        "Tests\\Unit\\CartTest::testTitle",
        'Tests\\Unit\\CartTest::testRounds with data set "half cent €"',
    ]
    drain = failures["Tests\\Unit\\QueueTest::testDrain"]
    assert drain.name == "QueueTest::testDrain"
    assert drain.file == "tests/Unit/QueueTest.php"
    assert drain.location == "src/Queue.php:88"
    assert drain.message == "RuntimeException: queue not drained after 3 s"
    assert drain.signature == "RuntimeException: queue not drained after <duration>"
    assert drain.trace_paths == ["src/Queue.php", "tests/Unit/QueueTest.php"]
    # A diff's `--- Expected` line does not end the entry.
    title = failures["Tests\\Unit\\CartTest::testTitle"]
    assert title.location == "tests/Unit/CartTest.php:12"
    assert title.signature == "Failed asserting that two strings are identical. | --- Expected"


def test_phpunit9_on_windows_with_a_numbered_data_set() -> None:
    (failure,) = parse_phpunit(_fixture("phpunit", "phpunit9_windows.log"))

    assert failure.test_id == "Ledger\\Tests\\FileStoreTest::testWritesJournal with data set #0"
    assert failure.file == "tests/FileStoreTest.php"
    assert failure.location == "src/FileStore.php:77"
    assert failure.signature.startswith("ErrorException: rename(<tmp>,")


# --- every parser -------------------------------------------------------------------------


def _all_own() -> list[tuple[str, Path]]:
    return [pair for runner in RUNNERS for pair in _own_fixtures(runner)]


def _all_foreign() -> list[tuple[str, Path]]:
    return [pair for runner in RUNNERS for pair in _foreign_fixtures(runner)]


@pytest.mark.parametrize(("runner", "path"), _all_own(), ids=lambda v: str(v)[-40:])
def test_marker_windows_of_a_huge_log_give_the_same_failures(runner: str, path: Path) -> None:
    parse, marker, _ = RUNNERS[runner]
    lines = _padded(_read(path))
    windows = _keep_windows(lines, marker)

    assert len(windows) < len(lines)
    assert parse(windows) == parse(lines) != []


@pytest.mark.parametrize(("runner", "path"), _all_foreign(), ids=lambda v: str(v)[-40:])
def test_parsers_stay_silent_on_other_runners_fixtures(runner: str, path: Path) -> None:
    parse, _, _ = RUNNERS[runner]
    assert parse(_read(path)) == []


PYTEST_CORPUS = [
    "pytorch-test-infra/pytest_failure.txt",
    "pytorch-test-infra/pytest_failures_section.txt",
    "pytorch-test-infra/unittest_failed_consistently.txt",
    "blastradius/agno-agi__agno__092042274925.excerpt.txt",
]


# unittest's parser included: pytest's own parser reports these, nothing else may.
@pytest.mark.parametrize("runner", list(RUNNERS))
@pytest.mark.parametrize("log", PYTEST_CORPUS)
def test_parsers_stay_silent_on_pytest_corpus_logs(runner: str, log: str) -> None:
    parse, _, _ = RUNNERS[runner]
    assert parse(_corpus(log)) == []


@pytest.mark.parametrize("runner", list(RUNNERS))
@given(lines=st.lists(st.text()))
def test_parsers_never_raise_on_arbitrary_text(runner: str, lines: list[str]) -> None:
    parse, _, _ = RUNNERS[runner]
    for failure in parse(lines):
        assert failure.test_id


@pytest.mark.parametrize("runner", list(RUNNERS))
def test_parsers_are_registered(runner: str) -> None:
    parse, _, _ = RUNNERS[runner]
    assert parse in PARSERS.values()
