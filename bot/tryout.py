"""`flakybot triage OWNER/REPO#N`: what the bot would say about a PR, with a personal token.

No App, no webhook, nothing written to GitHub: the pull request, its changed files, the
repository's `.github/flaky.yml` and each failed check's log, annotations and reports are
read by the code the App runs (`handlers.checks`, `handlers.job_evidence`), judged by the
same `decide` against an empty history (a temporary store), and the sticky comment is
rendered and printed instead of posted. The client refuses any method but GET.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
from gidgethub import BadRequest, GitHubBroken

from bot.config import CommentMode, LoadedRepoConfig, api_url_from_env
from bot.events import CheckRun
from bot.github import api
from bot.github.client import GitHubClient
from bot.github.errors import RateLimited, classify
from bot.handlers.checks import (
    Sources,
    check_attempt,
    decide,
    pull_and_changes,
)
from bot.handlers.history import run_record
from bot.handlers.job_evidence import read_job
from bot.handlers.reruns import refusal
from bot.handlers.scope import read_settings, settings_from
from bot.handlers.sources import SourceCache
from bot.handlers.sticky import comment_input
from bot.logs import configure
from bot.metrics import Metrics
from bot.report.check_run import CHECK_NAME
from bot.report.comment import render_comment
from bot.report.flake_lines import cause_words
from bot.report.footprint import footprint_record
from bot.store import CheckAttempt, Store, open_store
from bot.triage.attempts import FAILED_CONCLUSIONS
from bot.triage.models import Decision, Extraction
from bot.triage.suspected_cause import FailureText, SuspectedCause, suspect

DEFAULT_API_URL = "https://api.github.com"
LOG_CAP_BYTES = 64 * 1024 * 1024
_TARGET = re.compile(
    r"^(?:https://github\.com/)?(?P<owner>[A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/"
    r"(?P<name>[A-Za-z0-9._-]{1,100})(?:#|/pull/)(?P<number>[1-9][0-9]{0,9})/?$"
)
_WOULD_RERUN = "the bot would rerun this job (a try-out does not)"


class TryoutError(Exception):
    """A one-line reason the try-out could not run, fit to print as it is."""


@dataclass(frozen=True)
class Target:
    repo: str  # "owner/name"
    number: int

    def __str__(self) -> str:
        return f"{self.repo}#{self.number}"


def parse_target(text: str) -> Target:
    """`OWNER/REPO#N`, or the pull request's URL on github.com."""
    match = _TARGET.match(text.strip())
    if match is None:
        raise TryoutError(f"expected OWNER/REPO#NUMBER (e.g. octo/app#12), got {text!r}")
    return Target(f"{match['owner']}/{match['name']}", int(match["number"]))


def _is_query(url: str, body: bytes) -> bool:
    if not url.endswith("/graphql"):
        return False
    try:
        query = json.loads(body).get("query", "")
    except (ValueError, AttributeError):
        return False
    return isinstance(query, str) and query.lstrip().startswith("query")


class ReadOnlyClient(GitHubClient):
    """The App's client, for GETs only: a try-out must not change anything on GitHub."""

    requests = 0

    async def _request(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes = b""
    ) -> tuple[int, Mapping[str, str], bytes]:
        # A GraphQL query reads (the bot sends no mutation); any other POST would write.
        if method != "GET" and not (method == "POST" and _is_query(url, body)):
            raise RuntimeError(f"a try-out makes no {method} request")
        return await super()._request(method, url, headers, body)

    def count_request(self, url: str, method: str, status: int) -> None:
        self.requests += 1
        super().count_request(url, method, status)


@dataclass(frozen=True)
class TriedCheck:
    run: CheckRun
    attempt: CheckAttempt


@dataclass(frozen=True)
class Tryout:
    target: Target
    pull: api.PullSummary
    checks_total: int
    checks_running: int
    tried: list[TriedCheck]
    config: LoadedRepoConfig
    comment: str | None  # None: no failed check, nothing to post
    github_requests: int


