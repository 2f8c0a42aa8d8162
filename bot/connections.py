"""The listening socket's guard: deadlines for reading a request and a cap on connections.

aiohttp waits for a request's head and body as long as the client likes and takes every
connection it is offered, until the process runs out of file descriptors: a few hundred
silent, half-sent requests locked everyone out, `/healthz` included, and nothing said so.
Every connection `flakybot serve` accepts passes through a `Guard`:

- a request's head must be complete `header_seconds` after its first byte arrived;
- its body `body_seconds` after the handler starts reading it (`read_body`), and, once
  `body_grace_seconds` have passed, it must be arriving at `min_body_rate` bytes a second on
  average (408 otherwise: a trickle holds no place for long);
- at most `max_connections` are open, at most `max_per_client` of them from one client (an
  address, an IPv6 /64; trusted proxies excepted). One more closes, of the connections it
  competes with (all, or its client's), the one that has waited longest for a request (idle
  or with a half-sent head); else the one whose body is arriving slowest (answered 408).
  So a sender that sends its whole request at once (GitHub, a probe) always gets in however
  many strangers trickle bodies: only when every place is held by a request whose body is
  all there (its handler running) is the newcomer answered 503 and closed.

Each of these is counted in `flakybot_connections_closed` and logged, one line per reason
every few seconds at most, so a flood cannot flood the log too. A connection idle between
requests (nothing of a next request sent) is closed quietly by aiohttp after IDLE_SECONDS:
keep-alive is normal, and longer than a reverse proxy's own idle timeout (60 s in nginx), so
the proxy never sends on a connection the bot is closing.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar, cast

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from bot.config import (
    DEFAULT_BODY_GRACE_SECONDS,
    DEFAULT_BODY_TIMEOUT_SECONDS,
    DEFAULT_HEADER_TIMEOUT_SECONDS,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
    DEFAULT_MIN_BODY_RATE,
)
from bot.metrics import Metrics

log = logging.getLogger(__name__)

T = TypeVar("T")
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

IDLE_SECONDS = 75.0
# After answering a request whose body was not all read (a 408, a 413, a 401 before the
# body), aiohttp reads on and discards for this long so the client sees the answer rather
# than a reset. Its default, 10 s, let a silent sender hold the connection that long again.
LINGER_SECONDS = 1.0
# One log line per reason this often at most; the metric counts every one.
LOG_EVERY_SECONDS = 10.0
# After the grace, a body's rate is looked at this often.
RATE_CHECK_SECONDS = 0.5
_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n"
    b"Retry-After: 1\r\n\r\n"
)


@dataclass(frozen=True)
class Limits:
    header_seconds: float = DEFAULT_HEADER_TIMEOUT_SECONDS
    body_seconds: float = DEFAULT_BODY_TIMEOUT_SECONDS
    body_grace_seconds: float = DEFAULT_BODY_GRACE_SECONDS
    min_body_rate: float = DEFAULT_MIN_BODY_RATE  # bytes a second; 0: none
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    max_per_client: int = DEFAULT_MAX_CONNECTIONS_PER_CLIENT
    # Peers that speak for many clients (TRUSTED_PROXIES): no per-client cap.
    proxies: Sequence[Network] = ()


def client_of(address: str, proxies: Sequence[Network] = ()) -> str | None:
    """Whose connection this is, for the per-client cap: the address, an IPv6 address's /64
    (one host is given a whole /64), None for a trusted proxy or what is not an address."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if any(ip in network for network in proxies):
        return None
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


@dataclass(frozen=True)
class _Cap:
    """A limit on connections: all of them, or one client's."""

    name: str  # its setting
    limit: int
    client: str | None = None

    def counts(self, conn: _Connection) -> bool:
        return self.client is None or conn.client == self.client


