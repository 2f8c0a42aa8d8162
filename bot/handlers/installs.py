"""Installations: remember which accounts have the App, for the dashboard and operators."""

from __future__ import annotations

import logging
import time

from gidgethub import routing, sansio

from bot.events import InstallationEvent
from bot.github.client import GitHubClient
from bot.handlers.context import BotContext

log = logging.getLogger(__name__)
router = routing.Router()

_ACTIVE = {"created": True, "unsuspend": True, "new_permissions_accepted": True}
_INACTIVE = {"deleted": False, "suspend": False}


@router.register("installation")
async def on_installation(event: sansio.Event, gh: GitHubClient | None, ctx: BotContext) -> None:
    payload = InstallationEvent.model_validate(event.data)
    active = {**_ACTIVE, **_INACTIVE}.get(payload.action)
    if active is None:
        return
    account = payload.installation.account
    name = (account.login or account.slug or "") if account else ""
    await ctx.store.set_installation(payload.installation.id, name, active, time.time())
    log.info("installation %d (%s) %s", payload.installation.id, name, payload.action)
