"""Feature routers, composed in one place, and the dispatch that isolates each handler."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Mapping
from typing import Any

from gidgethub import routing, sansio
from pydantic import BaseModel

from bot.events import InstallationRef
from bot.handlers import checks, commands, installs, pulls, repos, tracking
from bot.handlers.context import BotContext
from bot.inbox import HandlerFailures, describe_failure
from bot.logs import bind
from bot.store import Delivery

log = logging.getLogger(__name__)

FEATURE_ROUTERS: dict[str, routing.Router] = {
    "checks": checks.router,
    "commands": commands.router,
    "installs": installs.router,
    "pulls": pulls.router,
    "repos": repos.router,
    "tracking": tracking.router,
}
router = routing.Router(*FEATURE_ROUTERS.values())


class _Installed(BaseModel):
    """The installation a payload is for, as dispatch reads it."""

    installation: InstallationRef


# Events whose handlers call no GitHub API: about the installation itself (GitHub refuses a
# token to a removed or suspended installation), and pull requests, which are only kept.
NO_CLIENT_EVENTS = frozenset({"installation", "installation_repositories", "pull_request"})


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
    bind(**log_fields(data))
    log.debug("%s.%s: %d handler(s)", delivery.event, delivery.action, len(callbacks))
    gh = None
    if installation and delivery.event not in NO_CLIENT_EVENTS:
        # Read as the handlers read it: a payload of the wrong shape fails here with the
        # field named (dead-lettered at once), not as an AttributeError further in.
        gh = await ctx.github.installation_client(_Installed.model_validate(data).installation.id)
    failures: list[Exception] = []
    for callback in callbacks:
        try:
            await callback(event, gh, ctx)
        except Exception as exc:
            log.warning(
                "delivery %s: handler %s failed: %s",
                delivery.id,
                callback.__qualname__,
                describe_failure(exc),
            )
            failures.append(exc)
    if len(failures) == 1:
        raise failures[0]
    if failures:
        raise HandlerFailures(failures)


def log_fields(data: Mapping[str, Any]) -> dict[str, object]:
    """The installation, repository and pull request a payload is about, for log lines;
    whatever its shape, never an error (a payload of the wrong shape is the handlers' to
    refuse, in words)."""
    installation = data.get("installation")
    repository = data.get("repository")
    fields: dict[str, object] = {
        "installation": installation.get("id") if isinstance(installation, dict) else None,
        "repo": repository.get("full_name") if isinstance(repository, dict) else None,
    }
    pull = data.get("pull_request")
    issue = data.get("issue")
    check_run = data.get("check_run")
    if isinstance(pull, dict):
        fields["pr"] = pull.get("number")
    elif isinstance(issue, dict) and "pull_request" in issue:
        fields["pr"] = issue.get("number")
    elif isinstance(check_run, dict):
        pulls = check_run.get("pull_requests")
        first = pulls[0] if isinstance(pulls, list) and pulls else None
        fields["pr"] = first.get("number") if isinstance(first, dict) else None
    # Only plain values: the payload is untrusted and its handlers have not validated it yet
    # (a newline in a name would forge a line of text logs).
    return {k: v for k, v in fields.items() if _plain(v)}


def _plain(value: object) -> bool:
    if isinstance(value, str):
        return len(value) <= 200 and value.isprintable()
    return isinstance(value, int) and not isinstance(value, bool)
