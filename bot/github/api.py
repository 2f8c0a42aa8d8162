"""Typed helpers for the endpoints the bot calls."""

from __future__ import annotations

import base64
import json
import re
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple
from urllib.parse import quote

from gidgethub import BadRequest, GitHubException, InvalidField, QueryError
from gidgethub.abc import GitHubAPI
from pydantic import BaseModel

from bot.github.client import GitHubClient
from bot.github.errors import UNTIMED_LIMIT_SECONDS, RateLimited, rate_limited
from bot.shared import GITHUB_FILES_LIMIT, GitHubIssue, Source, Tree, TreeFile, Unreadable
from bot.shared import PullSummary as PullSummary


class ChangedFiles(BaseModel):
    paths: list[str]  # every path touched; a rename contributes both names
    entries: int  # how many file entries GitHub listed
    # The paths changed in place (status `modified`): the same path at the base and the
    # head, whose two versions can be compared.
    modified: list[str] = []

    def complete(self, changed_files: int) -> bool:
        """False when GitHub's 3,000-file limit hid some of the PR's `changed_files`."""
        return self.entries < GITHUB_FILES_LIMIT and self.entries >= changed_files


async def get_pull(gh: GitHubAPI, repo: str, number: int) -> PullSummary:
    return pull_from(await gh.getitem(f"/repos/{repo}/pulls/{number}"))


def pull_from(data: Mapping[str, Any]) -> PullSummary:
    """A pull as GitHub shows it, in the REST answer and in pull_request webhooks alike."""
    return PullSummary(
        number=data["number"],
        state=data["state"],
        author=data["user"]["login"],
        head_sha=data["head"]["sha"],
        base_sha=data["base"]["sha"],
        base_ref=data["base"]["ref"],
        changed_files=data.get("changed_files", 0),
        updated_at=epoch(data.get("updated_at")),
        comments=comments if isinstance(comments := data.get("comments"), int) else None,
    )


def epoch(stamp: object) -> float:
    """GitHub's ISO 8601 time in epoch seconds; 0 when absent or not a time."""
    if not isinstance(stamp, str):
        return 0.0
    try:
        return datetime.fromisoformat(stamp).timestamp()
    except ValueError:
        return 0.0


async def pulls_for_commit(gh: GitHubAPI, repo: str, sha: str) -> list[int]:
    """Open PRs whose head is `sha`: the fallback when a payload lists none (fork PRs)."""
    data = await gh.getitem(f"/repos/{repo}/commits/{sha}/pulls")
    return [
        int(pr["number"])
        for pr in data
        if pr.get("state") == "open" and pr.get("head", {}).get("sha") == sha
    ]


class WorkflowEvent(NamedTuple):
    """What started an Actions workflow run (`push`, `pull_request`, `merge_group`, ...), on
    which head branch, as GitHub records it."""

    event: str
    head_branch: str | None


async def workflow_event(gh: GitHubAPI, repo: str, run_id: int) -> WorkflowEvent | None:
    """The event of an Actions workflow run; None when GitHub knows no such run (404)."""
    try:
        data = await gh.getitem(f"/repos/{repo}/actions/runs/{run_id}")
    except BadRequest as exc:
        if exc.status_code == 404:
            return None
        raise
    return WorkflowEvent(str(data.get("event") or ""), data.get("head_branch"))


async def changed_files(gh: GitHubAPI, repo: str, number: int) -> ChangedFiles:
    """All paths a PR changes, as far as GitHub lists them."""
    paths: list[str] = []
    modified: list[str] = []
    seen = 0
    async for entry in gh.getiter(f"/repos/{repo}/pulls/{number}/files?per_page=100"):
        seen += 1
        paths.append(entry["filename"])
        if entry.get("previous_filename"):
            paths.append(entry["previous_filename"])
        if entry.get("status") == "modified":
            modified.append(entry["filename"])
    return ChangedFiles(paths=sorted(set(paths)), entries=seen, modified=sorted(set(modified)))


async def rerun_job(gh: GitHubAPI, repo: str, job_id: int) -> tuple[int, str]:
    """Ask Actions to rerun a job: (HTTP status, GitHub's message when refused)."""
    try:
        await gh.post(f"/repos/{repo}/actions/jobs/{job_id}/rerun", data={})
    except BadRequest as exc:
        if exc.status_code in (403, 404, 422):
            return int(exc.status_code), str(exc) or exc.status_code.phrase
        raise
    return 201, ""


