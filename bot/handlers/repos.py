"""Remember which repositories are private, from the check runs that fill the dashboard, and
their default branch: where a check's usual duration is measured."""

from __future__ import annotations

import time

from gidgethub import routing, sansio

from bot.github.client import GitHubClient
from bot.handlers.context import BotContext

router = routing.Router()


@router.register("check_run", action="completed")
async def on_check_run_completed(
    event: sansio.Event, gh: GitHubClient | None, ctx: BotContext
) -> None:
    repository = event.data.get("repository")
    if not isinstance(repository, dict) or not isinstance(repository.get("full_name"), str):
        return
    # A repository of unknown visibility is treated as private: hidden until proven public.
    private = repository.get("private") is not False
    branch = repository.get("default_branch")
    await ctx.store.set_repository(
        repository["full_name"],
        private,
        time.time(),
        branch if isinstance(branch, str) and branch else None,
    )
