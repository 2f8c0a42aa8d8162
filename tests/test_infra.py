"""Jobs that failed outside their tests: runner, machine, network, cancellation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.triage.infra import _KINDS, INFRA_MARKER, classify_infra
from bot.triage.models import InfraCause
from bot.triage.parsers.actions_log import clean_log

CORPUS = Path(__file__).resolve().parent / "fixtures" / "corpus"
LOGS = CORPUS / "logs"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "logs" / "infra"


def corpus_lines(relative: str) -> list[str]:
    """A corpus log as the runner served it, without the fixture tool's own markers
    (INDEX.md: a `#=SOURCE=#` first line, a `#=MATCH=# ` prefix, guillemets around spans)."""
    path = LOGS / relative
    if not path.is_file():
        pytest.fail(f"{path} is absent: the corpus is in tests/fixtures/corpus")
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


def whole_text_search(lines: list[str]) -> InfraCause | None:
    """The reference: each kind's pattern searched over the whole text, most telling first."""
    text = "\n".join(line[:1000] for line in lines)
    for kind, pattern, _ in _KINDS:
        match = re.search(pattern, text, re.MULTILINE)
        if match is not None:
            start = text.rfind("\n", 0, match.start()) + 1
            end = text.find("\n", match.end())
            return InfraCause(kind=kind, line=text[start : end if end >= 0 else None].strip())
    return None


def _every_log() -> list[Path]:
    corpus = sorted(LOGS.rglob("*.txt")) if LOGS.is_dir() else []
    return corpus + sorted((FIXTURES.parent).rglob("*.log"))


@pytest.mark.parametrize("path", _every_log(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_log_gives_what_the_whole_text_search_gives(path: Path) -> None:
    lines = clean_log(path.read_text(encoding="utf-8"))

    assert classify_infra(lines) == whole_text_search(lines)


# Pieces of every kind's lines, and near misses, for lines that may match any pattern.
_PIECES = [
    "##[error]",
    "Error: ",
    "error ",
    "npm ERR! ",
    "fatal: ",
    "Failure",
    "The operation was canceled.",
    "The job was cancelled.",
    "!!!!! KeyboardInterrupt !!!!!",
    "Process completed with exit code 137",
    "sh: line 1:  2231 ",
    "Killed",
    "Out of memory: Killed process 12",
    "oom-kill",
    "OOMKilled",
    "FATAL ERROR: ",
    "JavaScript heap out of memory",
    "No space left on device",
    "ENOSPC",
    "ECONNRESET",
    "ETIMEDOUT",
    "EAI_AGAIN",
    "E503",
    "503 Service Unavailable",
    "502 Bad Gateway",
    "504 Gateway Time-out",
    "HTTPSConnectionPool(host='x')",
    "Read timed out",
    "Max retries exceeded",
    "toomanyrequests",
    "pull rate limit",
    "Could not resolve host",
    "Temporary failure in name resolution",
    "The action 'Test' has timed out after 30 minutes",
    "has exceeded the maximum execution time of 60 minutes",
    "The runner has received a shutdown signal",
    "lost communication with the server",
    "The hosted runner encountered an error",
    "pod failed to come online",
    "Docker pull failed with exit code 1",
    "Failed to initialize container",
    "An action could not be found at the URI",
    "Failed to download archive",
    "Failed to download action",
    "Response status code does not indicate success: 503",
    "The request was canceled due to the configured HttpClient.Timeout",
    "fatal: unable to access 'x': ",
    "error: RPC failed; ",
    "fatal: the remote end hung up unexpectedly",
    "fatal: early EOF",
    "Aborting cache download as the download time exceeded the timeout",
    "Cache service responded with 503",
    "getCacheEntry failed",
    "The job was not acquired by Runner",
    "Pod x is unhealthy with phase status",
    "Failed to start the job container",
    "No runner matching the specified labels",
    " ",
    "\n",
    "_",
    "x",
]


@given(
    st.lists(
        st.lists(st.sampled_from(_PIECES) | st.text(max_size=6), max_size=6).map("".join),
        max_size=12,
    )
)
def test_any_lines_give_what_the_whole_text_search_gives(lines: list[str]) -> None:
    assert classify_infra(lines) == whole_text_search(lines)


def test_every_line_a_kind_matches_holds_one_of_its_words() -> None:
    pieces = [piece for piece in _PIECES if piece.strip()]
    for kind, pattern, words in _KINDS:
        matched = [p for p in pieces if re.search(pattern, p, re.MULTILINE)]
        matched += [a + b for a in pieces for b in pieces if re.search(pattern, a + b)]
        assert matched, kind
        for line in matched:
            assert any(word in line for word in words), (kind, line)
