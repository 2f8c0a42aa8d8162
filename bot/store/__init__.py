"""Persistence: one Store protocol, SQLite (embedded default) and PostgreSQL backends."""

from __future__ import annotations

from urllib.parse import urlsplit

from bot.store.base import Store
from bot.store.models import (
    CheckAttempt,
    Delivery,
    DeliveryState,
    StickyComment,
    TriageCheckRun,
)


class DatabaseUnavailable(RuntimeError):
    """DATABASE_URL names a database the store cannot open; the message names the variable
    and the database, never its password."""


async def open_store(database_url: str) -> Store:
    """Open the store named by DATABASE_URL and bring its schema up to date."""
    try:
        return await _open(database_url)
    except DatabaseUnavailable:
        raise
    except Exception as exc:  # a driver's error, whatever the driver: one line, not a trace
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise DatabaseUnavailable(
            f"DATABASE_URL: cannot open {_shown(database_url)}: {reason}"
        ) from exc


async def _open(database_url: str) -> Store:
    if database_url.startswith("sqlite:"):
        from bot.store.sqlite import SQLiteStore

        return await SQLiteStore.open(database_url)
    if database_url.startswith(("postgresql://", "postgres://")):
        from bot.store.postgres import PostgresStore

        return await PostgresStore.open(database_url)
    raise DatabaseUnavailable(
        f"DATABASE_URL: unsupported scheme {database_url.split(':', 1)[0]!r}: "
        "use sqlite:///path/to/file.sqlite3 or postgresql://user@host:5432/dbname"
    )


def _shown(database_url: str) -> str:
    """The URL without its user and password."""
    parts = urlsplit(database_url)
    if parts.scheme == "sqlite":
        return database_url
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}"


__all__ = [
    "CheckAttempt",
    "DatabaseUnavailable",
    "Delivery",
    "DeliveryState",
    "StickyComment",
    "Store",
    "TriageCheckRun",
    "open_store",
]
