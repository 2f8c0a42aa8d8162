"""JSON shapes of GitHub objects (users, repositories, pulls, issues, checks, jobs, artifacts) as
the API and webhooks return them, built from the simulator's state."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from bot.sim.app_checks import AppCheckRun
from bot.sim.scenario import OtherRepoSpec
from bot.sim.state import Artifact, CheckRun, Comment, Issue, Label, Reaction, SimPullRequest, World

Json = dict[str, Any]
HTML = "https://github.com"
ACTIONS_APP_ID = 15368


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def node_id(kind: str, number: int) -> str:
    return base64.b64encode(f"0:{kind}{number}".encode()).decode().rstrip("=")


def git_sha(text: str) -> str:
    return hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()


@dataclass(frozen=True)
class Shapes:
    """Builds objects with URLs that point at the simulator (API) and at github.com (HTML)."""

    world: World
    api: str

    @property
    def repo_api(self) -> str:
        return f"{self.api}/repos/{self.world.repo.full_name}"

    @property
    def repo_html(self) -> str:
        return f"{HTML}/{self.world.repo.full_name}"

    def user(self, login: str) -> Json:
        is_bot = login.endswith("[bot]")
        url = f"{self.api}/users/{login}"
        return {
            "login": login,
            "id": self.world.user_id(login),
            "node_id": node_id("User", self.world.user_id(login)),
            "avatar_url": f"https://avatars.githubusercontent.com/u/{self.world.user_id(login)}?v=4",
            "gravatar_id": "",
            "url": url,
            "html_url": f"{HTML}/{login}" if not is_bot else f"{HTML}/apps/{login[:-5]}",
            "followers_url": f"{url}/followers",
            "following_url": f"{url}/following{{/other_user}}",
            "gists_url": f"{url}/gists{{/gist_id}}",
            "starred_url": f"{url}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{url}/subscriptions",
            "organizations_url": f"{url}/orgs",
            "repos_url": f"{url}/repos",
            "events_url": f"{url}/events{{/privacy}}",
            "received_events_url": f"{url}/received_events",
            "type": "Bot" if is_bot else self.world.user_type(login),
            "site_admin": False,
            "user_view_type": "public",
        }

    def repository(self, owner: str | None = None, *, fork: bool = False) -> Json:
        spec = self.world.repo
        owner = owner or spec.owner
        full = f"{owner}/{spec.name}"
        url = f"{self.api}/repos/{full}"
        html = f"{HTML}/{full}"
        created = iso(self.world.epoch)
        templated = {
            "archive_url": "/{archive_format}{/ref}",
            "assignees_url": "/assignees{/user}",
            "blobs_url": "/git/blobs{/sha}",
            "branches_url": "/branches{/branch}",
            "collaborators_url": "/collaborators{/collaborator}",
            "comments_url": "/comments{/number}",
            "commits_url": "/commits{/sha}",
            "compare_url": "/compare/{base}...{head}",
            "contents_url": "/contents/{+path}",
            "contributors_url": "/contributors",
            "deployments_url": "/deployments",
            "downloads_url": "/downloads",
            "events_url": "/events",
            "forks_url": "/forks",
            "git_commits_url": "/git/commits{/sha}",
            "git_refs_url": "/git/refs{/sha}",
            "git_tags_url": "/git/tags{/sha}",
            "hooks_url": "/hooks",
            "issue_comment_url": "/issues/comments{/number}",
            "issue_events_url": "/issues/events{/number}",
            "issues_url": "/issues{/number}",
            "keys_url": "/keys{/key_id}",
            "labels_url": "/labels{/name}",
            "languages_url": "/languages",
            "merges_url": "/merges",
            "milestones_url": "/milestones{/number}",
            "notifications_url": "/notifications{?since,all,participating}",
            "pulls_url": "/pulls{/number}",
            "releases_url": "/releases{/id}",
            "stargazers_url": "/stargazers",
            "statuses_url": "/statuses/{sha}",
            "subscribers_url": "/subscribers",
            "subscription_url": "/subscription",
            "tags_url": "/tags",
            "teams_url": "/teams",
            "trees_url": "/git/trees{/sha}",
        }
        open_issues = sum(1 for issue in self.world.issues.values() if issue.state == "open")
        return {
            "id": self.world.repo_id(owner),
            "node_id": node_id("Repository", self.world.repo_id(owner)),
            "name": spec.name,
            "full_name": full,
            "private": spec.private,
            "owner": self.user(owner),
            "html_url": html,
            "description": None,
            "fork": fork,
            "url": url,
            **{key: url + suffix for key, suffix in templated.items()},
            "created_at": created,
            "updated_at": created,
            "pushed_at": created,
            "git_url": f"git://github.com/{full}.git",
            "ssh_url": f"git@github.com:{full}.git",
            "clone_url": f"{html}.git",
            "svn_url": html,
            "homepage": None,
            "size": 128,
            "stargazers_count": 0,
            "watchers_count": 0,
            "language": "Python",
            "has_issues": True,
            "has_projects": True,
            "has_downloads": True,
            "has_wiki": True,
            "has_pages": False,
            "has_discussions": False,
            "forks_count": 0,
            "mirror_url": None,
            "archived": False,
            "disabled": False,
            "open_issues_count": open_issues,
            "license": None,
            "allow_forking": True,
            "is_template": False,
            "topics": [],
            "visibility": "private" if spec.private else "public",
            "forks": 0,
            "open_issues": open_issues,
            "watchers": 0,
            "default_branch": spec.default_branch,
        }

    def other_repository(self, full_name: str, spec: OtherRepoSpec) -> Json:
        """Another repository of the scenario (`repos:`), shaped as the world's, with its own
        name, visibility and default branch."""
        mine = self.world.repo.full_name
        data = {
            key: value.replace(f"/{mine}", f"/{full_name}") if isinstance(value, str) else value
            for key, value in self.repository().items()
        }
        owner, name = full_name.split("/", 1)
        data |= {
            "id": self.world.repo_id(full_name.lower()),
            "node_id": node_id("Repository", self.world.repo_id(full_name.lower())),
            "name": name,
            "full_name": full_name,
            "owner": self.user(owner),
            "private": spec.private,
            "visibility": "private" if spec.private else "public",
            "default_branch": spec.default_branch,
        }
        return data

    def app(self, slug: str) -> Json:
        """An App (integration) object: ours, GitHub Actions, or another CI's."""
        created = iso(self.world.epoch)
        if slug == "github-actions":
            app_id, name, owner = ACTIONS_APP_ID, "GitHub Actions", "github"
        elif slug == self.world.app.slug:
            app_id, name, owner = self.world.app.id, slug, self.world.repo.owner
        else:
            app_id, name, owner = self.world.other_app_id(slug), slug, slug
        return {
            "id": app_id,
            "slug": slug,
            "node_id": node_id("App", app_id),
            "client_id": f"Iv1.{git_sha(slug)[:16]}",
            "owner": self.user(owner),
            "name": name,
            "description": "",
            "external_url": f"{HTML}/apps/{slug}",
            "html_url": f"{HTML}/apps/{slug}",
            "created_at": created,
            "updated_at": created,
            "permissions": {
                "actions": "write",
                "checks": self.world.app.checks if slug == self.world.app.slug else "write",
                "contents": "read",
                "issues": "write",
                "metadata": "read",
                "pull_requests": "write",
            },
            "events": ["check_run", "issue_comment", "pull_request"],
        }

    def _branch(self, pr: SimPullRequest, *, head: bool) -> Json:
        owner = pr.spec.author if head and pr.spec.fork else self.world.repo.owner
        ref = pr.spec.head_ref if head else pr.base_ref
        return {
            "label": f"{owner}:{ref}",
            "ref": ref,
            "sha": pr.spec.head_sha if head else pr.spec.base_sha,
            "user": self.user(owner),
            "repo": self.repository(owner, fork=head and pr.spec.fork),
        }

    def pull_request_simple(self, pr: SimPullRequest) -> Json:
        number = pr.spec.number
        url = f"{self.repo_api}/pulls/{number}"
        html = f"{self.repo_html}/pull/{number}"
        issue_url = f"{self.repo_api}/issues/{number}"
        issue = self.world.issues[number]
        return {
            "url": url,
            "id": pr.id,
            "node_id": node_id("PullRequest", pr.id),
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "issue_url": issue_url,
            "commits_url": f"{url}/commits",
            "review_comments_url": f"{url}/comments",
            "review_comment_url": f"{self.repo_api}/pulls/comments{{/number}}",
            "comments_url": f"{issue_url}/comments",
            "statuses_url": f"{self.repo_api}/statuses/{pr.spec.head_sha}",
            "number": number,
            "state": issue.state,
            "locked": False,
            "title": issue.title,
            "user": self.user(pr.spec.author),
            "body": issue.body or None,
            "labels": [self.label(self.world.labels[name]) for name in issue.labels],
            "milestone": None,
            "active_lock_reason": None,
            "created_at": iso(issue.created_at),
            "updated_at": iso(issue.updated_at),
            "closed_at": iso(issue.closed_at) if issue.closed_at else None,
            "merged_at": None,
            "merge_commit_sha": None,
            "assignee": None,
            "assignees": [],
            "requested_reviewers": [],
            "requested_teams": [],
            "head": self._branch(pr, head=True),
            "base": self._branch(pr, head=False),
            "_links": {
                "self": {"href": url},
                "html": {"href": html},
                "issue": {"href": issue_url},
                "comments": {"href": f"{issue_url}/comments"},
                "review_comments": {"href": f"{url}/comments"},
                "review_comment": {"href": f"{self.repo_api}/pulls/comments{{/number}}"},
                "commits": {"href": f"{url}/commits"},
                "statuses": {"href": f"{self.repo_api}/statuses/{pr.spec.head_sha}"},
            },
            "author_association": self.world.association(pr.spec.author),
            "auto_merge": None,
            "draft": False,
        }

    def pull_request(self, pr: SimPullRequest) -> Json:
        files = pr.spec.files
        return {
            **self.pull_request_simple(pr),
            "merged": False,
            "mergeable": True,
            "rebaseable": True,
            "mergeable_state": "clean",
            "merged_by": None,
            "comments": len(self.world.comments_on(pr.spec.number)),
            "review_comments": 0,
            "maintainer_can_modify": pr.spec.fork,
            "commits": 1,
            "additions": 10 * len(files),
            "deletions": 2 * len(files),
            "changed_files": len(files),
        }

    def diff_entry(self, pr: SimPullRequest, index: int) -> Json:
        changed = pr.spec.files[index]
        sha = pr.spec.head_sha
        blob_sha = git_sha(f"{sha}:{changed.filename}")
        entry: Json = {
            "sha": blob_sha,
            "filename": changed.filename,
            "status": changed.status,
            "additions": 10,
            "deletions": 2,
            "changes": 12,
            "blob_url": f"{self.repo_html}/blob/{sha}/{changed.filename}",
            "raw_url": f"{self.repo_html}/raw/{sha}/{changed.filename}",
            "contents_url": f"{self.repo_api}/contents/{changed.filename}?ref={sha}",
            "patch": "@@ -1,2 +1,10 @@",
        }
        if changed.previous_filename is not None:
            entry["previous_filename"] = changed.previous_filename
        return entry

    def label(self, label: Label) -> Json:
        return {
            "id": label.id,
            "node_id": node_id("Label", label.id),
            "url": f"{self.repo_api}/labels/{quote(label.name, safe='')}",
            "name": label.name,
            "color": label.color,
            "default": False,
            "description": label.description,
        }

    def reactions_rollup(self, url: str, reactions: list[Reaction]) -> Json:
        counts = {content: 0 for content in ("+1", "-1", "laugh", "confused", "heart", "hooray")}
        counts.update({"rocket": 0, "eyes": 0})
        for reaction in reactions:
            counts[reaction.content] += 1
        return {"url": f"{url}/reactions", "total_count": len(reactions), **counts}

    def issue(self, issue: Issue) -> Json:
        url = f"{self.repo_api}/issues/{issue.number}"
        html_kind = "pull" if issue.is_pull_request else "issues"
        body: Json = {
            "url": url,
            "repository_url": self.repo_api,
            "labels_url": f"{url}/labels{{/name}}",
            "comments_url": f"{url}/comments",
            "events_url": f"{url}/events",
            "html_url": f"{self.repo_html}/{html_kind}/{issue.number}",
            "id": issue.id,
            "node_id": node_id("Issue", issue.id),
            "number": issue.number,
            "title": issue.title,
            "user": self.user(issue.user),
            "labels": [self.label(self.world.labels[name]) for name in issue.labels],
            "state": issue.state,
            "locked": issue.locked,
            "assignee": self.user(issue.assignees[0]) if issue.assignees else None,
            "assignees": [self.user(login) for login in issue.assignees],
            "milestone": None,
            "comments": len(self.world.comments_on(issue.number)),
            "created_at": iso(issue.created_at),
            "updated_at": iso(issue.updated_at),
            "closed_at": iso(issue.closed_at) if issue.closed_at else None,
            "author_association": self.world.association(issue.user),
            "active_lock_reason": "resolved" if issue.locked else None,
            "body": issue.body or None,
            "reactions": self.reactions_rollup(url, []),
            "timeline_url": f"{url}/timeline",
            "performed_via_github_app": None,
        }
        if issue.state_reason is not None:
            # GitHub sends null here, but its OpenAPI enum does not allow null: leave it out.
            body["state_reason"] = issue.state_reason
        if issue.is_pull_request:
            pulls = f"{self.repo_api}/pulls/{issue.number}"
            body["pull_request"] = {
                "url": pulls,
                "html_url": f"{self.repo_html}/pull/{issue.number}",
                "diff_url": f"{self.repo_html}/pull/{issue.number}.diff",
                "patch_url": f"{self.repo_html}/pull/{issue.number}.patch",
                "merged_at": None,
            }
        return body

    def comment(self, comment: Comment) -> Json:
        url = f"{self.repo_api}/issues/comments/{comment.id}"
        issue = self.world.issues[comment.issue]
        html_kind = "pull" if issue.is_pull_request else "issues"
        by_us = comment.user == self.world.bot_login
        return {
            "url": url,
            "html_url": f"{self.repo_html}/{html_kind}/{comment.issue}#issuecomment-{comment.id}",
            "issue_url": f"{self.repo_api}/issues/{comment.issue}",
            "id": comment.id,
            "node_id": node_id("IssueComment", comment.id),
            "user": self.user(comment.user),
            "created_at": iso(comment.created_at),
            "updated_at": iso(comment.updated_at),
            "author_association": "NONE" if by_us else self.world.association(comment.user),
            "body": comment.body,
            "reactions": self.reactions_rollup(url, self.world.reactions_on(comment.id)),
            "performed_via_github_app": self.app(self.world.app.slug) if by_us else None,
        }

    def reaction(self, reaction: Reaction) -> Json:
        return {
            "id": reaction.id,
            "node_id": node_id("Reaction", reaction.id),
            "user": self.user(reaction.user),
            "content": reaction.content,
            "created_at": iso(reaction.created_at),
        }

    def _job_html(self, run: CheckRun) -> str:
        return f"{self.repo_html}/actions/runs/{run.run_id}/job/{run.id}"

    def check_suite_brief(self, run: CheckRun) -> Json:
        pr = self.world.pulls[run.check.pr] if run.check.pr is not None else None
        return {
            "id": run.suite_id,
            "node_id": node_id("CheckSuite", run.suite_id),
            "head_branch": self.world.check_branch(run.check),
            "head_sha": run.head_sha,
            "status": run.status,
            "conclusion": run.conclusion,
            "url": f"{self.repo_api}/check-suites/{run.suite_id}",
            "before": pr.spec.base_sha if pr is not None else None,
            "after": run.head_sha,
            "pull_requests": self.check_pulls(run),
            "app": self.app(run.check.app),
            "created_at": iso(run.started_at),
            "updated_at": iso(run.completed_at or run.started_at),
        }

    def check_pulls(self, run: CheckRun) -> list[Json]:
        """The minimal PR list GitHub attaches to check runs: empty for fork pull requests
        and for runs outside any pull request."""
        if run.check.pr is None:
            return []
        return self._check_pulls(self.world.pulls[run.check.pr])

    def pulls_headed_by(self, sha: str) -> list[Json]:
        """The PR list of a check run on `sha` that the App created: the PRs it heads."""
        pulls = [pr for pr in self.world.pulls.values() if pr.spec.head_sha == sha]
        return [entry for pr in pulls for entry in self._check_pulls(pr)]

    def _check_pulls(self, pr: SimPullRequest) -> list[Json]:
        if pr.spec.fork:
            return []

        def ref(head: bool) -> Json:
            return {
                "ref": pr.spec.head_ref if head else pr.base_ref,
                "sha": pr.spec.head_sha if head else pr.spec.base_sha,
                "repo": {
                    "id": self.world.repo_id(self.world.repo.owner),
                    "url": self.repo_api,
                    "name": self.world.repo.name,
                },
            }

        return [
            {
                "url": f"{self.repo_api}/pulls/{pr.spec.number}",
                "id": pr.id,
                "number": pr.spec.number,
                "head": ref(True),
                "base": ref(False),
            }
        ]

    def check_run(self, run: CheckRun) -> Json:
        url = f"{self.repo_api}/check-runs/{run.id}"
        html = self._job_html(run) if run.check.is_actions else f"{self.repo_html}/runs/{run.id}"
        return {
            "id": run.id,
            "name": run.check.shown_name,
            "node_id": node_id("CheckRun", run.id),
            "head_sha": run.head_sha,
            "external_id": str(run.id) if run.check.is_actions else "",
            "url": url,
            "html_url": html,
            "details_url": html,
            "status": run.status,
            "conclusion": run.conclusion,
            "started_at": iso(run.started_at),
            "completed_at": iso(run.completed_at) if run.completed_at else None,
            "output": {
                "title": None if run.conclusion == "success" else f"{run.check.shown_name} failed",
                "summary": None,
                "text": None,
                "annotations_count": len(run.attempt.annotations),
                "annotations_url": f"{url}/annotations",
            },
            "check_suite": {"id": run.suite_id},
            "app": self.app(run.check.app),
            "pull_requests": self.check_pulls(run),
        }

    def annotation(self, run: CheckRun, index: int) -> Json:
        note = run.attempt.annotations[index]
        return {
            "path": note.path,
            "blob_href": f"{self.repo_html}/blob/{run.head_sha}/{note.path}",
            "start_line": note.start_line,
            "end_line": note.end_line,
            "start_column": None,
            "end_column": None,
            "annotation_level": note.annotation_level,
            "title": note.title,
            "message": note.message,
            "raw_details": None,
        }

    def app_check_run(self, run: AppCheckRun) -> Json:
        """The run as `GET /check-runs/{id}` shows it (and the create and update answer)."""
        url = f"{self.repo_api}/check-runs/{run.id}"
        html = f"{self.repo_html}/runs/{run.id}"
        return {
            "id": run.id,
            "name": run.name,
            "node_id": node_id("CheckRun", run.id),
            "head_sha": run.head_sha,
            "external_id": run.external_id or "",
            "url": url,
            "html_url": html,
            # Without one GitHub shows the App's page.
            "details_url": run.details_url or self.app(self.world.app.slug)["external_url"],
            "status": run.status,
            "conclusion": run.conclusion,
            "started_at": iso(run.started_at),
            "completed_at": iso(run.completed_at) if run.completed_at else None,
            "output": {
                "title": run.title,
                "summary": run.summary,
                "text": run.text,
                "annotations_count": len(run.annotations),
                "annotations_url": f"{url}/annotations",
            },
            "check_suite": {"id": run.suite_id},
            "app": self.app(self.world.app.slug),
            "pull_requests": self.pulls_headed_by(run.head_sha),
        }

    def app_annotation(self, run: AppCheckRun, note: Json) -> Json:
        return {
            "path": note["path"],
            "blob_href": f"{self.repo_html}/blob/{run.head_sha}/{note['path']}",
            "start_line": note["start_line"],
            "end_line": note["end_line"],
            "start_column": note.get("start_column"),
            "end_column": note.get("end_column"),
            "annotation_level": note["annotation_level"],
            "title": note.get("title"),
            "message": note["message"],
            "raw_details": note.get("raw_details"),
        }

    def job(self, run: CheckRun) -> Json:
        steps_done = run.completed_at is not None
        return {
            "id": run.id,
            "run_id": run.run_id,
            "workflow_name": run.check.workflow or "CI",
            "head_branch": self._run_branch(run),
            "run_url": f"{self.repo_api}/actions/runs/{run.run_id}",
            "run_attempt": run.run_attempt,
            "node_id": node_id("CheckRun", run.id),
            "head_sha": run.head_sha,
            "url": f"{self.repo_api}/actions/jobs/{run.id}",
            "html_url": self._job_html(run),
            "status": run.status,
            "conclusion": run.conclusion,
            "created_at": iso(run.started_at),
            "started_at": iso(run.started_at),
            "completed_at": iso(run.completed_at) if run.completed_at else None,
            "name": run.check.shown_name,
            "steps": [
                {
                    "name": "Run pytest",
                    "status": run.status,
                    "conclusion": run.conclusion,
                    "number": 1,
                    "started_at": iso(run.started_at),
                    "completed_at": iso(run.completed_at)
                    if steps_done and run.completed_at
                    else None,
                }
            ],
            "check_run_url": f"{self.repo_api}/check-runs/{run.id}",
            "labels": list(run.attempt.labels),
            "runner_id": 1,
            "runner_name": run.attempt.runner_name,
            "runner_group_id": 1,
            "runner_group_name": "GitHub Actions",
        }

    def workflow_run(self, run: CheckRun) -> Json:
        """The Actions workflow run a job belongs to, with the event that started it."""
        url = f"{self.repo_api}/actions/runs/{run.run_id}"
        return {
            "id": run.run_id,
            "node_id": node_id("WorkflowRun", run.run_id),
            "name": "CI",
            "head_branch": self._run_branch(run),
            "head_sha": run.head_sha,
            "path": ".github/workflows/ci.yml",
            "display_title": run.check.shown_name,
            "run_number": run.run_id,
            "run_attempt": run.run_attempt,
            "event": run.check.workflow_event,
            "status": run.status,
            "conclusion": run.conclusion,
            "workflow_id": 1,
            "check_suite_id": run.suite_id,
            "url": url,
            "html_url": f"{self.repo_html}/actions/runs/{run.run_id}",
            "pull_requests": self.check_pulls(run),
            "created_at": iso(run.started_at),
            "updated_at": iso(run.completed_at or run.started_at),
            "jobs_url": f"{url}/jobs",
            "logs_url": f"{url}/logs",
            "check_suite_url": f"{self.repo_api}/check-suites/{run.suite_id}",
            "artifacts_url": f"{url}/artifacts",
            "cancel_url": f"{url}/cancel",
            "rerun_url": f"{url}/rerun",
            "workflow_url": f"{self.repo_api}/actions/workflows/1",
            "head_commit": None,
            "repository": self.repository(),
            "head_repository": self.repository(),
        }

    def artifact(self, artifact: Artifact) -> Json:
        run = artifact.run
        pr = self.world.pulls[run.check.pr] if run.check.pr is not None else None
        head_owner = pr.spec.author if pr is not None and pr.spec.fork else self.world.repo.owner
        url = f"{self.repo_api}/actions/artifacts/{artifact.id}"
        return {
            "id": artifact.id,
            "node_id": node_id("Artifact", artifact.id),
            "name": artifact.name,
            "size_in_bytes": len(artifact.data),
            "url": url,
            "archive_download_url": f"{url}/zip",
            "expired": artifact.expired,
            "created_at": iso(artifact.created_at),
            "updated_at": iso(artifact.created_at),
            "expires_at": iso(artifact.expires_at),
            "digest": "sha256:" + hashlib.sha256(artifact.data).hexdigest(),
            "workflow_run": {
                "id": run.run_id,
                "repository_id": self.world.repo_id(self.world.repo.owner),
                "head_repository_id": self.world.repo_id(head_owner),
                "head_branch": self._run_branch(run),
                "head_sha": run.head_sha,
            },
        }

    def _run_branch(self, run: CheckRun) -> str:
        """The head branch a job or workflow run names (a fork's own branch, for fork PRs)."""
        if run.check.pr is None:
            return run.check.branch or self.world.repo.default_branch
        return self.world.pulls[run.check.pr].spec.head_ref

    def content_file(self, path: str, data: str | bytes, ref: str, repo: str = "") -> Json:
        """`repo`: another repository's file (owner/name); default, the world's."""
        raw = data if isinstance(data, bytes) else data.encode()
        sha = hashlib.sha1(b"blob %d\0" % len(raw) + raw, usedforsecurity=False).hexdigest()
        repo = repo or self.world.repo.full_name
        repo_api, repo_html = f"{self.api}/repos/{repo}", f"{HTML}/{repo}"
        url = f"{repo_api}/contents/{path}?ref={ref}"
        html = f"{repo_html}/blob/{ref}/{path}"
        git = f"{repo_api}/git/blobs/{sha}"
        return {
            "type": "file",
            "encoding": "base64",
            "size": len(raw),
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "content": base64.encodebytes(raw).decode(),
            "sha": sha,
            "url": url,
            "git_url": git,
            "html_url": html,
            "download_url": f"https://raw.githubusercontent.com/{repo}/{ref}/{path}",
            "_links": {"self": url, "git": git, "html": html},
        }

    def permission(self, login: str) -> Json:
        role = self.world.role_of(login)
        legacy = {"maintain": "write", "triage": "read"}.get(role, role)
        permissions = {
            "admin": role == "admin",
            "maintain": role in {"admin", "maintain"},
            "push": legacy in {"admin", "write"},
            "triage": role != "read" and role != "none",
            "pull": role != "none",
        }
        user = {**self.user(login), "permissions": permissions, "role_name": role}
        return {"permission": legacy, "role_name": role, "user": user}

    def installation(self) -> Json:
        created = iso(self.world.epoch)
        app = self.world.app
        owner = self.world.repo.owner
        return {
            "id": app.installation_id,
            "node_id": node_id("Installation", app.installation_id),
            "account": self.user(owner),
            "repository_selection": "selected",
            "access_tokens_url": f"{self.api}/app/installations/{app.installation_id}"
            "/access_tokens",
            "repositories_url": f"{self.api}/installation/repositories",
            "html_url": f"{HTML}/settings/installations/{app.installation_id}",
            "app_id": app.id,
            "app_slug": app.slug,
            "target_id": self.world.user_id(owner),
            "target_type": self.world.user_type(owner),
            "permissions": self.app(app.slug)["permissions"],
            "events": self.app(app.slug)["events"],
            "created_at": created,
            "updated_at": created,
            "single_file_name": None,
            "suspended_by": None,
            "suspended_at": None,
        }
