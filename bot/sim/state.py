"""The simulated repository's mutable state: pulls, issues, comments, labels, check runs."""

from __future__ import annotations

import io
import itertools
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from bot.sim.app_checks import AppCheckRun
from bot.sim.scenario import (
    AppSpec,
    Attempt,
    CheckSpec,
    OtherRepoSpec,
    PullRequestSpec,
    RepoSpec,
    Scenario,
)

RERUNNABLE = frozenset({"failure", "timed_out", "cancelled"})
ARTIFACT_RETENTION = timedelta(days=90)  # GitHub's default for public repositories


def now() -> datetime:
    return datetime.now(UTC)


@dataclass
class SimPullRequest:
    """A pull request of the simulated world: what GitHub's answers about it are made from."""

    spec: PullRequestSpec
    id: int
    base_ref: str
    # Heads the branch had before a push: GitHub keeps those commits, with the head's files.
    earlier_heads: list[str] = field(default_factory=list)


@dataclass
class Issue:
    number: int
    id: int
    title: str
    body: str
    state: str
    user: str
    labels: list[str]
    created_at: datetime
    updated_at: datetime
    closed_at: datetime | None = None
    state_reason: str | None = None
    is_pull_request: bool = False
    locked: bool = False
    assignees: list[str] = field(default_factory=list)


@dataclass
class Comment:
    id: int
    issue: int
    user: str
    body: str
    created_at: datetime
    updated_at: datetime


@dataclass
class Label:
    id: int
    name: str
    color: str = "ededed"
    description: str | None = None


@dataclass
class Reaction:
    id: int
    comment_id: int
    user: str
    content: str
    created_at: datetime


@dataclass
class CheckRun:
    """One attempt of a check. For Actions checks the check run id is also the job id."""

    id: int
    check: CheckSpec
    attempt: Attempt
    run_id: int
    run_attempt: int
    suite_id: int
    head_sha: str
    started_at: datetime
    status: str = "queued"
    conclusion: str | None = None
    completed_at: datetime | None = None


@dataclass
class Artifact:
    """A zip an Actions job uploaded; it belongs to the job's workflow run."""

    id: int
    name: str
    run: CheckRun
    data: bytes
    created_at: datetime
    expires_at: datetime

    @property
    def expired(self) -> bool:
        return self.expires_at <= now()


