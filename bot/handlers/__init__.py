"""Feature routers, composed in one place, and the dispatch that isolates each handler."""

from __future__ import annotations

import functools
import json
import logging

from gidgethub import routing, sansio

from bot.handlers import checks, commands, installs, repos
from bot.handlers.context import BotContext
from bot.inbox import HandlerFailures
from bot.store import Delivery

log = logging.getLogger(__name__)

FEATURE_ROUTERS: dict[str, routing.Router] = {
    "checks": checks.router,
    "commands": commands.router,
    "installs": installs.router,
    "repos": repos.router,
}
router = routing.Router(*FEATURE_ROUTERS.values())

# Events about the installation itself: GitHub refuses a token to a removed or suspended
# installation, and their handlers need none.
NO_CLIENT_EVENTS = frozenset({"installation", "installation_repositories"})


@functools.lru_cache(maxsize=256)
def wants(event: str, action: str | None) -> bool:
    """Whether any handler takes this event and action.

    Routes match on the event and its action only (tests/test_routing.py holds us to it), so
    this answers without the payload: ingest stores the rest already done.
    """
    probe = sansio.Event({"action": action} if action else {}, event=event, delivery_id="")
    return bool(router.fetch(probe))


async def dispatch(delivery: Delivery, ctx: BotContext) -> None:
    """Run every handler registered for the delivery, each on its own.

    gidgethub's `Router.dispatch` stops at the first exception and runs callbacks in no
    fixed order; we run them all, in a stable order, and report every failure together.
    """
    # One no handler wants (replayed, or stored by a worker not told `wants`) is turned away
    # without parsing its payload.
    if not wants(delivery.event, delivery.action):
        return
    data = json.loads(delivery.payload)
    event = sansio.Event(data, event=delivery.event, delivery_id=delivery.id)
    callbacks = sorted(router.fetch(event), key=lambda f: f"{f.__module__}.{f.__qualname__}")
    installation = data.get("installation") or {}
    gh = None
    if isinstance(installation.get("id"), int) and delivery.event not in NO_CLIENT_EVENTS:
        gh = await ctx.github.installation_client(installation["id"])
    failures: list[Exception] = []
    for callback in callbacks:
        try:
            await callback(event, gh, ctx)
        except Exception as exc:
            log.warning(
                "delivery %s: handler %s failed: %s: %s",
                delivery.id,
                callback.__qualname__,
                type(exc).__name__,
                exc,
            )
            failures.append(exc)
    if len(failures) == 1:
        raise failures[0]
    if failures:
        raise HandlerFailures(failures)
