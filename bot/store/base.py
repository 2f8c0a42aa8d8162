"""The Store protocol: everything the bot keeps, behind one interface with two backends."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Protocol

from bot.store.models import (
    CheckAttempt,
    Delivery,
    DeliveryState,
    Occurrence,
    RunRecord,
    StickyComment,
)


class Store(Protocol):
    async def close(self) -> None: ...

    async def ping(self) -> None:
        """Raise if the database cannot be reached."""

    # --- inbox ---------------------------------------------------------------------------
    async def put_delivery(
        self,
        delivery_id: str,
        event: str,
        action: str | None,
        payload: bytes,
        now: float,
        *,
        done: bool = False,
    ) -> bool:
        """Store a delivery; False (and no change) when that id is already stored.

        `done`: no handler wants it, so it is stored finished (and can still be replayed).
        """

    async def claim(self, now: float, lease_seconds: float, limit: int) -> list[Delivery]:
        """Take due deliveries: pending ones whose time has come and claims whose lease ended."""

    async def extend_lease(self, delivery_id: str, claim_token: str, lease_until: float) -> bool:
        """Keep a claim while its handler still runs; False when the claim was lost."""

    async def complete(self, delivery_id: str, claim_token: str, now: float) -> None: ...

    async def complete_many(self, claims: Sequence[tuple[str, str]], now: float) -> None:
        """Mark done, in one write, every (delivery id, claim token) whose claim still holds."""

    async def retry_later(
        self, delivery_id: str, claim_token: str, error: str, next_attempt_at: float
    ) -> None: ...

    async def dead_letter(
        self, delivery_id: str, claim_token: str, error: str, now: float
    ) -> None: ...

    async def list_deliveries(
        self, limit: int, states: Sequence[DeliveryState] | None = None
    ) -> list[Delivery]: ...

    async def replay(self, delivery_id: str, now: float) -> bool:
        """Queue a finished or dead delivery again; False when the id is unknown."""

    async def inbox_depth(self) -> tuple[int, float | None]:
        """How many deliveries wait (pending or claimed) and when the oldest was received."""

    async def prune_deliveries(self, older_than: float) -> int:
        """Delete finished (done or dead) deliveries that finished before `older_than`.

        Returns how many went. Waiting and claimed deliveries are never touched.
        """

    # --- triage record ---------------------------------------------------------------------
    async def record_check_attempt(self, attempt: CheckAttempt) -> None: ...

    async def check_attempts_for_pr(self, repo: str, pr_number: int) -> list[CheckAttempt]: ...

    async def check_attempts_for(
        self, repo: str, head_sha: str, check_name: str
    ) -> list[CheckAttempt]: ...

    async def reserve_rerun(
        self, repo: str, head_sha: str, check_name: str, job_id: int, budget: int, now: float
    ) -> bool:
        """Take one rerun from the (head SHA, check) budget for this job, once.

        True when this job may be rerun now: a new reservation within the budget, or an
        earlier reservation for the same job whose request never got an answer.
        """

    async def finish_rerun(self, repo: str, job_id: int, status: int) -> None: ...

    async def reruns_for(self, repo: str, head_sha: str, check_name: str) -> list[int]:
        """HTTP statuses of the rerun requests made for this (head SHA, check); 0 = unanswered."""

    # --- history: every completed run and every failed test in it ------------------------
    async def record_run(self, run: RunRecord, occurrences: Sequence[Occurrence]) -> None:
        """Keep a completed run and its failed tests; recording the same run again is a no-op."""

    async def occurrences(
        self, repo: str, test_keys: Sequence[str], since: float
    ) -> list[Occurrence]:
        """Failures of these tests (by match key) at or after `since`, newest first."""

    async def runs(self, repo: str, check_name: str, since: float) -> list[RunRecord]:
        """Completed runs of one check at or after `since`, newest first."""

    async def runs_at(self, repo: str, head_sha: str) -> list[RunRecord]:
        """Completed runs of every check on one commit, newest first."""

    async def latest_branch_run(self, repo: str, check_name: str, branch: str) -> RunRecord | None:
        """The newest completed run of a check on a branch outside any PR (e.g. main)."""

    # --- sticky comment ------------------------------------------------------------------
    def pr_lock(self, repo: str, pr_number: int) -> AbstractAsyncContextManager[None]:
        """Serialise work on one PR's comment across tasks (and replicas, where supported)."""

    async def get_sticky_comment(self, repo: str, pr_number: int) -> StickyComment | None: ...

    async def save_sticky_comment(self, comment: StickyComment) -> None: ...

    # --- installations -------------------------------------------------------------------
    async def set_installation(
        self, installation_id: int, account: str, active: bool, now: float
    ) -> None: ...

    async def installations(self) -> list[tuple[int, str, bool]]: ...