async def triage_pull_request(
    gh: ReadOnlyClient, target: Target, *, log_cap_bytes: int = LOG_CAP_BYTES
) -> Tryout:
    """Gather and decide as the App does for each failed check of the PR's head; act by
    rendering the comment only."""
    try:
        pull, changed = await pull_and_changes(gh, target.repo, target.number)
    except BadRequest as exc:
        if exc.status_code != 404:
            raise
        raise TryoutError(
            f"no pull request {target} (404): check the name and number, and that the "
            "token can read the repository"
        ) from None
    async with asyncio.TaskGroup() as tg:
        config_task = tg.create_task(read_settings(gh, target.repo))
        runs_task = tg.create_task(api.check_runs_of(gh, target.repo, pull.head_sha))
    config = config_task.result()
    runs = [run for run in map(CheckRun.model_validate, runs_task.result()) if not _ours(run)]
    failed = sorted(
        (r for r in runs if r.status == "completed" and r.conclusion in FAILED_CONCLUSIONS),
        key=lambda r: r.name,
    )
    async with asyncio.TaskGroup() as tg:
        jobs = [
            tg.create_task(
                read_job(gh, target.repo, run, config.config, log_cap_bytes=log_cap_bytes)
            )
            for run in failed
        ]
    tried = []
    with tempfile.TemporaryDirectory(prefix="flakybot-triage-") as tmp:
        # Empty: the installed bot's history is what a try-out does not have.
        store = await open_store(f"sqlite:///{Path(tmp) / 'tryout.sqlite3'}")
        try:
            sources = Sources(gh, SourceCache())
            for run, job in zip(failed, jobs, strict=True):
                tried.append(
                    await _decide(
                        store, target.repo, run, config, job.result(), pull, changed, sources
                    )
                )
        finally:
            await store.close()
    comment = None
    if tried:
        inp = comment_input(target.repo, target.number, pull.head_sha, [t.attempt for t in tried])
        inp.config_problems = list(config.shown_errors)
        inp.settings_from = settings_from(config)
        comment = render_comment(inp)
    return Tryout(
        target=target,
        pull=pull,
        checks_total=len(runs),
        checks_running=sum(1 for r in runs if r.status != "completed"),
        tried=tried,
        config=config,
        comment=comment,
        github_requests=gh.requests,
    )


async def _decide(
    store: Store,
    repo: str,
    run: CheckRun,
    config: LoadedRepoConfig,
    extraction: Extraction,
    pull: api.PullSummary,
    changed: api.ChangedFiles,
    sources: Sources,
) -> TriedCheck:
    record = run_record(repo, run, [])
    decided = await decide(
        store, repo, run, [], config.config, extraction, pull, changed, record, sources=sources
    )
    assert decided is not None  # a failed run always has something to say
    refused = refusal(
        run, pull, decided.decisions, config.config, requested=False, attempt=decided.attempt
    )
    note = _WOULD_RERUN if refused is None else refused.note
    attempt = check_attempt(repo, run, pull, decided, note, record.completed_at)
    return TriedCheck(run, attempt)


# --- the command -----------------------------------------------------------------------------


async def run_tryout(target: Target, *, token: str, api_url: str) -> Tryout:
    """Triage the PR; every failure GitHub or the network causes becomes a TryoutError."""
    async with read_only_github(token=token, api_url=api_url, seconds=300) as gh:
        return await triage_pull_request(gh, target)


@contextlib.asynccontextmanager
async def read_only_github(
    *, token: str, api_url: str, seconds: float
) -> AsyncIterator[ReadOnlyClient]:
    """A client that writes nothing, for the commands that read a repository with a
    person's token; every failure GitHub or the network causes inside becomes a
    TryoutError that says what to do."""
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=seconds)) as session:
        gh = ReadOnlyClient(
            session,
            base_url=api_url.rstrip("/"),
            metrics=Metrics(),
            oauth_token=token,
            max_inline_wait=5.0,
        )
        try:
            yield gh
        except TryoutError:
            raise
        except Exception as exc:
            raise TryoutError(_explain(_first_cause(exc), api_url)) from exc