@dataclass
class _Body:
    """A request body being read: when the reading began, and how to cut it short."""

    request: web.Request
    started: float
    deadline: asyncio.Timeout | None = None
    check: asyncio.TimerHandle | None = None
    cut: str = ""  # why it was cut short: the reason counted
    cap: str = ""  # the limit whose newcomer it made room for

    def rate(self, now: float) -> float:
        """Bytes a second since the reading began (those already there when it began count)."""
        return self.request.content.total_bytes / max(now - self.started, 1e-3)

    def stop(self, reason: str, cap: str = "") -> None:
        if self.deadline is not None and not self.cut:
            self.cut, self.cap = reason, cap
            self.deadline.reschedule(asyncio.get_running_loop().time())


class _Connection(asyncio.Protocol):
    """One accepted connection: aiohttp's protocol inside, the guard's clocks around it."""

    def __init__(self, guard: Guard, inner: asyncio.Protocol) -> None:
        self._guard = guard
        self._inner = inner
        self.transport: asyncio.Transport | None = None
        self.peer = "unknown"
        self.client: str | None = None  # for the per-client cap (`client_of`)
        self.admitted = False
        # A request's handler is running: its bytes are a body. It is not evicted unless its
        # body is still arriving (`body`).
        self.busy = False
        self.body: _Body | None = None
        self.head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, but do all it does.
        self.transport = cast(asyncio.Transport, transport)
        peer = transport.get_extra_info("peername")
        self.peer = str(peer[0]) if isinstance(peer, tuple) and peer else "unknown"
        self.client = client_of(self.peer, self._guard.limits.proxies)
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
        # Connections whose request's body is still arriving.
        self._receiving: dict[_Connection, None] = {}
        # How many connections each client has open.
        self._clients: dict[str, int] = {}
        self._lines = _Lines()
        self._busy_gauge = metrics.connections_open.labels("busy")
        self._receiving_gauge = metrics.connections_open.labels("receiving")
        self._waiting_gauge = metrics.connections_open.labels("waiting")

    def protocol_factory(self, make: Callable[[], asyncio.Protocol]) -> Callable[[], _Connection]:
        """`make` (aiohttp's protocol factory, `AppRunner.server`) with every connection guarded:
        give it to `loop.create_server`."""
        return lambda: _Connection(self, make())

    def admit(self, conn: _Connection) -> bool:
        client = conn.client
        cap = None
        if client is not None and self._clients.get(client, 0) >= self.limits.max_per_client:
            cap = _Cap("MAX_CONNECTIONS_PER_CLIENT", self.limits.max_per_client, client)
        elif len(self._open) >= self.limits.max_connections:
            cap = _Cap("MAX_CONNECTIONS", self.limits.max_connections)
        if cap is not None and not self._make_room(conn, cap):
            return False
        assert conn.transport is not None
        self._open[conn.transport] = conn
        self._waiting[conn] = None
        if client is not None:
            self._clients[client] = self._clients.get(client, 0) + 1
        self._count()
        return True

    def _make_room(self, conn: _Connection, cap: _Cap) -> bool:
        """Close one connection `cap` counts for `conn`: the one waiting longest for a
        request, else the one whose body arrives slowest. False when each has its request
        all there."""
        oldest = next((c for c in self._waiting if cap.counts(c)), None)
        if oldest is not None:
            self._closed(
                "evicted",
                "closed a connection from %s that was waiting for a request, to let one in: "
                "%d connections (%s) were open",
                oldest.peer,
                cap.limit,
                cap.name,
            )
            self.forget(oldest)
            oldest.close()
            return True
        now = asyncio.get_running_loop().time()
        sending = [
            (c.body.rate(now), c.body, c)
            for c in self._receiving
            if c.body is not None and not c.body.cut and cap.counts(c)
        ]
        if sending:
            _, body, slowest = min(sending, key=lambda each: each[0])
            body.stop("evicted-sending", cap.name)
            self.forget(slowest)
            return True
        self._closed(
            "refused",
            "refused a connection from %s with 503: all %d connections (%s) are busy with a "
            "request",
            conn.peer,
            cap.limit,
            cap.name,
        )
        return False

    def forget(self, conn: _Connection) -> None:
        if conn.head_timer is not None:
            conn.head_timer.cancel()
            conn.head_timer = None
        if conn.transport is not None and self._open.pop(conn.transport, None) is not None:
            self._waiting.pop(conn, None)
            self._receiving.pop(conn, None)
            if conn.client is not None:
                left = self._clients.pop(conn.client, 1) - 1
                if left:
                    self._clients[conn.client] = left
            self._count()

    def _count(self) -> None:
        waiting, receiving = len(self._waiting), len(self._receiving)
        self._waiting_gauge.set(waiting)
        self._receiving_gauge.set(receiving)
        self._busy_gauge.set(len(self._open) - waiting - receiving)

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

    def _connection(self, request: web.Request) -> _Connection | None:
        transport = request.transport
        return self._open.get(transport) if transport is not None else None

    @web.middleware
    async def track_requests(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        """Marks the connection busy while its request is handled: its head is complete."""
        conn = self._connection(request)
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
        conn = self._connection(request)
        loop = asyncio.get_running_loop()
        body = _Body(request, loop.time())
        if conn is not None:
            conn.body = body
            self._receiving[conn] = None
            self._count()
        try:
            async with asyncio.timeout(self.limits.body_seconds) as deadline:
                body.deadline = deadline
                if self.limits.min_body_rate > 0:
                    body.check = loop.call_later(
                        self.limits.body_grace_seconds, self._check_rate, body
                    )
                return await read()
        except TimeoutError:
            raise self._cut(request, body) from None
        finally:
            if body.check is not None:
                body.check.cancel()
            if conn is not None:
                conn.body = None
                if self._receiving.pop(conn, None) is not None:
                    self._count()

    def _check_rate(self, body: _Body) -> None:
        """Cut a body arriving slower than MIN_BODY_RATE, else look again soon."""
        now = asyncio.get_running_loop().time()
        if body.rate(now) < self.limits.min_body_rate:
            body.stop("too-slow")
        else:
            body.check = asyncio.get_running_loop().call_later(
                RATE_CHECK_SECONDS, self._check_rate, body
            )

    def _cut(self, request: web.Request, body: _Body) -> web.HTTPRequestTimeout:
        """The 408 for a body cut short, counted and logged with why."""
        sender = request.remote or "unknown"
        received = request.content.total_bytes
        if body.cut == "too-slow":
            why = "its body was arriving at under %g bytes a second (MIN_BODY_RATE)"
            args: tuple[object, ...] = (self.limits.min_body_rate,)
        elif body.cut == "evicted-sending":
            why = "its body was arriving slowest when a newcomer needed its place (%s)"
            args = (body.cap,)
        else:
            why = "its body was not all there %g s after the bot began reading it"
            why += " (BODY_TIMEOUT_SECONDS)"
            args = (self.limits.body_seconds,)
        self._closed(
            body.cut or "body-timeout",
            "answered 408 to a request from %s and closed its connection: "
            + why
            + " (%d bytes in %.1f s)",
            sender,
            *args,
            received,
            asyncio.get_running_loop().time() - body.started,
        )
        answer = web.HTTPRequestTimeout(text="request body not received in time\n")
        answer.force_close()
        return answer

    def _closed(self, reason: str, message: str, *args: object) -> None:
        self._metrics.connections_closed.labels(reason).inc()
        self._lines.warning(asyncio.get_running_loop().time(), reason, message, *args)


GUARD_KEY = web.AppKey("guard", Guard)


async def read_body(request: web.Request, read: Callable[[], Awaitable[T]]) -> T:
    """`read()` (`request.read`, `request.post`), bounded: a body not all there
    BODY_TIMEOUT_SECONDS after the handler asked for it, arriving slower than MIN_BODY_RATE
    after BODY_GRACE_SECONDS, or the slowest when a newcomer needs its place, is answered
    408, its connection closed. Unbounded in an app without a guard (one a test builds of a
    few routes)."""
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
