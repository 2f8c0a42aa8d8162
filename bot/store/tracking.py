"""Tracking issues: one per flaky test (or cluster), the tests they track, and what the store
knows of GitHub's copies."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from bot.store.dialect import Dialect
from bot.store.models import TrackingIssue
from bot.store.tracking_rows import (
    TRACKING_COLUMNS,
    TRACKING_FIELDS,
    TRACKING_JSON_FIELDS,
    member_keys,
    tracking_from_row,
    tracking_values,
)


class Tracking:
    _sql: Dialect

    @asynccontextmanager
    async def tracking_lock(self, repo: str) -> AsyncIterator[None]:
        async with self._sql.lock(json.dumps(["tracking", repo])):
            yield

    async def tracking_issue(self, repo: str, key: str) -> TrackingIssue | None:
        row = await self._sql.fetchrow(
            f"SELECT {TRACKING_COLUMNS} FROM tracking_issues WHERE repo = $1 AND key = $2",
            repo,
            key,
        )
        return None if row is None else tracking_from_row(row)

    async def tracking_issue_numbered(self, repo: str, issue_number: int) -> TrackingIssue | None:
        row = await self._sql.fetchrow(
            f"SELECT {TRACKING_COLUMNS} FROM tracking_issues WHERE repo = $1 "
            "AND issue_number = $2 ORDER BY created_at DESC LIMIT 1",
            repo,
            issue_number,
        )
        return None if row is None else tracking_from_row(row)

    async def save_tracking_issue(self, issue: TrackingIssue) -> None:
        marks = ", ".join(
            self._sql.json(n) if field in TRACKING_JSON_FIELDS else f"${n}"
            for n, field in enumerate(TRACKING_FIELDS, start=1)
        )
        updates = ", ".join(f"{f} = excluded.{f}" for f in TRACKING_FIELDS[2:])
        # One transaction: the issue and the tests that link to it change together.
        async with self._sql.transaction() as tx:
            await tx.execute(
                f"INSERT INTO tracking_issues ({TRACKING_COLUMNS}) VALUES ({marks}) "
                f"ON CONFLICT (repo, key) DO UPDATE SET {updates}",
                *tracking_values(issue),
            )
            await tx.execute(
                "DELETE FROM tracking_members WHERE repo = $1 AND key = $2", issue.repo, issue.key
            )
            await tx.executemany(
                "INSERT INTO tracking_members (repo, test_key, key) VALUES ($1, $2, $3) "
                "ON CONFLICT (repo, test_key) DO UPDATE SET key = excluded.key",
                [(issue.repo, test_key, issue.key) for test_key in member_keys(issue)],
            )

    async def tracking_numbers(self, repo: str, test_keys: Sequence[str]) -> dict[str, int]:
        if not test_keys:
            return {}
        rows = await self._sql.fetch(
            "SELECT m.test_key, t.issue_number FROM tracking_members m JOIN tracking_issues t "
            "ON t.repo = m.repo AND t.key = m.key WHERE m.repo = $1 "
            f"AND {self._sql.any_of('m.test_key', 2)}",
            repo,
            self._sql.listed(list(dict.fromkeys(test_keys))),
        )
        return {str(r[0]): int(r[1]) for r in rows}

    async def tracking_owners(self, repo: str, test_keys: Sequence[str]) -> dict[str, list[str]]:
        if not test_keys:
            return {}
        rows = await self._sql.fetch(
            "SELECT m.test_key, t.owners FROM tracking_members m JOIN tracking_issues t "
            "ON t.repo = m.repo AND t.key = m.key WHERE m.repo = $1 "
            f"AND {self._sql.any_of('m.test_key', 2)}",
            repo,
            self._sql.listed(list(dict.fromkeys(test_keys))),
        )
        found = {str(r[0]): json.loads(r[1]) if isinstance(r[1], str) else r[1] for r in rows}
        return {key: [str(o) for o in owners] for key, owners in found.items() if owners}

    async def tracking_created_since(self, repo: str, since: float) -> int:
        count = await self._sql.fetchval(
            "SELECT count(*) FROM tracking_issues WHERE repo = $1 AND created_at >= $2",
            repo,
            since,
        )
        return int(count)

    # --- owners @-mentioned by tracking issues -----------------------------------------------
    async def owners_mentioned(self, repo: str, key: str) -> list[str]:
        rows = await self._sql.fetch(
            "SELECT owner FROM owner_mentions WHERE repo = $1 AND key = $2 ORDER BY owner",
            repo,
            key,
        )
        return [str(r[0]) for r in rows]

    async def mentions_since(
        self, repo: str, owners: Sequence[str], since: float
    ) -> dict[str, int]:
        if not owners:
            return {}
        rows = await self._sql.fetch(
            "SELECT owner, count(*) FROM owner_mentions WHERE repo = $1 "
            f"AND {self._sql.any_of('owner', 2)} AND at >= $3 GROUP BY owner",
            repo,
            self._sql.listed(sorted({o.lower() for o in owners})),
            since,
        )
        return {str(r[0]): int(r[1]) for r in rows}

    async def add_mentions(self, repo: str, key: str, owners: Sequence[str], now: float) -> None:
        await self._sql.executemany(
            "INSERT INTO owner_mentions (repo, owner, key, at) VALUES ($1, $2, $3, $4) "
            "ON CONFLICT (repo, owner, key) DO NOTHING",
            [(repo, owner.lower(), key, now) for owner in dict.fromkeys(owners)],
        )

    # --- automatic closing of tracking issues ----------------------------------------------
    async def open_tracking_issues(self, repo: str, check_name: str) -> list[TrackingIssue]:
        rows = await self._sql.fetch(
            f"SELECT {TRACKING_COLUMNS} FROM tracking_issues WHERE repo = $1 "
            f"AND closed_at IS NULL AND {self._sql.json_has('checks', 2)} ORDER BY issue_number",
            repo,
            check_name,
        )
        return [tracking_from_row(r) for r in rows]

    # --- what the store knows of GitHub's tracking issues ------------------------------------
    async def tracking_synced(self, repo: str, label: str) -> bool:
        found = await self._sql.fetchval(
            "SELECT 1 FROM tracking_synced WHERE repo = $1 AND label = $2", repo, label
        )
        return found is not None

    async def mark_tracking_synced(self, repo: str, label: str, now: float) -> None:
        await self._sql.execute(
            "INSERT INTO tracking_synced (repo, label, synced_at) VALUES ($1, $2, $3) "
            "ON CONFLICT (repo, label) DO NOTHING",
            repo,
            label,
            now,
        )

    async def opening_tracking_issue(self, repo: str, key: str, now: float) -> None:
        await self._sql.execute(
            "INSERT INTO tracking_opening (repo, key, since) VALUES ($1, $2, $3) "
            "ON CONFLICT (repo, key) DO NOTHING",
            repo,
            key,
            now,
        )

    async def opened_tracking_issue(self, repo: str, key: str) -> None:
        await self._sql.execute(
            "DELETE FROM tracking_opening WHERE repo = $1 AND key = $2", repo, key
        )

    async def tracking_issue_opening(self, repo: str, key: str) -> bool:
        found = await self._sql.fetchval(
            "SELECT 1 FROM tracking_opening WHERE repo = $1 AND key = $2", repo, key
        )
        return found is not None
