"""Failed sign-in attempts per client address, forgiven at a steady pace.

In memory and per process: a restart forgets them, and each replica counts its own. What
makes guessing the dashboard token hopeless is its length (`bot.config`); this keeps a
client from trying more than a few a minute, and keeps a flood of wrong tokens short.
"""

from __future__ import annotations

import ipaddress
from collections import OrderedDict

FAILURES_ALLOWED = 10  # in a row, before an address must wait
FAILURE_PERIOD = 60.0  # seconds in which FAILURES_ALLOWED failures are forgiven
CLIENTS_REMEMBERED = 10_000  # about 2 MB


class FailureThrottle:
    """A leaky bucket per client: each failure adds one, `limit` drain away per `period`,
    and a client whose bucket holds `limit` waits until one has drained. So `limit` wrong
    tries in a row are allowed, then one per `period / limit` seconds.

    At most `clients` buckets are kept; past that, the client whose last failure is oldest
    is forgotten first. Times are `time.monotonic()` seconds, passed in.
    """

    def __init__(
        self,
        limit: int = FAILURES_ALLOWED,
        period: float = FAILURE_PERIOD,
        clients: int = CLIENTS_REMEMBERED,
    ) -> None:
        self._limit = limit
        self._drain = limit / period  # failures forgiven per second
        self._clients = clients
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # (level, at)

    def __len__(self) -> int:
        return len(self._buckets)

    def retry_after(self, client: str, now: float) -> float | None:
        """Seconds until `client` may try again; None: it may try now."""
        excess = self._level(client, now) - (self._limit - 1)
        return excess / self._drain if excess > 0 else None

    def failed(self, client: str, now: float) -> None:
        self._buckets[client] = (self._level(client, now) + 1, now)
        self._buckets.move_to_end(client)
        while len(self._buckets) > self._clients:
            self._buckets.popitem(last=False)

    def succeeded(self, client: str) -> None:
        self._buckets.pop(client, None)

    def _level(self, client: str, now: float) -> float:
        level, at = self._buckets.get(client, (0.0, now))
        return max(0.0, level - (now - at) * self._drain)


def client_key(address: str | None) -> str:
    """Whose bucket an address fills: an IPv6 host usually holds a whole /64, so the /64
    is one client; an IPv4-mapped IPv6 address is its IPv4 address."""
    try:
        ip = ipaddress.ip_address(address or "")
    except ValueError:
        return address or ""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)
