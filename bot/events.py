"""Pydantic models of the webhook payloads the bot consumes.

Only the fields triage needs are modelled; everything else GitHub sends is ignored.
Nullability follows what GitHub really sends, which is looser than its published schema
in places (a check run's `details_url` and app `slug` are absent in real payloads).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

ACTIONS_APP_SLUG = "github-actions"

# A merge queue's temporary branch: "gh-readonly-queue/{base branch}/pr-{number}-{sha}".
_QUEUE_BRANCH = re.compile(r"^gh-readonly-queue/(?P<base>.+)/pr-\d+-[0-9a-f]+$")

# An Actions check run's details_url: ".../actions/runs/{run_id}/job/{job_id}".
_RUN_URL = re.compile(r"/actions/runs/(\d+)(?:/job/(\d+))?")
# A job's check_run_url: ".../check-runs/{check_run_id}".
_CHECK_RUN_URL = re.compile(r"/check-runs/(\d+)$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class User(_Model):
    login: str
    type: str | None = None  # "User", "Bot", "Organization", "Mannequin"

    @property
    def is_bot(self) -> bool:
        return self.type == "Bot" or self.login.endswith("[bot]")


class Owner(_Model):
    login: str


class Repository(_Model):
    id: int
    name: str
    full_name: str
    private: bool
    default_branch: str
    owner: Owner
    html_url: str


class InstallationRef(_Model):
    id: int


class Account(_Model):
    # An enterprise account has a slug and a name but no login.
    login: str | None = None
    slug: str | None = None


class Installation(_Model):
    id: int
    account: Account | None = None


class RepositoryRef(_Model):
    id: int
    name: str
    full_name: str
    private: bool


class App(_Model):
    id: int
    slug: str | None = None


class CheckOutput(_Model):
    title: str | None = None
    summary: str | None = None
    text: str | None = None
    annotations_count: int = 0


class CheckSuiteRef(_Model):
    id: int | None = None
    head_branch: str | None = None
    head_sha: str | None = None


class GitRef(_Model):
    ref: str
    sha: str


class CheckRunPullRequest(_Model):
    number: int
    head: GitRef
    base: GitRef


class CheckRun(_Model):
    id: int
    name: str
    head_sha: str
    status: str
    conclusion: str | None = None
    html_url: str | None = None
    details_url: str | None = None
    external_id: str | None = None
    started_at: str | None = None
    completed_at: str | None = None
    output: CheckOutput = Field(default_factory=CheckOutput)
    app: App | None = None
    check_suite: CheckSuiteRef | None = None
    pull_requests: list[CheckRunPullRequest] = Field(default_factory=list)

    @property
    def is_actions(self) -> bool:
        return self.app is not None and self.app.slug == ACTIONS_APP_SLUG

    @property
    def actions_job_id(self) -> int | None:
        """The Actions job id: on GitHub an Actions check run's id is its job's id."""
        return self.id if self.is_actions else None

    @property
    def queue_base(self) -> str | None:
        """The base branch a merge queue's temporary branch names (`main` for
        `gh-readonly-queue/main/pr-104-929f…`), when the run's head branch has that shape.
        A name anyone can give a branch: `handlers/queues.py` asks GitHub whether the run
        is really a queue's."""
        branch = self.check_suite.head_branch if self.check_suite else None
        found = _QUEUE_BRANCH.match(branch or "")
        return found.group("base") if found else None

    @property
    def run_id(self) -> int | None:
        """The Actions workflow run id, read from the details URL when it names one."""
        if self.details_url is None:
            return None
        match = _RUN_URL.search(self.details_url)
        return int(match.group(1)) if match else None


class _RepoEvent(_Model):
    action: str
    repository: Repository
    installation: InstallationRef | None = None
    sender: User


class CheckRunEvent(_RepoEvent):
    check_run: CheckRun


class WorkflowJob(_Model):
    """An Actions job as a `workflow_job` webhook shows it at one stage (queued, waiting,
    in progress, completed): the runner fields are null until a runner takes it."""

    id: int
    run_id: int
    run_attempt: int = 1  # absent from the oldest payloads: their runs had one attempt
    name: str
    workflow_name: str | None = None
    status: str
    conclusion: str | None = None
    started_at: str | None = None
    completed_at: str | None = None
    labels: list[str] = Field(default_factory=list)
    runner_name: str | None = None
    runner_group_name: str | None = None
    check_run_url: str | None = None

    @property
    def check_run_id(self) -> int:
        """The job's check run, as its URL names it: on GitHub the job's own id."""
        found = _CHECK_RUN_URL.search(self.check_run_url or "")
        return int(found.group(1)) if found else self.id


class WorkflowJobEvent(_RepoEvent):
    workflow_job: WorkflowJob


class IssuePullRequestLink(_Model):
    html_url: str | None = None
    merged_at: str | None = None


class Label(_Model):
    name: str


class Issue(_Model):
    number: int
    title: str
    state: str | None = None
    user: User | None = None
    body: str | None = None
    labels: list[Label] = Field(default_factory=list)
    # Present only when the issue is a pull request.
    pull_request: IssuePullRequestLink | None = None

    @property
    def is_pull_request(self) -> bool:
        return self.pull_request is not None


class Comment(_Model):
    id: int
    body: str
    user: User | None = None  # null for a deleted ("ghost") account
    author_association: str
    html_url: str
    created_at: str


class IssueCommentEvent(_RepoEvent):
    issue: Issue
    comment: Comment

    @property
    def is_pull_request(self) -> bool:
        return self.issue.is_pull_request


class PullRequestHead(_Model):
    ref: str
    sha: str
    repo: RepositoryRef | None = None  # null when the fork was deleted


class WebhookPullRequest(_Model):
    """The `pull_request` object of a pull_request webhook (what triage keeps is PullSummary)."""

    number: int
    state: str
    title: str
    user: User
    head: PullRequestHead
    base: GitRef
    draft: bool = False
    merged: bool | None = None


class PullRequestEvent(_RepoEvent):
    number: int
    pull_request: WebhookPullRequest


class InstallationEvent(_Model):
    action: str
    installation: Installation
    sender: User
    repositories: list[RepositoryRef] | None = None
