"""Rerunning failed Actions jobs: the policy, the two budgets, and GitHub's answer in plain words.

The same policy serves the automatic rerun after triage and `/flaky rerun`: only jobs whose
every failure is flaky, unrelated or infrastructure, only on the PR's current head, only
Actions jobs, within `max_reruns` per (commit, check) and `max_reruns_per_pr_per_day`. A
failed test the bot cannot classify (UNKNOWN) does not stop the rerun on the check's first
attempt on the commit (`rerun_unknown`, on by default): it is rerun once, whatever
`max_reruns` allows, since a second failure on the same code says more than a third run would.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from bot.config import RepoConfig
from bot.events import CheckRun
from bot.github import api
from bot.github.client import GitHubClient
from bot.handlers.scope import Scope
from bot.report.comment import RERUN_REQUESTED
from bot.store.command_models import RerunGrant, RerunLimit
from bot.triage.models import Decision, EvidenceKind, Verdict

log = logging.getLogger(__name__)

RERUNNABLE = frozenset({Verdict.FLAKY, Verdict.UNRELATED, Verdict.INFRA})
_NOT_RERUN = "not rerun: "
_SHORT_SHA = 7
# Why a verdict stops a rerun: a rerun cannot help, or would hide a real problem.
_VERDICT_REASONS = {
    Verdict.RELATED: "a failure touches code this PR changed",
    Verdict.BROKEN_BASE: "the failure happens on the base branch too",
    Verdict.UNKNOWN: "not every failure could be classified",
}
_MASS_REASON = "too many tests failed at once (a mass failure)"
_ONCE_REASON = "a failure the bot cannot classify is rerun only once per commit and check"


@dataclass(frozen=True)
class Refusal:
    """Why a job is not rerun. `quiet`: the verdict or the settings say it already, so the
    automatic rerun adds no note to the comment (a command's reply still says it)."""

    note: str
    quiet: bool = False


def refusal(
    run: CheckRun,
    pull: api.PullSummary,
    decisions: list[Decision],
    config: RepoConfig,
    *,
    requested: bool,
    attempt: int,
) -> Refusal | None:
    """Why policy forbids rerunning this failed job; None when it allows it.

    `requested`: asked for with `/flaky rerun`. `rerun: false` turns off only the automatic
    rerun; a request still goes through every other rule and both budgets. `attempt`: the
    bot's count of this check's attempts on this commit (an unknown failure is rerun only
    from the first).
    """
    if not decisions:
        return Refusal(_NOT_RERUN + _VERDICT_REASONS[Verdict.UNKNOWN], quiet=True)
    if any(item.kind is EvidenceKind.MASS for d in decisions for item in d.items):
        return Refusal(_NOT_RERUN + _MASS_REASON, quiet=True)
    blocking = {d.verdict for d in decisions if not _rerunnable(d, config, attempt=1)}
    for verdict, reason in _VERDICT_REASONS.items():  # the most serious reason first
        if verdict in blocking:
            return Refusal(_NOT_RERUN + reason, quiet=True)
    if not all(_rerunnable(d, config, attempt) for d in decisions):
        return Refusal(_NOT_RERUN + _ONCE_REASON, quiet=True)
    if config.max_reruns == 0 or (not config.rerun and not requested):
        return Refusal(_NOT_RERUN + "reruns are turned off in .github/flaky.yml", quiet=True)
    if pull.state != "open":
        return Refusal(_NOT_RERUN + "the pull request is closed")
    if pull.head_sha != run.head_sha:
        return Refusal(
            f"{_NOT_RERUN}{run.head_sha[:_SHORT_SHA]} is no longer the head of the pull request"
        )
    if run.actions_job_id is None:
        return Refusal(
            f"{_NOT_RERUN}{run.name} is not a GitHub Actions check, "
            "so only the app that created it can rerun it"
        )
    return None


def _rerunnable(decision: Decision, config: RepoConfig, attempt: int) -> bool:
    """Whether this failure lets its job be rerun on this attempt: an unknown failed test
    only on the first attempt, when `rerun_unknown` allows (module doc)."""
    if decision.verdict in RERUNNABLE:
        return True
    unknown_test = decision.verdict is Verdict.UNKNOWN and decision.failure is not None
    return unknown_test and config.rerun_unknown and attempt == 1


async def rerun_if_allowed(
    scope: Scope,
    run: CheckRun,
    pull: api.PullSummary,
    decisions: list[Decision],
    attempt: int,
    *,
    requested: bool = False,
) -> str | None:
    """Rerun the failed job when policy and budgets allow; the note for the comment.

    `attempt`: the bot's count of this check's attempts on this commit, so the rerun is
    `attempt + 1`. None: nothing worth saying (a quiet refusal of an automatic rerun).
    """
    ctx, gh, repo, config = scope.ctx, scope.gh, scope.repo, await scope.config()
    # The job's own reservation first: a delivery handled again (a retry, a redelivery)
    # after the PR moved on must not rewrite what became of a rerun already asked for.
    earlier = (
        None
        if run.actions_job_id is None
        else await ctx.store.rerun_status(repo, run.actions_job_id)
    )
    if earlier:
        return answer_note(earlier, attempt)
    refused = refusal(run, pull, decisions, config, requested=requested, attempt=attempt)
    if refused is not None:
        if earlier == 0:
            return await _settle_unasked(scope, run, refused, attempt, requested=requested)
        return None if refused.quiet and not requested else refused.note
    job_id = run.actions_job_id
    assert job_id is not None  # refusal() turns away every check that is not an Actions job
    grant = await ctx.store.reserve_rerun(
        repo,
        pull.number,
        run.head_sha,
        run.name,
        job_id,
        per_check=config.max_reruns,
        per_pr_day=config.max_reruns_per_pr_per_day,
        now=time.time(),
    )
    if not grant.granted:
        return _not_granted(grant, config, attempt)
    if grant.resumed and await _newer_attempt_exists(gh, repo, run, job_id):
        # The earlier try's request reached GitHub before that try died: do not ask twice.
        await ctx.store.finish_rerun(repo, job_id, 201)
        return answer_note(201, attempt)
    status, message = await api.rerun_job(gh, repo, job_id)
    await ctx.store.finish_rerun(repo, job_id, status)
    ctx.metrics.reruns.labels(str(status)).inc()
    if status == 201:
        log.info("rerun of %s job %d requested (attempt %d)", repo, job_id, attempt + 1)
    else:
        # GitHub's own words go to the log; the comment gets the plain explanation.
        log.warning("%s job %d: GitHub refused the rerun (%d): %s", repo, job_id, status, message)
    return answer_note(status, attempt)


async def _settle_unasked(
    scope: Scope, run: CheckRun, refused: Refusal, attempt: int, *, requested: bool
) -> str | None:
    """A rerun reserved by a try that died before recording GitHub's answer, which policy
    now refuses: done if its request reached GitHub, else given back to the budgets."""
    job_id = run.actions_job_id
    assert job_id is not None  # only an Actions job has a reservation
    if await _newer_attempt_exists(scope.gh, scope.repo, run, job_id):
        await scope.ctx.store.finish_rerun(scope.repo, job_id, 201)
        return answer_note(201, attempt)
    await scope.ctx.store.release_rerun(scope.repo, job_id)
    return None if refused.quiet and not requested else refused.note


async def _newer_attempt_exists(gh: GitHubClient, repo: str, run: CheckRun, job_id: int) -> bool:
    """Whether the check has a newer run on the commit than this job: a rerun (queued,
    running or done), which GitHub creates as soon as it accepts the request."""
    runs = await api.check_runs_of(gh, repo, run.head_sha)
    return any(r.get("name") == run.name and int(r.get("id") or 0) > job_id for r in runs)


def answer_note(status: int, attempt: int) -> str:
    """GitHub's answer to a rerun request, in plain words. A refusal is never retried."""
    if status == 201:
        return f"{RERUN_REQUESTED} (attempt {attempt + 1})"
    if status == 403:
        return (
            f"{_NOT_RERUN}GitHub refused (403): no permission, a run over 30 days old, "
            "or 50 reruns reached"
        )
    if status == 404:
        return f"{_NOT_RERUN}GitHub no longer finds this job (404)"
    return f"{_NOT_RERUN}GitHub refused the rerun ({status})"


def _not_granted(grant: RerunGrant, config: RepoConfig, attempt: int) -> str:
    if grant.status:
        return answer_note(grant.status, attempt)  # asked before: say again what GitHub said
    if grant.limit is RerunLimit.PER_PR_DAY:
        budget = config.max_reruns_per_pr_per_day
        return f"{_NOT_RERUN}this PR reached its limit of {_reruns(budget)} in 24 hours"
    return f"{_NOT_RERUN}the limit of {_reruns(config.max_reruns)} per commit and check is reached"


def _reruns(count: int) -> str:
    return "1 rerun" if count == 1 else f"{count} reruns"