async def get_file(gh: GitHubAPI, repo: str, path: str) -> str | None:
    """A file's text on the default branch, or None when it does not exist (a 404 is kept
    by an installation's client for MISSING_FILE_SECONDS; a file that exists is revalidated
    with its ETag, which costs no rate limit)."""
    url = f"/repos/{repo}/contents/{path}"
    missing = gh.missing_files if isinstance(gh, GitHubClient) else {}
    if url in missing:
        return None
    try:
        data = await gh.getitem(url)
    except BadRequest as exc:
        if exc.status_code == 404:
            missing[url] = True
            return None
        raise
    if not isinstance(data, dict) or data.get("type") != "file":
        return None
    return base64.b64decode(data.get("content", "")).decode("utf-8", errors="replace")


async def repo_private(gh: GitHubAPI, repo: str) -> bool | None:
    """Whether the repository is private or internal; None when the token cannot read it."""
    try:
        data = await gh.getitem(f"/repos/{repo}")
    except BadRequest as exc:
        if exc.status_code not in (403, 404) or rate_limited(exc):
            raise
        return None
    return bool(data.get("private", True)) or data.get("visibility", "public") != "public"


async def find_comment(
    gh: GitHubAPI, repo: str, number: int, marker: str, author: str
) -> dict[str, Any] | None:
    """The first comment on an issue or PR written by `author` that begins with `marker`.

    At the start only: the author's other comments may quote what people wrote."""
    async for comment in gh.getiter(f"/repos/{repo}/issues/{number}/comments?per_page=100"):
        if comment["user"]["login"] == author and (comment.get("body") or "").startswith(marker):
            return dict(comment)
    return None


async def create_comment(gh: GitHubAPI, repo: str, number: int, body: str) -> int:
    data = await gh.post(f"/repos/{repo}/issues/{number}/comments", data={"body": body})
    return int(data["id"])


async def edit_comment(gh: GitHubAPI, repo: str, comment_id: int, body: str) -> None:
    await gh.patch(f"/repos/{repo}/issues/comments/{comment_id}", data={"body": body})


class Artifact(BaseModel):
    id: int
    name: str
    size_in_bytes: int
    expired: bool


# Reporters annotate a handful of failures; past this the rest are noise.
ANNOTATIONS_LIMIT = 500


async def check_annotations(
    gh: GitHubAPI, repo: str, check_run_id: int, limit: int | None = ANNOTATIONS_LIMIT
) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    async for note in gh.getiter(
        f"/repos/{repo}/check-runs/{check_run_id}/annotations?per_page=100"
    ):
        found.append(dict(note))
        if limit is not None and len(found) >= limit:
            break
    return found


async def run_artifacts(gh: GitHubAPI, repo: str, run_id: int) -> list[Artifact]:
    """The run's artifacts, newest first (a rerun's artifacts join its run)."""
    found: list[Artifact] = []
    async for item in gh.getiter(
        f"/repos/{repo}/actions/runs/{run_id}/artifacts?per_page=100", iterable_key="artifacts"
    ):
        found.append(
            Artifact(
                id=item["id"],
                name=item["name"],
                size_in_bytes=item.get("size_in_bytes") or 0,
                expired=bool(item.get("expired")),
            )
        )
    return sorted(found, key=lambda a: a.id, reverse=True)


def issue_from(data: Mapping[str, Any]) -> GitHubIssue:
    """An issue as GitHub shows it, in the REST answers that get, list and create issues."""
    state = str(data.get("state") or "open")
    body, reason = data.get("body"), data.get("state_reason")
    return GitHubIssue(
        number=int(data["number"]),
        title=str(data.get("title") or ""),
        body=body if isinstance(body, str) else None,
        state=state,
        state_reason=reason if isinstance(reason, str) else None,
        locked=bool(data.get("locked")),
        labels=frozenset(_label_names(data.get("labels"))),
        created_at=epoch(data.get("created_at")),
        closed_at=epoch(data.get("closed_at")) if state == "closed" else None,
        is_pull_request="pull_request" in data,
    )


def _label_names(labels: object) -> list[str]:
    """Names of an issue's labels: objects in REST answers, plain names in some payloads."""
    if not isinstance(labels, list):
        return []
    return [str(label.get("name")) if isinstance(label, dict) else str(label) for label in labels]


async def get_issue(gh: GitHubAPI, repo: str, number: int) -> GitHubIssue | None:
    """An issue (or PR) as GitHub shows it; None when it is gone (deleted, transferred)."""
    try:
        data = await gh.getitem(f"/repos/{repo}/issues/{number}")
    except BadRequest as exc:
        if exc.status_code in (404, 410):
            return None
        raise
    return issue_from(data)


async def labelled_issues(gh: GitHubAPI, repo: str, label: str) -> AsyncIterator[GitHubIssue]:
    """Every issue with the label, open or closed, newest first (pull requests left out)."""
    async for issue in gh.getiter(
        f"/repos/{repo}/issues?labels={quote(label, safe='')}&state=all&per_page=100"
    ):
        if "pull_request" not in issue:
            yield issue_from(issue)