def build_zip(files: Mapping[str, bytes], moment: datetime) -> bytes:
    """A deflated zip of the files, each stamped with `moment`, in the order given."""
    buffer = io.BytesIO()
    stamp = moment.astimezone(UTC).timetuple()[:6]
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, data in files.items():
            info = zipfile.ZipInfo(path, date_time=stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buffer.getvalue()


@dataclass(frozen=True)
class RerunRequest:
    """A rerun the bot asked for, and what the simulator answered."""

    endpoint: str  # "job" (.../jobs/{id}/rerun) or "failed-jobs" (.../runs/{id}/rerun-failed-jobs)
    target_id: int  # the job id or the workflow run id
    checks: tuple[str, ...]  # the checks it reran (or would have)
    status: int


@dataclass
class World:
    scenario: Scenario
    epoch: datetime = field(default_factory=now)
    pulls: dict[int, SimPullRequest] = field(default_factory=dict)
    issues: dict[int, Issue] = field(default_factory=dict)
    comments: dict[int, Comment] = field(default_factory=dict)
    labels: dict[str, Label] = field(default_factory=dict)
    reactions: list[Reaction] = field(default_factory=list)
    runs: dict[int, CheckRun] = field(default_factory=dict)
    app_runs: dict[int, AppCheckRun] = field(default_factory=dict)  # the App's own
    artifacts: dict[int, Artifact] = field(default_factory=dict)
    reruns: list[RerunRequest] = field(default_factory=list)
    issues_created: list[int] = field(default_factory=list)
    _ids: dict[str, Iterator[int]] = field(default_factory=dict)
    _users: dict[str, int] = field(default_factory=dict)
    _repos: dict[str, int] = field(default_factory=dict)
    _apps: dict[str, int] = field(default_factory=dict)
    _workflow_runs: dict[str, tuple[int, int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        default = self.repo.default_branch
        for spec in self.scenario.pull_requests:
            pr = SimPullRequest(
                spec=spec, id=self.new_id("pull"), base_ref=spec.base_ref or default
            )
            self.pulls[spec.number] = pr
            self.issues[spec.number] = Issue(
                number=spec.number,
                id=self.new_id("issue"),
                title=spec.title,
                body="",
                state=spec.state,
                user=spec.author,
                labels=[],
                created_at=self.epoch,
                updated_at=self.epoch,
                closed_at=self.epoch if spec.state == "closed" else None,
                is_pull_request=True,
            )
        for issue in self.scenario.issues:
            for name in issue.labels:
                self.ensure_label(name)
            self.issues[issue.number] = Issue(
                number=issue.number,
                id=self.new_id("issue"),
                title=issue.title,
                body=issue.body,
                state=issue.state,
                user=issue.user,
                labels=[self.ensure_label(name).name for name in issue.labels],
                created_at=self.epoch - timedelta(days=issue.closed_days_ago),
                updated_at=self.epoch - timedelta(days=issue.closed_days_ago),
                closed_at=(
                    self.epoch - timedelta(days=issue.closed_days_ago)
                    if issue.state == "closed"
                    else None
                ),
                state_reason="completed" if issue.state == "closed" else None,
                locked=issue.locked,
            )
        for comment in self.scenario.comments:
            self.add_comment(comment.issue, comment.user, comment.body)

    @property
    def repo(self) -> RepoSpec:
        return self.scenario.repo

    @property
    def app(self) -> AppSpec:
        return self.scenario.app

    @property
    def bot_login(self) -> str:
        return f"{self.app.slug}[bot]"

    _ID_BASES = {
        "user": 5_000_000,
        "repo": 700_000_000,
        "app": 900_000,
        "pull": 2_100_000_000,
        "issue": 2_700_000_000,
        "comment": 3_500_000_000,
        "label": 8_100_000_000,
        "reaction": 300_000_000,
        "run": 40_000_000_000,
        "workflow": 12_000_000_000,
        "suite": 31_000_000_000,
        "artifact": 4_800_000_000,
    }

    def new_id(self, kind: str) -> int:
        if kind not in self._ids:
            self._ids[kind] = itertools.count(self._ID_BASES[kind] + 1)
        return next(self._ids[kind])

    def user_id(self, login: str) -> int:
        if login not in self._users:
            self._users[login] = self.new_id("user")
        return self._users[login]

    def user_type(self, login: str) -> str:
        return "Organization" if login == self.repo.owner else "User"

    def repo_id(self, owner: str) -> int:
        if owner not in self._repos:
            self._repos[owner] = self.new_id("repo")
        return self._repos[owner]

    def other_app_id(self, slug: str) -> int:
        if slug not in self._apps:
            self._apps[slug] = self.new_id("app")
        return self._apps[slug]

    def role_of(self, login: str) -> str:
        if login in self.scenario.collaborators:
            return self.scenario.collaborators[login]
        if login == self.repo.owner:
            return "admin"
        return "none" if self.repo.private else "read"

    def assignable(self, login: str) -> bool:
        """Whether an issue may be assigned to `login`: people with triage access or more
        (an organisation's members with read access too, which the simulator has not)."""
        return self.role_of(login) in {"admin", "maintain", "write", "triage"}

    def association(self, login: str) -> str:
        if login == self.repo.owner:
            return "OWNER"
        if self.role_of(login) in {"admin", "maintain", "write", "triage"}:
            return "COLLABORATOR"
        if any(pr.spec.author == login for pr in self.pulls.values()):
            return "CONTRIBUTOR"
        return "NONE"

    def other_repo(self, full_name: str) -> OtherRepoSpec | None:
        """One of the scenario's other repositories (names are not case-sensitive)."""
        wanted = full_name.lower()
        return next((r for n, r in self.scenario.repos.items() if n.lower() == wanted), None)

    def known_refs(self) -> set[str]:
        refs = {self.repo.default_branch}
        for pr in self.pulls.values():
            refs |= {pr.spec.head_ref, pr.base_ref, pr.spec.head_sha, pr.spec.base_sha}
            refs |= set(pr.earlier_heads)
        for check in self.scenario.checks:
            if check.head_sha is not None and check.branch is not None:
                refs |= {check.head_sha, check.branch}
        return refs

    def files_at(self, ref: str) -> dict[str, str | bytes]:
        """The repository's files at a ref: a PR's head has its `head_files` over the
        scenario's `files`; every other ref has the scenario's `files`."""
        files: dict[str, str | bytes] = dict(self.scenario.files)
        for pr in self.pulls.values():
            if ref in (pr.spec.head_sha, pr.spec.head_ref, *pr.earlier_heads):
                for path, data in pr.spec.head_files.items():
                    if data is None:
                        files.pop(path, None)
                    else:
                        files[path] = data
                break
        return files

    def check_head_sha(self, check: CheckSpec) -> str:
        """The commit a check runs on: its PR's head, or its own head_sha outside a PR."""
        if check.pr is not None:
            return self.pulls[check.pr].spec.head_sha
        assert check.head_sha is not None  # the scenario's validation makes it so
        return check.head_sha

    def check_branch(self, check: CheckSpec) -> str | None:
        """The branch a check runs on (None: a fork's, which GitHub does not name)."""
        if check.pr is None:
            return check.branch
        pr = self.pulls[check.pr]
        return None if pr.spec.fork else pr.spec.head_ref

    def find_label(self, name: str) -> Label | None:
        return next((lb for lb in self.labels.values() if lb.name.lower() == name.lower()), None)

    def ensure_label(self, name: str) -> Label:
        label = self.find_label(name)
        if label is None:
            label = Label(id=self.new_id("label"), name=name)
            self.labels[name] = label
        return label

    def comments_on(self, issue: int) -> list[Comment]:
        return [comment for comment in self.comments.values() if comment.issue == issue]

    def add_comment(self, issue: int, user: str, body: str) -> Comment:
        moment = now()
        comment = Comment(self.new_id("comment"), issue, user, body, moment, moment)
        self.comments[comment.id] = comment
        self.issues[issue].updated_at = moment
        return comment

    def reactions_on(self, comment_id: int) -> list[Reaction]:
        return [reaction for reaction in self.reactions if reaction.comment_id == comment_id]

    def next_issue_number(self) -> int:
        return max(self.issues, default=0) + 1

    def check(self, name: str) -> CheckSpec:
        return next(check for check in self.scenario.checks if check.name == name)

    def runs_of(self, name: str) -> list[CheckRun]:
        return [run for run in self.runs.values() if run.check.name == name]

    def latest_run(self, name: str) -> CheckRun | None:
        runs = self.runs_of(name)
        return runs[-1] if runs else None

    def queue_run(self, name: str) -> CheckRun:
        """Start the check's next attempt (the last scripted attempt repeats once exhausted)."""
        check = self.check(name)
        head_sha = self.check_head_sha(check)
        # A named workflow runs anew for each commit; a check of its own reruns one run.
        key = f"{check.workflow}\0{head_sha}" if check.workflow else name
        if key not in self._workflow_runs:
            self._workflow_runs[key] = (self.new_id("workflow"), self.new_id("suite"))
        run_id, suite_id = self._workflow_runs[key]
        previous = len([run for run in self.runs_of(name) if run.run_id == run_id])
        run = CheckRun(
            id=self.new_id("run"),
            check=check,
            attempt=check.attempts[min(previous, len(check.attempts) - 1)],
            run_id=run_id,
            run_attempt=previous + 1,
            suite_id=suite_id,
            head_sha=head_sha,
            started_at=now(),
        )
        self.runs[run.id] = run
        return run

    def complete_run(self, run: CheckRun) -> None:
        """Finish the attempt; the artifacts it uploads join its workflow run."""
        moment = now() - timedelta(days=run.attempt.completed_days_ago)
        run.started_at = min(run.started_at, moment - timedelta(seconds=run.attempt.seconds))
        run.status = "completed"
        run.conclusion = run.attempt.conclusion
        run.completed_at = moment
        for spec in run.attempt.artifacts:
            artifact = Artifact(
                id=self.new_id("artifact"),
                name=spec.name,
                run=run,
                data=build_zip(spec.contents(), moment),
                created_at=moment,
                expires_at=moment + ARTIFACT_RETENTION,
            )
            self.artifacts[artifact.id] = artifact

    def upload_log(self, run: CheckRun) -> str:
        """The lines actions/upload-artifact v4 writes to the job's log for each artifact the
        attempt uploaded (its src/shared/upload-artifact.ts; the step's group as a real log
        shows it), after the attempt's own log as `if: always()` upload steps run last."""
        lines: list[str] = []
        html = f"https://github.com/{self.repo.full_name}/actions/runs/{run.run_id}/artifacts"
        for artifact in self.artifacts.values():
            if artifact.run is not run:
                continue
            stamp = artifact.created_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f0Z")
            said = [
                "##[group]Run actions/upload-artifact@v4",
                "with:",
                f"  name: {artifact.name}",
                "##[endgroup]",
                "Artifact name is valid!",
                "Finalizing artifact upload",
                f"Artifact {artifact.name}.zip successfully finalized. Artifact ID {artifact.id}",
                f"Artifact {artifact.name} has been successfully uploaded! Final size is "
                f"{len(artifact.data)} bytes. Artifact ID is {artifact.id}",
                f"Artifact download URL: {html}/{artifact.id}",
            ]
            lines.extend(f"{stamp} {line}\n" for line in said)
        return "".join(lines)

    def artifacts_of(self, run_id: int) -> list[Artifact]:
        """A workflow run's artifacts from all its attempts, oldest first."""
        return [artifact for artifact in self.artifacts.values() if artifact.run.run_id == run_id]

    def job(self, job_id: int) -> CheckRun | None:
        """An Actions job by id (= its check run id); None for unknown ids and other CI apps."""
        run = self.runs.get(job_id)
        return run if run is not None and run.check.is_actions else None

    def push(self, pr_number: int, head_sha: str) -> None:
        """A new commit on the PR's branch: its head moves; earlier runs keep their commit."""
        pull = self.pulls[pr_number]
        pull.earlier_heads.append(pull.spec.head_sha)
        pull.spec = pull.spec.model_copy(update={"head_sha": head_sha})
        self.issues[pr_number].updated_at = now()
