"""What triage read that never changes: blob texts by SHA, finished walks by commit and test
file, and what a finished job's log, annotations and reports said, by check run.

All are facts that never go stale (a blob's SHA names its text; a commit's files never
change; a completed check run's log is final), so they are kept without checking; they are
pruned only to bound the database, with the deliveries' retention period. A delivery retried
after a rate limit or a fault reads them here instead of from GitHub.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.shared import Source, Unreadable
from bot.store.dialect import Dialect
from bot.triage.imports import ImportWalk
from bot.triage.imports.walk import walk_from_json, walk_to_json
from bot.triage.models import Extraction


class Sources:
    _sql: Dialect

    async def blobs(self, shas: Sequence[str]) -> dict[str, Source]:
        """The kept texts (or reasons they are unreadable) of the blobs asked for."""
        if not shas:
            return {}
        rows = await self._sql.fetch(
            f"SELECT sha, text, unreadable FROM source_blobs WHERE {self._sql.any_of('sha', 1)}",
            self._sql.listed(list(shas)),
        )
        return {
            sha: text if unreadable is None else Unreadable(unreadable)
            for sha, text, unreadable in rows
        }

    async def save_blobs(self, blobs: Mapping[str, Source], now: float) -> None:
        await self._sql.executemany(
            "INSERT INTO source_blobs (sha, text, unreadable, stored_at) VALUES ($1, $2, $3, $4) "
            "ON CONFLICT (sha) DO NOTHING",
            [
                (sha, None, source.reason, now)
                if isinstance(source, Unreadable)
                else (sha, source, None, now)
                for sha, source in blobs.items()
            ],
        )

    async def import_walk(
        self, repo: str, sha: str, test_file: str, walk_key: str
    ) -> ImportWalk | None:
        text = await self._sql.fetchval(
            "SELECT walk FROM import_walks "
            "WHERE repo = $1 AND sha = $2 AND test_file = $3 AND walk_key = $4",
            repo,
            sha,
            test_file,
            walk_key,
        )
        return None if text is None else walk_from_json(text)

    async def save_import_walk(
        self, repo: str, sha: str, walk_key: str, found: ImportWalk, now: float
    ) -> None:
        await self._sql.execute(
            "INSERT INTO import_walks (repo, sha, test_file, walk_key, walk, stored_at) "
            "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
            repo,
            sha,
            found.test_file,
            walk_key,
            walk_to_json(found),
            now,
        )

    async def job_extraction(
        self, repo: str, check_run_id: int, read_key: str
    ) -> Extraction | None:
        text = await self._sql.fetchval(
            "SELECT extraction FROM job_extractions "
            "WHERE repo = $1 AND check_run_id = $2 AND read_key = $3",
            repo,
            check_run_id,
            read_key,
        )
        return None if text is None else Extraction.model_validate_json(text)

    async def save_job_extraction(
        self, repo: str, check_run_id: int, read_key: str, found: Extraction, now: float
    ) -> None:
        await self._sql.execute(
            "INSERT INTO job_extractions (repo, check_run_id, read_key, extraction, stored_at) "
            "VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
            repo,
            check_run_id,
            read_key,
            found.model_dump_json(),
            now,
        )

    async def prune_sources(self, older_than: float) -> int:
        """Delete blobs, walks and jobs' extractions kept before `older_than`; returns how
        many went."""
        async with self._sql.transaction() as session:
            pruned = [
                await session.execute(f"DELETE FROM {table} WHERE stored_at < $1", older_than)
                for table in ("source_blobs", "import_walks", "job_extractions")
            ]
        return sum(pruned)
