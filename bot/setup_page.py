"""`flakybot setup`: register the GitHub App from `app.yml` in a browser, keep its
credentials in `.env`, and show where to install it (bot/registration.py has the rules).

A local page (127.0.0.1 only) holds a "Register GitHub App" button: a form that posts the
manifest to GitHub with a random `state`. GitHub sends the browser back to this page's
`/done` with a code and that state; the page checks the state, exchanges the code and
writes `.env`, then the command ends. It is a command of its own rather than a page of
`flakybot serve`: serve must never answer without credentials in production, where a
missing variable has to stop it, not open a registration page to whoever reaches it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import sys
import webbrowser
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp
from aiohttp import web
from aiohttp.typedefs import Handler

from bot.registration import (
    ENV_KEYS,
    RegisteredApp,
    SetupError,
    app_settings_url,
    env_lines,
    manifest_for,
    new_app_url,
    refuse_existing,
    registered_app,
    write_env,
)

CONVERSION_TIMEOUT_S = 30.0
# Variables that, set in the environment, win over `.env` (pydantic-settings reads both).
_OVERRIDING = ("APP_ID", "PRIVATE_KEY", "PRIVATE_KEY_PATH", "WEBHOOK_SECRET")
_STYLE = "body{font:16px/1.5 sans-serif;max-width:40em;margin:2em auto;padding:0 1em}"


@dataclass(frozen=True)
class SetupOptions:
    manifest: dict[str, Any]  # app.yml as read
    webhook_url: str
    env_file: Path
    github_url: str = "https://github.com"
    api_url: str = "https://api.github.com"
    org: str | None = None
    name: str | None = None
    force: bool = False
    port: int = 0


class SetupPage:
    """The local page and its one registration: a fresh `state`, checked on the way back."""

    def __init__(self, options: SetupOptions) -> None:
        self.options = options
        self.state = secrets.token_urlsafe(32)
        self.url = ""  # http://127.0.0.1:PORT, once started
        self.app: RegisteredApp | None = None
        self.finished = asyncio.Event()
        self.exit_status = 0
        self._converting = asyncio.Lock()
        self._runner: web.AppRunner | None = None

    async def start(self) -> str:
        app = web.Application(middlewares=[self._own_host_only])
        app.router.add_get("/", self.start_page)
        app.router.add_get("/done", self.done_page)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.options.port)
        await site.start()
        server = site._server
        assert isinstance(server, asyncio.base_events.Server)
        self.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        return self.url

    @web.middleware
    async def _own_host_only(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Answer only requests addressed to this page by its own name: a page elsewhere
        whose name was re-pointed at 127.0.0.1 (DNS rebinding) sends its own name as Host,
        and must not read the state nor finish the flow with a code of its choosing."""
        port = self.url.rsplit(":", 1)[-1]
        if request.host not in (f"127.0.0.1:{port}", f"localhost:{port}"):
            return _page(421, "Wrong address", f"<p>Open {escape(self.url)}/ instead.</p>")
        return await handler(request)

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def manifest_json(self) -> str:
        return json.dumps(
            manifest_for(
                self.options.manifest,
                webhook_url=self.options.webhook_url,
                redirect_url=f"{self.url}/done",
                name=self.options.name,
            )
        )

    async def start_page(self, request: web.Request) -> web.Response:
        account = f"the organisation {self.options.org}" if self.options.org else "your account"
        action = new_app_url(self.options.github_url, self.options.org, self.state)
        return _page(
            200,
            "Register the GitHub App",
            f"<p>GitHub will create the App from <code>app.yml</code> for {escape(account)},"
            f" with webhooks sent to <code>{escape(self.options.webhook_url)}</code>, and"
            f" send you back here. Its credentials go into"
            f" <code>{escape(str(self.options.env_file))}</code>.</p>"
            f'<form action="{escape(action)}" method="post">'
            f'<input type="hidden" name="manifest" value="{escape(self.manifest_json())}">'
            '<button type="submit">Register GitHub App</button></form>',
        )

    async def done_page(self, request: web.Request) -> web.Response:
        if self.app is not None:
            return self._registered_page()
        state, code = request.query.get("state", ""), request.query.get("code", "")
        if not secrets.compare_digest(state.encode(), self.state.encode()):
            return self._retry(
                400,
                "This answer does not belong to the registration this page started (its state"
                " does not match), so its code was not used.",
            )
        if not code:
            return self._retry(400, "GitHub sent no code back.")
        async with self._converting:  # a reload while the code is exchanged waits for it
            if self.app is not None:
                return self._registered_page()
            try:
                # Before the code is spent: it stays good for an hour if the file is moved.
                refuse_existing(self.options.env_file, force=self.options.force)
                app = await self._convert(code)
            except SetupError as exc:
                return self._retry(exc.status, str(exc))
            try:
                write_env(self.options.env_file, env_lines(app), force=self.options.force)
            except (SetupError, OSError) as exc:
                return self._unsaved(app, exc)
            self.app = app
        _report(app, self.options)
        self.finished.set()
        return self._registered_page()

    async def _convert(self, code: str) -> RegisteredApp:
        url = f"{self.options.api_url.rstrip('/')}/app-manifests/{quote(code, safe='')}/conversions"
        headers = {"Accept": "application/vnd.github+json", "User-Agent": "flakybot-setup"}
        timeout = aiohttp.ClientTimeout(total=CONVERSION_TIMEOUT_S)
        try:
            async with (
                aiohttp.ClientSession(timeout=timeout) as session,
                session.post(url, headers=headers) as answer,
            ):
                status = answer.status
                body = await answer.json(content_type=None) if status == 201 else None
        except (aiohttp.ClientError, TimeoutError, json.JSONDecodeError) as exc:
            raise SetupError(f"could not reach {self.options.api_url}: {exc}", 502) from None
        if status == 201:
            return registered_app(body)
        raise _conversion_refused(status, self.options.github_url)

    def _retry(self, status: int, message: str, *, again: bool = True) -> web.Response:
        print(f"flakybot setup: {message}", file=sys.stderr)
        title = "The App was not registered" if again else "The App's credentials were not kept"
        link = "<p><a href='/'>Start again</a></p>" if again else ""
        return _page(status, title, f"<p>{escape(message)}</p>{link}")

    def _unsaved(self, app: RegisteredApp, exc: Exception) -> web.Response:
        """The App exists but its credentials could not be kept, and GitHub hands out its
        key once: say where to make a new one, never show this one."""
        where = app_settings_url(self.options.github_url, self.options.org, app.slug)
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        self.exit_status = 1
        self.finished.set()
        return self._retry(
            500,
            f"The App {app.slug} (id {app.id}) is registered, but {self.options.env_file} could"
            f" not be written: {reason}. Its key is not shown: generate a private key and set"
            f" a webhook secret at {where}, then fill in APP_ID, PRIVATE_KEY_PATH and"
            " WEBHOOK_SECRET by hand.",
            again=False,
        )

    def _registered_page(self) -> web.Response:
        assert self.app is not None
        install = escape(self.app.install_url)
        return _page(
            200,
            "The GitHub App is registered",
            f"<p>{escape(', '.join(ENV_KEYS))} are in"
            f" <code>{escape(str(self.options.env_file))}</code>.</p>"
            f'<p><a id="install" href="{install}">Install it on your repositories</a></p>'
            "<p>Then run <code>flakybot serve</code>.</p>",
        )


