"""Jobs that failed outside their tests: runner, machine, network, cancellation."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.triage.infra import INFRA_MARKER, classify_infra
from bot.triage.parsers.actions_log import clean_log

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
LOGS = CORPUS / "logs"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "logs" / "infra"


def corpus_lines(relative: str) -> list[str]:
    """A corpus log as the runner served it, without the fixture tool's own markers
    (INDEX.md: a `#=SOURCE=#` first line, a `#=MATCH=# ` prefix, guillemets around spans)."""
    path = LOGS / relative
    if not path.is_file():
        pytest.skip(f"{path} is absent (fresh clone without ../shared/corpus)")
    kept = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.startswith("#=SOURCE=#"):
            continue
        kept.append(line.removeprefix("#=MATCH=# ").replace("\u2039", "").replace("\u203a", ""))
    return clean_log("\n".join(kept))


@pytest.mark.parametrize(
    ("log", "kind", "line"),
    [
        (
            "pytorch-test-infra/gha_timeout.txt",
            "timeout",
            "##[error]The action 'Test' has timed out after 360 minutes.",
        ),
        (
            "pytorch-test-infra/gha_operation_canceled.txt",
            "cancelled",
            "##[error]The operation was canceled.",
        ),
        (
            "pytorch-test-infra/gha_cancellation_shutdown.txt",
            "runner-lost",
            "##[error]The runner has received a shutdown signal. This can happen when the "
            "runner service is stopped, or a manually started runner is canceled.",
        ),
        (
            "pytorch-test-infra/infra_osdc_pod_failure.txt",
            "runner-unavailable",
            "##[error]Error: pod failed to come online with error: Error: Pod "
            "mt-l-x86aavx2-29-113-a10g-v24bh-runner-fbtr6-workflow is unhealthy with phase "
            "status Pending: backoff timeout",
        ),
        # INDEX.md: the KeyboardInterrupt banner of a job killed mid-run, no failing test.
        # The interrupt came from outside the tests, so the job counts as cancelled.
        (
            "pytorch-test-infra/python_test_keyboardinterrupt.txt",
            "cancelled",
            "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!! KeyboardInterrupt !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!",
        ),
    ],
)
def test_corpus_infra_logs_give_their_cause_and_line(log: str, kind: str, line: str) -> None:
    cause = classify_infra(corpus_lines(log))

    assert cause is not None
    assert (cause.kind, cause.line) == (kind, line)


@pytest.mark.parametrize(
    "log",
    [
        "pytorch-test-infra/pytest_failure.txt",
        "pytorch-test-infra/pytest_failures_section.txt",
        "pytorch-test-infra/unittest_failed_consistently.txt",
        "pytorch-test-infra/collection_syntaxerror.txt",
        "pytorch-test-infra/distributed_test_wrapper.txt",
        "pytorch-test-infra/test_file_failed_wrapper.txt",
        "blastradius/agno-agi__agno__092042274925.excerpt.txt",
        "blastradius/agno-agi__agno__job97433407085__log.txt",
        "go-junit-report/012-subtests.txt",
        "go-junit-report/017-race.txt",
    ],
)
def test_test_failures_are_not_infra(log: str) -> None:
    assert classify_infra(corpus_lines(log)) is None


@pytest.mark.parametrize(
    ("name", "kind", "line"),
    [
        (
            "oom_killed.log",
            "oom",
            "/home/runner/work/_temp/3f2a1c.sh: line 1:  2231 Killed                  "
            "python -m pytest tests/ -n 4",
        ),
        (
            "disk_full.log",
            "disk-full",
            "#7 19.77 ERROR: Could not install packages due to an OSError: [Errno 28] "
            "No space left on device",
        ),
        ("npm_registry_503.log", "network", "npm ERR! code E503"),
        (
            "docker_rate_limit.log",
            "network",
            "Error response from daemon: toomanyrequests: You have reached your pull rate "
            "limit. You may increase the limit by authenticating and upgrading: "
            "https://www.docker.com/increase-rate-limit",
        ),
        (
            "job_timeout.log",
            "timeout",
            "##[error]The job running on runner GitHub Actions 12 has exceeded the maximum "
            "execution time of 60 minutes.",
        ),
    ],
)
def test_fixture_logs_give_their_cause(name: str, kind: str, line: str) -> None:
    lines = clean_log((FIXTURES / name).read_text(encoding="utf-8"))

    cause = classify_infra(lines)

    assert cause is not None
    assert (cause.kind, cause.line) == (kind, line)


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        (
            "##[error]The self-hosted runner: ci-7 lost communication with the server.",
            "runner-lost",
        ),
        ("##[error]Process completed with exit code 137.", "oom"),
        ("[ 1234.5] Out of memory: Killed process 4242 (node) total-vm:8123456kB", "oom"),
        (
            "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
            "oom",
        ),
        ("npm error code ENOSPC", "disk-full"),
        (
            "fatal: unable to access 'https://github.com/a/b/': Could not resolve host: github.com",
            "network",
        ),
        (
            "npm ERR! network request to https://registry.npmjs.org/x failed, reason: ECONNRESET",
            "network",
        ),
        (
            "ERROR: HTTPSConnectionPool(host='files.pythonhosted.org', port=443): Read timed out.",
            "network",
        ),
        ("Error: The operation was canceled.", "cancelled"),
    ],
)
def test_single_lines_of_each_kind(line: str, kind: str) -> None:
    noise = ["##[group]Run make test", "make: entering directory", "##[endgroup]"]

    cause = classify_infra([*noise, line, "##[error]Process completed with exit code 1."])

    assert cause is not None
    assert (cause.kind, cause.line) == (kind, line)


def test_runner_statements_win_over_the_cancellation_they_cause() -> None:
    lines = [
        "##[error]The operation was canceled.",
        "##[error]The action 'Test' has timed out after 30 minutes.",
    ]

    cause = classify_infra(lines)

    assert cause is not None
    assert cause.kind == "timeout"


@pytest.mark.parametrize(
    "line",
    [
        "##[error]Process completed with exit code 1.",
        "##[error][OSDC] Step script exited with code 1. This is a script/workflow error, "
        "not an infrastructure issue. Check the step logs above for the actual failure.",
        "RuntimeError: Process 0 terminated or timed out after 310.0115718841553 seconds",
        "AssertionError: expected the operation to be cancelled",
        "E   ConnectionRefusedError: [Errno 111] Connection refused",
        "KeyboardInterrupt: ",
    ],
)
def test_test_and_generic_errors_are_not_infra(line: str) -> None:
    assert classify_infra([line]) is None


def test_the_scan_marker_finds_every_line_the_classifier_uses() -> None:
    for path in sorted(FIXTURES.glob("*.log")):
        cause = classify_infra(clean_log(path.read_text(encoding="utf-8")))
        assert cause is not None
        assert INFRA_MARKER.search(cause.line + "\n"), path.name


@given(st.lists(st.text()))
def test_never_raises_on_arbitrary_text(lines: list[str]) -> None:
    cause = classify_infra(lines)

    assert cause is None or cause.line in "\n".join(lines)
