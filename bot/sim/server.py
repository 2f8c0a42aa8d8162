"""The simulator: serves a scenario over HTTP like api.github.com and delivers its webhooks."""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any

import aiohttp
from aiohttp import web
from gidgethub.apps import get_jwt

from bot.sim.auth import AppKeys, AuthError, TokenBook
from bot.sim.blobs import Blob
from bot.sim.faults import FaultPlan
from bot.sim.manifests import PUBLIC_ROUTES, ManifestFlow
from bot.sim.record import TimelineEntry, Write
from bot.sim.routes import DOCS, WRITE_BODY, Handler, Routes, error
from bot.sim.scenario import CheckEvent, Scenario
from bot.sim.shapes import Shapes
from bot.sim.state import CheckRun, Comment, Issue, Reaction, RerunRequest, World
from bot.sim.webhooks import (
    check_run_completed,
    delivery_headers,
    issue_comment_created,
    pull_request_opened,
    pull_request_synchronize,
    workflow_job_completed,
)

# The status of a request carried out before its answer was dropped (an `after_applying` fault).
APPLIED = web.RequestKey("applied_status", int)

RATE_LIMIT = 5000
# GitHub's rate-limit answers, word for word but for the request ID.
SECONDARY_LIMIT_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try "
    "again. If you reach out to GitHub Support for help, please include the request ID {}."
)
PRIMARY_LIMIT_MESSAGE = (
    "API rate limit exceeded for installation ID {}. If you reach out to GitHub Support for "
    "help, please include the request ID {}."
)
RATE_LIMIT_DOCS = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
# With no wait given, a primary limit resets this long after it was met.
PRIMARY_RESET_S = 60
JWT_ROUTES = frozenset(
    {
        "/app",
        "/app/installations/{installation_id}/access_tokens",
        "/repos/{owner}/{repo}/installation",
    }
)
TOKEN_ROUTE = "/app/installations/{installation_id}/access_tokens"
BLOB_PREFIX = "/_blobs/"
# GitHub Enterprise Server's REST root; its GraphQL endpoint is GHES_GRAPHQL.
GHES_BASE = "/api/v3"
GHES_GRAPHQL = "/api/graphql"
API_BASE = web.AppKey("api_base", str)
WEBHOOK_TIMEOUT_S = 10  # GitHub gives up on a delivery after ten seconds
PERSONAL_TOKEN_LIFETIME_S = 86_400


