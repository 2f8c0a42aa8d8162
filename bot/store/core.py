"""The store written once: every concern's queries and decisions over one `Dialect`.

A backend supplies the dialect, opens and migrates its database, and writes an ingest batch
and a batch of completions its own fastest way; everything else is here.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Self

from bot.store.commands import Commands
from bot.store.deliveries import Deliveries
from bot.store.dialect import Dialect
from bot.store.history import History
from bot.store.jobs import Jobs
from bot.store.pulls import Pulls
from bot.store.quarantines import Quarantines
from bot.store.sources import Sources
from bot.store.tracking import Tracking


class StoreCore(Deliveries, History, Jobs, Pulls, Commands, Tracking, Sources, Quarantines):
    _sql: Dialect

    @abstractmethod
    async def migrate(self) -> list[str]:
        """Apply the migrations not applied yet; returns their names."""

    @abstractmethod
    async def close(self) -> None: ...

    async def _migrated(self) -> Self:
        """This store, its schema brought up to date; closed if that fails."""
        try:
            await self.migrate()
        except BaseException:
            await self.close()
            raise
        return self

    async def ping(self) -> None:
        """Raise if the database cannot be reached."""
        await self._sql.fetchval("SELECT 1")
