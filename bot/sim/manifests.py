"""GitHub's App manifest flow: the page on github.com that takes a manifest and the
conversion of the code it hands back (`POST /app-manifests/{code}/conversions`).

On GitHub, `settings/apps/new` (or an organisation's) shows the manifest's App for a
confirmation, then redirects to the manifest's `redirect_url` with `?code=` and the `state`
it was given; the code turns into the App's credentials once, within an hour, with no
authentication. The simulator confirms at once: the redirect is the answer to the form.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

from aiohttp import web

from bot.sim.auth import AppKeys
from bot.sim.shapes import HTML, iso, node_id
from bot.sim.state import now

if TYPE_CHECKING:
    from bot.sim.routes import Handler
    from bot.sim.server import Simulator

CODE_LIFETIME_S = 3600.0  # GitHub: "you have one hour to exchange the code"
CONVERSIONS_DOCS = "https://docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest"
ALREADY_CONVERTED = "This manifest code has already been used to create an App."
USER_PAGE = "/settings/apps/new"
ORG_PAGE = "/organizations/{org}/settings/apps/new"
CONVERSION = "/app-manifests/{code}/conversions"
# Routes that are github.com's or need no credential, so the API's auth is not asked for.
PUBLIC_ROUTES = frozenset({USER_PAGE, ORG_PAGE, CONVERSION})


@dataclass
class ManifestCode:
    manifest: dict[str, Any]
    owner: str
    issued_at: float
    converted: bool = False


@dataclass
class CreatedApp:
    """An App the flow registered: what was asked for, and the credentials handed out."""

    id: int
    slug: str
    owner: str
    manifest: dict[str, Any]
    pem: str
    webhook_secret: str
    client_secret: str


@dataclass
class ManifestFlow:
    """Codes handed out by the manifest page and the Apps their conversions created."""

    codes: dict[str, ManifestCode] = field(default_factory=dict)
    apps: list[CreatedApp] = field(default_factory=list)
    # Tests move this back to make a code older than its hour.
    clock: Callable[[], float] = time.monotonic


class ManifestRoutes:
    def __init__(self, sim: Simulator) -> None:
        self.sim = sim

    @property
    def flow(self) -> ManifestFlow:
        return self.sim.manifests

    def table(self) -> list[tuple[str, str, Handler]]:
        return [
            ("POST", USER_PAGE, self.new_app),
            ("POST", ORG_PAGE, self.new_app),
            ("POST", CONVERSION, self.convert),
        ]

    async def new_app(self, request: web.Request) -> web.StreamResponse:
        """The form post: `manifest` (JSON) in the body, `state` in the query."""
        form = await request.post()
        try:
            manifest = json.loads(str(form.get("manifest", "")))
        except json.JSONDecodeError:
            return _page(400, "Invalid GitHub App configuration: the manifest is not JSON.")
        problem = manifest_problem(manifest)
        if problem is not None:
            return _page(422, f"Invalid GitHub App configuration: {problem}")
        owner = request.match_info.get("org") or self.sim.world.repo.owner
        code = secrets.token_hex(10)
        self.flow.codes[code] = ManifestCode(manifest, owner, self.flow.clock())
        query = {"code": code}
        if "state" in request.query:
            query["state"] = request.query["state"]
        # Returned, not raised: the simulator turns raised HTTP errors into API JSON.
        return web.Response(
            status=302, headers={"Location": f"{manifest['redirect_url']}?{urlencode(query)}"}
        )

    async def convert(self, request: web.Request) -> web.Response:
        issued = self.flow.codes.get(request.match_info["code"])
        if issued is None or self.flow.clock() - issued.issued_at > CODE_LIFETIME_S:
            return web.json_response(
                {"message": "Not Found", "documentation_url": CONVERSIONS_DOCS}, status=404
            )
        if issued.converted:
            return web.json_response(
                {"message": ALREADY_CONVERTED, "documentation_url": CONVERSIONS_DOCS}, status=422
            )
        issued.converted = True
        app = CreatedApp(
            id=self.sim.world.new_id("app"),
            slug=_slug(str(issued.manifest["name"])),
            owner=issued.owner,
            manifest=issued.manifest,
            pem=AppKeys().private_key_pem,
            webhook_secret=secrets.token_hex(20),
            client_secret=secrets.token_hex(20),
        )
        self.flow.apps.append(app)
        return web.json_response(self._shape(app), status=201)

    def _shape(self, app: CreatedApp) -> dict[str, Any]:
        """GitHub's answer: the App object plus its one-time credentials."""
        created = iso(now())
        manifest = app.manifest
        return {
            "id": app.id,
            "slug": app.slug,
            "node_id": node_id("Integration", app.id),
            "client_id": f"Iv1.{secrets.token_hex(8)}",
            "owner": self.sim.shapes.user(app.owner),
            "name": manifest["name"],
            "description": manifest.get("description") or "",
            "external_url": manifest["url"],
            "html_url": f"{HTML}/apps/{app.slug}",
            "created_at": created,
            "updated_at": created,
            "permissions": {**manifest.get("default_permissions", {}), "metadata": "read"},
            "events": list(manifest.get("default_events", [])),
            "client_secret": app.client_secret,
            "webhook_secret": app.webhook_secret,
            "pem": app.pem,
        }


