"""Quarantined tests: begun, renewed and ended, one open row per test at most."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.store.dialect import Dialect, Row
from bot.triage.quarantine import Ended, Quarantine

_FIELDS = (
    "repo", "test_key", "since", "test_id", "issue_number", "by_login", "owner", "expires_at",
    "source", "reason", "ended_at", "ended_by", "reminded_at", "digested_at",
)  # fmt: skip
_COLUMNS = ", ".join(_FIELDS)


def _values(q: Quarantine) -> list[Any]:
    data = q.model_dump(mode="json")
    data["by_login"] = data.pop("by")
    return [data[f] for f in _FIELDS]


def _row(row: Row) -> Quarantine:
    data = dict(zip(_FIELDS, row, strict=True))
    data["by"] = data.pop("by_login")
    return Quarantine.model_validate(data)


class Quarantines:
    _sql: Dialect

    async def quarantine(self, q: Quarantine, now: float) -> tuple[Quarantine, bool]:
        """Begin `q`, or renew the test's quarantine that is still on (its expiry, who
        renewed it and why; its owner and start stay). The quarantine as kept, and whether it
        was renewed."""
        renewed = await self._sql.execute(
            "UPDATE quarantines SET expires_at = $3, by_login = $4, reason = $5, "
            "issue_number = coalesce($6, issue_number), reminded_at = NULL "
            "WHERE repo = $1 AND test_key = $2 "
            "AND ended_at IS NULL AND expires_at > $7",
            q.repo,
            q.test_key,
            q.expires_at,
            q.by,
            q.reason,
            q.issue_number,
            now,
        )
        if not renewed:
            await self._end(q.repo, [q.test_key], Ended.EXPIRED, now, expired=True)
            marks = ", ".join(f"${n}" for n in range(1, len(_FIELDS) + 1))
            await self._sql.execute(
                f"INSERT INTO quarantines ({_COLUMNS}) VALUES ({marks}) "
                "ON CONFLICT (repo, test_key) WHERE ended_at IS NULL DO NOTHING",
                *_values(q),
            )
        kept = await self._open(q.repo, q.test_key)
        assert kept is not None  # renewed or inserted, here or by a concurrent command
        return kept, bool(renewed)

    async def end_quarantines(
        self, repo: str, test_keys: Sequence[str], by: str, now: float
    ) -> list[Quarantine]:
        """End the quarantines of these tests that are on; the ones ended."""
        return await self._end(repo, test_keys, by, now, expired=False)

    async def end_expired_quarantines(self, repo: str, now: float) -> list[Quarantine]:
        """Mark every quarantine of the repository whose expiry has passed ended at its
        expiry (once: a later call finds them ended); the ones ended now."""
        return await self._end(repo, None, Ended.EXPIRED, now, expired=True)

    async def quarantines_to_remind(self, repo: str, now: float, within: float) -> list[Quarantine]:
        """Claim the quarantines on that end within `within` seconds of `now`, were given for
        longer than that, and whose owner was not told yet: marked reminded in the same
        statement, so each is answered once across replicas (a reminder whose comment then
        fails is not sent again)."""
        # One given for no longer than the notice itself needs none.
        rows = await self._sql.returning(
            "UPDATE quarantines SET reminded_at = $2 WHERE repo = $1 AND ended_at IS NULL "
            "AND reminded_at IS NULL AND expires_at > $2 AND expires_at <= $3 "
            f"AND expires_at - since > $4 RETURNING {_COLUMNS}",
            repo,
            now,
            now + within,
            within,
        )
        return sorted((_row(r) for r in rows), key=lambda q: q.test_key)

    async def quarantines_to_digest(self, repo: str, now: float, every: float) -> list[Quarantine]:
        """Claim the quarantines on whose last digest (else their start) is `every` seconds
        old or more: marked digested in the same statement, once across replicas."""
        rows = await self._sql.returning(
            "UPDATE quarantines SET digested_at = $2 WHERE repo = $1 AND ended_at IS NULL "
            "AND expires_at > $2 AND coalesce(digested_at, since) <= $3 "
            f"RETURNING {_COLUMNS}",
            repo,
            now,
            now - every,
        )
        return sorted((_row(r) for r in rows), key=lambda q: q.test_key)

    async def active_quarantines(
        self, repo: str, now: float, test_keys: Sequence[str] | None = None
    ) -> list[Quarantine]:
        """The quarantines on at `now` (an expired one is not, ended or not), by test."""
        keys = "" if test_keys is None else f" AND {self._sql.any_of('test_key', 3)}"
        args: list[Any] = [repo, now]
        if test_keys is not None:
            if not test_keys:
                return []
            args.append(self._sql.listed(list(dict.fromkeys(test_keys))))
        rows = await self._sql.fetch(
            f"SELECT {_COLUMNS} FROM quarantines WHERE repo = $1 AND ended_at IS NULL "
            f"AND expires_at > $2{keys} ORDER BY test_key",
            *args,
        )
        return [_row(r) for r in rows]

    async def quarantine_history(self, repo: str, test_key: str) -> list[Quarantine]:
        """Every quarantine of the test, ended ones too, oldest first."""
        rows = await self._sql.fetch(
            f"SELECT {_COLUMNS} FROM quarantines WHERE repo = $1 AND test_key = $2 ORDER BY since",
            repo,
            test_key,
        )
        return [_row(r) for r in rows]

    async def _open(self, repo: str, test_key: str) -> Quarantine | None:
        row = await self._sql.fetchrow(
            f"SELECT {_COLUMNS} FROM quarantines WHERE repo = $1 AND test_key = $2 "
            "AND ended_at IS NULL",
            repo,
            test_key,
        )
        return None if row is None else _row(row)

    async def _end(
        self, repo: str, test_keys: Sequence[str] | None, by: str, now: float, *, expired: bool
    ) -> list[Quarantine]:
        """End the open rows of these tests (None: all the repository's): the expired ones at
        their expiry (`expired`), else the ones still on, now."""
        if test_keys is not None and not test_keys:
            return []
        when, which = ("expires_at", "expires_at <= $3") if expired else ("$3", "expires_at > $3")
        keys = "" if test_keys is None else f" AND {self._sql.any_of('test_key', 4)}"
        args: list[Any] = [repo, by, now]
        if test_keys is not None:
            args.append(self._sql.listed(list(dict.fromkeys(test_keys))))
        rows = await self._sql.returning(
            f"UPDATE quarantines SET ended_at = {when}, ended_by = $2 WHERE repo = $1 "
            f"AND ended_at IS NULL AND {which}{keys} RETURNING {_COLUMNS}",
            *args,
        )
        return sorted((_row(r) for r in rows), key=lambda q: q.test_key)
