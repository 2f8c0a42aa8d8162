"""Run history: every completed run and every failed test in it, and the triage record of
each check run."""

from __future__ import annotations

import json
from collections.abc import Sequence

from bot.store.dialect import Dialect, Row, parameters
from bot.store.history_rows import (
    OCCURRENCE_COLUMNS,
    OCCURRENCE_FIELDS,
    RUN_COLUMNS,
    RUN_FIELDS,
    occurrence_from_row,
    occurrence_values,
    run_from_row,
    run_values,
)
from bot.store.models import CheckAttempt
from bot.triage.models import Decision, Occurrence, RunRecord

_ATTEMPT_COLUMNS = (
    "repo, check_run_id, pr_number, head_sha, check_name, html_url, attempt, conclusion, "
    "decisions, rerun_note, recorded_at"
)
_NEWEST_RUN_FIRST = "ORDER BY completed_at DESC, check_run_id DESC"


def _attempt(row: Row) -> CheckAttempt:
    return CheckAttempt(
        repo=row[0],
        check_run_id=row[1],
        pr_number=row[2],
        head_sha=row[3],
        check_name=row[4],
        html_url=row[5],
        attempt=row[6],
        conclusion=row[7],
        decisions=[Decision.model_validate(d) for d in json.loads(row[8])],
        rerun_note=row[9],
        recorded_at=row[10],
    )


class History:
    _sql: Dialect

    # --- triage record ---------------------------------------------------------------------
    async def record_check_attempt(self, attempt: CheckAttempt) -> None:
        decisions = json.dumps([d.model_dump(mode="json") for d in attempt.decisions])
        await self._sql.execute(
            f"INSERT INTO check_attempts ({_ATTEMPT_COLUMNS}) "
            f"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, {self._sql.json(9)}, $10, $11) "
            "ON CONFLICT (repo, check_run_id) DO UPDATE "
            "SET attempt = excluded.attempt, conclusion = excluded.conclusion, "
            "decisions = excluded.decisions, rerun_note = excluded.rerun_note, "
            "recorded_at = excluded.recorded_at",
            attempt.repo,
            attempt.check_run_id,
            attempt.pr_number,
            attempt.head_sha,
            attempt.check_name,
            attempt.html_url,
            attempt.attempt,
            attempt.conclusion,
            decisions,
            attempt.rerun_note,
            attempt.recorded_at,
        )

    async def check_attempts_for_pr(self, repo: str, pr_number: int) -> list[CheckAttempt]:
        rows = await self._sql.fetch(
            f"SELECT {_ATTEMPT_COLUMNS} FROM check_attempts WHERE repo = $1 AND "
            "pr_number = $2 ORDER BY recorded_at, check_run_id",
            repo,
            pr_number,
        )
        return [_attempt(r) for r in rows]

    async def check_attempts_for(
        self, repo: str, head_sha: str, check_name: str
    ) -> list[CheckAttempt]:
        rows = await self._sql.fetch(
            f"SELECT {_ATTEMPT_COLUMNS} FROM check_attempts WHERE repo = $1 AND "
            "head_sha = $2 AND check_name = $3 ORDER BY attempt, check_run_id",
            repo,
            head_sha,
            check_name,
        )
        return [_attempt(r) for r in rows]

    # --- history ---------------------------------------------------------------------------
    async def record_run(self, run: RunRecord, occurrences: Sequence[Occurrence]) -> None:
        # One transaction: a run is never kept without its failed tests, so a retried
        # delivery that finds the run recorded has nothing left to add.
        async with self._sql.transaction() as tx:
            inserted = await tx.returning(
                f"INSERT INTO runs ({RUN_COLUMNS}) VALUES ({parameters(len(RUN_FIELDS))}) "
                "ON CONFLICT (repo, check_run_id) DO NOTHING RETURNING check_run_id",
                *run_values(run),
            )
            if inserted and occurrences:
                await tx.executemany(
                    f"INSERT INTO occurrences ({OCCURRENCE_COLUMNS}) "
                    f"VALUES ({parameters(len(OCCURRENCE_FIELDS))}) "
                    "ON CONFLICT (repo, check_run_id, test_key) DO NOTHING",
                    [occurrence_values(o) for o in occurrences],
                )

    async def occurrences(
        self, repo: str, test_keys: Sequence[str], since: float
    ) -> list[Occurrence]:
        if not test_keys:
            return []
        rows = await self._sql.fetch(
            f"SELECT {OCCURRENCE_COLUMNS} FROM occurrences WHERE repo = $1 AND at >= $2 "
            f"AND {self._sql.any_of('test_key', 3)} "
            "ORDER BY at DESC, check_run_id DESC, test_key",
            repo,
            since,
            self._sql.listed(list(dict.fromkeys(test_keys))),
        )
        return [occurrence_from_row(r) for r in rows]

    async def runs(self, repo: str, check_name: str, since: float) -> list[RunRecord]:
        rows = await self._sql.fetch(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE repo = $1 AND check_name = $2 "
            f"AND completed_at >= $3 {_NEWEST_RUN_FIRST}",
            repo,
            check_name,
            since,
        )
        return [run_from_row(r) for r in rows]

    async def runs_at(self, repo: str, head_sha: str) -> list[RunRecord]:
        rows = await self._sql.fetch(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE repo = $1 AND head_sha = $2 {_NEWEST_RUN_FIRST}",
            repo,
            head_sha,
        )
        return [run_from_row(r) for r in rows]

    async def latest_branch_run(self, repo: str, check_name: str, branch: str) -> RunRecord | None:
        row = await self._sql.fetchrow(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE repo = $1 AND check_name = $2 "
            f"AND branch = $3 AND pr_number IS NULL {_NEWEST_RUN_FIRST} LIMIT 1",
            repo,
            check_name,
            branch,
        )
        return None if row is None else run_from_row(row)

    async def repo_history(
        self, repo: str, since: float
    ) -> tuple[list[RunRecord], list[Occurrence]]:
        runs = await self._sql.fetch(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE repo = $1 AND completed_at >= $2 "
            f"{_NEWEST_RUN_FIRST}",
            repo,
            since,
        )
        found = await self._sql.fetch(
            f"SELECT {OCCURRENCE_COLUMNS} FROM occurrences WHERE repo = $1 AND at >= $2 "
            "ORDER BY at DESC, check_run_id DESC, test_key",
            repo,
            since,
        )
        return [run_from_row(r) for r in runs], [occurrence_from_row(r) for r in found]
