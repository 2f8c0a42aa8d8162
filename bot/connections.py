"""The listening socket's guard: deadlines for reading a request and a cap on connections.

aiohttp waits for a request's head and body as long as the client likes and takes every
connection it is offered, until the process runs out of file descriptors: a few hundred
silent, half-sent requests locked everyone out, `/healthz` included, and nothing said so.
Every connection `flakybot serve` accepts passes through a `Guard`:

- a request's head must be complete `header_seconds` after its first byte arrived;
- its body `body_seconds` after the handler starts reading it (`read_body`);
- at most `max_connections` are open: one more closes the connection that has waited
  longest for a request (idle or half-sent), so a newcomer always gets in; when every
  connection is busy with a request, the newcomer is answered 503 and closed.

Each of these is counted in `flakybot_connections_closed` and logged, one line per reason
every few seconds at most, so a flood cannot flood the log too. A connection idle between
requests (nothing of a next request sent) is closed quietly by aiohttp after IDLE_SECONDS:
keep-alive is normal, and longer than a reverse proxy's own idle timeout (60 s in nginx), so
the proxy never sends on a connection the bot is closing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar, cast

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from bot.config import (
    DEFAULT_BODY_TIMEOUT_SECONDS,
    DEFAULT_HEADER_TIMEOUT_SECONDS,
    DEFAULT_MAX_CONNECTIONS,
)
from bot.metrics import Metrics

log = logging.getLogger(__name__)

T = TypeVar("T")

IDLE_SECONDS = 75.0
# After answering a request whose body was not all read (a 408, a 413, a 401 before the
# body), aiohttp reads on and discards for this long so the client sees the answer rather
# than a reset. Its default, 10 s, let a silent sender hold the connection that long again.
LINGER_SECONDS = 1.0
# One log line per reason this often at most; the metric counts every one.
LOG_EVERY_SECONDS = 10.0
_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n"
    b"Retry-After: 1\r\n\r\n"
)


@dataclass(frozen=True)
class Limits:
    header_seconds: float = DEFAULT_HEADER_TIMEOUT_SECONDS
    body_seconds: float = DEFAULT_BODY_TIMEOUT_SECONDS
    max_connections: int = DEFAULT_MAX_CONNECTIONS


class _Connection(asyncio.Protocol):
    """One accepted connection: aiohttp's protocol inside, the guard's clocks around it."""

    def __init__(self, guard: Guard, inner: asyncio.Protocol) -> None:
        self._guard = guard
        self._inner = inner
        self.transport: asyncio.Transport | None = None
        self.peer = "unknown"
        self.admitted = False
        # A request's handler is running: its bytes are a body, and it is not evicted.
        self.busy = False
        self.head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, but do all it does.
        self.transport = cast(asyncio.Transport, transport)
        peer = transport.get_extra_info("peername")
        self.peer = str(peer[0]) if isinstance(peer, tuple) and peer else "unknown"
        self.admitted = self._guard.admit(self)
        if self.admitted:
            self._inner.connection_made(transport)
        else:
            self.transport.write(_BUSY)
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        if not self.admitted:
            return
        if not self.busy and self.head_timer is None:
            self.head_timer = self._guard.time_head(self)
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received() if self.admitted else None

    def connection_lost(self, exc: Exception | None) -> None:
        self._guard.forget(self)
        if self.admitted:
            self._inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


class _Lines:
    """A log line for each kind of closing, at most one per LOG_EVERY_SECONDS each, saying
    how many it held back."""

    def __init__(self) -> None:
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def warning(self, now: float, reason: str, message: str, *args: object) -> None:
        last = self._last.get(reason)
        if last is not None and now - last < LOG_EVERY_SECONDS:
            self._held[reason] = self._held.get(reason, 0) + 1
            return
        self._last[reason] = now
        held = self._held.pop(reason, 0)
        if held:
            message += " (and %d more since the last such line)"
            args = (*args, held)
        log.warning(message, *args)


class Guard:
    """Admits, times and evicts the connections of one listening socket (see the module)."""

    def __init__(self, limits: Limits, metrics: Metrics) -> None:
        self.limits = limits
        self._metrics = metrics
        self._open: dict[asyncio.BaseTransport, _Connection] = {}
        # Open connections with no request in hand, the one waiting longest first.
        self._waiting: dict[_Connection, None] = {}
        self._lines = _Lines()
        self._busy_gauge = metrics.connections_open.labels("busy")
        self._waiting_gauge = metrics.connections_open.labels("waiting")

    def protocol_factory(self, make: Callable[[], asyncio.Protocol]) -> Callable[[], _Connection]:
        """`make` (aiohttp's protocol factory, `AppRunner.server`) with every connection guarded:
        give it to `loop.create_server`."""
        return lambda: _Connection(self, make())

    def admit(self, conn: _Connection) -> bool:
        if len(self._open) >= self.limits.max_connections:
            oldest = next(iter(self._waiting), None)
            if oldest is None:
                self._closed(
                    "refused",
                    "refused a connection from %s with 503: all %d connections "
                    "(MAX_CONNECTIONS) are busy with a request",
                    conn.peer,
                    self.limits.max_connections,
                )
                return False
            self._closed(
                "evicted",
                "closed a connection from %s that was waiting for a request, to let one in: "
                "%d connections (MAX_CONNECTIONS) were open",
                oldest.peer,
                self.limits.max_connections,
            )
            self.forget(oldest)
            oldest.close()
        assert conn.transport is not None
        self._open[conn.transport] = conn
        self._waiting[conn] = None
        self._count()
        return True

    def forget(self, conn: _Connection) -> None:
        if conn.head_timer is not None:
            conn.head_timer.cancel()
            conn.head_timer = None
        if conn.transport is not None and self._open.pop(conn.transport, None) is not None:
            self._waiting.pop(conn, None)
            self._count()

    def _count(self) -> None:
        self._waiting_gauge.set(len(self._waiting))
        self._busy_gauge.set(len(self._open) - len(self._waiting))

    def time_head(self, conn: _Connection) -> asyncio.TimerHandle:
        return asyncio.get_running_loop().call_later(
            self.limits.header_seconds, self._head_overdue, conn
        )

    def _head_overdue(self, conn: _Connection) -> None:
        conn.head_timer = None
        if conn.busy:
            return
        self._closed(
            "header-timeout",
            "closed a connection from %s: its request head was not complete %g s after its "
            "first byte (HEADER_TIMEOUT_SECONDS)",
            conn.peer,
            self.limits.header_seconds,
        )
        self.forget(conn)
        conn.close()

    @web.middleware
    async def track_requests(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        """Marks the connection busy while its request is handled: its head is complete."""
        transport = request.transport
        conn = self._open.get(transport) if transport is not None else None
        if conn is None:  # served without the guard (aiohttp's test server), or already gone
            return await handler(request)
        conn.busy = True
        self._waiting.pop(conn, None)
        self._count()
        if conn.head_timer is not None:
            conn.head_timer.cancel()
            conn.head_timer = None
        try:
            return await handler(request)
        finally:
            conn.busy = False
            if conn.transport in self._open:
                self._waiting[conn] = None
                self._count()

    async def read_body(self, request: web.Request, read: Callable[[], Awaitable[T]]) -> T:
        try:
            async with asyncio.timeout(self.limits.body_seconds):
                return await read()
        except TimeoutError:
            self._closed(
                "body-timeout",
                "answered 408 to a request from %s and closed its connection: its body was not "
                "all there %g s after the bot began reading it (BODY_TIMEOUT_SECONDS)",
                request.remote or "unknown",
                self.limits.body_seconds,
            )
            answer = web.HTTPRequestTimeout(text="request body not received in time\n")
            answer.force_close()
            raise answer from None

    def _closed(self, reason: str, message: str, *args: object) -> None:
        self._metrics.connections_closed.labels(reason).inc()
        self._lines.warning(asyncio.get_running_loop().time(), reason, message, *args)


GUARD_KEY = web.AppKey("guard", Guard)


async def read_body(request: web.Request, read: Callable[[], Awaitable[T]]) -> T:
    """`read()` (`request.read`, `request.post`), bounded: a body not all there
    BODY_TIMEOUT_SECONDS after the handler asked for it is answered 408, its connection
    closed. Unbounded in an app without a guard (one a test builds of a few routes)."""
    guard = request.app.get(GUARD_KEY)
    if guard is None:
        return await read()
    return await guard.read_body(request, read)


class _UnreadableRequests(logging.Filter):
    """aiohttp logs a request it cannot parse (a header line over its 8190 bytes, a malformed
    request line) as an ERROR with a traceback that quotes the request: any stranger can send
    one, and it is the sender's mistake. One WARNING line instead, naming the sender and the
    kind of mistake, none of the sender's bytes."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, HttpProcessingError):
            sender = record.args[0] if isinstance(record.args, tuple) and record.args else "?"
            record.msg = "refused a request from %s that could not be read: %s (%s)"
            record.args = (sender, type(exc).__name__, exc.code)
            record.exc_info = record.exc_text = None
            record.levelno = min(record.levelno, logging.WARNING)
            record.levelname = logging.getLevelName(record.levelno)
        return True


# aiohttp's own lines about the requests it serves (give it as `logger` to the runner).
server_log = logging.getLogger(f"{__name__}.aiohttp")
server_log.addFilter(_UnreadableRequests())
