"""Everything a failed job left behind, read concurrently: its log, annotations and reports.

Reading them (the log scan, the parsers, the repository's patterns, unzipping and parsing
reports) runs in threads (handlers.offloop), never on the event loop: webhooks, /healthz and
the other jobs are answered while a large or hostile log is read.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import importlib.metadata
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from gidgethub import BadRequest

from bot.config import RepoConfig, ReportSource
from bot.events import CheckRun
from bot.github import api
from bot.github.client import GitHubClient
from bot.github.downloads import Streamed, TooLarge, download_artifact, stream_job_log
from bot.handlers.offloop import in_thread
from bot.triage.failures import extract, log_scanner, markers_fired
from bot.triage.logscan import LogScanner
from bot.triage.models import Extraction
from bot.triage.reports import ReportResult, discovery
from bot.triage.reports.artifacts import ExpandBudget, read_artifact_reports
from bot.triage.reports.discovery import Upload, UploadsSeen
from bot.triage.runner_header import read_runner_header

log = logging.getLogger(__name__)

MIB = 1024 * 1024
ARTIFACT_CAP_BYTES = 50 * MIB
# What one artifact's reports, and all of a job's, may decompress to. Entries are parsed as
# they decompress, so this bounds the work; the parsers' own caps bound what stays in memory.
ARTIFACT_EXPANDED_BYTES = 32 * MIB
JOB_EXPANDED_BYTES = 64 * MIB
ARTIFACTS_READ = 5  # at most this many artifacts per job: newest first, or as discovery orders


# The settings that shape what a job's evidence says: a change to any reads it again.
READ_SETTINGS = frozenset(
    {"reports", "custom_patterns", "mass_failure_threshold", "generic_messages"}
)


@functools.cache
def _bot_version() -> str:
    return importlib.metadata.version("flaky-triage")


def read_key(config: RepoConfig, log_cap_bytes: int) -> str:
    """What a job's extraction is kept under besides its check run: the bot's version (its
    parsers) and the settings that read it."""
    settings = config.model_dump_json(include=set(READ_SETTINGS))
    text = f"{_bot_version()}:{log_cap_bytes}:{settings}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


async def read_job(
    gh: GitHubClient, repo: str, run: CheckRun, config: RepoConfig, *, log_cap_bytes: int
) -> Extraction:
    """Read-only: downloads use `gh`'s base URL, session and token, whoever it stands for."""
    # Compiling a new set of patterns takes tens of milliseconds.
    scanner = await in_thread(log_scanner, config.custom_patterns)
    uploads = UploadsSeen()
    async with asyncio.TaskGroup() as tg:
        streamed = (
            tg.create_task(
                _stream_log(gh, repo, run.actions_job_id, scanner, uploads, log_cap_bytes)
            )
            if run.actions_job_id is not None
            else None
        )
        notes = (
            tg.create_task(api.check_annotations(gh, repo, run.id))
            if run.output.annotations_count
            else None
        )
        listed = (
            tg.create_task(api.run_artifacts(gh, repo, run.run_id))
            if config.reports and run.run_id is not None
            else None
        )
    if listed is not None and config.reports:
        parsed, report_problems = await _configured_reports(
            gh, repo, run.name, config.reports, listed.result(), uploads.finish()
        )
    elif config.reports is None and streamed is not None and run.run_id is not None:
        # What the job uploaded is known once its log is read: a second step, not a guess.
        parsed, report_problems = await _discovered_reports(gh, repo, run.run_id, uploads.finish())
    else:
        parsed, report_problems = [], []
    extraction = await in_thread(
        _extract,
        scanner if streamed else None,
        parsed,
        notes.result() if notes else (),
        config,
    )
    extraction.problems.extend(report_problems)
    if scanner.truncated:
        extraction.problems.append("log: too many matching lines; the earliest were not read")
    if streamed is not None and streamed.result().truncated:
        # A failure above the tail is missed: said, so "no test identified" is not trusted.
        extraction.problems.append(f"log: all but its last {log_cap_bytes / MIB:,.0f} MiB")
    return extraction


def _extract(
    scanner: LogScanner | None,
    reports: list[ReportResult],
    annotations: Sequence[Mapping[str, Any]],
    config: RepoConfig,
) -> Extraction:
    """The failures of the job, from what was read of it (`scanner`: the whole log, fed),
    and its runner as the log's opening lines name it."""
    extraction = extract(
        log_lines=scanner.finish() if scanner else None,
        active_parsers=markers_fired(scanner) if scanner else None,
        parsed_reports=reports,
        annotations=annotations,
        custom=config.custom_patterns,
        mass_threshold=config.mass_failure_threshold,
        generic_messages=config.generic_messages,
    )
    extraction.runner = read_runner_header(scanner.head_lines()) if scanner else None
    return extraction


