"""Gathering a run's context at no call of its own (issue 28): the runner header of the job
log the bot already streams, read from real job logs; tests' own durations from real
reports; the rules that put a run's context together from what was kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.triage.failures import extract_from_chunks
from bot.triage.job_context import JobRecord, run_context
from bot.triage.models import RunRecord
from bot.triage.reports import parse_report
from bot.triage.run_context import RunContext
from bot.triage.runner_header import RunnerHeader, os_of_labels

CORPUS = Path(__file__).resolve().parent / "fixtures" / "corpus"


def _raw_log(relative: str) -> bytes:
    """A corpus log's bytes as the runner served them, without the fixture tool's markers
    (logs/INDEX.md: a `#=SOURCE=#` first line, a `#=MATCH=# ` prefix, guillemets)."""
    path = CORPUS / "logs" / relative
    if not path.is_file():
        pytest.fail(f"{path} is absent: the corpus is in tests/fixtures/corpus")
    lines = [
        line.removeprefix("#=MATCH=# ").replace("\u2039", "").replace("\u203a", "")
        for line in path.read_text(encoding="utf-8").split("\n")
        if not line.startswith("#=SOURCE=#")
    ]
    return "\n".join(lines).encode()


def _read(data: bytes, chunk: int = 700) -> RunnerHeader | None:
    """The runner the streamed log names, fed in chunks that split its lines."""
    pieces = [data[i : i + chunk] for i in range(0, len(data), chunk)]
    return extract_from_chunks(pieces).runner


@pytest.mark.parametrize(
    ("log", "expected"),
    [
        # GitHub-hosted (agno-agi/agno): the image, not the provisioner's version beside it.
        (
            "blastradius/agno-agi__agno__job97433407085__log.txt",
            RunnerHeader(os="Linux", image="ubuntu-24.04 20260816.277.1"),
        ),
        (
            "blastradius/agno-agi__agno__092042274925.excerpt.txt",
            RunnerHeader(os="Linux", image="ubuntu-24.04 20260720.247.2"),
        ),
        # Self-hosted (pytorch/pytorch, on EC2): its name, behind the log's byte-order mark.
        (
            "pytorch-test-infra/gha_cancellation_shutdown.txt",
            RunnerHeader(name="i-0fc893cd09f13bc2a"),
        ),
    ],
)
def test_the_runner_header_of_real_job_logs(log: str, expected: RunnerHeader) -> None:
    assert _read(_raw_log(log)) == expected
    assert _read(_raw_log(log), chunk=7) == expected


LOGS = Path(__file__).resolve().parent / "fixtures" / "logs" / "runner"


@pytest.mark.parametrize(
    ("log", "expected"),
    [
        # logs/PROVENANCE.md: a Windows job's "Set up job" step, its debug lines on.
        ("windows_2022_header.log", RunnerHeader(os="Windows", image="windows-2022 20250209.1.0")),
        # Snenjih/Nexum on macOS: the provisioner's Version, printed first, is not the image's.
        (
            "macos_15_arm64_header.log",
            RunnerHeader(os="macOS", image="macos-15-arm64 20260427.0018.1"),
        ),
    ],
)
def test_the_runner_header_of_real_windows_and_macos_logs(log: str, expected: RunnerHeader) -> None:
    assert _read((LOGS / log).read_bytes()) == expected


def test_a_log_whose_start_was_not_read_names_no_runner() -> None:
    # pytorch-test-infra windows start mid-log: no header in them.
    assert _read(_raw_log("pytorch-test-infra/gha_timeout.txt")) is None


def test_a_runner_image_printed_after_the_first_step_is_not_the_runners() -> None:
    log = _raw_log("blastradius/agno-agi__agno__job97433407085__log.txt")
    start = log.rfind(b"\n", 0, log.index(b"##[group]Operating System")) + 1
    step = b"2026-08-24T12:36:06.3495000Z ##[group]Run pytest\n"
    assert _read(log[:start] + step + log[start:]) is None


@pytest.mark.parametrize(
    ("labels", "os"),
    [
        (["ubuntu-latest"], "Linux"),
        (["windows-2022"], "Windows"),
        (["macos-14-arm64"], "macOS"),
        (["self-hosted", "Linux", "X64"], "Linux"),  # a self-hosted runner's own labels
        (["self-hosted", "k8s"], None),  # webhooks/workflow_job.queued.2.json
        (["gpu", "db-app", "dc-03"], None),  # webhooks/workflow_job.in_progress.1.json
        (["ubuntu-latest", "windows-latest"], None),  # not one system
    ],
)
def test_the_system_runs_on_labels_name(labels: list[str], os: str | None) -> None:
    assert os_of_labels(labels) == os


def test_a_tests_own_duration_from_a_real_junit_report() -> None:
    # horovod's pytest report, as EnricoMi/publish-unit-test-result-action keeps it.
    path = (
        CORPUS / "reports/publish-unit-test-result-action/python/test/files/junit-xml"
        "/pytest/junit.fail.xml"
    )
    [failure] = parse_report(path.name, path.read_bytes()).failures
    assert (failure.test_id, failure.seconds) == (
        "test/test_spark.py::SparkTests::test_rsh_events",
        7.541,
    )


def test_a_tests_own_duration_from_a_real_go_test_json_stream() -> None:
    # dorny/test-reporter's go test -json fixture: each test's last `fail` event's Elapsed.
    path = CORPUS / "reports/test-reporter/__tests__/fixtures/golang-json.json"
    seconds = {f.name: f.seconds for f in parse_report(path.name, path.read_bytes()).failures}
    assert seconds["TestFailing"] == 0.89
    assert seconds["TestCases"] == 2.25


T0 = 1_700_000_000.0


def _run(**fields: object) -> RunRecord:
    base: dict[str, object] = {
        "repo": "acme/bus",
        "check_run_id": 1,
        "check_name": "tests",
        "head_sha": "a" * 40,
        "attempt": 2,
        "conclusion": "failure",
        "completed_at": T0,
        "started_at": T0 - 90,
    }
    return RunRecord.model_validate({**base, **fields})


def _job(**fields: object) -> JobRecord:
    base: dict[str, object] = {
        "repo": "acme/bus",
        "check_run_id": 1,
        "run_id": 5,
        "run_attempt": 3,
        "job_name": "tests",
        "runner_name": "GitHub Actions 5",
        "labels": ["macos-14"],
        "started_at": T0 - 200,
        "completed_at": T0,
    }
    return JobRecord.model_validate({**base, **fields})


def test_the_log_names_the_system_and_image_the_webhook_the_runner_and_labels() -> None:
    run = _run(runner_name="from the log", runner_os="macOS", runner_image="macos-14-arm64 1")
    assert run_context(run, _job(labels=["self-hosted"]), 4) == RunContext(
        runner_name="GitHub Actions 5",
        runner_os="macOS",
        runner_image="macos-14-arm64 1",
        labels=["self-hosted"],
        job_seconds=200.0,
        attempt=2,  # the bot's count, not the webhook's run_attempt 3
        jobs_in_run=4,
        at=T0,
        check_name="tests",
    )


def test_without_a_webhook_the_run_says_what_it_can() -> None:
    run = _run(runner_name="i-0fc893cd09f13bc2a")
    assert run_context(run, None, None) == RunContext(
        runner_name="i-0fc893cd09f13bc2a", job_seconds=90.0, attempt=2, at=T0, check_name="tests"
    )


def test_the_system_is_read_from_the_labels_when_no_log_said_it() -> None:
    context = run_context(_run(), _job(runner_name=None, started_at=None), 1)
    assert (context.runner_os, context.runner_name, context.job_seconds) == ("macOS", None, 90.0)
