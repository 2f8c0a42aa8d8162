"""Assemble one running bot: store, GitHub access, worker and web app, started and stopped."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import aiohttp
from aiohttp import web

from bot import dashboard
from bot.config import CacheMemory, ConfigError, Settings
from bot.connections import GUARD_KEY, IDLE_SECONDS, LINGER_SECONDS, Limits, server_log
from bot.github.client import GitHubApp
from bot.handlers import dispatch, wants
from bot.handlers.context import BotContext
from bot.handlers.sources import SourceCache
from bot.inbox import Worker
from bot.metrics import Metrics
from bot.store import Delivery, Store, open_store
from bot.triage.imports import WalkLimits
from bot.web import create_app
from bot.webhook_proxy import WebhookProxy


@dataclass
class Bot:
    settings: Settings
    store: Store
    session: aiohttp.ClientSession
    github: GitHubApp
    metrics: Metrics
    worker: Worker
    app: web.Application
    _runner: web.AppRunner | None = field(default=None, init=False)
    _listener: asyncio.Server | None = field(default=None, init=False)
    proxy: WebhookProxy | None = field(default=None, init=False)
    url: str = field(default="", init=False)

    @classmethod
    async def create(
        cls, settings: Settings, *, poll_seconds: float = 1.0, open_dashboard: bool = False
    ) -> Bot:
        """`open_dashboard`: serve public repositories' pages without DASHBOARD_TOKEN (demo)."""
        missing = settings.missing_for_serve()
        if missing:
            raise ConfigError(f"set {', '.join(missing)}")
        assert settings.app_id is not None
        # Checked before anything opens: a key that cannot sign would fail every delivery.
        private_key = settings.private_key_pem()
        store = await open_store(settings.database_url)
        metrics = Metrics()
        session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60))
        github = GitHubApp(
            session,
            api_url=settings.github_api_url,
            app_id=settings.app_id,
            private_key=private_key,
            metrics=metrics,
            write_interval=settings.write_interval,
            write_schedule=store.write_schedule(),
            response_cache_bytes=CacheMemory(settings.cache_memory_mb).responses,
        )
        ctx = _context(settings, store, github, metrics)

        async def run(delivery: Delivery) -> None:
            await dispatch(delivery, ctx)

        worker = Worker(
            store,
            run,
            metrics,
            concurrency=settings.worker_concurrency,
            lease_seconds=settings.claim_lease_seconds,
            max_attempts=settings.max_attempts,
            poll_seconds=poll_seconds,
            retention_days=settings.delivery_retention_days,
            wants=wants,
        )
        app = _app(settings, store, worker, metrics, open_dashboard=open_dashboard)
        return cls(settings, store, session, github, metrics, worker, app)

    async def start(self, host: str | None = None, port: int | None = None) -> str:
        """Serve HTTP and start the worker; returns the base URL."""
        self._runner = web.AppRunner(
            self.app,
            access_log=None,
            keepalive_timeout=IDLE_SECONDS,
            lingering_time=LINGER_SECONDS,
            logger=server_log,
        )
        await self._runner.setup()
        assert self._runner.server is not None
        # Every connection through the guard (bot/connections.py), which aiohttp's own sites
        # have no place for.
        self._listener = await asyncio.get_running_loop().create_server(
            self.app[GUARD_KEY].protocol_factory(self._runner.server),
            host or self.settings.host,
            self.settings.port if port is None else port,
        )
        bound_host, bound_port = self._listener.sockets[0].getsockname()[:2]
        self.url = f"http://{bound_host}:{bound_port}"
        self.worker.start()
        if self.settings.webhook_proxy_url:
            local = f"http://{_loopback(bound_host)}:{bound_port}{self.settings.webhook_path}"
            self.proxy = WebhookProxy(self.session, self.settings.webhook_proxy_url, local)
            self.proxy.start()
        return self.url

    async def wait_idle(self, settle_seconds: float = 0.3, limit_seconds: float = 60.0) -> None:
        """Wait until no delivery is waiting or in progress (for the demo and tests)."""
        deadline = time.monotonic() + limit_seconds
        while time.monotonic() < deadline:
            depth, _ = await self.store.inbox_depth()
            if depth == 0:
                await asyncio.sleep(settle_seconds)
                depth, _ = await self.store.inbox_depth()
                if depth == 0:
                    return
            await asyncio.sleep(0.05)
        raise TimeoutError("the bot still had deliveries in hand when the wait ended")

    async def wait_handled(self, event: str, limit_seconds: float = 30.0) -> None:
        """Wait until no delivery of `event` is waiting or in progress, whatever else is (the
        bot's own scheduled work waits for its time)."""
        deadline = time.monotonic() + limit_seconds
        while time.monotonic() < deadline:
            if not await self.store.waiting(event):
                return
            await asyncio.sleep(0.02)
        raise TimeoutError(f"the bot still had {event} deliveries in hand when the wait ended")

    async def close(self) -> None:
        if self.proxy is not None:
            await self.proxy.close()
        await self.worker.stop()
        if self._listener is not None:
            self._listener.close()
        if self._runner is not None:
            await self._runner.cleanup()
        await self.session.close()
        await self.store.close()


def _loopback(host: str) -> str:
    """Where this machine reaches a server listening on `host` (any address: loopback)."""
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if ":" in host:
        return "[::1]" if host == "::" else f"[{host}]"
    return host


def _context(settings: Settings, store: Store, github: GitHubApp, metrics: Metrics) -> BotContext:
    return BotContext(
        store=store,
        github=github,
        metrics=metrics,
        log_cap_bytes=settings.log_cap_bytes,
        tracking_refresh_seconds=settings.tracking_refresh_seconds,
        dashboard_url=settings.dashboard_url or "",
        sources=SourceCache.within(
            WalkLimits(
                files=0 if settings.import_depth == 0 else settings.import_files,
                bytes=settings.import_bytes,
                file_bytes=settings.import_file_bytes,
            ),
            CacheMemory(settings.cache_memory_mb),
        ),
    )


def _app(
    settings: Settings, store: Store, worker: Worker, metrics: Metrics, *, open_dashboard: bool
) -> web.Application:
    token = settings.dashboard_token
    return create_app(
        store=store,
        worker=worker,
        metrics=metrics,
        webhook_secret=settings.secret(),
        webhook_path=settings.webhook_path,
        dashboard_access=dashboard.Access(
            token=token.get_secret_value() if token else None, open_public=open_dashboard
        ),
        trusted_proxies=settings.trusted_proxies or (),
        limits=Limits(
            header_seconds=settings.header_timeout_seconds,
            body_seconds=settings.body_timeout_seconds,
            body_grace_seconds=settings.body_grace_seconds,
            min_body_rate=settings.min_body_rate,
            max_connections=settings.max_connections,
            max_per_client=settings.max_connections_per_client,
            proxies=settings.trusted_proxies or (),
        ),
    )
