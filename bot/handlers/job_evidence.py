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
from typing import Any

from bot.config import RepoConfig
from bot.events import CheckRun
from bot.github import api
from bot.github.client import GitHubClient
from bot.github.downloads import Streamed, TooLarge, download_artifact, stream_job_log
from bot.handlers.offloop import in_thread
from bot.triage.failures import extract, log_scanner, markers_fired
from bot.triage.logscan import LogScanner
from bot.triage.models import Extraction
from bot.triage.reports import ReportResult
from bot.triage.reports.artifacts import ExpandBudget, read_artifact_reports
from bot.triage.runner_header import read_runner_header

log = logging.getLogger(__name__)

MIB = 1024 * 1024
ARTIFACT_CAP_BYTES = 50 * MIB
# What one artifact's reports, and all of a job's, may decompress to. Entries are parsed as
# they decompress, so this bounds the work; the parsers' own caps bound what stays in memory.
ARTIFACT_EXPANDED_BYTES = 32 * MIB
JOB_EXPANDED_BYTES = 64 * MIB
ARTIFACTS_READ = 5  # at most this many matching artifacts per job, newest first


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
    async with asyncio.TaskGroup() as tg:
        streamed = (
            tg.create_task(_stream_log(gh, repo, run.actions_job_id, scanner, log_cap_bytes))
            if run.actions_job_id is not None
            else None
        )
        notes = (
            tg.create_task(api.check_annotations(gh, repo, run.id))
            if run.output.annotations_count
            else None
        )
        reports = (
            tg.create_task(_reports(gh, repo, run, config))
            if config.reports and run.run_id is not None
            else None
        )
    parsed, report_problems = reports.result() if reports else ([], [])
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
    gh: GitHubClient, repo: str, job_id: int, scanner: LogScanner, cap_bytes: int
) -> Streamed:
    async def scan(chunk: bytes) -> None:
        await in_thread(scanner.feed, chunk)

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


async def _reports(
    gh: GitHubClient, repo: str, run: CheckRun, config: RepoConfig
) -> tuple[list[ReportResult], list[str]]:
    """Report files from the run's artifacts that the repo's `reports` settings name."""
    assert run.run_id is not None
    wanted = []
    for artifact in await api.run_artifacts(gh, repo, run.run_id):
        source = next((s for s in config.reports if s.matches(artifact.name, run.name)), None)
        if source is not None and not artifact.expired:
            wanted.append((artifact, source))
    problems: list[str] = []
    parsed: list[ReportResult] = []
    budget = ExpandBudget(JOB_EXPANDED_BYTES)
    token = await gh.access_token()
    for artifact, source in wanted[:ARTIFACTS_READ]:
        if spent := budget.spent_out():  # not downloaded: nothing of it could be read
            problems.append(f"artifact {artifact.name}: refused: {spent}")
            continue
        if artifact.size_in_bytes > ARTIFACT_CAP_BYTES:
            problems.append(f"artifact {artifact.name}: larger than {ARTIFACT_CAP_BYTES} bytes")
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
            problems.append(f"artifact {artifact.name}: {exc}")
            continue
        found, zip_problems = await in_thread(
            read_artifact_reports,
            data,
            source.files,
            budget,
            max_expanded=ARTIFACT_EXPANDED_BYTES,
            name=artifact.name,
        )
        del data  # the next artifact's download should not stand beside this one's
        parsed.extend(result for _, result in found)
        problems.extend(zip_problems)
    return parsed, problems