def _conversion_refused(status: int, github_url: str) -> SetupError:
    apps = f"{github_url.rstrip('/')}/settings/apps"
    if status == 404:
        return SetupError(
            "GitHub does not know this code or it is more than an hour old: register again.", 410
        )
    if status == 422:
        return SetupError(
            "GitHub has already turned this code into an App (a code works once). The App"
            f" exists: delete it at {apps} and register again, or generate a private key"
            " there and fill in .env by hand.",
            409,
        )
    return SetupError(f"GitHub refused the code ({status}): register again.", 502)


def _report(app: RegisteredApp, options: SetupOptions) -> None:
    """What the person who ran the command needs next; never the key or the secret."""
    print(f"Registered the GitHub App {app.slug} (id {app.id}): {app.html_url}")
    print(f"Wrote {', '.join(ENV_KEYS)} to {options.env_file} (readable by you alone).")
    print(f"Install it on your repositories: {app.install_url}")
    overriding = [name for name in _OVERRIDING if os.environ.get(name)]
    if overriding:
        print(f"Note: {', '.join(overriding)} set in the environment win over the file.")
    print("Then run: flakybot serve")


def _page(status: int, title: str, body: str) -> web.Response:
    return web.Response(
        status=status,
        content_type="text/html",
        text=f'<!doctype html><meta charset="utf-8"><title>{escape(title)}</title>'
        f"<style>{_STYLE}</style><h1>{escape(title)}</h1>{body}",
        headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"},
    )


async def run_setup(options: SetupOptions, *, open_browser: bool) -> int:
    """Serve the page until an App is registered (0) or the command is interrupted."""
    refuse_existing(options.env_file, force=options.force)
    page = SetupPage(options)
    url = await page.start()
    try:
        print(f'Open {url}/ and press "Register GitHub App" (Ctrl-C to stop).', flush=True)
        if open_browser:
            with contextlib.suppress(webbrowser.Error):
                webbrowser.open(f"{url}/")
        await page.finished.wait()
        return page.exit_status
    finally:
        await page.close()
