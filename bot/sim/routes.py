"""Request handlers for the subset of GitHub's REST API the bot calls."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from aiohttp import web
from multidict import MultiDict

from bot.sim import app_checks, blobs, git
from bot.sim.app_checks import AppCheckRun
from bot.sim.manifests import ManifestRoutes
from bot.sim.shapes import Shapes, iso
from bot.sim.state import RERUNNABLE, CheckRun, Issue, Reaction, RerunRequest, World, now
from bot.sim.webhooks import app_check_run_completed, issue_comment_created

if TYPE_CHECKING:
    from bot.sim.server import Simulator

DOCS = "https://docs.github.com/rest"
BLOB_LIFETIME_S = 60.0
MAX_PR_FILES = 3000
MAX_BODY = 65_536  # characters in an issue's or a comment's body
MAX_TITLE = 256  # characters in an issue's title
REACTIONS = frozenset({"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"})
# The JSON body of a write, for the simulator's record; None: the request changed nothing.
WRITE_BODY = web.RequestKey("write_body", object)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def error(status: int, message: str, **extra: Any) -> web.Response:
    return web.json_response(
        {"message": message, "documentation_url": DOCS, **extra}, status=status
    )


def not_found() -> web.Response:
    return error(404, "Not Found")


def unprocessable(message: str) -> web.Response:
    return error(422, message)


def body_too_long(body: object, resource: str = "Issue") -> web.Response | None:
    """GitHub's answer to an issue's or a comment's body over its limit; None when the body
    is within it."""
    return _too_long(body, resource, "body", MAX_BODY)


def title_too_long(title: object) -> web.Response | None:
    """GitHub's answer to an issue title over its limit; None when the title is within it."""
    return _too_long(title, "Issue", "title", MAX_TITLE)


def _too_long(value: object, resource: str, field: str, limit: int) -> web.Response | None:
    if not isinstance(value, str) or len(value) <= limit:
        return None
    return error(
        422,
        "Validation Failed",
        errors=[
            {
                "resource": resource,
                "code": "custom",
                "field": field,
                "message": f"{field} is too long (maximum is {limit} characters)",
            }
        ],
    )


def unassignable(logins: list[str]) -> web.Response:
    """GitHub's answer to an issue created with assignees who may not be assigned (seen in
    the wild, e.g. harvester/harvester#10448): nothing is created."""
    return error(
        422,
        "Validation Failed",
        errors=[
            {
                "message": f"assignees {', '.join(logins)} cannot be assigned to this issue",
                "value": logins,
                "resource": "Issue",
                "field": "assignees",
                "code": "invalid",
            }
        ],
    )


def _int(request: web.Request, key: str) -> int:
    return int(request.match_info[key])


