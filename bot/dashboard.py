"""The dashboard's routes and who may see them.

Off unless DASHBOARD_TOKEN is set; then every page wants the token, as a bearer token or
through the sign-in form, which sets a cookie holding an HMAC of the token (never the token
itself). `flakybot demo` serves it without a token, and then only public repositories: a
private repository's test names are never shown to someone without the token.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import math
import time
from dataclasses import dataclass, field

from aiohttp import web

from bot.connections import read_body
from bot.report.dashboard import (
    chart_days,
    render_dead_letters,
    render_index,
    render_login,
    render_repo,
    render_test,
)
from bot.report.dashboard_pull import render_pull, test_keys
from bot.report.dashboard_quarantine import render_quarantined
from bot.report.flaky_tests import (
    DAY,
    RepoSummary,
    owned_by,
    summarise_repos,
    summarise_tests,
)
from bot.report.models import CheckReport
from bot.report.quarantine_list import quarantine_list
from bot.store import Delivery, DeliveryState, Store
from bot.store.gated_runs import saved_by_gate
from bot.store.recorded_runs import recorded_runs
from bot.throttle import FailureThrottle, client_key

log = logging.getLogger(__name__)

COOKIE = "flakybot_dashboard"
WINDOW_DAYS = 30


@dataclass(frozen=True)
class Access:
    token: str | None  # DASHBOARD_TOKEN
    open_public: bool = False  # serve public repositories without a token (the demo)
    failures: FailureThrottle = field(default_factory=FailureThrottle, compare=False)

    @property
    def enabled(self) -> bool:
        return bool(self.token) or self.open_public

    def cookie_value(self) -> str:
        assert self.token
        return hmac.new(self.token.encode(), b"flakybot dashboard", hashlib.sha256).hexdigest()

    def token_matches(self, given: str) -> bool:
        return self.token is not None and _same(given, self.token)

    def cookie_matches(self, given: str) -> bool:
        return bool(self.token) and _same(given, self.cookie_value())


def _same(given: str, expected: str) -> bool:
    """Compared in constant time, as SHA-256 digests: equal lengths, so the time taken says
    nothing of the expected text, not even its length; and a header's bytes that are not
    UTF-8 make a mismatch, not an error."""
    return hmac.compare_digest(_digest(given), _digest(expected))


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


STORE = web.AppKey("dashboard_store", Store)
ACCESS = web.AppKey("dashboard_access", Access)


def install(app: web.Application, store: Store, access: Access) -> None:
    """Add the dashboard's routes (after every other route: `/{owner}/{repo}` is broad)."""
    app[STORE] = store
    app[ACCESS] = access
    app.router.add_get("/", index)
    app.router.add_get("/login", login_form)
    app.router.add_get("/deliveries", dead_letters)
    app.router.add_post("/login", login)
    app.router.add_get("/{owner}/{repo}", repo_page)
    app.router.add_get("/{owner}/{repo}/tests/{test_key}", test_page)
    app.router.add_get("/{owner}/{repo}/quarantined", quarantined_page)
    app.router.add_get("/{owner}/{repo}/quarantined.json", quarantined)
    app.router.add_get(r"/{owner}/{repo}/pull/{number:\d{1,10}}", pull_page)


