"""The scenario file: a small GitHub world for the simulator, and what the bot should do in it."""

from __future__ import annotations

import re
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

Conclusion = Literal["failure", "success", "timed_out", "cancelled"]
Permission = Literal["admin", "maintain", "write", "triage", "read", "none"]
ACTIONS_SLUG = "github-actions"
ARTIFACT_NAME_FORBIDDEN = '":<>|*?\\/\r\n'


class ScenarioError(ValueError):
    """A scenario file that cannot be read or does not describe a consistent world."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AppSpec(_Strict):
    id: int = 1
    slug: str = "flaky-triage"
    installation_id: int = 1
    # The installation's `checks` permission: `read` until its owner accepts `write`.
    checks: Literal["read", "write"] = "write"


class RepoSpec(_Strict):
    owner: str
    name: str
    default_branch: str = "main"
    private: bool = False

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


class OtherRepoSpec(_Strict):
    """Another repository of the world, for its files only (an organisation's `.github`
    repository, one a settings file `_extends`): served by the contents endpoint."""

    default_branch: str = "main"
    # False: the App's installation does not include it, and GitHub answers 404 for it, as
    # for a private repository a token cannot see.
    installed: bool = True
    # Its visibility, as `GET /repos/{owner}/{repo}` shows it.
    private: bool = False
    files: dict[str, str | bytes] = Field(default_factory=dict)


class ChangedFile(_Strict):
    filename: str
    status: Literal["added", "removed", "modified", "renamed", "copied", "changed"] = "modified"
    previous_filename: str | None = None

    @model_validator(mode="after")
    def _rename_has_previous(self) -> ChangedFile:
        if (self.status == "renamed") != (self.previous_filename is not None):
            raise ValueError("previous_filename is required for, and only for, status 'renamed'")
        return self


class PullRequestSpec(_Strict):
    number: int = Field(gt=0)
    title: str
    author: str
    head_sha: str
    base_sha: str
    head_ref: str
    base_ref: str | None = None  # None: the repository's default branch
    fork: bool = False
    state: Literal["open", "closed"] = "open"
    files: list[ChangedFile] = Field(default_factory=list)
    # That many more modified files, `generated/NNNNN.txt`: PRs past GitHub's listing limit.
    generated_files: int = Field(default=0, ge=0, le=100_000)
    # The repository's contents at the PR's head: the scenario's `files` with these
    # replaced or added (bytes: YAML's !!binary), or removed (null).
    head_files: dict[str, str | bytes | None] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _generate_files(self) -> PullRequestSpec:
        self.files.extend(
            ChangedFile(filename=f"generated/{index:05d}.txt")
            for index in range(self.generated_files)
        )
        self.generated_files = 0  # expanded once, even if the model is validated again
        return self

    @field_validator("files", mode="before")
    @classmethod
    def _plain_paths(cls, value: object) -> object:
        if isinstance(value, list):
            return [{"filename": item} if isinstance(item, str) else item for item in value]
        return value


class Annotation(_Strict):
    path: str
    start_line: int
    end_line: int
    annotation_level: Literal["notice", "warning", "failure"] = "failure"
    message: str
    title: str | None = None


class ArtifactSpec(_Strict):
    """An Actions artifact the attempt uploads: a zip of these files."""

    name: str
    files: dict[str, str | bytes] = Field(default_factory=dict)  # bytes: read from files_from
    files_from: dict[str, str] = Field(default_factory=dict)  # read into `files` on load

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        # upload-artifact refuses these characters in a name.
        if not value.strip() or set(value) & set(ARTIFACT_NAME_FORBIDDEN):
            raise ValueError(f"not a valid artifact name: {value!r}")
        return value

    @field_validator("files", "files_from")
    @classmethod
    def _relative_paths(cls, value: dict[str, object]) -> dict[str, object]:
        for path in value:
            parts = path.split("/")
            if "\\" in path or ".." in parts or "" in parts:
                raise ValueError(f"not a relative path inside a zip: {path!r}")
        return value

    @model_validator(mode="after")
    def _some_files_once(self) -> ArtifactSpec:
        if not self.files and not self.files_from:
            raise ValueError("an artifact needs at least one file")
        twice = sorted(self.files.keys() & self.files_from.keys())
        if twice:
            raise ValueError(f"paths given in both files and files_from: {twice}")
        return self

    def contents(self) -> dict[str, bytes]:
        """Each file's bytes, text as UTF-8; files_from must have been read (load_scenario)."""
        if self.files_from:
            raise ValueError(f"artifact {self.name!r}: files_from is read by load_scenario")
        return {
            path: data if isinstance(data, bytes) else data.encode()
            for path, data in self.files.items()
        }


