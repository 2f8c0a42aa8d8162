"""Persistence: one Store protocol, SQLite (embedded default) and PostgreSQL backends."""

from __future__ import annotations

from bot.store.base import Store
from bot.store.models import (
    CheckAttempt,
    Delivery,
    DeliveryState,
    StickyComment,
    TriageCheckRun,
)


async def open_store(database_url: str) -> Store:
    """Open the store named by DATABASE_URL and bring its schema up to date."""
    if database_url.startswith("sqlite:"):
        from bot.store.sqlite import SQLiteStore

        return await SQLiteStore.open(database_url)
    if database_url.startswith(("postgresql://", "postgres://")):
        from bot.store.postgres import PostgresStore

        return await PostgresStore.open(database_url)
    raise ValueError(
        f"unsupported DATABASE_URL scheme {database_url.split(':', 1)[0]!r}: "
        "use sqlite:///path/to/file.sqlite3 or postgresql://user@host:5432/dbname"
    )


__all__ = [
    "CheckAttempt",
    "Delivery",
    "DeliveryState",
    "StickyComment",
    "Store",
    "TriageCheckRun",
    "open_store",
]