class Created(NamedTuple):
    issue: GitHubIssue
    refused: list[str]  # assignees GitHub would not assign, left out


async def create_issue(
    gh: GitHubAPI,
    repo: str,
    title: str,
    body: str,
    labels: list[str],
    assignees: Sequence[str] = (),
) -> Created:
    """Open an issue. GitHub refuses the whole issue (422) when one assignee may not be
    assigned (no access to the repository, no such user), naming them: it is asked again
    without them, and then without any, so an owner who left never stops the issue."""
    wanted = list(assignees)
    for attempt in range(3):
        fields: dict[str, Any] = {"title": title, "body": body, "labels": labels}
        if wanted:
            fields["assignees"] = wanted
        try:
            data = await gh.post(f"/repos/{repo}/issues", data=fields)
        except InvalidField as exc:
            named = _refused_assignees(exc)
            if not wanted or named is None:
                raise
            # The first refusal drops whom it names; a second, everyone.
            wanted = [login for login in wanted if login not in named] if attempt == 0 else []
            continue
        return Created(issue_from(data), [login for login in assignees if login not in wanted])
    raise AssertionError("unreachable: the third try asks for no assignee")


def _refused_assignees(exc: InvalidField) -> set[str] | None:
    """The assignees a 422 refuses (empty: some, unnamed); None when it is about another
    field."""
    errors = exc.errors if isinstance(exc.errors, list) else []
    about = [e for e in errors if isinstance(e, Mapping) and e.get("field") == "assignees"]
    if not about:
        return None
    named: set[str] = set()
    for error in about:
        value = error.get("value")
        values = value if isinstance(value, list) else [value] if isinstance(value, str) else []
        named.update(str(v) for v in values)
    return named


async def update_issue(gh: GitHubAPI, repo: str, number: int, **fields: Any) -> None:
    """Change an issue's title, body or state (`state_reason` too) and nothing else."""
    await gh.patch(f"/repos/{repo}/issues/{number}", data=fields)


async def add_labels(gh: GitHubAPI, repo: str, number: int, labels: list[str]) -> None:
    await gh.post(f"/repos/{repo}/issues/{number}/labels", data={"labels": labels})


async def ensure_label(gh: GitHubAPI, repo: str, name: str, color: str, description: str) -> None:
    """Create the label when the repository lacks it; an existing one is left as people set it."""
    try:
        await gh.getitem(f"/repos/{repo}/labels/{quote(name, safe='')}")
        return
    except BadRequest as exc:
        if exc.status_code != 404:
            raise
    try:
        await gh.post(
            f"/repos/{repo}/labels",
            data={"name": name, "color": color, "description": description},
        )
    except BadRequest as exc:
        # Created meanwhile by someone else: what we wanted.
        if exc.status_code != 422:
            raise


# Who may give `/flaky` commands besides the PR's author. `permission` is the legacy
# summary (maintain shows as write); `role_name` names the role, custom roles included.
WRITE_ROLES = frozenset({"admin", "maintain", "write"})


async def can_write(gh: GitHubAPI, repo: str, login: str) -> bool:
    """Whether `login` has write, maintain or admin access to the repository."""
    try:
        data = await gh.getitem(f"/repos/{repo}/collaborators/{quote(login, safe='')}/permission")
    except BadRequest as exc:
        if exc.status_code == 404:  # not a user GitHub knows
            return False
        raise
    return data.get("role_name") in WRITE_ROLES or data.get("permission") in WRITE_ROLES


async def add_reaction(gh: GitHubAPI, repo: str, comment_id: int, content: str) -> None:
    """React to an issue or PR comment ("eyes", "rocket", "confused", ...); idempotent."""
    await gh.post(
        f"/repos/{repo}/issues/comments/{comment_id}/reactions", data={"content": content}
    )


async def check_runs_of(gh: GitHubAPI, repo: str, sha: str) -> list[dict[str, Any]]:
    """The latest attempt of every check run on a commit."""
    return [
        dict(run)
        async for run in gh.getiter(
            f"/repos/{repo}/commits/{sha}/check-runs?filter=latest&per_page=100",
            iterable_key="check_runs",
        )
    ]


async def commit_tree(gh: GitHubAPI, repo: str, sha: str) -> Tree | None:
    """Every file of a commit, with its blob SHA and size, in one call; `truncated` when
    GitHub cut the list (over 100,000 entries or 7 MB). None when GitHub has no such tree."""
    try:
        data = await gh.getitem(f"/repos/{repo}/git/trees/{sha}?recursive=1")
    except BadRequest as exc:
        if exc.status_code in (404, 409, 422):  # unknown commit, empty repository
            return None
        raise
    files = {
        entry["path"]: TreeFile(sha=entry["sha"], size=int(entry.get("size") or 0))
        for entry in data.get("tree", [])
        if entry.get("type") == "blob"
    }
    return Tree(files=files, truncated=bool(data.get("truncated")))


