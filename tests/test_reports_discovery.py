"""Which of a failed job's artifacts are read when `.github/flaky.yml` names none: the uploads
its own log names, what their names say, and which of the run's artifacts they are."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.triage.reports import parse_report
from bot.triage.reports.discovery import Kind, Upload, UploadsSeen, choose, kind_of, recognised

CORPUS_LOGS = Path(__file__).parent / "fixtures" / "corpus" / "logs"

# actions/upload-artifact's own words (src/shared/upload-artifact.ts from v4 on, src/
# upload-artifact.ts in v3), with the runner's timestamps, as a job's log shows them.
V4_LOG = (
    b"2026-11-30T10:00:41.3000000Z ##[error]Process completed with exit code 2.\n"
    b"2026-11-30T10:00:41.4000000Z ##[group]Run actions/upload-artifact@v4\n"
    b"2026-11-30T10:00:41.4000100Z with:\n"
    b"2026-11-30T10:00:41.4000200Z   name: test-results-3.12\n"
    b"2026-11-30T10:00:41.4000300Z ##[endgroup]\n"
    b"2026-11-30T10:00:42.0042798Z Artifact test-results-3.12.zip successfully finalized. "
    b"Artifact ID 9273811568\n"
    b"2026-11-30T10:00:42.0043956Z Artifact test-results-3.12 has been successfully uploaded! "
    b"Final size is 8592 bytes. Artifact ID is 9273811568\n"
    b"2026-11-30T10:00:42.0050345Z Artifact download URL: "
    b"https://github.com/acme/store/actions/runs/31986009623/artifacts/9273811568\n"
    b"2026-11-30T10:00:43.1000000Z Artifact coverage has been successfully uploaded! "
    b"Final size is 112 bytes. Artifact ID is 9273811570\r\n"
    b"2026-11-30T10:00:44.1000000Z Artifact Playwright Report has been successfully uploaded!\n"
)
V4_UPLOADS = [
    Upload("test-results-3.12", 9273811568),
    Upload("coverage", 9273811570),
    Upload("Playwright Report", None),
]


def test_the_logs_upload_lines_name_the_jobs_artifacts_however_the_log_is_cut() -> None:
    whole = UploadsSeen()
    whole.feed(V4_LOG)
    assert whole.finish() == V4_UPLOADS
    for cut in range(1, len(V4_LOG)):
        seen = UploadsSeen()
        seen.feed(V4_LOG[:cut])
        seen.feed(V4_LOG[cut:])
        assert seen.finish() == V4_UPLOADS, cut


def test_a_step_that_began_an_upload_and_never_finished_uploaded_nothing() -> None:
    # pytorch/test-infra's log: the upload-artifact step ran after the operation was
    # cancelled, and no artifact was uploaded.
    log = (CORPUS_LOGS / "pytorch-test-infra" / "gha_operation_canceled.txt").read_bytes()
    assert b"Run actions/upload-artifact@v4" in log
    seen = UploadsSeen()
    seen.feed(log)
    assert seen.finish() == []


def test_a_line_that_only_mentions_an_upload_names_none() -> None:
    seen = UploadsSeen()
    seen.feed(b'print("Artifact x has been successfully uploaded!")\n')
    seen.feed(b"> Artifact y has been successfully uploaded!\n")
    assert seen.finish() == []


# Names public workflows give their upload-artifact steps (see discovery.py).
@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("test-results", Kind.REPORTS),
        ("test-results-ubuntu-latest", Kind.REPORTS),
        ("TestResults", Kind.REPORTS),
        ("test-report", Kind.REPORTS),
        ("surefire-reports", Kind.REPORTS),
        ("failsafe-reports", Kind.REPORTS),
        ("playwright-report", Kind.REPORTS),
        ("junit-3.12", Kind.REPORTS),
        ("jest-junit", Kind.REPORTS),
        ("unit-test-results.trx", Kind.REPORTS),
        ("junit-logs", Kind.REPORTS),  # a format's name wins
        ("coverage", Kind.NOT_REPORTS),
        ("coverage-report", Kind.NOT_REPORTS),
        ("coverage-data-5f1c", Kind.NOT_REPORTS),
        ("htmlcov", Kind.NOT_REPORTS),
        ("wheel-py3_10-cpu", Kind.NOT_REPORTS),
        ("dist", Kind.NOT_REPORTS),
        ("build-logs", Kind.NOT_REPORTS),
        ("gatling-logs", Kind.NOT_REPORTS),
        ("docker-image", Kind.NOT_REPORTS),
        ("rendered-video", Kind.NOT_REPORTS),
        ("playwright-screenshots", Kind.NOT_REPORTS),
        ("yetus-jdk17-hadoop3-unit-check-large-wave-2", Kind.UNKNOWN),
        ("e2e-3.12", Kind.UNKNOWN),
    ],
)
def test_what_a_name_says(name: str, kind: Kind) -> None:
    assert kind_of(name) is kind


@dataclass(frozen=True)
class Listed:
    id: int
    name: str


def test_only_the_jobs_own_uploads_are_chosen_reports_first() -> None:
    # A matrix: both jobs upload reports to the same run; this job is 3.12.
    listed = [
        Listed(30, "e2e-3.12"),
        Listed(21, "coverage-3.12"),
        Listed(20, "test-results-3.12"),
        Listed(11, "coverage-3.11"),
        Listed(10, "test-results-3.11"),
        Listed(5, "test-results"),  # another job's, named after no job
    ]
    uploads = [Upload("e2e-3.12", 30), Upload("coverage-3.12", 21), Upload("test-results-3.12", 20)]
    chosen = choose(listed, uploads)
    assert [(a.name, kind) for a, kind in chosen] == [
        ("test-results-3.12", Kind.REPORTS),
        ("e2e-3.12", Kind.UNKNOWN),
    ]


def test_an_upload_is_its_artifact_by_id_else_the_newest_of_its_name() -> None:
    # The job's rerun uploaded `junit` again: the run lists both attempts' artifacts.
    listed = [Listed(41, "junit"), Listed(40, "junit")]
    assert [a.id for a, _ in choose(listed, [Upload("junit", 40)])] == [40]
    assert [a.id for a, _ in choose(listed, [Upload("junit", None)])] == [41]
    # An id the run does not list (another run's, or deleted): nothing is read for it.
    assert choose(listed, [Upload("junit", 99)]) == []
    assert choose(listed, [Upload("junit", 41), Upload("junit", None)]) == [
        (listed[0], Kind.REPORTS)
    ]


def test_entries_that_are_not_reports_are_left_out_problems_and_all() -> None:
    junit = b'<testsuite><testcase name="t"><failure message="boom"/></testcase></testsuite>'
    found = [
        ("r/junit.xml", parse_report("a/r/junit.xml", junit)),
        ("coverage.xml", parse_report("a/coverage.xml", b'<coverage line-rate="0.9"/>')),
        ("package.json", parse_report("a/package.json", b'{"name": "shop"}')),
        ("cut.xml", parse_report("a/cut.xml", b"<testsuite><testcase name=")),
    ]
    kept = recognised(found)
    assert [r.format for r in kept] == ["junit", "xml"]  # a report cut short is still named
    assert kept[1].problems and kept[1].problems[0].startswith("a/cut.xml: ")
