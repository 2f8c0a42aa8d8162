"""The Store protocol: everything the bot keeps, behind one interface with two backends."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Protocol

from bot.shared import PullSummary, Source, WriteSchedule
from bot.store.command_models import CommandClaim, Refusals, RerunGrant
from bot.store.models import (
    CheckAttempt,
    Delivery,
    DeliveryState,
    StickyComment,
    TrackingIssue,
    TriageCheckRun,
)
from bot.triage.imports import ImportWalk
from bot.triage.job_context import JobRecord
from bot.triage.models import Extraction, Occurrence, RunRecord
from bot.triage.quarantine import Quarantine
from bot.triage.run_context import RunContext


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

    async def schedule(
        self, delivery_id: str, event: str, payload: bytes, now: float, due: float
    ) -> bool:
        """Queue the bot's own work, taken at `due` like a delivery; False (and no change)
        when that id is already queued or done."""

    async def claim(self, now: float, lease_seconds: float, limit: int) -> list[Delivery]:
        """Take due deliveries: pending ones whose time has come and claims whose lease ended."""

    async def extend_lease(self, delivery_id: str, claim_token: str, lease_until: float) -> bool:
        """Keep a claim while its handler still runs; False when the claim was lost."""

    async def complete(self, delivery_id: str, claim_token: str, now: float) -> None: ...

    async def complete_many(self, claims: Sequence[tuple[str, str]], now: float) -> None:
        """Mark done, in one write, every (delivery id, claim token) whose claim still holds."""

    async def retry_later(
        self,
        delivery_id: str,
        claim_token: str,
        error: str,
        next_attempt_at: float,
        *,
        attempts: int | None = None,
    ) -> None:
        """Give the claim back, pending until `next_attempt_at`; `attempts`, when given,
        replaces the count of tries made (a try that does not count gives its back)."""

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
        """Take one rerun for this job, once, from two budgets: `per_check` per (head SHA,
        check) and `per_pr_day` for the PR over the 24 hours before `now`."""

    async def finish_rerun(self, repo: str, job_id: int, status: int) -> None: ...

    async def rerun_status(self, repo: str, job_id: int) -> int | None:
        """GitHub's answer to this job's rerun request (0: reserved, unanswered); None when
        no rerun of it was ever reserved."""

    async def release_rerun(self, repo: str, job_id: int) -> None:
        """Give back a reservation GitHub never answered (status 0), so it counts in no budget."""

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

    # --- run context: the jobs `workflow_job` webhooks describe ---------------------------
    async def save_job(self, job: JobRecord, now: float) -> None:
        """Keep what a `workflow_job` delivery says of its job; a delivery of an earlier stage
        (queued, in progress) never replaces what a later one said."""

    async def run_contexts(
        self, repo: str, check_names: Sequence[str], since: float, limit: int
    ) -> dict[int, RunContext]:
        """The context of each recorded run of these checks completed at or after `since`,
        by check run id, newest first, at most `limit`."""

    async def contexts_of_runs(
        self, repo: str, check_run_ids: Sequence[int]
    ) -> dict[int, RunContext]:
        """The context of each of these recorded runs, by check run id (a run not recorded
        is left out). One query: the caller bounds how many ids it asks for."""

    async def usual_durations(
        self, repo: str, check_name: str, since: float, limit: int
    ) -> list[float]:
        """How long the check's passing runs on the repository's default branch took (seconds,
        outside any PR, at or after `since`), newest first, at most `limit`."""

    # --- sticky comment ------------------------------------------------------------------
    def pr_lock(self, repo: str, pr_number: int) -> AbstractAsyncContextManager[None]:
        """Serialise work on one PR's comment across tasks (and replicas, where supported)."""

    async def get_sticky_comment(self, repo: str, pr_number: int) -> StickyComment | None: ...

    async def save_sticky_comment(self, comment: StickyComment) -> None: ...

    # --- the bot's own check run (under the PR's lock) -------------------------------------
    async def get_triage_check_run(self, repo: str, head_sha: str) -> TriageCheckRun | None: ...

    async def save_triage_check_run(self, run: TriageCheckRun) -> None: ...

    # --- installations -------------------------------------------------------------------
    async def set_installation(
        self, installation_id: int, account: str, active: bool, now: float
    ) -> None: ...

    async def installations(self) -> list[tuple[int, str, bool]]: ...

    # --- tracking issues -----------------------------------------------------------------
    def tracking_lock(self, repo: str) -> AbstractAsyncContextManager[None]:
        """Serialise finding and creating tracking issues in one repository (across replicas,
        where supported), so a test never gets two issues and the hourly cap holds."""

    async def tracking_issue(self, repo: str, key: str) -> TrackingIssue | None: ...

    async def tracking_issue_numbered(self, repo: str, issue_number: int) -> TrackingIssue | None:
        """The record that points at this GitHub issue, if any."""

    async def save_tracking_issue(self, issue: TrackingIssue) -> None:
        """Insert or replace the record of `issue.key`; its tests' match keys link to it."""

    async def tracking_numbers(self, repo: str, test_keys: Sequence[str]) -> dict[str, int]:
        """The tracking issue number of each of these tests (by match key) that has one."""

    async def tracking_owners(self, repo: str, test_keys: Sequence[str]) -> dict[str, list[str]]:
        """The owners written on the tracking issue of each of these tests that has one."""

    async def tracking_created_since(self, repo: str, since: float) -> int:
        """How many tracking issues the bot created in this repository at or after `since`."""

    async def owners_mentioned(self, repo: str, key: str) -> list[str]:
        """The owners (lower case) the tracking issue of `key` has @-mentioned."""

    async def mentions_since(
        self, repo: str, owners: Sequence[str], since: float
    ) -> dict[str, int]:
        """How many tracking issues @-mentioned each of these owners (by lower-case name) at
        or after `since`; an owner never mentioned is left out."""

    async def add_mentions(self, repo: str, key: str, owners: Sequence[str], now: float) -> None:
        """Record that the issue of `key` @-mentions these owners (once per owner and issue)."""

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
        """Take a command comment for one delivery: ACT on it, or LIMITED when `login` had
        already given `per_hour` command comments on this PR in the hour before `now`
        (LIMITED_IN_REPO: `per_repo_hour` on all the repository's PRs together). The
        same delivery (a retry) gets the same answer until it finishes; any other delivery
        of the comment, and any after it finished, gets HANDLED."""

    async def finish_command(self, repo: str, comment_id: int) -> None: ...

    async def refuse_command(
        self, repo: str, pr_number: int, comment_id: int, login: str, *, now: float
    ) -> Refusals:
        """Mark a claimed command comment refused, and count the PR's comments refused in the
        hour before `now` (by `login`, and by anyone), one step across replicas. Counted
        once: asking again for the same comment (a retry) gives the same counts."""

    async def add_feedback(
        self, repo: str, pr_number: int, test_key: str, login: str, now: float
    ) -> bool:
        """Record that `login` disputes the verdict on a test (match key, "*": the whole PR);
        False when they already had."""

    async def feedback_for_pr(self, repo: str, pr_number: int) -> dict[str, list[str]]:
        """Test key (or "*") -> the logins that said `/flaky wrong` about it, sorted."""

    # --- dashboard -------------------------------------------------------------------------
    async def set_repository(
        self, repo: str, private: bool, now: float, default_branch: str | None = None
    ) -> None:
        """Remember whether a repository is private, and its default branch when given (the
        latest webhook wins)."""

    async def repositories(self) -> list[tuple[str, bool]]:
        """Every repository the bot has heard of, with whether it is private, by name."""

    async def repo_history(
        self, repo: str, since: float
    ) -> tuple[list[RunRecord], list[Occurrence]]:
        """Every run recorded for a repository at or after `since`, and every failed test in
        them, newest first."""

    # --- automatic closing of tracking issues ----------------------------------------------
    async def open_tracking_issues(self, repo: str, check_name: str) -> list[TrackingIssue]:
        """The records not marked closed whose test failed in this check, by issue number."""

    # --- what the store knows of GitHub's tracking issues ------------------------------------
    async def tracking_synced(self, repo: str, label: str) -> bool:
        """Whether every issue with this label on GitHub was once read into the store."""

    async def mark_tracking_synced(self, repo: str, label: str, now: float) -> None: ...

    async def opening_tracking_issue(self, repo: str, key: str, now: float) -> None:
        """Note that the issue of `key` is about to be opened."""

    async def opened_tracking_issue(self, repo: str, key: str) -> None:
        """Its number is saved: forget the note."""

    async def tracking_issue_opening(self, repo: str, key: str) -> bool:
        """Whether a note of opening `key`'s issue was left: it may exist unrecorded."""

    # --- quarantined tests -----------------------------------------------------------------
    async def quarantine(self, q: Quarantine, now: float) -> tuple[Quarantine, bool]:
        """Begin `q`, or renew the test's quarantine that is still on at `now` (its expiry,
        who renewed it and why); the quarantine as kept, and whether it was a renewal. An
        expired one left open is ended at its expiry first."""

    async def end_quarantines(
        self, repo: str, test_keys: Sequence[str], by: str, now: float
    ) -> list[Quarantine]:
        """End the quarantines of these tests (match keys) still on at `now`; those ended."""

    async def end_expired_quarantines(self, repo: str, now: float) -> list[Quarantine]:
        """Mark the repository's quarantines whose expiry passed by `now` ended at their
        expiry, once; the ones ended by this call."""

    async def quarantines_to_remind(self, repo: str, now: float, within: float) -> list[Quarantine]:
        """Mark reminded, and return, the quarantines on at `now` that end within `within`
        seconds and were not reminded since they began or were last renewed."""

    async def quarantines_to_digest(self, repo: str, now: float, every: float) -> list[Quarantine]:
        """Mark digested at `now`, and return, the quarantines on whose last weekly digest
        (else their start) is at least `every` seconds old."""

    async def active_quarantines(
        self, repo: str, now: float, test_keys: Sequence[str] | None = None
    ) -> list[Quarantine]:
        """The quarantines on at `now` (of these tests, or all), by test key."""

    async def quarantine_history(self, repo: str, test_key: str) -> list[Quarantine]:
        """Every quarantine of the test, ended ones too, oldest first."""

    # --- pull requests as last seen --------------------------------------------------------
    async def save_pull(self, repo: str, pull: PullSummary, *, read: bool) -> None:
        """Keep what a pull showed, unless a newer state (GitHub's `updated_at`) is kept.

        `read`: it came from reading the pull, so it is the truth at that time. A webhook's
        copy with the same time as the kept state but another head or state is kept distrusted:
        which of the two came last is unknown.
        """

    async def pull(self, repo: str, pr_number: int) -> PullSummary | None:
        """The pull as last seen; None when unknown or distrusted."""

    async def waiting(self, event: str) -> bool:
        """Whether any delivery of this event is pending or claimed."""

    # --- write pacing ------------------------------------------------------------------------
    def write_schedule(self) -> WriteSchedule | None:
        """The pace of GitHub writes shared by every replica of this store; None when the
        store serves one process, which paces its own."""

    # --- what the import walks read --------------------------------------------------------
    async def blobs(self, shas: Sequence[str]) -> dict[str, Source]:
        """The kept texts (or reasons they are unreadable) of the blobs asked for."""

    async def save_blobs(self, blobs: Mapping[str, Source], now: float) -> None:
        """Keep blob texts by SHA; a SHA already kept is left as it is."""

    async def import_walk(
        self, repo: str, sha: str, test_file: str, walk_key: str
    ) -> ImportWalk | None:
        """The finished walk of `test_file` at commit `sha` kept under `walk_key`."""

    async def save_import_walk(
        self, repo: str, sha: str, walk_key: str, found: ImportWalk, now: float
    ) -> None: ...

    async def job_extraction(
        self, repo: str, check_run_id: int, read_key: str
    ) -> Extraction | None:
        """What the completed check run's job said, as read under `read_key` (the settings
        that shape the reading), when a delivery read it before."""

    async def save_job_extraction(
        self, repo: str, check_run_id: int, read_key: str, found: Extraction, now: float
    ) -> None: ...

    async def prune_sources(self, older_than: float) -> int:
        """Delete blobs, walks and jobs' extractions kept before `older_than`; returns how
        many went."""