async def _stream_log(
    gh: GitHubClient,
    repo: str,
    job_id: int,
    scanner: LogScanner,
    uploads: UploadsSeen,
    cap_bytes: int,
) -> Streamed:
    async def scan(chunk: bytes) -> None:
        await in_thread(_feed, scanner, uploads, chunk)

    return await stream_job_log(
        gh.session,
        api_url=gh.base_url,
        token=await gh.access_token(),
        repo=repo,
        job_id=job_id,
        cap_bytes=cap_bytes,
        sink=scan,
        count=gh.count_request,
    )


def _feed(scanner: LogScanner, uploads: UploadsSeen, chunk: bytes) -> None:
    scanner.feed(chunk)
    uploads.feed(chunk)


@dataclass(frozen=True)
class _Wanted:
    """An artifact to read, the files in it to read, and how much of what it holds is said:
    `reports:` names it (every file's problems), its name says reports (the problems of
    its reports and of the zip), or neither (only what reads as a report)."""

    artifact: api.Artifact
    files: Sequence[str]
    configured: bool = False
    named: bool = True


async def _configured_reports(
    gh: GitHubClient,
    repo: str,
    job_name: str,
    sources: Sequence[ReportSource],
    listed: Sequence[api.Artifact],
    uploads: Sequence[Upload],
) -> tuple[list[ReportResult], list[str]]:
    """Report files from the run's artifacts that the repo's `reports` settings name. When
    the job's log names artifacts it uploaded, only those: a glob without `{job}` also
    matches what the run's other jobs uploaded, and their failures are not this job's."""
    if uploads:
        mine = {artifact.id for artifact in discovery.own(listed, uploads)}
        listed = [artifact for artifact in listed if artifact.id in mine]
    wanted = []
    for artifact in listed:
        source = next((s for s in sources if s.matches(artifact.name, job_name)), None)
        if source is not None and not artifact.expired:
            wanted.append(_Wanted(artifact, source.files, configured=True))
    return await _read_artifacts(gh, repo, wanted)


async def _discovered_reports(
    gh: GitHubClient, repo: str, run_id: int, uploads: list[Upload]
) -> tuple[list[ReportResult], list[str]]:
    """The reports in the artifacts the job's log says it uploaded (discovery.py): one call
    to list the run's artifacts, made only when the job uploaded one a name does not rule out
    (a second job of the run lists it again conditionally: unchanged, it costs nothing)."""
    if not discovery.candidates(uploads):
        return [], []
    listed = await api.run_artifacts(gh, repo, run_id)
    wanted = [
        _Wanted(artifact, discovery.FILES, named=kind is discovery.Kind.REPORTS)
        for artifact, kind in discovery.choose(listed, uploads)
        if not artifact.expired
    ]
    return await _read_artifacts(gh, repo, wanted)


async def _read_artifacts(
    gh: GitHubClient, repo: str, wanted: Sequence[_Wanted]
) -> tuple[list[ReportResult], list[str]]:
    problems: list[str] = []
    parsed: list[ReportResult] = []
    budget = ExpandBudget(JOB_EXPANDED_BYTES)
    token = await gh.access_token()
    for want in wanted[:ARTIFACTS_READ]:
        artifact = want.artifact
        said = problems if want.named else []
        if spent := budget.spent_out():  # not downloaded: nothing of it could be read
            said.append(f"artifact {artifact.name}: refused: {spent}")
            continue
        if artifact.size_in_bytes > ARTIFACT_CAP_BYTES:
            said.append(f"artifact {artifact.name}: larger than {ARTIFACT_CAP_BYTES} bytes")
            continue
        try:
            data = await download_artifact(
                gh.session,
                api_url=gh.base_url,
                token=token,
                repo=repo,
                artifact_id=artifact.id,
                cap_bytes=ARTIFACT_CAP_BYTES,
                count=gh.count_request,
            )
        except TooLarge as exc:
            said.append(f"artifact {artifact.name}: {exc}")
            continue
        except BadRequest as exc:
            # Expired or deleted since it was listed (a later job may delete what it
            # merged): said, the rest read. Faults and rate limits are retried upstream.
            if exc.status_code not in (HTTPStatus.NOT_FOUND, HTTPStatus.GONE):
                raise
            said.append(f"artifact {artifact.name}: gone ({exc.status_code.value})")
            continue
        found, zip_problems = await in_thread(
            read_artifact_reports,
            data,
            want.files,
            budget,
            max_expanded=ARTIFACT_EXPANDED_BYTES,
            name=artifact.name,
        )
        del data  # the next artifact's download should not stand beside this one's
        parsed.extend(
            [result for _, result in found] if want.configured else discovery.recognised(found)
        )
        said.extend(zip_problems)
    return parsed, problems