class Attempt(_Strict):
    conclusion: Conclusion
    log: str | None = None
    log_file: str | None = None  # relative to the scenario file; read into `log` on load
    # About this many bytes of generated build output before the log, made as it is served:
    # a log of gigabytes without holding it (up to 1 TiB).
    log_padding_bytes: int = Field(default=0, ge=0, le=1 << 40)
    annotations: list[Annotation] = Field(default_factory=list)
    artifacts: list[ArtifactSpec] = Field(default_factory=list)
    # When it finished, this many days before the moment it is played: weeks of history
    # (auto_close, history windows) in a scenario that runs in seconds.
    completed_days_ago: float = Field(default=0, ge=0, le=365)

    @model_validator(mode="after")
    def _consistent(self) -> Attempt:
        if self.log is not None and self.log_file is not None:
            raise ValueError("give either log or log_file, not both")
        names = [artifact.name for artifact in self.artifacts]
        if len(set(names)) != len(names):
            raise ValueError("artifact names must be unique within an attempt")
        return self


QUEUE_BRANCHES = "gh-readonly-queue/"  # where a merge queue runs a group's checks


class CheckSpec(_Strict):
    name: str
    # On a PR's head, or outside any PR: a run on `branch` (default: the default branch) at
    # `head_sha`, e.g. a push to main or the PR's base commit.
    pr: int | None = None
    head_sha: str | None = None
    branch: str | None = None
    # The name GitHub shows, when two scenario checks are one check on different commits.
    check_name: str | None = None
    app: str = ACTIONS_SLUG
    attempts: list[Attempt] = Field(min_length=1)
    rerun_status: int | None = Field(default=None, ge=400, le=599)
    # The event that started an Actions check's workflow run, as GitHub names it; default:
    # `pull_request` on a PR, `merge_group` on a merge queue's branch, else `push`.
    event: str | None = None
    # The Actions workflow it is a job of: the checks of one workflow on one commit are jobs
    # of the same workflow run. None: a workflow run of its own, whose attempts it counts.
    workflow: str | None = None

    @property
    def is_actions(self) -> bool:
        return self.app == ACTIONS_SLUG

    @property
    def workflow_event(self) -> str:
        if self.event is not None:
            return self.event
        if self.pr is not None:
            return "pull_request"
        return "merge_group" if (self.branch or "").startswith(QUEUE_BRANCHES) else "push"

    @property
    def shown_name(self) -> str:
        return self.check_name or self.name

    @model_validator(mode="after")
    def _on_a_pr_or_a_commit(self) -> CheckSpec:
        if (self.pr is None) == (self.head_sha is None):
            raise ValueError("a check runs either on a pull request (pr) or on a head_sha")
        if self.pr is not None and self.branch is not None:
            raise ValueError("branch is for checks outside a pull request (head_sha)")
        return self

    @model_validator(mode="after")
    def _artifacts_need_actions(self) -> CheckSpec:
        if not self.is_actions and any(attempt.artifacts for attempt in self.attempts):
            raise ValueError("only GitHub Actions checks upload artifacts")
        return self


class IssueSpec(_Strict):
    number: int = Field(gt=0)
    title: str
    body: str = ""
    state: Literal["open", "closed"] = "open"
    labels: list[str] = Field(default_factory=list)
    user: str
    locked: bool = False
    closed_days_ago: float = Field(default=0, ge=0)  # for a closed issue: when it was closed


class CommentSpec(_Strict):
    issue: int
    user: str
    body: str


class CheckEvent(_Strict):
    check: str


class NewComment(_Strict):
    pr: int
    user: str
    body: str


class CommentEvent(_Strict):
    comment: NewComment


Event = CheckEvent | CommentEvent


