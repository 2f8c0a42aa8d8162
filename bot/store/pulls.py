"""Pull requests as last seen, each PR's sticky comment, and the repositories and
installations the bot has heard of."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from bot.shared import PullSummary
from bot.store.dialect import Dialect
from bot.store.models import StickyComment, TriageCheckRun
from bot.store.pull_rows import PULL_COLUMNS, PULL_UPDATES, pull_from_row, pull_values


class Pulls:
    _sql: Dialect

    # --- sticky comment ------------------------------------------------------------------
    @asynccontextmanager
    async def pr_lock(self, repo: str, pr_number: int) -> AsyncIterator[None]:
        async with self._sql.lock(json.dumps(["pr", repo, pr_number])):
            yield

    async def get_sticky_comment(self, repo: str, pr_number: int) -> StickyComment | None:
        row = await self._sql.fetchrow(
            "SELECT comment_id, body_sha FROM sticky_comments WHERE repo = $1 AND pr_number = $2",
            repo,
            pr_number,
        )
        if row is None:
            return None
        # 0: the bot set out to post it and may have, its id unknown (`StickyComment`).
        comment_id = int(row[0]) or None
        return StickyComment(repo=repo, pr_number=pr_number, comment_id=comment_id, body_sha=row[1])

    async def save_sticky_comment(self, comment: StickyComment) -> None:
        await self._sql.execute(
            "INSERT INTO sticky_comments (repo, pr_number, comment_id, body_sha) "
            "VALUES ($1, $2, $3, $4) ON CONFLICT (repo, pr_number) DO UPDATE "
            "SET comment_id = excluded.comment_id, body_sha = excluded.body_sha",
            comment.repo,
            comment.pr_number,
            comment.comment_id or 0,
            comment.body_sha,
        )

    # --- the bot's own check run -----------------------------------------------------------
    async def get_triage_check_run(self, repo: str, head_sha: str) -> TriageCheckRun | None:
        row = await self._sql.fetchrow(
            "SELECT pr_number, check_run_id, output_sha, annotations FROM triage_check_runs "
            "WHERE repo = $1 AND head_sha = $2",
            repo,
            head_sha,
        )
        if row is None:
            return None
        return TriageCheckRun(
            repo=repo,
            head_sha=head_sha,
            pr_number=int(row[0]),
            check_run_id=int(row[1]),
            output_sha=str(row[2]),
            annotations=json.loads(row[3]),
        )

    async def save_triage_check_run(self, run: TriageCheckRun) -> None:
        await self._sql.execute(
            "INSERT INTO triage_check_runs (repo, head_sha, pr_number, check_run_id, output_sha, "
            "annotations) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (repo, head_sha) DO UPDATE "
            "SET pr_number = excluded.pr_number, check_run_id = excluded.check_run_id, "
            "output_sha = excluded.output_sha, annotations = excluded.annotations",
            run.repo,
            run.head_sha,
            run.pr_number,
            run.check_run_id,
            run.output_sha,
            json.dumps(run.annotations),
        )

    # --- pull requests as last seen --------------------------------------------------------
    async def save_pull(self, repo: str, pull: PullSummary, *, read: bool) -> None:
        await self._sql.execute(
            "INSERT INTO pulls (repo, pr_number, state, author, head_sha, base_sha, base_ref, "
            "changed_files, updated_at, comments, trusted) VALUES ($1, $2, $3, $4, $5, $6, $7, "
            f"$8, $9, $10, true) ON CONFLICT (repo, pr_number) DO UPDATE SET {PULL_UPDATES}, "
            "trusted = CASE WHEN $11 OR excluded.updated_at > pulls.updated_at THEN true "
            "WHEN excluded.head_sha = pulls.head_sha AND excluded.state = pulls.state "
            "THEN pulls.trusted ELSE false END "
            "WHERE excluded.updated_at >= pulls.updated_at",
            repo,
            *pull_values(pull),
            read,
        )

    async def pull(self, repo: str, pr_number: int) -> PullSummary | None:
        row = await self._sql.fetchrow(
            f"SELECT {PULL_COLUMNS} FROM pulls WHERE repo = $1 AND pr_number = $2 AND trusted",
            repo,
            pr_number,
        )
        return None if row is None else pull_from_row(row)

    # --- installations -------------------------------------------------------------------
    async def set_installation(
        self, installation_id: int, account: str, active: bool, now: float
    ) -> None:
        await self._sql.execute(
            "INSERT INTO installations (id, account, active, updated_at) VALUES ($1, $2, $3, $4) "
            "ON CONFLICT (id) DO UPDATE SET account = excluded.account, "
            "active = excluded.active, updated_at = excluded.updated_at",
            installation_id,
            account,
            active,
            now,
        )

    async def installations(self) -> list[tuple[int, str, bool]]:
        rows = await self._sql.fetch("SELECT id, account, active FROM installations ORDER BY id")
        return [(int(r[0]), str(r[1]), bool(r[2])) for r in rows]

    # --- repositories ----------------------------------------------------------------------
    async def set_repository(
        self, repo: str, private: bool, now: float, default_branch: str | None = None
    ) -> None:
        await self._sql.execute(
            "INSERT INTO repositories (repo, private, updated_at, default_branch) "
            "VALUES ($1, $2, $3, $4) "
            "ON CONFLICT (repo) DO UPDATE SET private = excluded.private, "
            "updated_at = excluded.updated_at, "
            "default_branch = COALESCE(excluded.default_branch, repositories.default_branch) "
            "WHERE excluded.updated_at >= repositories.updated_at",
            repo,
            private,
            now,
            default_branch,
        )

    async def repositories(self) -> list[tuple[str, bool]]:
        rows = await self._sql.fetch("SELECT repo, private FROM repositories ORDER BY repo")
        return [(str(row[0]), bool(row[1])) for row in rows]
