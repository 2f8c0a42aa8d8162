"""Writes GitHub refuses for what they say (422: a field too long, a line out of range).

Each is logged and skipped: sent again it would be refused again, and raising would retry
the delivery until it is dead-lettered, losing its other writes (the comment, the other
tracking issues, the check run). So one refused write loses only itself.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from gidgethub import BadRequest

log = logging.getLogger(__name__)

UNPROCESSABLE = 422


@asynccontextmanager
async def refused_alone(repo: str, what: str) -> AsyncIterator[None]:
    """Run the block; a 422 from GitHub in it is logged, naming `what`, and swallowed."""
    try:
        yield
    except BadRequest as exc:
        if exc.status_code != UNPROCESSABLE:
            raise
        log.warning("%s: GitHub refused to write %s (422: %s): skipped", repo, what, exc)