class Simulator:
    """A GitHub world from a scenario: REST API, App auth, webhooks, faults, and a record.

    Start it, point the bot's API base at `.url` and its webhook receiver at the target, then
    `play()` the scenario's events and `drain()` the reruns they cause.
    """

    def __init__(
        self,
        scenario: Scenario,
        *,
        webhook_secret: str,
        webhook_url: str | None = None,
        rerun_delay_s: float = 0.05,
        api_base: str = "",
    ) -> None:
        """`api_base`: GHES_BASE serves the REST API under /api/v3 and GraphQL at
        /api/graphql, as GitHub Enterprise Server does; "" as api.github.com does."""
        self.scenario = scenario
        self.api_base = api_base
        self.webhook_secret = webhook_secret
        self.webhook_url = webhook_url
        self.rerun_delay_s = rerun_delay_s
        self.world = World(scenario)
        self.keys = AppKeys()
        self.tokens = TokenBook()
        self.faults = FaultPlan(scenario.faults)
        self.blobs: dict[str, Blob] = {}
        self.blob_bytes_sent = 0  # every byte of logs and artifacts the blob host served
        self.manifests = ManifestFlow()
        self.writes: list[Write] = []
        self.timeline: list[TimelineEntry] = []
        self.calls: Counter[str] = Counter()
        self.rate_limited_calls = 0
        self._rate_reset = int(time.time()) + 3600
        self._tasks: set[asyncio.Task[None]] = set()
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self._url: str | None = None
        self.host_url = ""  # the server's root, where blobs are served

    # Lifecycle

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        app = web.Application(
            middlewares=[
                self._observe,
                self._inject_faults,
                self._github_errors,
                self._auth,
                self._conditional,
            ]
        )
        app[API_BASE] = self.api_base
        Routes(self).install(app, self.api_base)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        server = site._server
        assert isinstance(server, asyncio.base_events.Server)
        bound_host, bound_port = server.sockets[0].getsockname()[:2]
        self.host_url = f"http://{bound_host}:{bound_port}"
        self._url = self.host_url + self.api_base
        self._session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=WEBHOOK_TIMEOUT_S)
        )

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._session is not None:
            await self._session.close()
        if self._runner is not None:
            await self._runner.cleanup()

    async def __aenter__(self) -> Simulator:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def url(self) -> str:
        if self._url is None:
            raise RuntimeError("the simulator has not been started")
        return self._url

    @property
    def shapes(self) -> Shapes:
        return Shapes(self.world, self.url)

    @property
    def app_id(self) -> int:
        return self.scenario.app.id

    @property
    def private_key_pem(self) -> str:
        return self.keys.private_key_pem

    def set_webhook_target(self, url: str) -> None:
        self.webhook_url = url

    # Webhooks

    async def send_webhook(
        self,
        event: str,
        payload: dict[str, Any],
        *,
        delivery_id: str | None = None,
        sign: bool = True,
    ) -> int:
        """Deliver one webhook; the receiver's HTTP status, or 0 when it could not be reached."""
        if self.webhook_url is None:
            raise RuntimeError("no webhook target: pass webhook_url or call set_webhook_target")
        if self._session is None:
            raise RuntimeError("the simulator has not been started")
        delivery_id = delivery_id or str(uuid.uuid4())
        # Compact, as GitHub sends it: a webhook proxy that serialises the payload again the
        # way JavaScript does (smee.io) passes on the bytes that were signed.
        body = json.dumps(payload, separators=(",", ":")).encode()
        headers = delivery_headers(
            event, delivery_id, body, secret=self.webhook_secret, sign=sign, app_id=self.app_id
        )
        try:
            async with self._session.post(self.webhook_url, data=body, headers=headers) as answer:
                await answer.read()
                status = answer.status
        except (aiohttp.ClientError, TimeoutError):
            status = 0
        self.timeline.append(
            TimelineEntry(
                kind="webhook",
                at=time.monotonic(),
                status=status,
                event=event,
                action=str(payload.get("action", "")),
                delivery_id=delivery_id,
            )
        )
        return status

    async def installation_token(self) -> str:
        """A token for the scenario's installation, asked for over HTTP as the App would."""
        if self._session is None:
            raise RuntimeError("the simulator has not been started")
        app_jwt = get_jwt(app_id=str(self.app_id), private_key=self.private_key_pem)
        async with self._session.post(
            f"{self.url}/app/installations/{self.world.app.installation_id}/access_tokens",
            headers={"Authorization": f"Bearer {app_jwt}"},
        ) as answer:
            if answer.status != 201:
                raise RuntimeError(f"the access-token endpoint answered {answer.status}")
            token: str = (await answer.json())["token"]
        return token

    def personal_token(self) -> str:
        """A personal access token (`ghp_`), as `flakybot triage` uses: good for every
        repository endpoint, sent as `token X` or `Bearer X`, valid for a day."""
        token, _ = self.tokens.issue(prefix="ghp_", lifetime=PERSONAL_TOKEN_LIFETIME_S)
        return token

    def push(self, pr_number: int, head_sha: str) -> dict[str, Any]:
        """A new commit on the PR's branch; its `pull_request.synchronize` payload, not yet
        sent (GitHub sends it soon after the push, not at once)."""
        before = self.world.pulls[pr_number].spec.head_sha
        self.world.push(pr_number, head_sha)
        return pull_request_synchronize(self.shapes, pr_number, before)

    def opened(self, pr_number: int) -> dict[str, Any]:
        """The PR's `pull_request.opened` payload, not yet sent."""
        return pull_request_opened(self.shapes, pr_number)

    def next_completion(self, check: str) -> dict[str, Any]:
        """Complete the check's next attempt; its `check_run` webhook payload, not yet sent."""
        run = self.world.queue_run(check)
        self.world.complete_run(run)
        return check_run_completed(self.shapes, run)

    async def complete_check(self, run: CheckRun) -> int:
        """Complete the attempt and send its webhooks: `workflow_job` first, when the App
        subscribes to it (GitHub gives them no fixed order), then `check_run`."""
        self.world.complete_run(run)
        if run.check.is_actions and self.scenario.app.workflow_job:
            await self.send_webhook("workflow_job", workflow_job_completed(self.shapes, run))
        return await self.send_webhook("check_run", check_run_completed(self.shapes, run))

    async def play(self, after_each: Callable[[], Awaitable[None]] | None = None) -> None:
        """Send the scenario's events in order, each after the previous one was answered;
        `after_each`, when given, is awaited after each (e.g. until the bot has handled it,
        so a later event meets the history an earlier one left)."""
        for event in self.scenario.planned_events():
            if isinstance(event, CheckEvent):
                await self.complete_check(self.world.queue_run(event.check))
            else:
                new = event.comment
                comment = self.world.add_comment(new.pr, new.user, new.body)
                payload = issue_comment_created(self.shapes, comment)
                await self.send_webhook("issue_comment", payload)
            if after_each is not None:
                await after_each()

    def schedule_completion(self, run: CheckRun) -> None:
        """Complete a rerun shortly, on its own, as GitHub Actions would."""

        async def later() -> None:
            await asyncio.sleep(self.rerun_delay_s)
            await self.complete_check(run)

        task = asyncio.get_running_loop().create_task(later())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @property
    def pending(self) -> int:
        return len(self._tasks)

    async def drain(self) -> None:
        """Wait until no webhook the simulator scheduled on its own is still to be sent."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    # State for tests and expectations

    @property
    def reruns(self) -> list[RerunRequest]:
        return list(self.world.reruns)

    @property
    def issues(self) -> list[Issue]:
        return sorted(self.world.issues.values(), key=lambda issue: issue.number)

    @property
    def issues_created(self) -> list[Issue]:
        return [self.world.issues[number] for number in self.world.issues_created]

    def comments(self, issue: int) -> list[Comment]:
        return self.world.comments_on(issue)

    def bot_comments(self, issue: int) -> list[Comment]:
        return [c for c in self.world.comments_on(issue) if c.user == self.world.bot_login]

    def reactions(self, comment_id: int) -> list[Reaction]:
        return self.world.reactions_on(comment_id)

    def labels(self, issue: int) -> list[str]:
        return list(self.world.issues[issue].labels)

    @property
    def bot_login(self) -> str:
        return self.world.bot_login

    # Middlewares, outermost first

    @web.middleware
    async def _observe(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        route = _route_template(request)
        self.calls[f"{request.method} {route}"] += 1
        try:
            response = await handler(request)
        except asyncio.CancelledError:
            applied = request.get(APPLIED)
            if request.get(WRITE_BODY) is not None and applied is not None and applied < 300:
                # Carried out, answer dropped (an `after_applying` fault): it happened.
                self.writes.append(
                    Write(
                        request.method,
                        _api_path(request),
                        request[WRITE_BODY],
                        applied,
                        time.monotonic(),
                    )
                )
            self.timeline.append(
                TimelineEntry(
                    kind="api",
                    at=time.monotonic(),
                    status=0,
                    method=request.method,
                    path=_api_path_qs(request),
                )
            )
            raise
        not_modified = response.status == 304
        if not not_modified and route != TOKEN_ROUTE and not request.path.startswith(BLOB_PREFIX):
            self.rate_limited_calls += 1
        if request.get(WRITE_BODY) is not None and 200 <= response.status < 300:
            self.writes.append(
                Write(
                    request.method,
                    _api_path(request),
                    request[WRITE_BODY],
                    response.status,
                    time.monotonic(),
                )
            )
        self.timeline.append(
            TimelineEntry(
                kind="api",
                at=time.monotonic(),
                status=response.status,
                method=request.method,
                path=_api_path_qs(request),
                not_modified=not_modified,
            )
        )
        return response

    @web.middleware
    async def _inject_faults(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        delay = self.faults.latency_s()
        if delay:
            await asyncio.sleep(delay)
        fault = self.faults.decide(request.method, _api_path(request))
        if fault is None:
            return await handler(request)
        if fault.status is None:
            if fault.after_applying:
                applied = await handler(request)
                request[APPLIED] = applied.status
            if request.transport is not None:
                request.transport.abort()
            # aiohttp treats a cancelled handler as a client that went away: no answer, no log.
            raise asyncio.CancelledError
        if fault.rate_limit is not None:
            response = self._rate_limited(fault.status, fault.rate_limit, fault.retry_after)
        else:
            response = error(fault.status, fault.message)
        response.headers.update(fault.headers)
        return response

    def _rate_limited(self, status: int, kind: str, retry_after: int | None) -> web.Response:
        """GitHub's answer to a request over its primary or secondary rate limit."""
        request_id = ":".join(secrets.token_hex(n).upper() for n in (2, 3, 4, 4))
        if kind == "primary":
            reset = int(time.time()) + (PRIMARY_RESET_S if retry_after is None else retry_after)
            message = PRIMARY_LIMIT_MESSAGE.format(self.world.app.installation_id, request_id)
            headers = self._rate_headers(used=RATE_LIMIT, reset=reset)
            docs = f"{RATE_LIMIT_DOCS}#about-primary-rate-limits"
        else:
            message = SECONDARY_LIMIT_MESSAGE.format(request_id)
            headers = self._rate_headers(used=self.rate_limited_calls + 1)
            if retry_after is not None:
                headers["Retry-After"] = str(retry_after)
            docs = f"{RATE_LIMIT_DOCS}#about-secondary-rate-limits"
        response = error(status, message, documentation_url=docs)
        response.headers.update(headers)
        response.headers["X-GitHub-Request-Id"] = request_id
        return response

    def _rate_headers(self, *, used: int, reset: int | None = None) -> dict[str, str]:
        """The core rate limit's headers, as every API answer carries them."""
        return {
            "X-RateLimit-Limit": str(RATE_LIMIT),
            "X-RateLimit-Remaining": str(max(RATE_LIMIT - used, 0)),
            "X-RateLimit-Reset": str(self._rate_reset if reset is None else reset),
            "X-RateLimit-Used": str(used),
            "X-RateLimit-Resource": "core",
        }

    @web.middleware
    async def _github_errors(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            return await handler(request)
        except web.HTTPException as exc:
            if exc.content_type == "application/json":
                return web.Response(status=exc.status, text=exc.text, content_type=exc.content_type)
            message = "Not Found" if exc.status == 404 else exc.reason
            return web.json_response(
                {"message": message, "documentation_url": DOCS}, status=exc.status
            )

    @web.middleware
    async def _auth(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path.startswith(BLOB_PREFIX) or request.match_info.http_exception is not None:
            return await handler(request)
        if _route_template(request) in PUBLIC_ROUTES:
            return await handler(request)
        header = request.headers.get("Authorization")
        try:
            if _route_template(request) in JWT_ROUTES:
                self.keys.verify_app_jwt(header, self.app_id)
            else:
                self.tokens.check(header)
        except AuthError as exc:
            return error(401, str(exc))
        return await handler(request)

    @web.middleware
    async def _conditional(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        response = await handler(request)
        if request.path.startswith(BLOB_PREFIX):
            return response
        response.headers.update(self._rate_headers(used=self.rate_limited_calls + 1))
        response.headers["X-GitHub-Media-Type"] = "github.v3; format=json"
        if (
            request.method != "GET"
            or response.status != 200
            or not isinstance(response, web.Response)
        ):
            return response
        # GitHub's ETags depend on the credentials too: a cache shared across tokens gets no 304s.
        credential = request.headers.get("Authorization", "").encode()
        body = response.body if isinstance(response.body, bytes) else b""
        digest = hashlib.sha256(credential + b"\0" + body).hexdigest()
        etag = f'W/"{digest[:40]}"'
        response.headers["ETag"] = etag
        if etag in _etags(request.headers.get("If-None-Match", "")):
            not_modified = web.Response(status=304)
            for name, value in response.headers.items():
                if name.lower().startswith("x-") or name == "ETag":
                    not_modified.headers[name] = value
            not_modified.headers["X-RateLimit-Remaining"] = str(
                RATE_LIMIT - self.rate_limited_calls
            )
            not_modified.headers["X-RateLimit-Used"] = str(self.rate_limited_calls)
            return not_modified
        return response

    # Webhooks GitHub sends because of what the bot did (its own comments)

    def schedule_webhook(self, event: str, payload: dict[str, Any]) -> None:
        """Send a webhook on its own, right after the request that caused it was answered
        (when there is a target: a simulator serving only the API sends none)."""
        if self.webhook_url is None:
            return

        async def soon() -> None:
            await asyncio.sleep(0)
            await self.send_webhook(event, payload)

        task = asyncio.get_running_loop().create_task(soon())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _route_template(request: web.Request) -> str:
    route = request.match_info.route
    resource = route.resource
    return _unprefixed(request, resource.canonical if resource is not None else request.path)


def _api_path(request: web.Request) -> str:
    """The request's path as api.github.com would have it, whatever the base it came to."""
    return _unprefixed(request, request.path)


def _api_path_qs(request: web.Request) -> str:
    query = request.rel_url.raw_query_string
    return _api_path(request) + (f"?{query}" if query else "")


def _unprefixed(request: web.Request, path: str) -> str:
    base = request.app.get(API_BASE, "")
    if not base:
        return path
    if path == GHES_GRAPHQL:
        return "/graphql"
    return path.removeprefix(base) if path.startswith(base + "/") or path == base else path


def _etags(header: str) -> set[str]:
    tags = {tag.strip() for tag in header.split(",") if tag.strip()}
    # Weak comparison, as for GET: W/"x" and "x" name the same representation.
    return tags | {tag.removeprefix("W/") for tag in tags} | {f"W/{tag}" for tag in tags}
