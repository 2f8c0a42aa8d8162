"""Issue 17 items 6-8 and issue 19 item 4 on real logs: JVM test identity, pre-build
infrastructure, pytest's FAILURES-only output, minitest, and the parser registry.

Fixtures and their sources: tests/fixtures/logs/PROVENANCE.md.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.triage.failures import extract, extract_from_chunks
from bot.triage.infra import classify_infra
from bot.triage.logscan import parser_marker_names, parser_markers
from bot.triage.models import Failure
from bot.triage.parsers import PARSERS, REGISTRY, LogParser, _by_name, minitest
from bot.triage.parsers.actions_log import clean_log
from bot.triage.parsers.gradle import parse_gradle
from bot.triage.parsers.maven import parse_maven
from bot.triage.parsers.minitest import parse_minitest
from bot.triage.parsers.pytest import parse_pytest

LOGS = Path(__file__).resolve().parent / "fixtures" / "logs"


def _lines(relative: str) -> list[str]:
    return clean_log((LOGS / relative).read_text(encoding="utf-8"))


def _streamed(relative: str) -> list[Failure]:
    """The failures the bot finds in a log it streams, as it reads a job log."""
    return extract_from_chunks([(LOGS / relative).read_bytes()]).failures


# Item 6: the class of a Surefire 2.x / JUnit 5 failure, task-runner prefixes.


def test_surefire2_junit5_methods_get_the_class_just_run() -> None:
    failures = {f.test_id: f for f in _streamed("maven/streampark_surefire2_junit5.log")}

    # The hand label of this log (PROVENANCE.md): four tests of DateUtilsTest.
    cls = "org.apache.streampark.common.util.DateUtilsTest"
    assert list(failures) == [
        f"{cls}#formatCSTTimeShouldFormatCorrectly",
        f"{cls}#secondOfDayShouldReturnCorrectSecond",
        f"{cls}#getTimeShouldReturnMilliseconds",
        f"{cls}#minuteOfDayShouldReturnCorrectMinute",
    ]
    first = failures[f"{cls}#formatCSTTimeShouldFormatCorrectly"]
    assert first.name == "DateUtilsTest#formatCSTTimeShouldFormatCorrectly"
    assert first.location == "DateUtilsTest.java:170"  # the test's own frame, as stated
    assert first.file is None  # the frame names no directory
    assert first.message == (
        "org.opentest4j.AssertionFailedError: expected: <2024-02-11 17:30:00> "
        "but was: <2024-02-11 23:30:00>"
    )


def test_the_same_method_in_two_classes_is_two_tests() -> None:
    lines = _lines("maven/streampark_surefire2_junit5.log")
    # The same log once more, its first class renamed: Surefire names the method alone.
    other = [line.replace("DateUtilsTest", "TimeUtilsTest") for line in lines]

    ids = {f.test_id for f in parse_maven([*lines, *other])}

    assert "org.apache.streampark.common.util.DateUtilsTest#getTimeShouldReturnMilliseconds" in ids
    assert "org.apache.streampark.common.util.TimeUtilsTest#getTimeShouldReturnMilliseconds" in ids
    assert len(ids) == 8


def test_a_task_runner_prefix_is_dropped_from_maven_lines() -> None:
    # apache/hertzbeat prints `[hertzbeat-common-core] [ERROR] ...` (BR-Bench fixture 10);
    # here the same prefix on every line of the streampark log.
    lines = _lines("maven/streampark_surefire2_junit5.log")
    prefixed = [f"[streampark-common] {line}" for line in lines]

    def read(failures: list[Failure]) -> list[tuple[str, str | None, str]]:
        return [(f.test_id, f.location, f.message) for f in failures]

    assert read(extract(log_lines=prefixed).failures) == read(parse_maven(lines))


def test_gradle_behind_a_task_runner_prefix_keeps_a_clean_id_and_no_task_is_a_test() -> None:
    lines = [f"[backend:build:ci] {line}" for line in _lines("gradle/full_retry.log")]
    plain = parse_gradle(_lines("gradle/full_retry.log"))

    prefixed = parse_gradle(lines)

    def read(failures: list[Failure]) -> list[tuple[str, str | None, str]]:
        return [(f.test_id, f.location, f.message) for f in failures]

    assert read(prefixed) == read(plain)
    assert all("[backend" not in f.test_id for f in prefixed)
    assert not any("Task" in f.test_id for f in extract(log_lines=lines).failures)


def test_gradle_location_is_the_tests_own_frame_not_the_assertion_library() -> None:
    failures = {f.test_id: f for f in parse_gradle(_lines("gradle/full_retry.log"))}

    assert failures["com.acme.cart.CartTest#discountApplies()"].location == "CartTest.java:42"


# Item 7: infrastructure before any build step.


@pytest.mark.parametrize(
    ("log", "kind", "line"),
    [
        (
            "infra/docker_pull_denied.log",
            "image-pull",
            "##[error]Docker pull failed with exit code 1",
        ),
        (
            "infra/action_not_found.log",
            "action-download",
            "##[error]An action could not be found at the URI 'https://api.github.com/repos/"
            "astral-sh/setup-uv/tarball/582b2d78a0f5913301dcc87c4e93301fdd2b6711'",
        ),
    ],
)
def test_pre_build_failures_in_real_logs_are_infrastructure(log: str, kind: str, line: str) -> None:
    extraction = extract_from_chunks([(LOGS / log).read_bytes()])

    assert extraction.failures == []
    assert extraction.infra is not None
    assert (extraction.infra.kind, extraction.infra.line) == (kind, line)


def test_action_downloads_the_runner_retried_past_are_not_infrastructure() -> None:
    assert (
        extract_from_chunks([(LOGS / "not_infra/action_download_retried.log").read_bytes()]).infra
        is None
    )


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        # git's own words, as actions/checkout passes them through.
        (
            "fatal: unable to access 'https://github.com/acme/bus/': "
            "The requested URL returned error: 500",
            "checkout",
        ),
        ("error: RPC failed; HTTP 502 curl 22 The requested URL returned error: 502", "checkout"),
        # actions/toolkit's cache download (packages/cache/src/internal/downloadUtils.ts).
        ("##[error]Aborting cache download as the download time exceeded the timeout.", "cache"),
        ("##[error]getCacheEntry failed: Cache service responded with 503", "cache"),
        (
            "##[error]The job was not acquired by Runner of type hosted "
            "even after multiple attempts",
            "runner-lost",
        ),
    ],
)
def test_checkout_cache_and_acquisition_messages_are_infrastructure(line: str, kind: str) -> None:
    cause = classify_infra(["##[group]Run actions/checkout@v4", line])

    assert cause is not None and cause.kind == kind


def test_a_cache_miss_warning_is_not_infrastructure() -> None:
    lines = ["Warning: Failed to restore: Cache service responded with 503", "Cache not found"]

    assert classify_infra(lines) is None


# Item 8: pytest without `FAILED` summary lines, minitest.


def test_pytest_failures_section_alone_names_the_test_and_its_line() -> None:
    (failure,) = _streamed("pytest/agno_failures_only.log")

    assert failure.test_id == (
        "tests/integration/models/deepinfra/test_structured_response.py"
        "::test_structured_response_with_enum_fields"
    )
    assert failure.file == "tests/integration/models/deepinfra/test_structured_response.py"
    assert failure.location == "tests/integration/models/deepinfra/test_structured_response.py:61"
    assert failure.message == "AttributeError: 'str' object has no attribute 'rating'"


def test_pytest_entry_without_frames_takes_the_one_file_its_progress_marks_failed() -> None:
    lines = _lines("pytest/agno_failures_only.log")
    # The entry's traceback without its `path:line:` frame, and the not-verbose progress
    # line pytest prints for the file (one letter per test: 16 passed, one failed).
    entry = [line for line in lines if not line.startswith("tests/integration/")]
    progress = "tests/integration/models/deepinfra/test_structured_response.py ..F......  [ 52%]"
    other = "tests/integration/models/deepinfra/test_tool_use.py ........  [100%]"

    (failure,) = parse_pytest([progress, other, *entry])

    assert failure.test_id.endswith(
        "test_structured_response.py::test_structured_response_with_enum_fields"
    )
    # Two files marked failed: which one holds the test is unknown, so none is guessed.
    assert (
        parse_pytest([progress, progress.replace("structured_response", "tool_use"), *entry]) == []
    )


def test_minitest_failures_name_class_test_and_the_assertions_line() -> None:
    failures = _streamed("minitest/github_diff_parser_failures.log")

    assert [(f.test_id, f.location, f.message) for f in failures] == [
        (
            "GithubDiffParserTest#test_boom1",
            "test/github_diff_parser_test.rb:7",
            "Expected true to not be truthy.",
        ),
        ("GithubDiffParserTest#test_boom3", "test/github_diff_parser_test.rb:15", "Epic Fail!"),
        (
            "GithubDiffParserTest#test_boom2",
            "test/github_diff_parser_test.rb:11",
            "Expected false to be truthy.",
        ),
    ]
    assert {f.file for f in failures} == {"test/github_diff_parser_test.rb"}
    assert {f.framework for f in failures} == {"minitest"}


def test_minitest_error_is_found_past_interleaved_rake_output() -> None:
    (failure,) = _streamed("minitest/zeitwerk_error_interleaved.log")

    assert (
        failure.test_id
        == "TestReloading#test_reload_recovers_from_name_errors__w__on_unload_callbacks_"
    )
    assert failure.message.startswith("NameError: uninitialized constant X")
    assert failure.location == "lib/zeitwerk/loader/helpers.rb:118"  # the first frame in the repo
    assert failure.file == "test/lib/zeitwerk/test_reloading.rb"
    assert "test/support/loader_test.rb" in failure.trace_paths


def test_minitest_skips_are_not_failures_and_other_logs_are_not_minitest() -> None:
    lines = _lines("minitest/github_diff_parser_failures.log")
    skipped = [line.replace("1) Failure:", "1) Skipped:") for line in lines]

    assert [f.test_id for f in parse_minitest(skipped)] == [
        "GithubDiffParserTest#test_boom3",
        "GithubDiffParserTest#test_boom2",
    ]
    # The same blocks without minitest's run banner or summary: some other tool's output.
    banner = re.compile(r"^(?:# Running|Run options: |\d+ runs, )")
    assert parse_minitest([line for line in lines if not banner.match(line)]) == []


# Issue 19 item 4: one registry, markers registered with their parser.


def test_every_parser_is_registered_once_with_its_marker() -> None:
    assert list(PARSERS) == [parser.name for parser in REGISTRY]
    assert "minitest" in PARSERS
    assert parser_markers() == [*(p.marker for p in REGISTRY), parser_markers()[-1]]
    assert parser_marker_names()[: len(REGISTRY)] == list(PARSERS)
    for parser in REGISTRY:
        assert isinstance(parser.marker, re.Pattern), parser.name


def test_a_name_registered_twice_is_refused() -> None:
    twice = LogParser("minitest", parse_minitest, minitest.MARKER)

    with pytest.raises(ValueError, match="registered twice: minitest"):
        _by_name([*REGISTRY, twice])


def test_minitest_marker_keeps_every_line_its_parser_needs() -> None:
    data = (LOGS / "minitest/zeitwerk_error_interleaved.log").read_bytes()
    # Thousands of lines of passing output around the log: only the scanner's windows reach
    # the parser, and they must hold the failure.
    padding = b"".join(
        b"2022-05-26T08:28:00.0000000Z compiling file %d\n" % i for i in range(20000)
    )

    (failure,) = extract_from_chunks([padding, data, padding]).failures

    assert failure.test_id.startswith("TestReloading#")