def graphql_url(api_url: str) -> str:
    """GitHub's GraphQL endpoint beside a REST API URL: api.github.com/graphql, or
    /api/graphql on GitHub Enterprise Server (whose REST API is /api/v3)."""
    base = api_url.rstrip("/")
    if base.endswith("/api/v3"):
        return base.removesuffix("/v3") + "/graphql"
    return base + "/graphql"


_OID = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_AT_COMMIT = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64}):[^\x00-\x1f]+$")
_BLOB_FIELDS = "... on Blob { text isBinary isTruncated byteSize }"


async def read_blobs(gh: GitHubAPI, repo: str, shas: Sequence[str]) -> dict[str, Source] | None:
    """The text of many blobs in one GraphQL query (one alias per blob), by SHA, or by
    `commit:path` (`at_commit`: a file at another commit than the walk's, whose blob SHA no
    tree read has given).

    One query instead of one REST call per file: the calls a triage spends grow with the
    rounds of the walk, not with the number of files. A blob GitHub answers without text
    (binary, or cut at its size limit), or that it cannot find, comes back Unreadable;
    None when GitHub refuses the query. A fault (5xx, rate limit, network) raises: what it
    cut must be read again later, never taken for an answer."""
    wanted = [sha for sha in dict.fromkeys(shas) if _OID.match(sha) or _AT_COMMIT.match(sha)]
    if not wanted:
        return {}
    owner, _, name = repo.partition("/")
    aliases = "\n".join(
        f"b{index}: object({_object_key(sha)}) {{ {_BLOB_FIELDS} }}"
        for index, sha in enumerate(wanted)
    )
    query = (
        "query($owner: String!, $name: String!) {\n"
        f"  repository(owner: $owner, name: $name) {{\n{aliases}\n  }}\n}}"
    )
    endpoint = graphql_url(gh.base_url)
    try:
        data = await gh.graphql(query, endpoint=endpoint, owner=owner, name=name)
    except QueryError as exc:
        if any(e.get("type") == "RATE_LIMITED" for e in exc.response.get("errors") or []):
            raise RateLimited(str(exc), time.time() + UNTIMED_LIMIT_SECONDS) from exc
        return None
    except GitHubException:
        return None
    found = (data or {}).get("repository") or {}
    return {sha: _blob_source(found.get(f"b{index}")) for index, sha in enumerate(wanted)}


def at_commit(sha: str, path: str) -> str:
    """How `read_blobs` names the blob of `path` at commit `sha`."""
    return f"{sha}:{path}"


def _object_key(name: str) -> str:
    # json.dumps writes a string GraphQL reads the same way (its escapes are GraphQL's).
    return f'oid: "{name}"' if _OID.match(name) else f"expression: {json.dumps(name)}"


# A blob GitHub could not find may yet appear (a replica behind): never kept for good.
BLOB_NOT_FOUND = "not found"


def _blob_source(blob: object) -> Source:
    if not isinstance(blob, dict):
        return Unreadable(BLOB_NOT_FOUND)
    if blob.get("isBinary"):
        return Unreadable("binary")
    if blob.get("isTruncated"):
        return Unreadable(f"cut by GitHub at {blob.get('byteSize', 0):,} bytes")
    text = blob.get("text")
    return text if isinstance(text, str) else Unreadable("not text")


# --- check runs the App writes (the Checks tab) -------------------------------------------


async def find_check_run(gh: GitHubAPI, repo: str, sha: str, name: str, app_id: int) -> int | None:
    """The id of the check run named `name` that the App created on a commit, if any."""
    async for run in gh.getiter(
        f"/repos/{repo}/commits/{sha}/check-runs?check_name={quote(name)}&app_id={app_id}"
        "&filter=latest&per_page=100",
        iterable_key="check_runs",
    ):
        if int((run.get("app") or {}).get("id") or 0) == app_id:
            return int(run["id"])
    return None


async def create_check_run(gh: GitHubAPI, repo: str, fields: Mapping[str, Any]) -> int:
    data = await gh.post(f"/repos/{repo}/check-runs", data=dict(fields))
    return int(data["id"])


async def update_check_run(
    gh: GitHubAPI, repo: str, check_run_id: int, fields: Mapping[str, Any]
) -> None:
    await gh.patch(f"/repos/{repo}/check-runs/{check_run_id}", data=dict(fields))