# Events GitHub delivers to every App and refuses in `default_events` ("Default events
# unsupported: installation and installation_repositories").
LIFECYCLE_EVENTS = frozenset(
    {"installation", "installation_repositories", "installation_target",
     "github_app_authorization", "meta", "ping"}
)  # fmt: skip
# The repository permissions that let an App subscribe to each event it may list (GitHub's
# webhook documentation, "Availability"); an event none of them covers is refused ("Default
# events are not supported by permissions: check_run").
EVENT_PERMISSIONS: dict[str, frozenset[str]] = {
    "check_run": frozenset({"checks"}),
    "check_suite": frozenset({"checks"}),
    "issue_comment": frozenset({"issues", "pull_requests"}),
    "issues": frozenset({"issues"}),
    "label": frozenset({"issues", "pull_requests"}),
    "merge_group": frozenset({"merge_queues"}),
    "pull_request": frozenset({"pull_requests"}),
    "pull_request_review": frozenset({"pull_requests"}),
    "pull_request_review_comment": frozenset({"pull_requests"}),
    "push": frozenset({"contents"}),
    "repository": frozenset({"metadata"}),
    "status": frozenset({"statuses"}),
    "workflow_job": frozenset({"actions"}),
    "workflow_run": frozenset({"actions"}),
}


def manifest_problem(manifest: Any) -> str | None:
    """What GitHub would refuse in a manifest, or None. It needs `url`, and a `redirect_url`
    to send the code to; a webhook needs its `url`; default events must be ones an App can
    subscribe to, each covered by a permission the manifest asks for."""
    if not isinstance(manifest, dict):
        return "the manifest is not a JSON object"
    for key in ("name", "url", "redirect_url"):
        if not isinstance(manifest.get(key), str) or not manifest[key]:
            return f"{key} is missing"
    if urlsplit(manifest["redirect_url"]).scheme not in ("http", "https"):
        return "redirect_url is not a web address"
    hook = manifest.get("hook_attributes")
    if hook is not None and (not isinstance(hook, dict) or not hook.get("url")):
        return "hook_attributes.url is missing"
    return _events_problem(manifest.get("default_events"), manifest.get("default_permissions"))


def _events_problem(events: Any, permissions: Any) -> str | None:
    if events is None:
        return None
    if not isinstance(events, list) or not all(isinstance(e, str) for e in events):
        return "default_events is not a list of event names"
    granted = set(permissions) if isinstance(permissions, dict) else set()
    unsupported = [e for e in events if e in LIFECYCLE_EVENTS or e not in EVENT_PERMISSIONS]
    if unsupported:
        return f"Default events unsupported: {_and(unsupported)}"
    uncovered = [e for e in events if not EVENT_PERMISSIONS[e] & granted]
    if uncovered:
        return f"Default events are not supported by permissions: {_and(uncovered)}"
    return None


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "app"


def _page(status: int, text: str) -> web.Response:
    return web.Response(
        status=status,
        text=f"<!doctype html><title>GitHub</title><p>{escape(text)}</p>",
        content_type="text/html",
    )