class FaultRule(_Strict):
    method: str = "*"
    path: str  # regular expression searched in the request path
    status: int | None = Field(default=None, ge=400, le=599)
    times: int | None = Field(default=None, ge=1)  # default 1 unless probability is given
    probability: float | None = Field(default=None, gt=0, le=1)
    headers: dict[str, str] = Field(default_factory=dict)
    drop_connection: bool = False
    # With drop_connection: carry the request out first, then drop the answer. GitHub did
    # it; the caller cannot know (a write that must not be done twice when retried).
    after_applying: bool = False
    # The answer's `message`, GitHub's words (e.g. "Resource not accessible by integration").
    message: str | None = Field(default=None, min_length=1, max_length=500)
    # Answer as GitHub's rate limit does (status 403 or 429). "secondary": its secondary-limit
    # message, the core X-RateLimit-* headers with requests remaining, and `Retry-After`
    # when `retry_after` is given (GitHub does not always send one). "primary": "API rate
    # limit exceeded for installation ID N.", X-RateLimit-Remaining 0 and X-RateLimit-Reset
    # `retry_after` seconds from now (default 60).
    rate_limit: Literal["primary", "secondary"] | None = None
    retry_after: int | None = Field(default=None, ge=0, le=86_400)

    @field_validator("path")
    @classmethod
    def _valid_regex(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from exc
        return value

    @field_validator("method")
    @classmethod
    def _upper(cls, value: str) -> str:
        return value.upper()

    @model_validator(mode="after")
    def _one_effect(self) -> FaultRule:
        if (self.status is None) == (not self.drop_connection):
            raise ValueError("a fault rule needs exactly one of status or drop_connection: true")
        if self.times is not None and self.probability is not None:
            raise ValueError("give either times or probability, not both")
        if self.after_applying and not self.drop_connection:
            raise ValueError("after_applying needs drop_connection: true")
        if self.rate_limit is not None and self.status not in (403, 429):
            raise ValueError("GitHub answers a rate limit with status 403 or 429")
        if self.rate_limit is not None and self.message is not None:
            raise ValueError("a rate limit answers in GitHub's own words: give no message")
        if self.retry_after is not None and self.rate_limit is None:
            raise ValueError("retry_after needs rate_limit")
        return self


class Faults(_Strict):
    latency_ms: int = Field(default=0, ge=0)
    # "uniform": each call waits a random 0..latency_ms; "fixed": exactly latency_ms.
    latency: Literal["uniform", "fixed"] = "uniform"
    seed: int | None = None  # makes probability rules and latency repeatable
    # False: the blob host (job logs, artifacts) ignores Range and sends every byte.
    blob_ranges: bool = True
    rules: list[FaultRule] = Field(default_factory=list)


class CommentExpectation(_Strict):
    pr: int
    count: int | None = Field(default=None, ge=0)
    contains: list[str] = Field(default_factory=list)
    not_contains: list[str] = Field(default_factory=list)
    max_bytes: int | None = Field(default=None, ge=1)  # each bot comment's body, as UTF-8


class IssueExpectation(_Strict):
    """An issue with this title (exactly one, unless `number` picks it); its state, text and
    the bot's comments on it."""

    title: str
    number: int | None = None
    state: Literal["open", "closed"] | None = None
    contains: list[str] = Field(default_factory=list)
    not_contains: list[str] = Field(default_factory=list)
    comments: int | None = Field(default=None, ge=0)  # the bot's comments on it
    assignees: list[str] | None = None  # exactly these logins, in any order


class CheckRunExpectation(_Strict):
    """The check runs the App created on a PR's head."""

    pr: int
    name: str = "flaky-triage"
    count: int | None = Field(default=None, ge=0)
    conclusion: str | None = None
    summary_contains: list[str] = Field(default_factory=list)
    annotations: int | None = Field(default=None, ge=0)  # on it in all
    levels: dict[Literal["notice", "warning", "failure"], int] = Field(default_factory=dict)
    min_requests: int | None = Field(default=None, ge=1)  # creates and updates it took


class Expect(_Strict):
    comments: list[CommentExpectation] = Field(default_factory=list)
    issues: list[IssueExpectation] = Field(default_factory=list)
    check_runs: list[CheckRunExpectation] = Field(default_factory=list)
    reruns: int | None = Field(default=None, ge=0)
    issues_created: int | None = Field(default=None, ge=0)
    verdicts: dict[str, str] = Field(default_factory=dict)


class Scenario(_Strict):
    name: str
    description: str = ""
    app: AppSpec = Field(default_factory=AppSpec)
    repo: RepoSpec
    pull_requests: list[PullRequestSpec] = Field(default_factory=list)
    checks: list[CheckSpec] = Field(default_factory=list)
    collaborators: dict[str, Permission] = Field(default_factory=dict)
    # The repository's files on its default branch and every commit but PR heads (bytes:
    # YAML's !!binary).
    files: dict[str, str | bytes] = Field(default_factory=dict)
    # Entries a recursive tree lists before GitHub truncates it (100,000 on GitHub; a
    # scenario lowers it to show a truncated tree without 100,000 files).
    tree_limit: int = Field(default=100_000, ge=1, le=100_000)
    # Other repositories' files, by `owner/name`: `GET /contents/{path}` serves them.
    repos: dict[str, OtherRepoSpec] = Field(default_factory=dict)
    issues: list[IssueSpec] = Field(default_factory=list)
    comments: list[CommentSpec] = Field(default_factory=list)
    events: list[Event] | None = None
    faults: Faults = Field(default_factory=Faults)
    expect: Expect = Field(default_factory=Expect)

    @model_validator(mode="after")
    def _consistent(self) -> Scenario:
        prs = {pr.number for pr in self.pull_requests}
        if len(prs) != len(self.pull_requests):
            raise ValueError("pull request numbers must be unique")
        issues = {issue.number for issue in self.issues}
        if len(issues) != len(self.issues) or issues & prs:
            raise ValueError("issue numbers must be unique and differ from pull request numbers")
        for name in self.repos:
            if name.count("/") != 1 or name.lower() == self.repo.full_name.lower():
                raise ValueError(f"repos: {name!r} is not another repository's owner/name")
        names = [check.name for check in self.checks]
        if len(set(names)) != len(names):
            raise ValueError("check names must be unique (events refer to checks by name)")
        for check in self.checks:
            if check.pr is not None and check.pr not in prs:
                raise ValueError(f"check {check.name!r} refers to unknown pull request {check.pr}")
            if check.head_sha is not None and check.branch is None:
                check.branch = self.repo.default_branch
        for comment in self.comments:
            if comment.issue not in prs | issues:
                raise ValueError(f"comment refers to unknown issue or pull request {comment.issue}")
        for event in self.events or []:
            if isinstance(event, CheckEvent) and event.check not in names:
                raise ValueError(f"event refers to unknown check {event.check!r}")
            if isinstance(event, CommentEvent) and event.comment.pr not in prs:
                raise ValueError(f"event comments on unknown pull request {event.comment.pr}")
        return self

    def planned_events(self) -> list[Event]:
        """The events to play: as written, or every check's first attempt in order."""
        if self.events is not None:
            return list(self.events)
        return [CheckEvent(check=check.name) for check in self.checks]

    def pull_request(self, number: int) -> PullRequestSpec | None:
        return next((pr for pr in self.pull_requests if pr.number == number), None)


def _parse(text: str, source: str, base: Traversable | Path) -> Scenario:
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{source}: not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise ScenarioError(f"{source}: a scenario is a mapping at the top level")
    try:
        scenario = Scenario.model_validate(raw)
    except ValidationError as exc:
        raise ScenarioError(f"{source}: {_describe(exc)}") from exc
    for check in scenario.checks:
        for index, attempt in enumerate(check.attempts):
            where = f"{source}: check {check.name!r} attempt {index + 1}"
            check.attempts[index] = _read_files(attempt, base, where)
    return scenario


def _read_files(attempt: Attempt, base: Traversable | Path, where: str) -> Attempt:
    """The attempt with its log_file and artifacts' files_from read in."""
    update: dict[str, object] = {}
    if attempt.log_file is not None:
        try:
            update["log"] = (base / attempt.log_file).read_text(encoding="utf-8")
        except OSError as exc:
            raise ScenarioError(
                f"{where}: cannot read log_file {attempt.log_file!r}: {exc}"
            ) from exc
        update["log_file"] = None
    if any(artifact.files_from for artifact in attempt.artifacts):
        artifacts = []
        for artifact in attempt.artifacts:
            files = dict(artifact.files)
            for inside, outside in artifact.files_from.items():
                try:
                    # Bytes, not text: reports keep their byte order mark and CRLF line ends.
                    files[inside] = (base / outside).read_bytes()
                except OSError as exc:
                    raise ScenarioError(
                        f"{where}: artifact {artifact.name!r}: cannot read {outside!r}: {exc}"
                    ) from exc
            artifacts.append(artifact.model_copy(update={"files": files, "files_from": {}}))
        update["artifacts"] = artifacts
    return attempt.model_copy(update=update) if update else attempt


def _describe(exc: ValidationError) -> str:
    lines = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "(top level)"
        message = "unknown key" if error["type"] == "extra_forbidden" else error["msg"]
        lines.append(f"{where}: {message}")
    return f"{len(lines)} problem(s): " + "; ".join(lines)


def load_scenario(path: Path) -> Scenario:
    """Read a scenario YAML file; log files are resolved relative to it."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read: {exc}") from exc
    return _parse(text, str(path), path.parent)


def builtin_scenario() -> Scenario:
    """The demo scenario shipped inside the package."""
    folder = resources.files("bot.sim") / "scenarios"
    return _parse((folder / "demo.yml").read_text(encoding="utf-8"), "builtin demo.yml", folder)
