"""`/flaky` commands in pull-request comments: who may, once per comment, and each command.

Guards first: not a PR, a bot (the App itself included), or no command: nothing happens,
not even a reaction. Then the comment is claimed in the store (a redelivery finds it
handled; the per-person hourly limit is counted there), and either refused or acknowledged
with 👀 and acted on (🚀, or 😕 when nothing could be done). A refusal is answered as
`refusal_answer` decides from the PR's refusals counted in the store (a one-line reply and
😕, 😕 alone, or nothing), with spare writes, which never hold up the installation's others.
Every other write of a command is a reply (`WriteClass.REPLY`): it waits while a triage's
write waits, so comments, whoever writes them, never delay the triage of a failed check.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from gidgethub import routing, sansio

from bot.commands import MAX_PER_COMMENT, Answer, Command, Name, parse_commands, refusal_answer
from bot.config import CommentMode, LoadedRepoConfig, RepoConfig
from bot.events import CheckRun, IssueCommentEvent
from bot.github import api
from bot.github.client import GitHubClient, WriteClass, WriteSkipped
from bot.handlers.check_report import is_own, update_check_run
from bot.handlers.checks import TRIAGED_CONCLUSIONS, triage_run
from bot.handlers.context import BotContext
from bot.handlers.pulls import read_pull
from bot.handlers.quarantine import Target, begin, end, keep_up, target_of
from bot.handlers.reruns import rerun_if_allowed
from bot.handlers.scope import Scope
from bot.handlers.sticky import update_sticky_comment
from bot.handlers.tracking import adopt_issue
from bot.report import replies
from bot.report.comment import RERUN_REQUESTED
from bot.store import CheckAttempt
from bot.store.command_models import CommandClaim
from bot.triage import quarantine
from bot.triage.attempts import FAILED_CONCLUSIONS
from bot.triage.failures import match_key
from bot.triage.history import WHOLE_PR

log = logging.getLogger(__name__)
router = routing.Router()


@dataclass(frozen=True)
class Request:
    """One command comment: where it was given, by whom, under which settings."""

    scope: Scope
    number: int
    login: str
    config: LoadedRepoConfig
    may_write: bool | None = None  # the login's write access, once GitHub was asked
    on_issue: bool = False  # given on a tracking issue, not a pull request

    @property
    def ctx(self) -> BotContext:
        return self.scope.ctx

    @property
    def gh(self) -> GitHubClient:
        return self.scope.gh

    @property
    def repo(self) -> str:
        return self.scope.repo


LIMITED_REPLIES: dict[CommandClaim, Callable[[RepoConfig], str]] = {
    CommandClaim.LIMITED: lambda config: replies.rate_limited(config.commands_per_hour),
    CommandClaim.LIMITED_IN_REPO: lambda config: replies.rate_limited_in_repo(
        config.commands_per_repo_hour
    ),
}

# (done, reply line): done is False when nothing could be done (answered with 😕).
Outcome = tuple[bool, str | None]


@router.register("issue_comment", action="created")
async def on_comment_created(event: sansio.Event, gh: GitHubClient | None, ctx: BotContext) -> None:
    payload = IssueCommentEvent.model_validate(event.data)
    comment, user = payload.comment, payload.comment.user
    if gh is None or user is None or user.is_bot:
        return
    commands = parse_commands(comment.body)
    if not commands or user.login == await ctx.github.bot_login():
        return
    repo, number = payload.repository.full_name, payload.issue.number
    on_issue = not payload.is_pull_request
    if on_issue and not await _on_tracking_issue(ctx, repo, number, commands):
        return
    # Anyone who may comment can cause these writes: they never hold up a triage's.
    gh = gh.writing_as(WriteClass.REPLY)
    scope = Scope(ctx, gh, repo)
    config = await scope.settings()
    per_hour, per_repo_hour = config.config.commands_per_hour, config.config.commands_per_repo_hour
    claim = await ctx.store.claim_command(
        repo,
        number,
        comment.id,
        event.delivery_id,
        user.login,
        per_hour=per_hour,
        per_repo_hour=per_repo_hour,
        now=time.time(),
    )
    if claim is CommandClaim.HANDLED:
        return
    # On an issue nobody is the PR's author: everyone's write access is asked.
    author = payload.issue.user.login if payload.issue.user and not on_issue else None
    limited = LIMITED_REPLIES.get(claim)
    may_write = None
    if limited is None and user.login != author:
        may_write = await api.can_write(gh, repo, user.login)
    request = Request(scope, number, user.login, config, may_write, on_issue)
    if limited is not None:
        await _refuse(request, comment.id, limited(config.config))
    elif request.may_write is False:
        await _refuse(request, comment.id, replies.not_permitted())
    else:
        await api.add_reaction(gh, repo, comment.id, "eyes")
        await _act(request, comment.id, commands)
    await ctx.store.finish_command(repo, comment.id)
    log.info(
        "delivery %s: %s#%d comment %d: %s",
        event.delivery_id,
        repo,
        number,
        comment.id,
        ", ".join(str(command.name) for command in commands),
    )


async def _refuse(request: Request, comment_id: int, why: str) -> None:
    ctx, repo, number = request.ctx, request.repo, request.number
    ctx.metrics.commands.labels("any", "refused").inc()
    refusals = await ctx.store.refuse_command(
        repo, number, comment_id, request.login, now=time.time()
    )
    answer = refusal_answer(refusals.by_login, refusals.on_pr)
    spare = request.gh.spare()
    try:
        if answer is Answer.REPLY:
            await api.create_comment(spare, repo, number, why)
        if answer is not Answer.NOTHING:
            await api.add_reaction(spare, repo, comment_id, "confused")
    except WriteSkipped:
        log.info("%s#%d comment %d: refused, answer skipped", repo, number, comment_id)


async def _act(request: Request, comment_id: int, commands: list[Command]) -> None:
    lines: list[str] = []
    all_done = True
    for command in commands[:MAX_PER_COMMENT]:
        line: str | None
        if request.on_issue and command.name not in ON_TRACKING_ISSUES:
            done, line = False, replies.not_on_issue(command.name)
        else:
            done, line = await COMMANDS[command.name](request, command)
        request.ctx.metrics.commands.labels(str(command.name), "done" if done else "not-done").inc()
        all_done = all_done and done
        if line:
            lines.append(line)
    if len(commands) > MAX_PER_COMMENT:
        lines.append(replies.too_many(MAX_PER_COMMENT, len(commands)))
    if lines:
        await api.create_comment(request.gh, request.repo, request.number, "\n\n".join(lines))
    reaction = "rocket" if all_done else "confused"
    await api.add_reaction(request.gh, request.repo, comment_id, reaction)


async def _help(request: Request, command: Command) -> Outcome:
    config = request.config.config
    text = replies.help_text(
        config.commands_per_hour, config.commands_per_repo_hour, command.problem
    )
    return command.problem is None, text


async def _rerun(request: Request, command: Command) -> Outcome:
    pull = await read_pull(request.ctx, request.gh, request.repo, request.number)
    failed = [
        run for run in await _head_runs(request, pull) if run.conclusion in FAILED_CONCLUSIONS
    ]
    chosen = failed
    if command.argument:
        wanted = command.argument.casefold()
        chosen = [run for run in failed if run.name.casefold() == wanted]
    if not chosen:
        names = sorted(run.name for run in failed)
        return False, replies.nothing_failed(pull.head_sha, command.argument or None, names)
    results = [
        (run.name, await _rerun_one(request, pull, run))
        for run in sorted(chosen, key=lambda run: run.name)
    ]
    done = any(note.startswith(RERUN_REQUESTED) for _, note in results)
    return done, replies.rerun_results(pull.head_sha, results)


async def _rerun_one(request: Request, pull: api.PullSummary, run: CheckRun) -> str:
    ctx, repo = request.ctx, request.repo
    record = await _recorded(ctx, repo, run)
    if record is None:
        # Its delivery has not been handled yet (or was lost): triage it now, which
        # records it (and may rerun it on its own).
        await triage_run(request.scope, run)
        record = await _recorded(ctx, repo, run)
        if record is None:
            return "not rerun: it could not be triaged"
    note = await rerun_if_allowed(
        request.scope, run, pull, record.decisions, record.attempt, requested=True
    )
    assert note is not None  # a request is always answered
    if note.startswith(RERUN_REQUESTED) and note != record.rerun_note:
        await ctx.store.record_check_attempt(record.model_copy(update={"rerun_note": note}))
        if request.config.config.comment is not CommentMode.NEVER:
            await update_sticky_comment(request.scope, pull)
    return note


async def _status(request: Request, command: Command) -> Outcome:
    pull = await read_pull(request.ctx, request.gh, request.repo, request.number)
    if not await _retriage(request, pull):
        return False, replies.nothing_to_triage(pull.head_sha)
    return True, None  # the refreshed triage comment is the answer


async def _wrong(request: Request, command: Command) -> Outcome:
    ctx, repo, number = request.ctx, request.repo, request.number
    key = WHOLE_PR
    if command.argument:
        failed = {
            match_key(decision.failure.test_id): decision.failure.test_id
            for attempt in await ctx.store.check_attempts_for_pr(repo, number)
            for decision in attempt.decisions
            if decision.failure is not None
        }
        key = match_key(command.argument)
        if key not in failed:
            return False, replies.unknown_test(command.argument, sorted(failed.values()))
    new = await ctx.store.add_feedback(repo, number, key, request.login, time.time())
    if new:
        ctx.metrics.feedback.labels("pr" if key == WHOLE_PR else "test").inc()
        await _retriage(request, await read_pull(ctx, request.gh, repo, number))
    return True, replies.feedback_recorded(command.argument or None, new=new)


async def _track(request: Request, command: Command) -> Outcome:
    assert command.issue is not None  # the parser turns a track without one into help
    result = await adopt_issue(
        request.scope,
        command.issue,
        command.argument,
        request.number,
        request.login,
        may_write=request.may_write,
    )
    return result.adopted, result.text


async def _quarantine(request: Request, command: Command) -> Outcome:
    settings = request.config.config.quarantine
    test_id, expiry = quarantine.split_expiry(command.argument)
    target = await _quarantine_target(request, command.model_copy(update={"argument": test_id}))
    if isinstance(target, str):
        return False, target
    assert settings is not None  # else refused as off
    until = quarantine.expiry(expiry, time.time(), settings.days)
    if isinstance(until, str):
        return False, replies.bad_expiry(until)
    reason = f"/flaky quarantine on #{request.number}"
    line = await begin(request.scope, target, settings, request.login, until, reason=reason)
    await _regate(request)
    return True, line


async def _unquarantine(request: Request, command: Command) -> Outcome:
    settings = request.config.config.quarantine
    target = await _quarantine_target(request, command)
    if isinstance(target, str):
        return False, target
    assert settings is not None  # else refused as off
    line = await end(request.scope, target, settings, request.login)
    await _regate(request)
    return True, line


async def _quarantine_target(request: Request, command: Command) -> Target | str:
    """The tests a (un)quarantine command is about, or the reply refusing it: quarantine
    off, no write access (the PR's author too: it changes what blocks everyone's merges),
    no test named on a PR, or a test without a tracking issue."""
    if request.config.config.quarantine is None:
        return replies.quarantine_off()
    may_write = request.may_write
    if may_write is None:
        may_write = await api.can_write(request.gh, request.repo, request.login)
    if not may_write:
        return replies.quarantine_not_permitted()
    if not request.on_issue and not command.argument:
        return replies.quarantine_needs_test(command.name)
    await keep_up(request.scope, request.config.config.quarantine)
    issue = request.number if request.on_issue else None
    return await target_of(request.scope, issue, command.argument)


async def _regate(request: Request) -> None:
    """On a PR, its gate now: the command may clear or block its head."""
    if not request.on_issue:
        pull = await read_pull(request.ctx, request.gh, request.repo, request.number)
        await update_check_run(request.scope, pull, pull.head_sha)


COMMANDS: dict[Name, Callable[[Request, Command], Awaitable[Outcome]]] = {
    Name.HELP: _help,
    Name.RERUN: _rerun,
    Name.STATUS: _status,
    Name.WRONG: _wrong,
    Name.TRACK: _track,
    Name.QUARANTINE: _quarantine,
    Name.UNQUARANTINE: _unquarantine,
}
# What a tracking issue's comments may say (the rest work on pull requests).
ON_TRACKING_ISSUES = frozenset({Name.HELP, Name.QUARANTINE, Name.UNQUARANTINE})


async def _on_tracking_issue(
    ctx: BotContext, repo: str, number: int, commands: list[Command]
) -> bool:
    """Whether an issue's command comment is the bot's to answer: a quarantine command on
    a tracking issue it keeps (other issues' comments are people's own business)."""
    if not any(c.name in (Name.QUARANTINE, Name.UNQUARANTINE) for c in commands):
        return False
    return await ctx.store.tracking_issue_numbered(repo, number) is not None


async def _head_runs(request: Request, pull: api.PullSummary) -> list[CheckRun]:
    """The latest completed attempt of every check on the PR's head."""
    found = await api.check_runs_of(request.gh, request.repo, pull.head_sha)
    runs = [CheckRun.model_validate(run) for run in found]
    return [run for run in runs if run.status == "completed" and not is_own(request.ctx, run)]


async def _retriage(request: Request, pull: api.PullSummary) -> bool:
    """Triage every completed check of the head again and refresh the comment; False when
    nothing on the head has failed."""
    ctx, repo = request.ctx, request.repo
    runs = [r for r in await _head_runs(request, pull) if r.conclusion in TRIAGED_CONCLUSIONS]
    async with asyncio.TaskGroup() as tg:
        for run in runs:
            tg.create_task(triage_run(request.scope, run))
    attempts = await ctx.store.check_attempts_for_pr(repo, pull.number)
    if attempts and request.config.config.comment is not CommentMode.NEVER:
        # Also when the head has nothing new: earlier heads' results move to "outdated".
        await update_sticky_comment(request.scope, pull)
    return any(attempt.head_sha == pull.head_sha for attempt in attempts)


async def _recorded(ctx: BotContext, repo: str, run: CheckRun) -> CheckAttempt | None:
    attempts = await ctx.store.check_attempts_for(repo, run.head_sha, run.name)
    return next((attempt for attempt in attempts if attempt.check_run_id == run.id), None)
