"""The store written once: every concern's queries and decisions over one `Dialect`.

A backend supplies the dialect, opens and migrates its database, and writes an ingest batch
and a batch of completions its own fastest way; everything else is here.
"""

from __future__ import annotations

from bot.store.commands import Commands
from bot.store.deliveries import Deliveries
from bot.store.dialect import Dialect
from bot.store.history import History
from bot.store.pulls import Pulls
from bot.store.tracking import Tracking


class StoreCore(Deliveries, History, Pulls, Commands, Tracking):
    _sql: Dialect

    async def ping(self) -> None:
        """Raise if the database cannot be reached."""
        await self._sql.fetchval("SELECT 1")
