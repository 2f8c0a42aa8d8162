"""GitHub Actions jobs as their `workflow_job` webhooks described them, and the context of
each recorded run read back with them (issue 28)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from bot.store.dialect import Dialect, Row
from bot.store.history_rows import RUN_FIELDS, run_from_row
from bot.triage.job_context import JobRecord, run_context
from bot.triage.run_context import RunContext

JOB_FIELDS = (
    "repo", "check_run_id", "run_id", "run_attempt", "workflow_name", "job_name",
    "runner_name", "runner_group_name", "labels", "started_at", "completed_at", "conclusion",
    "stage",
)  # fmt: skip
# Fields a later delivery of the same job keeps when it does not say them (a `completed`
# delivery handled before the `in_progress` one, whose runner it names too).
_KEPT_WHEN_UNSAID = frozenset(
    {"workflow_name", "runner_name", "runner_group_name", "started_at", "completed_at",
     "conclusion"}
)  # fmt: skip
_RUNS = ", ".join(f"r.{field}" for field in RUN_FIELDS)
_JOBS = ", ".join(f"j.{field}" for field in JOB_FIELDS)
# The jobs of the same workflow run and attempt that GitHub told of.
_JOBS_IN_RUN = (
    "(SELECT count(*) FROM workflow_jobs n WHERE n.repo = j.repo AND n.run_id = j.run_id "
    "AND n.run_attempt = j.run_attempt)"
)


def _update(field: str) -> str:
    if field in _KEPT_WHEN_UNSAID:
        return f"{field} = COALESCE(excluded.{field}, workflow_jobs.{field})"
    return f"{field} = excluded.{field}"


class Jobs:
    _sql: Dialect

    async def save_job(self, job: JobRecord, now: float) -> None:
        values = [getattr(job, field) for field in JOB_FIELDS]
        values[JOB_FIELDS.index("labels")] = json.dumps(job.labels)
        slots = [
            self._sql.json(n) if field == "labels" else f"${n}"
            for n, field in enumerate(JOB_FIELDS, start=1)
        ]
        changed = ", ".join(_update(f) for f in JOB_FIELDS if f not in ("repo", "check_run_id"))
        # One statement: a delivery of an earlier stage handled late never undoes a later one.
        await self._sql.execute(
            f"INSERT INTO workflow_jobs ({', '.join(JOB_FIELDS)}, received_at) "
            f"VALUES ({', '.join(slots)}, ${len(JOB_FIELDS) + 1}) "
            f"ON CONFLICT (repo, check_run_id) DO UPDATE SET {changed}, "
            "received_at = excluded.received_at WHERE excluded.stage >= workflow_jobs.stage",
            *values,
            now,
        )

    async def run_contexts(
        self, repo: str, check_names: Sequence[str], since: float, limit: int
    ) -> dict[int, RunContext]:
        if not check_names:
            return {}
        rows = await self._sql.fetch(
            f"SELECT {_RUNS}, {_JOBS}, {_JOBS_IN_RUN} FROM runs r "
            "LEFT JOIN workflow_jobs j ON j.repo = r.repo AND j.check_run_id = r.check_run_id "
            f"WHERE r.repo = $1 AND r.completed_at >= $2 AND {self._sql.any_of('r.check_name', 3)} "
            "ORDER BY r.completed_at DESC, r.check_run_id DESC LIMIT $4",
            repo,
            since,
            self._sql.listed(list(dict.fromkeys(check_names))),
            limit,
        )
        return {int(row[1]): _context(row) for row in rows}

    async def contexts_of_runs(
        self, repo: str, check_run_ids: Sequence[int]
    ) -> dict[int, RunContext]:
        ids = list(dict.fromkeys(check_run_ids))
        if not ids:
            return {}
        slots = ", ".join(f"${n}" for n in range(2, len(ids) + 2))
        rows = await self._sql.fetch(
            f"SELECT {_RUNS}, {_JOBS}, {_JOBS_IN_RUN} FROM runs r "
            "LEFT JOIN workflow_jobs j ON j.repo = r.repo AND j.check_run_id = r.check_run_id "
            f"WHERE r.repo = $1 AND r.check_run_id IN ({slots})",
            repo,
            *ids,
        )
        return {int(row[1]): _context(row) for row in rows}

    async def usual_durations(
        self, repo: str, check_name: str, since: float, limit: int
    ) -> list[float]:
        rows = await self._sql.fetch(
            "SELECT completed_at - started_at FROM runs WHERE repo = $1 AND check_name = $2 "
            "AND pr_number IS NULL AND completed_at >= $3 AND conclusion = 'success' "
            "AND started_at IS NOT NULL "
            "AND branch = (SELECT default_branch FROM repositories WHERE repo = $1) "
            "ORDER BY completed_at DESC LIMIT $4",
            repo,
            check_name,
            since,
            limit,
        )
        return [max(0.0, float(row[0])) for row in rows]


def _context(row: Row) -> RunContext:
    width = len(RUN_FIELDS)
    run = run_from_row(row[:width])
    job_row = row[width : width + len(JOB_FIELDS)]
    job = None
    if job_row[0] is not None:
        values = dict(zip(JOB_FIELDS, job_row, strict=True))
        labels = values["labels"]
        values["labels"] = json.loads(labels) if isinstance(labels, str) else labels
        job = JobRecord.model_validate(values)
    return run_context(run, job, int(row[-1]) if job is not None else None)
