"""Reruns and `/flaky` commands: budgets taken once, comments claimed once, refusals counted
once, each a count and a write that no other replica runs between."""

from __future__ import annotations

import json

from bot.store.command_models import (
    DAY_SECONDS,
    HOUR_SECONDS,
    CommandClaim,
    Refusals,
    RerunGrant,
    RerunLimit,
)
from bot.store.dialect import Dialect


class Commands:
    _sql: Dialect

    # --- reruns ----------------------------------------------------------------------------
    async def reserve_rerun(
        self,
        repo: str,
        pr_number: int,
        head_sha: str,
        check_name: str,
        job_id: int,
        *,
        per_check: int,
        per_pr_day: int,
        now: float,
    ) -> RerunGrant:
        # The counts and the insert are one statement, and one step across replicas under
        # the PR's and the (head SHA, check)'s keys, always taken in that order.
        budgets = (
            json.dumps(["rerun-pr", repo, pr_number]),
            json.dumps(["rerun", repo, head_sha, check_name]),
        )
        async with self._sql.exclusive(*budgets) as tx:
            inserted = await tx.execute(
                "INSERT INTO reruns (repo, pr_number, head_sha, check_name, job_id, status, "
                "requested_at) SELECT $1, $2, $3, $4, $5, 0, $6 WHERE (SELECT count(*) FROM "
                "reruns WHERE repo = $1 AND head_sha = $3 AND check_name = $4) < $7 AND "
                "(SELECT count(*) FROM reruns WHERE repo = $1 AND pr_number = $2 AND "
                "requested_at > $8) < $9 ON CONFLICT (repo, job_id) DO NOTHING",
                repo,
                pr_number,
                head_sha,
                check_name,
                job_id,
                now,
                per_check,
                now - DAY_SECONDS,
                per_pr_day,
            )
            found = await tx.fetchval(
                "SELECT status FROM reruns WHERE repo = $1 AND job_id = $2", repo, job_id
            )
            if found is not None:
                status = int(found)
                resumed = status == 0 and inserted == 0
                return RerunGrant(granted=status == 0, status=status, resumed=resumed)
            spent = await tx.fetchval(
                "SELECT count(*) FROM reruns WHERE repo = $1 AND head_sha = $2 AND check_name = $3",
                repo,
                head_sha,
                check_name,
            )
        return RerunGrant(
            granted=False,
            limit=RerunLimit.PER_CHECK if int(spent) >= per_check else RerunLimit.PER_PR_DAY,
        )

    async def finish_rerun(self, repo: str, job_id: int, status: int) -> None:
        await self._sql.execute(
            "UPDATE reruns SET status = $1 WHERE repo = $2 AND job_id = $3", status, repo, job_id
        )

    async def rerun_status(self, repo: str, job_id: int) -> int | None:
        found = await self._sql.fetchval(
            "SELECT status FROM reruns WHERE repo = $1 AND job_id = $2", repo, job_id
        )
        return None if found is None else int(found)

    async def release_rerun(self, repo: str, job_id: int) -> None:
        await self._sql.execute(
            "DELETE FROM reruns WHERE repo = $1 AND job_id = $2 AND status = 0", repo, job_id
        )

    async def reruns_for(self, repo: str, head_sha: str, check_name: str) -> list[int]:
        rows = await self._sql.fetch(
            "SELECT status FROM reruns WHERE repo = $1 AND head_sha = $2 AND check_name = $3 "
            f"ORDER BY requested_at, {self._sql.insertion_order}",
            repo,
            head_sha,
            check_name,
        )
        return [int(r[0]) for r in rows]

    # --- `/flaky` commands -----------------------------------------------------------------
    async def claim_command(
        self,
        repo: str,
        pr_number: int,
        comment_id: int,
        delivery_id: str,
        login: str,
        *,
        per_hour: int,
        per_repo_hour: int,
        now: float,
    ) -> CommandClaim:
        # One statement counts and inserts; the person's key in the repository makes it one
        # step across replicas, for the budget on this PR and the one on all of them.
        async with self._sql.exclusive(json.dumps(["command", repo, login])) as tx:
            await tx.execute(
                "INSERT INTO command_comments (repo, comment_id, pr_number, login, delivery_id, "
                "limited, limited_by, received_at) SELECT $1, $2, $3, $4, $5, "
                "budget.spent IS NOT NULL, budget.spent, $8 FROM (SELECT CASE WHEN (SELECT "
                "count(*) FROM command_comments WHERE repo = $1 AND pr_number = $3 AND "
                "login = $4 AND NOT limited AND received_at > $6) >= $7 THEN 'pr' WHEN (SELECT "
                "count(*) FROM command_comments WHERE repo = $1 AND login = $4 AND NOT limited "
                "AND received_at > $6) >= $9 THEN 'repo' END AS spent) AS budget WHERE true "
                "ON CONFLICT (repo, comment_id) DO NOTHING",
                repo,
                comment_id,
                pr_number,
                login,
                delivery_id,
                now - HOUR_SECONDS,
                per_hour,
                now,
                per_repo_hour,
            )
            row = await tx.fetchrow(
                "SELECT limited_by, finished, delivery_id FROM command_comments "
                "WHERE repo = $1 AND comment_id = $2",
                repo,
                comment_id,
            )
        assert row is not None  # inserted now or before
        limited_by, finished, taken_by = row[0], bool(row[1]), str(row[2])
        if finished or taken_by != delivery_id:
            return CommandClaim.HANDLED
        if limited_by is None:
            return CommandClaim.ACT
        return CommandClaim.LIMITED if limited_by == "pr" else CommandClaim.LIMITED_IN_REPO

    async def finish_command(self, repo: str, comment_id: int) -> None:
        await self._sql.execute(
            "UPDATE command_comments SET finished = true WHERE repo = $1 AND comment_id = $2",
            repo,
            comment_id,
        )

    async def refuse_command(
        self, repo: str, pr_number: int, comment_id: int, login: str, *, now: float
    ) -> Refusals:
        # One statement counts and marks; the person's key in the repository and the PR's
        # key (always in that order) make it one step across replicas.
        keys = json.dumps(["refusal-login", repo, login]), json.dumps(["refusal", repo, pr_number])
        async with self._sql.exclusive(*keys) as tx:
            await tx.execute(
                "UPDATE command_comments SET refused_at = $5, refused_before_by_login = (SELECT "
                "count(*) FROM command_comments WHERE repo = $1 AND login = $3 AND "
                "refused_at > $6), refused_before_on_pr = (SELECT count(*) FROM "
                "command_comments WHERE repo = $1 AND pr_number = $2 AND refused_at > $6) "
                "WHERE repo = $1 AND comment_id = $4 AND refused_at IS NULL",
                repo,
                pr_number,
                login,
                comment_id,
                now,
                now - HOUR_SECONDS,
            )
            row = await tx.fetchrow(
                "SELECT refused_before_by_login, refused_before_on_pr FROM command_comments "
                "WHERE repo = $1 AND comment_id = $2",
                repo,
                comment_id,
            )
        assert row is not None  # claimed before it is refused
        return Refusals(by_login=int(row[0]), on_pr=int(row[1]))

    # --- `/flaky wrong` --------------------------------------------------------------------
    async def add_feedback(
        self, repo: str, pr_number: int, test_key: str, login: str, now: float
    ) -> bool:
        added = await self._sql.execute(
            "INSERT INTO feedback (repo, pr_number, test_key, login, given_at) "
            "VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
            repo,
            pr_number,
            test_key,
            login,
            now,
        )
        return added == 1

    async def feedback_for_pr(self, repo: str, pr_number: int) -> dict[str, list[str]]:
        rows = await self._sql.fetch(
            "SELECT test_key, login FROM feedback WHERE repo = $1 AND pr_number = $2 "
            "ORDER BY test_key, login",
            repo,
            pr_number,
        )
        found: dict[str, list[str]] = {}
        for test_key, login in rows:
            found.setdefault(str(test_key), []).append(str(login))
        return found
