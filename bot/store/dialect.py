"""What the two databases do differently, behind one small object.

The store's queries and decisions are written once, in PostgreSQL's SQL with its numbered
`$n` parameters; a `Dialect` runs them on its database and supplies the few fragments that
cannot be spelled the same on both (lists, JSON) and the ways each keeps writers apart:
advisory locks and transactions on PostgreSQL, the single writer on SQLite.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

# A result row: asyncpg's records and sqlite3's tuples both read by position.
Row = Sequence[Any]


class Session(ABC):
    """Statements on the database, with `$n` parameters."""

    @abstractmethod
    async def fetch(self, sql: str, *args: Any) -> list[Row]: ...

    @abstractmethod
    async def fetchrow(self, sql: str, *args: Any) -> Row | None:
        """The first row, or None, in one round trip."""

    async def fetchval(self, sql: str, *args: Any) -> Any:
        """The first column of the first row, or None."""
        row = await self.fetchrow(sql, *args)
        return None if row is None else row[0]

    @abstractmethod
    async def execute(self, sql: str, *args: Any) -> int:
        """Run a write; returns how many rows it touched."""

    @abstractmethod
    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None: ...

    @abstractmethod
    async def returning(self, sql: str, *args: Any) -> list[Row]:
        """Run a write and return the rows of its RETURNING clause."""


class Dialect(Session):
    # The column that orders rows inserted in the same instant by the order they came in.
    insertion_order: str
    # What a claim adds to its row lock, so that claimers never wait on each other.
    skip_locked: str

    @abstractmethod
    def any_of(self, column: str, n: int) -> str:
        """A condition: `column` equals one of the values of parameter `n`, a `listed` list."""

    @abstractmethod
    def listed(self, values: Sequence[str]) -> Any:
        """The parameter `any_of` reads."""

    @abstractmethod
    def json(self, n: int) -> str:
        """Parameter `n`, JSON text, as a value of a JSON column."""

    @abstractmethod
    def json_has(self, column: str, n: int) -> str:
        """A condition: the JSON array in `column` holds the string of parameter `n`."""

    @abstractmethod
    def transaction(self) -> AbstractAsyncContextManager[Session]:
        """Statements that are kept all together or not at all."""

    @abstractmethod
    def exclusive(self, *keys: str) -> AbstractAsyncContextManager[Session]:
        """Statements that no other holder of these keys (taken in this order) runs between,
        in any replica. Each decision inside must still be one statement: on SQLite this is
        the single writer, and another process may write between two statements."""

    @abstractmethod
    def lock(self, key: str) -> AbstractAsyncContextManager[None]:
        """Hold `key` for as long as the block runs: other holders (tasks, and replicas
        where the database is shared) wait."""


def parameters(count: int) -> str:
    """`$1, $2, ...`: the parameters of a row of `count` values."""
    return ", ".join(f"${n}" for n in range(1, count + 1))