def _first_cause(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return exc


def _explain(exc: BaseException, api_url: str, now: float | None = None) -> str:
    if isinstance(exc, TryoutError):
        return str(exc)
    limited = classify(exc)
    if isinstance(limited, RateLimited):
        return _rate_limited(limited, time.time() if now is None else now)
    if isinstance(exc, BadRequest):
        status = int(exc.status_code)
        said = str(exc) or exc.status_code.phrase
        if status == 401:
            return f"GitHub refused the token ({status} {said}): check --token or GITHUB_TOKEN"
        if status == 403:
            return (
                f"GitHub refused access ({status} {said}): the token needs read access to the "
                "repository's contents, pull requests, checks and actions"
            )
        return f"GitHub answered {status} {said}"
    if isinstance(exc, GitHubBroken):
        return f"GitHub answered {int(exc.status_code)} (its side failed): try again later"
    if isinstance(exc, aiohttp.ClientError | TimeoutError | OSError):
        return f"cannot reach {api_url}: {type(exc).__name__}: {exc}"
    return f"{type(exc).__name__}: {exc}"


def _rate_limited(limit: RateLimited, now: float) -> str:
    status = "" if limit.status is None else f" ({limit.status})"
    reset = datetime.fromtimestamp(limit.until, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    minutes = max(1, round((limit.until - now) / 60))
    return (
        f"GitHub's rate limit for this token is used up{status}: it resets at {reset}, "
        f"in about {minutes} minute{'s' if minutes != 1 else ''}"
    )


def record(result: Tryout) -> dict[str, Any]:
    """The machine-readable form `--json` prints."""
    return {
        "pull_request": str(result.target),
        "head_sha": result.pull.head_sha,
        "checks_total": result.checks_total,
        "checks_running": result.checks_running,
        "failed_checks": [
            {
                "name": t.run.name,
                "conclusion": t.run.conclusion,
                "html_url": t.run.html_url,
                "rerun": t.attempt.rerun_note,
                "verdicts": [
                    {
                        "test": d.failure.test_id if d.failure else None,
                        "verdict": str(d.verdict),
                        "confidence": str(d.confidence),
                        "evidence": d.evidence,
                        "footprint": footprint_record(d),
                        "suspected_cause": _cause_record(d),
                    }
                    for d in t.attempt.decisions
                ],
            }
            for t in result.tried
        ],
        "config_problems": result.config.errors,
        "settings_from": result.config.applied,
        "comment_mode": str(result.config.config.comment),
        "comment": result.comment,
        "github_requests": result.github_requests,
        "writes": 0,
    }


def describe(result: Tryout) -> str:
    """The text a person reads: the verdicts, then the comment as the bot would post it."""
    pull = result.pull
    lines = [
        f"{result.target} at {pull.head_sha[:7]} ({pull.state}): "
        f"{_count(len(result.tried), 'failed check')} of {result.checks_total}"
        + (f", {result.checks_running} still running" if result.checks_running else "")
    ]
    for tried in result.tried:
        lines.append(f"\n{tried.run.name}: {tried.run.conclusion}")
        for d in tried.attempt.decisions:
            test = d.failure.test_id if d.failure else "(no failed test identified)"
            lines.append(f"  {test}: {d.verdict} ({d.confidence} confidence)")
            lines.append(f"    {d.evidence}")
            cause = _cause(d)
            if cause is not None:
                lines.append(f"    {cause_words(cause)}")
        if tried.attempt.rerun_note:
            lines.append(f"  rerun: {tried.attempt.rerun_note}")
    if result.config.outside:
        lines.append(f"settings from {' over '.join(result.config.applied)}")
    lines += [f"problem in .github/flaky.yml: {p}" for p in result.config.errors]
    lines.append(
        f"\n{_count(result.github_requests, 'GitHub request')}, all reads; nothing was "
        "written. History: none (the installed bot builds it from every run it sees)."
    )
    if result.comment is None:
        lines.append("No failed check on the head commit: the bot would not comment.")
        return "\n".join(lines)
    if result.config.config.comment is CommentMode.NEVER:
        lines.append("This repository's flaky.yml says `comment: never`: it would not be posted.")
    lines += ["\nThe comment the bot would post:\n", result.comment]
    return "\n".join(lines)


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _cause(decision: Decision) -> SuspectedCause | None:
    """The cause the failure's message suggests, when a marker shows one (one failure, no
    history here: the bot's tracking issue weighs every failure and run)."""
    if decision.failure is None:
        return None
    cause = suspect([FailureText(message=decision.failure.message)])
    return cause if cause.signals else None


def _cause_record(decision: Decision) -> dict[str, Any] | None:
    cause = _cause(decision)
    if cause is None:
        return None
    return {
        "category": cause.category,
        "confidence": cause.confidence,
        "why_unclear": cause.why_unclear or None,
        "signals": [s.model_dump(mode="json") for s in cause.signals],
        "text": cause.text,
    }


def command(target: str, *, token: str | None, api_url: str | None, as_json: bool) -> int:
    """`flakybot triage`: 0 with the result printed, 2 with one line on stderr."""
    token = token or os.environ.get("GITHUB_TOKEN")
    configure("text", "WARNING", [token] if token else [])
    api_url = api_url or api_url_from_env(os.environ) or DEFAULT_API_URL
    try:
        parsed = parse_target(target)
        if not token:
            raise TryoutError("no token: set GITHUB_TOKEN or pass --token")
        result = asyncio.run(run_tryout(parsed, token=token, api_url=api_url))
    except TryoutError as exc:
        print(f"flakybot triage: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(record(result), indent=2) if as_json else describe(result))
    return 0


def _ours(run: CheckRun) -> bool:
    """The App's own check run (`check_run_conclusion: strict` can fail it): not a CI job.
    A personal token does not say which App is the bot's, so it is known by its name, on a
    run no Actions workflow made."""
    return run.name == CHECK_NAME and not run.is_actions