def page_of(
    request: web.Request, items: Sequence[Any], *, cap: int | None = None
) -> tuple[list[Any], str | None]:
    """One page of a list and GitHub's `Link` header for it (first/prev/next/last)."""
    items = items[:cap] if cap is not None else items
    try:
        per_page = min(max(int(request.query.get("per_page", "30")), 1), 100)
        page = max(int(request.query.get("page", "1")), 1)
    except ValueError:
        raise web.HTTPUnprocessableEntity(
            text=json.dumps(
                {"message": "Invalid pagination parameters", "documentation_url": DOCS}
            ),
            content_type="application/json",
        ) from None
    last = max((len(items) + per_page - 1) // per_page, 1)

    def link(number: int, rel: str) -> str:
        query = MultiDict(request.query)
        query["per_page"] = str(per_page)
        query["page"] = str(number)
        return f'<{request.url.with_query(query)}>; rel="{rel}"'

    links = []
    if page > 1:
        links += [link(page - 1, "prev"), link(1, "first")]
    if page < last:
        links += [link(page + 1, "next"), link(last, "last")]
    return list(items[(page - 1) * per_page : page * per_page]), ", ".join(links) or None


def paginate(request: web.Request, items: Sequence[Any], *, cap: int | None = None) -> web.Response:
    page, link = page_of(request, items, cap=cap)
    response = web.json_response(page)
    if link is not None:
        response.headers["Link"] = link
    return response


async def json_body(request: web.Request) -> Any:
    try:
        body = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise web.HTTPBadRequest(
            text=json.dumps({"message": "Problems parsing JSON", "documentation_url": DOCS}),
            content_type="application/json",
        ) from None
    request[WRITE_BODY] = body
    return body


def _served_at(path: str, base: str) -> str:
    """Where a route of api.github.com is served under the REST API's `base`."""
    if not base or path.startswith("/_blobs/"):
        return path
    return "/api/graphql" if path == "/graphql" else base + path


class Routes:
    """Handlers bound to one simulator. Repository routes 404 for any other owner/repo."""

    def __init__(self, sim: Simulator) -> None:
        self.sim = sim

    @property
    def world(self) -> World:
        return self.sim.world

    @property
    def shapes(self) -> Shapes:
        return self.sim.shapes

    def install(self, app: web.Application, base: str = "") -> None:
        """`base`: where the REST API is served (GHES: /api/v3, its GraphQL /api/graphql)."""
        repo = "/repos/{owner}/{repo}"
        table: list[tuple[str, str, Handler]] = [
            ("GET", "/app", self.get_app),
            ("POST", "/app/installations/{installation_id}/access_tokens", self.create_token),
            ("GET", repo + "/installation", self.get_installation),
            ("GET", repo, self.get_repo),
            ("GET", repo + "/pulls/{pull_number:\\d+}", self.get_pull),
            ("GET", repo + "/pulls/{pull_number:\\d+}/files", self.list_pull_files),
            ("GET", repo + "/commits/{commit_sha}/pulls", self.list_pulls_for_commit),
            ("GET", repo + "/commits/{ref}/check-runs", self.list_check_runs_for_ref),
            ("POST", repo + "/check-runs", self.create_check_run),
            ("GET", repo + "/check-runs/{check_run_id:\\d+}", self.get_check_run),
            ("PATCH", repo + "/check-runs/{check_run_id:\\d+}", self.update_check_run),
            ("GET", repo + "/check-runs/{check_run_id:\\d+}/annotations", self.list_annotations),
            ("GET", repo + "/actions/jobs/{job_id:\\d+}", self.get_job),
            ("GET", repo + "/actions/jobs/{job_id:\\d+}/logs", self.job_logs),
            ("POST", repo + "/actions/jobs/{job_id:\\d+}/rerun", self.rerun_job),
            ("POST", repo + "/actions/runs/{run_id:\\d+}/rerun-failed-jobs", self.rerun_failed),
            ("GET", repo + "/actions/runs/{run_id:\\d+}", self.get_workflow_run),
            ("GET", repo + "/actions/runs/{run_id:\\d+}/artifacts", self.list_artifacts),
            ("GET", repo + "/actions/artifacts/{artifact_id:\\d+}", self.get_artifact),
            ("GET", repo + "/actions/artifacts/{artifact_id:\\d+}/zip", self.download_artifact),
            ("GET", repo + "/issues", self.list_issues),
            ("POST", repo + "/issues", self.create_issue),
            ("GET", repo + "/issues/{issue_number:\\d+}", self.get_issue),
            ("PATCH", repo + "/issues/{issue_number:\\d+}", self.update_issue),
            ("GET", repo + "/issues/{issue_number:\\d+}/comments", self.list_comments),
            ("POST", repo + "/issues/{issue_number:\\d+}/comments", self.create_comment),
            ("POST", repo + "/issues/{issue_number:\\d+}/labels", self.add_labels),
            ("GET", repo + "/issues/comments/{comment_id:\\d+}", self.get_comment),
            ("PATCH", repo + "/issues/comments/{comment_id:\\d+}", self.update_comment),
            ("POST", repo + "/issues/comments/{comment_id:\\d+}/reactions", self.add_reaction),
            ("GET", repo + "/labels/{name}", self.get_label),
            ("POST", repo + "/labels", self.create_label),
            ("GET", repo + "/collaborators/{username}/permission", self.get_permission),
            ("GET", repo + "/contents/{path:.+}", self.get_content),
            ("GET", repo + "/git/trees/{tree_sha}", self.get_tree),
            ("POST", "/graphql", self.post_graphql),
            ("GET", "/_blobs/{key}", self.get_blob),
            *ManifestRoutes(self.sim).table(),
        ]
        for method, path, handler in table:
            if handler in (self.get_content, self.get_repo):
                guarded = self._repo_guard(handler, others=True)
            else:
                guarded = self._repo_guard(handler) if path.startswith(repo) else handler
            app.router.add_route(method, _served_at(path, base), guarded)

    def _repo_guard(self, handler: Handler, *, others: bool = False) -> Handler:
        """404 for any repository but the world's (`others`: or one of `repos` installed)."""

        async def guarded(request: web.Request) -> web.StreamResponse:
            owner = request.match_info["owner"].lower()
            name = request.match_info["repo"].lower()
            if (owner, name) != (self.world.repo.owner.lower(), self.world.repo.name.lower()):
                other = self.world.other_repo(f"{owner}/{name}")
                if not others or other is None or not other.installed:
                    return not_found()
            return await handler(request)

        return guarded

    # App and installation

    async def get_app(self, request: web.Request) -> web.Response:
        return web.json_response(self.shapes.app(self.world.app.slug))

    async def get_installation(self, request: web.Request) -> web.Response:
        return web.json_response(self.shapes.installation())

    async def create_token(self, request: web.Request) -> web.Response:
        if _int(request, "installation_id") != self.world.app.installation_id:
            return not_found()
        token, expires = self.sim.tokens.issue()
        permissions = self.shapes.app(self.world.app.slug)["permissions"]
        return web.json_response(
            {
                "token": token,
                "expires_at": iso(datetime.fromtimestamp(expires, UTC)),
                "permissions": permissions,
                "repository_selection": "selected",
            },
            status=201,
        )

    # Repository, pulls, contents, permissions

    async def get_repo(self, request: web.Request) -> web.Response:
        full_name = f"{request.match_info['owner']}/{request.match_info['repo']}"
        other = self.world.other_repo(full_name)
        if other is not None:
            return web.json_response(self.shapes.other_repository(full_name, other))
        return web.json_response(self.shapes.repository())

    async def get_pull(self, request: web.Request) -> web.Response:
        pr = self.world.pulls.get(_int(request, "pull_number"))
        return not_found() if pr is None else web.json_response(self.shapes.pull_request(pr))

    async def list_pull_files(self, request: web.Request) -> web.Response:
        pr = self.world.pulls.get(_int(request, "pull_number"))
        if pr is None:
            return not_found()
        entries = [self.shapes.diff_entry(pr, index) for index in range(len(pr.spec.files))]
        return paginate(request, entries, cap=MAX_PR_FILES)

    async def list_pulls_for_commit(self, request: web.Request) -> web.Response:
        sha = request.match_info["commit_sha"]
        pulls = [pr for pr in self.world.pulls.values() if pr.spec.head_sha == sha]
        return paginate(request, [self.shapes.pull_request_simple(pr) for pr in pulls])

    async def get_content(self, request: web.Request) -> web.Response:
        path = request.match_info["path"].strip("/")
        full_name = f"{request.match_info['owner']}/{request.match_info['repo']}"
        other = self.world.other_repo(full_name)
        if other is not None:
            ref = request.query.get("ref", other.default_branch)
            data = other.files.get(path) if ref == other.default_branch else None
            if data is None:
                return not_found()
            return web.json_response(self.shapes.content_file(path, data, ref, repo=full_name))
        ref = request.query.get("ref", self.world.repo.default_branch)
        if ref not in self.world.known_refs():
            return error(404, f"No commit found for the ref {ref}")
        data = self.world.files_at(ref).get(path)
        if data is None:
            return not_found()
        return web.json_response(self.shapes.content_file(path, data, ref))

    async def get_tree(self, request: web.Request) -> web.Response:
        # A commit SHA or a ref names its commit's root tree, as on GitHub.
        sha = request.match_info["tree_sha"]
        if sha not in self.world.known_refs():
            return not_found()
        # GitHub reads any value of `recursive` as yes; leaving it out means the top level.
        recursive = "recursive" in request.query
        files = self.world.files_at(sha)
        limit = self.world.scenario.tree_limit
        return web.json_response(
            git.tree(files, sha, self.shapes.repo_api, recursive=recursive, limit=limit)
        )

    async def post_graphql(self, request: web.Request) -> web.Response:
        # Every ref's blobs: a blob is found by its id wherever it lives.
        blobs_by_oid: dict[str, bytes] = {}
        for ref in self.world.known_refs():
            for data in self.world.files_at(ref).values():
                raw = git.as_bytes(data)
                blobs_by_oid[git.blob_sha(raw)] = raw
        repo = self.world.repo
        body = await request.read()
        return git.graphql(body, blobs_by_oid, repo.owner, repo.name, self._file_at)

    def _file_at(self, ref: str, path: str) -> bytes | None:
        if ref not in self.world.known_refs():
            return None
        data = self.world.files_at(ref).get(path)
        return None if data is None else git.as_bytes(data)

    async def get_permission(self, request: web.Request) -> web.Response:
        return web.json_response(self.shapes.permission(request.match_info["username"]))

    # Checks and Actions

    async def list_check_runs_for_ref(self, request: web.Request) -> web.Response:
        ref = request.match_info["ref"]
        pulls = self.world.pulls.values()
        shas = {pr.spec.head_sha for pr in pulls if ref in {pr.spec.head_sha, pr.spec.head_ref}}
        shas |= {
            check.head_sha
            for check in self.world.scenario.checks
            if check.head_sha is not None and ref in {check.head_sha, check.branch}
        }
        runs = [run for run in self.world.runs.values() if run.head_sha in shas]
        if request.query.get("filter", "latest") == "latest":
            latest: dict[str, CheckRun] = {run.check.shown_name: run for run in runs}
            runs = list(latest.values())
        if "check_name" in request.query:
            runs = [run for run in runs if run.check.shown_name == request.query["check_name"]]
        if "status" in request.query:
            runs = [run for run in runs if run.status == request.query["status"]]
        shown = [self.shapes.check_run(run) for run in runs] + self._app_runs_at(request, shas)
        if "app_id" in request.query:
            shown = [run for run in shown if str(run["app"]["id"]) == request.query["app_id"]]
        page, link = page_of(request, shown)
        response = web.json_response({"total_count": len(shown), "check_runs": page})
        if link is not None:
            response.headers["Link"] = link
        return response

    def _app_runs_at(self, request: web.Request, shas: set[str]) -> list[dict[str, Any]]:
        """The App's own check runs on those commits, as the list shows them."""
        runs = [run for run in self.world.app_runs.values() if run.head_sha in shas]
        for key in ("check_name", "status"):
            if key in request.query:
                wanted = request.query[key]
                runs = [r for r in runs if (r.name if key == "check_name" else r.status) == wanted]
        return [self.shapes.app_check_run(run) for run in runs]

    async def get_check_run(self, request: web.Request) -> web.Response:
        check_run_id = _int(request, "check_run_id")
        own = self.world.app_runs.get(check_run_id)
        if own is not None:
            return web.json_response(self.shapes.app_check_run(own))
        run = self.world.runs.get(check_run_id)
        return not_found() if run is None else web.json_response(self.shapes.check_run(run))

    async def create_check_run(self, request: web.Request) -> web.Response:
        if self.world.app.checks != "write":
            return error(403, "Resource not accessible by integration")
        body = await json_body(request)
        refused = app_checks.problem(body, creating=True)
        if refused is not None:
            return unprocessable(refused)
        if body["head_sha"] not in self.world.known_refs():
            return unprocessable(f"No commit found for SHA: {body['head_sha']}")
        run = AppCheckRun(
            id=self.world.new_id("run"),
            suite_id=self.world.new_id("suite"),
            name=body["name"],
            head_sha=body["head_sha"],
            started_at=now(),
        )
        self.world.app_runs[run.id] = run
        run.apply(body, now())
        self._tell_app(run)
        return web.json_response(self.shapes.app_check_run(run), status=201)

    async def update_check_run(self, request: web.Request) -> web.Response:
        check_run_id = _int(request, "check_run_id")
        run = self.world.app_runs.get(check_run_id)
        if run is None:
            # Another app's run (an Actions job) is not the App's to change.
            known = check_run_id in self.world.runs
            return error(403, "Resource not accessible by integration") if known else not_found()
        if self.world.app.checks != "write":
            return error(403, "Resource not accessible by integration")
        body = await json_body(request)
        refused = app_checks.problem(body, creating=False)
        if refused is not None:
            return unprocessable(refused)
        run.apply(body, now())
        if "conclusion" in body:
            self._tell_app(run)
        return web.json_response(self.shapes.app_check_run(run))

    def _tell_app(self, run: AppCheckRun) -> None:
        """GitHub sends the App `check_run` `completed` for its own runs too: the bot must
        not triage them."""
        if run.status == "completed":
            self.sim.schedule_webhook("check_run", app_check_run_completed(self.shapes, run))

    async def list_annotations(self, request: web.Request) -> web.Response:
        own = self.world.app_runs.get(_int(request, "check_run_id"))
        if own is not None:
            return paginate(request, [self.shapes.app_annotation(own, n) for n in own.annotations])
        run = self.world.runs.get(_int(request, "check_run_id"))
        if run is None:
            return not_found()
        notes = [self.shapes.annotation(run, i) for i in range(len(run.attempt.annotations))]
        return paginate(request, notes)

    async def get_job(self, request: web.Request) -> web.Response:
        run = self.world.job(_int(request, "job_id"))
        return not_found() if run is None else web.json_response(self.shapes.job(run))

    async def job_logs(self, request: web.Request) -> web.Response:
        run = self.world.job(_int(request, "job_id"))
        if run is None or run.completed_at is None:
            return not_found()
        text = run.attempt.log or ""
        uploads = self.world.upload_log(run)
        if uploads and text and not text.endswith("\n"):
            text += "\n"
        log = (text + uploads).encode()
        padding = run.attempt.log_padding_bytes
        return self._redirect_to_blob(
            blobs.PaddedLog(padding, log) if padding else log, blobs.LOG_TYPE
        )

    async def get_workflow_run(self, request: web.Request) -> web.Response:
        run_id = _int(request, "run_id")
        runs = [r for r in self.world.runs.values() if r.run_id == run_id and r.check.is_actions]
        if not runs:
            return not_found()
        return web.json_response(self.shapes.workflow_run(max(runs, key=lambda r: r.id)))

    async def list_artifacts(self, request: web.Request) -> web.Response:
        run_id = _int(request, "run_id")
        if not any(
            run.run_id == run_id and run.check.is_actions for run in self.world.runs.values()
        ):
            return not_found()
        artifacts = self.world.artifacts_of(run_id)
        if "name" in request.query:
            artifacts = [a for a in artifacts if a.name == request.query["name"]]
        if request.query.get("direction") != "asc":
            artifacts.reverse()  # newest first, GitHub's default
        page, link = page_of(request, [self.shapes.artifact(a) for a in artifacts])
        response = web.json_response({"total_count": len(artifacts), "artifacts": page})
        if link is not None:
            response.headers["Link"] = link
        return response

    async def get_artifact(self, request: web.Request) -> web.Response:
        artifact = self.world.artifacts.get(_int(request, "artifact_id"))
        if artifact is None:
            return not_found()
        return web.json_response(self.shapes.artifact(artifact))

    async def download_artifact(self, request: web.Request) -> web.Response:
        artifact = self.world.artifacts.get(_int(request, "artifact_id"))
        if artifact is None:
            return not_found()
        if artifact.expired:
            return error(410, "Artifact has expired")
        return self._redirect_to_blob(artifact.data, blobs.ZIP_TYPE)

    def _redirect_to_blob(self, data: bytes | blobs.PaddedLog, content_type: str) -> web.Response:
        key = secrets.token_urlsafe(24)
        self.sim.blobs[key] = blobs.Blob(data, content_type, time.monotonic() + BLOB_LIFETIME_S)
        location = f"{self.sim.host_url}/_blobs/{key}?sig={secrets.token_hex(8)}"
        return web.Response(status=302, headers={"Location": location})

    async def get_blob(self, request: web.Request) -> web.StreamResponse:
        blob = self.sim.blobs.get(request.match_info["key"])
        if blob is None or blob.expires_at < time.monotonic():
            return web.Response(status=404, text="The specified blob does not exist.")
        return await blobs.serve(
            request, blob, ranges=self.sim.scenario.faults.blob_ranges, sent=self._count_sent
        )

    def _count_sent(self, size: int) -> None:
        self.sim.blob_bytes_sent += size

    def _refuse_rerun(self, run: CheckRun) -> web.Response | None:
        latest = self.world.latest_run(run.check.name)
        if run.check.rerun_status is not None:
            status = run.check.rerun_status
            return error(status, f"Re-run refused by the scenario (status {status})")
        if latest is not None and latest.completed_at is None:
            return error(403, "This workflow is already running")
        return None

    async def rerun_job(self, request: web.Request) -> web.Response:
        job_id = _int(request, "job_id")
        request[WRITE_BODY] = {}
        run = self.world.runs.get(job_id)
        if run is None:
            return not_found()
        if not run.check.is_actions:
            response = error(403, "Only GitHub Actions jobs can be re-run through this endpoint")
        else:
            response = self._refuse_rerun(run) or web.json_response({}, status=201)
        self.world.reruns.append(RerunRequest("job", job_id, (run.check.name,), response.status))
        if response.status == 201:
            self.sim.schedule_completion(self.world.queue_run(run.check.name))
        return response

    async def rerun_failed(self, request: web.Request) -> web.Response:
        run_id = _int(request, "run_id")
        request[WRITE_BODY] = {}
        names = sorted({run.check.name for run in self.world.runs.values() if run.run_id == run_id})
        if not names:
            return not_found()
        latest = [run for run in map(self.world.latest_run, names) if run is not None]
        failed = [run for run in latest if run.conclusion in RERUNNABLE]
        refusal = next((r for r in map(self._refuse_rerun, failed) if r is not None), None)
        if not failed:
            refusal = error(403, "This workflow run has no failed jobs to re-run")
        status = refusal.status if refusal is not None else 201
        checks = tuple(run.check.name for run in failed)
        self.world.reruns.append(RerunRequest("failed-jobs", run_id, checks, status))
        if refusal is not None:
            return refusal
        for run in failed:
            self.sim.schedule_completion(self.world.queue_run(run.check.name))
        return web.json_response({}, status=201)

    # Issues, comments, labels, reactions

    async def list_issues(self, request: web.Request) -> web.Response:
        state = request.query.get("state", "open")
        labels = request.query.get("labels", "").split(",")
        wanted = {name.strip().lower() for name in labels if name.strip()}
        creator = request.query.get("creator")
        issues: list[Issue] = []
        for issue in self.world.issues.values():
            if state != "all" and issue.state != state:
                continue
            if not wanted <= {name.lower() for name in issue.labels}:
                continue
            if creator is not None and issue.user.lower() != creator.lower():
                continue
            issues.append(issue)
        issues.sort(key=lambda issue: (issue.created_at, issue.number), reverse=True)
        if request.query.get("direction") == "asc":
            issues.reverse()
        return paginate(request, [self.shapes.issue(issue) for issue in issues])

    async def create_issue(self, request: web.Request) -> web.Response:
        body = await json_body(request)
        if not isinstance(body, dict) or not isinstance(body.get("title"), str | int):
            return unprocessable('Invalid request.\n\n"title" wasn\'t supplied.')
        too_long = title_too_long(body.get("title")) or body_too_long(body.get("body"))
        if too_long is not None:
            return too_long
        assignees = [str(login) for login in body.get("assignees") or []]
        if refused := [login for login in assignees if not self.world.assignable(login)]:
            return unassignable(refused)
        moment = now()
        issue = Issue(
            number=self.world.next_issue_number(),
            id=self.world.new_id("issue"),
            title=str(body["title"]),
            body=body.get("body") or "",
            state="open",
            user=self.world.bot_login,
            labels=[self.world.ensure_label(str(name)).name for name in body.get("labels", [])],
            assignees=list(dict.fromkeys(assignees)),
            created_at=moment,
            updated_at=moment,
        )
        self.world.issues[issue.number] = issue
        self.world.issues_created.append(issue.number)
        return web.json_response(self.shapes.issue(issue), status=201)

    async def get_issue(self, request: web.Request) -> web.Response:
        issue = self.world.issues.get(_int(request, "issue_number"))
        return not_found() if issue is None else web.json_response(self.shapes.issue(issue))

    async def update_issue(self, request: web.Request) -> web.Response:
        issue = self.world.issues.get(_int(request, "issue_number"))
        if issue is None:
            return not_found()
        body = await json_body(request)
        if not isinstance(body, dict):
            return unprocessable("Invalid request.")
        state = body.get("state", issue.state)
        if state not in {"open", "closed"}:
            return unprocessable(f"Invalid request.\n\n{state!r} is not a valid state.")
        too_long = title_too_long(body.get("title")) or body_too_long(body.get("body"))
        if too_long is not None:
            return too_long
        moment = now()
        if state != issue.state:
            issue.closed_at = moment if state == "closed" else None
            issue.state_reason = body.get("state_reason") or (
                "completed" if state == "closed" else "reopened"
            )
        issue.state = state
        issue.title = str(body.get("title", issue.title))
        issue.body = body.get("body", issue.body) or ""
        if "labels" in body:
            issue.labels = [self.world.ensure_label(str(name)).name for name in body["labels"]]
        issue.updated_at = moment
        return web.json_response(self.shapes.issue(issue))

    async def list_comments(self, request: web.Request) -> web.Response:
        number = _int(request, "issue_number")
        if number not in self.world.issues:
            return not_found()
        comments = [self.shapes.comment(c) for c in self.world.comments_on(number)]
        return paginate(request, comments)

    async def create_comment(self, request: web.Request) -> web.Response:
        number = _int(request, "issue_number")
        if number not in self.world.issues:
            return not_found()
        body = await json_body(request)
        if not isinstance(body, dict) or not isinstance(body.get("body"), str):
            return unprocessable('Invalid request.\n\n"body" wasn\'t supplied.')
        if (too_long := body_too_long(body["body"], "IssueComment")) is not None:
            return too_long
        comment = self.world.add_comment(number, self.world.bot_login, body["body"])
        # GitHub tells the App about its own comments too; the bot must ignore them.
        self.sim.schedule_webhook("issue_comment", issue_comment_created(self.shapes, comment))
        return web.json_response(self.shapes.comment(comment), status=201)

    async def get_comment(self, request: web.Request) -> web.Response:
        comment = self.world.comments.get(_int(request, "comment_id"))
        return not_found() if comment is None else web.json_response(self.shapes.comment(comment))

    async def update_comment(self, request: web.Request) -> web.Response:
        comment = self.world.comments.get(_int(request, "comment_id"))
        if comment is None:
            return not_found()
        body = await json_body(request)
        if not isinstance(body, dict) or not isinstance(body.get("body"), str):
            return unprocessable('Invalid request.\n\n"body" wasn\'t supplied.')
        if (too_long := body_too_long(body["body"], "IssueComment")) is not None:
            return too_long
        comment.body = body["body"]
        comment.updated_at = now()
        return web.json_response(self.shapes.comment(comment))

    async def add_reaction(self, request: web.Request) -> web.Response:
        comment_id = _int(request, "comment_id")
        if comment_id not in self.world.comments:
            return not_found()
        body = await json_body(request)
        content = body.get("content") if isinstance(body, dict) else None
        if content not in REACTIONS:
            return unprocessable("Validation Failed")
        user = self.world.bot_login
        for reaction in self.world.reactions_on(comment_id):
            if reaction.user == user and reaction.content == content:
                request[WRITE_BODY] = None  # already there: nothing changed
                return web.json_response(self.shapes.reaction(reaction), status=200)
        reaction = Reaction(self.world.new_id("reaction"), comment_id, user, str(content), now())
        self.world.reactions.append(reaction)
        return web.json_response(self.shapes.reaction(reaction), status=201)

    async def get_label(self, request: web.Request) -> web.Response:
        label = self.world.find_label(request.match_info["name"])
        return not_found() if label is None else web.json_response(self.shapes.label(label))

    async def create_label(self, request: web.Request) -> web.Response:
        body = await json_body(request)
        if not isinstance(body, dict) or not isinstance(body.get("name"), str):
            return unprocessable("Validation Failed")
        if self.world.find_label(body["name"]) is not None:
            return error(
                422,
                "Validation Failed",
                errors=[{"resource": "Label", "code": "already_exists", "field": "name"}],
            )
        label = self.world.ensure_label(body["name"])
        label.color = str(body.get("color", label.color)).lstrip("#")
        label.description = body.get("description")
        return web.json_response(self.shapes.label(label), status=201)

    async def add_labels(self, request: web.Request) -> web.Response:
        issue = self.world.issues.get(_int(request, "issue_number"))
        if issue is None:
            return not_found()
        body = await json_body(request)
        names = body.get("labels") if isinstance(body, dict) else body
        if not isinstance(names, list) or not names:
            return unprocessable("Invalid request.\n\nNo labels supplied.")
        for name in names:
            label = self.world.ensure_label(str(name))
            if label.name not in issue.labels:
                issue.labels.append(label.name)
        issue.updated_at = now()
        return web.json_response([self.shapes.label(self.world.labels[n]) for n in issue.labels])
