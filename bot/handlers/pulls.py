"""Pull requests as the bot last saw them: kept from every read and every pull_request event,
so that a further failure of the same head is triaged without reading the pull again.

A kept pull stands in for a read only while nothing can have moved it unseen: it shows the
failed run's commit as the head of an open PR, and no pull_request delivery waits in the
inbox (a push that came while this failure waited is such a delivery). Otherwise the pull is
read: that read is what keeps the bot from rerunning a commit that is no longer the head.
"""

from __future__ import annotations

import asyncio

from gidgethub import routing, sansio

from bot.events import PullRequestEvent
from bot.github import api
from bot.github.client import GitHubClient
from bot.handlers.context import BotContext
from bot.shared import PullSummary

router = routing.Router()


@router.register("pull_request")
async def on_pull_request(event: sansio.Event, gh: GitHubClient | None, ctx: BotContext) -> None:
    # Every action carries the whole pull as it is now: opened, synchronize (a push),
    # closed, reopened, edited (its base may have changed), labelled...
    payload = PullRequestEvent.model_validate(event.data)
    await ctx.store.save_pull(
        payload.repository.full_name, api.pull_from(event.data["pull_request"]), read=False
    )


async def read_pull(ctx: BotContext, gh: GitHubClient, repo: str, number: int) -> PullSummary:
    """The pull as GitHub shows it now; kept for the next triage."""
    pull = await api.get_pull(gh, repo, number)
    await ctx.store.save_pull(repo, pull, read=True)
    return pull


async def pull_at_head(
    ctx: BotContext, gh: GitHubClient, repo: str, number: int, head_sha: str
) -> PullSummary:
    """The pull a run of `head_sha` is triaged against: the kept one when it still shows
    that commit as the open PR's head and no pull_request event waits, else read."""
    kept, waiting = await asyncio.gather(
        ctx.store.pull(repo, number), ctx.store.waiting("pull_request")
    )
    if kept is not None and kept.head_sha == head_sha and kept.state == "open" and not waiting:
        return kept
    return await read_pull(ctx, gh, repo, number)