def _html(text: str, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(
        text=text,
        status=status,
        content_type="text/html",
        headers={
            "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
            "img-src 'self'; form-action 'self'; frame-ancestors 'none'",
            "X-Content-Type-Options": "nosniff",
            "Cache-Control": "no-store",
            **(headers or {}),
        },
    )


async def _visible_repo(request: web.Request) -> str | web.Response:
    """The page's repository when the visitor may see it, or the answer refusing the page
    (a repository the visitor may not see is one that does not exist: 404)."""
    gate = _gate(request)
    if isinstance(gate, web.Response):
        return gate
    repo = f"{request.match_info['owner']}/{request.match_info['repo']}"
    if repo not in await _visible(request, gate[1]):
        raise web.HTTPNotFound(text="No such repository here.\n")
    return repo


def _gate(request: web.Request) -> tuple[Access, bool] | web.Response:
    """(access, whether private repositories may be shown), or the answer refusing the page."""
    access = request.app[ACCESS]
    if not access.enabled:
        return web.Response(
            status=404, text="The dashboard is off: set DASHBOARD_TOKEN to turn it on.\n"
        )
    if not access.token:
        return access, False
    # The cookie is a MAC of the token, as long as a SHA-256 digest: there is no guessing it,
    # so it is not throttled, and a browser signed in before keeps working from an address
    # someone else's wrong guesses hold back (a shared NAT).
    if access.cookie_matches(request.cookies.get(COOKIE, "")):
        return access, True
    header = request.headers.get("Authorization", "")
    if not header.startswith("Bearer "):
        raise web.HTTPSeeOther("/login")
    wait = _wait(request, access)
    if wait is not None:
        raise web.HTTPTooManyRequests(text=_too_many(wait) + "\n", headers=_retry_after(wait))
    if _guess(request, access, header.removeprefix("Bearer ").strip()):
        return access, True
    raise web.HTTPUnauthorized(
        text="That is not the dashboard token.\n", headers={"WWW-Authenticate": "Bearer"}
    )


def _wait(request: web.Request, access: Access) -> int | None:
    """Whole seconds the client must wait before its next guess at the token; None: none."""
    wait = access.failures.retry_after(client_key(request.remote), time.monotonic())
    return None if wait is None else max(1, math.ceil(wait))


def _guess(request: web.Request, access: Access, given: str) -> bool:
    """Whether `given` is the token; a wrong one counts against the client's address."""
    client = client_key(request.remote)
    if access.token_matches(given):
        access.failures.succeeded(client)
        return True
    now = time.monotonic()
    access.failures.failed(client, now)
    if access.failures.retry_after(client, now) is not None:
        log.warning("dashboard: too many wrong tokens from %s; its next ones wait", client)
    return False


def _too_many(wait: int) -> str:
    return f"Too many wrong tokens from your address: try again in {wait} s."


def _retry_after(wait: int) -> dict[str, str]:
    return {"Retry-After": str(wait)}


async def _visible(request: web.Request, show_private: bool) -> list[str]:
    repos = await request.app[STORE].repositories()
    return [repo for repo, private in repos if show_private or not private]


async def index(request: web.Request) -> web.Response:
    gate = _gate(request)
    if isinstance(gate, web.Response):
        return gate
    _, show_private = gate
    store = request.app[STORE]
    since = time.time() - WINDOW_DAYS * DAY
    summaries: list[RepoSummary] = []
    for repo in await _visible(request, show_private):
        summaries += summarise_repos(*await store.repo_history(repo, since))
    return _html(render_index(summaries))


async def repo_page(request: web.Request) -> web.Response:
    repo = await _visible_repo(request)
    if isinstance(repo, web.Response):
        return repo
    now = time.time()
    store = request.app[STORE]
    runs, occurrences = await store.repo_history(repo, now - WINDOW_DAYS * DAY)
    keys = sorted({o.test_key for o in occurrences})
    tracking = await store.tracking_numbers(repo, keys)
    tests = summarise_tests(occurrences, runs, now=now, days=WINDOW_DAYS, tracking=tracking)
    owners = await store.tracking_owners(repo, keys)
    for test in tests:
        test.owners = owners.get(test.test_key, [])
    owner = request.query.get("owner")
    if owner is not None:
        tests = owned_by(tests, owner)
    return _html(render_repo(repo, tests, days=WINDOW_DAYS, owner=owner))


async def test_page(request: web.Request) -> web.Response:
    repo = await _visible_repo(request)
    if isinstance(repo, web.Response):
        return repo
    key = request.match_info["test_key"]  # already decoded, once: a key may hold "%25"
    now = time.time()
    runs, occurrences = await request.app[STORE].repo_history(repo, now - WINDOW_DAYS * DAY)
    mine = [o for o in occurrences if o.test_key == key]
    summaries = summarise_tests(mine, runs, now=now, days=WINDOW_DAYS)
    if not summaries:
        raise web.HTTPNotFound(text="No failure of that test in the last 30 days.\n")
    store = request.app[STORE]
    checks = sorted({o.check_name for o in mine})
    async with asyncio.TaskGroup() as tg:
        owners = tg.create_task(store.tracking_owners(repo, [key]))
        recorded = tg.create_task(recorded_runs(store, repo, checks, now - WINDOW_DAYS * DAY))
    summaries[0].owners = owners.result().get(key, [])
    contexts, usual = recorded.result()
    days = chart_days(mine, runs, now, WINDOW_DAYS)
    return _html(
        render_test(
            repo,
            summaries[0],
            mine,
            days,
            runs,
            contexts=contexts,
            run_contexts=list(contexts.values()),
            usual=usual,
        )
    )


async def quarantined_page(request: web.Request) -> web.Response:
    """What is quarantined in the repository, whose, since when and until when."""
    repo = await _visible_repo(request)
    if isinstance(repo, web.Response):
        return repo
    store, now = request.app[STORE], time.time()
    on = await store.active_quarantines(repo, now)
    return _html(render_quarantined(repo, on, await saved_by_gate(store, repo, on, now)))


async def quarantined(request: web.Request) -> web.Response:
    """The repository's quarantined tests as JSON, for test runners to skip or soften: read
    with the dashboard token as a bearer token (a client without one is answered 401, not
    sent to the sign-in form), or anonymously for a public repository where the dashboard
    serves those (the demo). A repository the reader may not see does not exist (404)."""
    access = request.app[ACCESS]
    signed_in = access.cookie_matches(request.cookies.get(COOKIE, ""))
    bearer = request.headers.get("Authorization", "").startswith("Bearer ")
    if access.token and not signed_in and not bearer:
        raise web.HTTPUnauthorized(
            text="The dashboard token is needed, as a bearer token.\n",
            headers={"WWW-Authenticate": "Bearer"},
        )
    repo = await _visible_repo(request)
    if isinstance(repo, web.Response):
        return repo
    on = await request.app[STORE].active_quarantines(repo, time.time())
    return web.json_response(
        quarantine_list(repo, on, time.time()),
        headers={"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"},
    )


async def pull_page(request: web.Request) -> web.Response:
    """Every check and test the bot triaged on one PR, with the whole evidence."""
    repo = await _visible_repo(request)
    if isinstance(repo, web.Response):
        return repo
    number = int(request.match_info["number"])
    store = request.app[STORE]
    attempts = await store.check_attempts_for_pr(repo, number)
    if not attempts:
        raise web.HTTPNotFound(text="The bot has triaged no check on that pull request.\n")
    newest = sorted(attempts, key=lambda a: (a.recorded_at, a.attempt), reverse=True)
    reports = [
        CheckReport(
            check_name=a.check_name,
            html_url=a.html_url,
            head_sha=a.head_sha,
            attempt=a.attempt,
            conclusion=a.conclusion,
            decisions=a.decisions,
            rerun_note=a.rerun_note,
        )
        for a in newest
    ]
    tracking = await store.tracking_numbers(repo, test_keys(reports))
    return _html(render_pull(repo, number, reports, tracking))


async def login_form(request: web.Request) -> web.Response:
    return _html(render_login())


async def login(request: web.Request) -> web.Response:
    access = request.app[ACCESS]
    if not access.token:
        raise web.HTTPNotFound(text="There is nothing to sign in to: no DASHBOARD_TOKEN is set.\n")
    wait = _wait(request, access)
    if wait is not None:
        return _html(render_login(_too_many(wait)), status=429, headers=_retry_after(wait))
    form = await read_body(request, request.post)
    given = form.get("token")
    if not _guess(request, access, given if isinstance(given, str) else ""):
        return _html(render_login("That is not the dashboard token."), status=401)
    response = web.HTTPSeeOther("/")
    response.set_cookie(
        COOKIE,
        access.cookie_value(),
        httponly=True,
        samesite="Strict",
        secure=request.secure,
        max_age=7 * 86_400,
    )
    raise response


DEAD_LETTERS_SHOWN = 100


async def dead_letters(request: web.Request) -> web.Response:
    """Deliveries given up on; without the token, only those of known public repositories."""
    gate = _gate(request)
    if isinstance(gate, web.Response):
        return gate
    show_private = gate[1]
    dead = await request.app[STORE].list_deliveries(DEAD_LETTERS_SHOWN, [DeliveryState.DEAD])
    visible = set(await _visible(request, show_private))
    shown = [(d, _repository(d)) for d in dead]
    if not show_private:
        shown = [(d, repo) for d, repo in shown if repo in visible]
    return _html(
        render_dead_letters(shown, hidden=len(dead) - len(shown), limit=DEAD_LETTERS_SHOWN)
    )


def _repository(delivery: Delivery) -> str | None:
    try:
        data = json.loads(delivery.payload)
    except ValueError:
        return None
    repository = data.get("repository") if isinstance(data, dict) else None
    name = repository.get("full_name") if isinstance(repository, dict) else None
    return name if isinstance(name, str) else None
