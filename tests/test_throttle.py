"""The sign-in throttle's arithmetic and whose address a request is, without a clock or HTTP
(tests/test_dashboard_http.py runs both against the real dashboard)."""

from __future__ import annotations

import ipaddress

import pytest

from bot.throttle import FailureThrottle, client_key
from bot.web import client_address


def test_a_client_may_fail_limit_times_then_waits_for_one_to_drain() -> None:
    throttle = FailureThrottle(limit=3, period=30.0)
    for _ in range(3):
        assert throttle.retry_after("a", 100.0) is None
        throttle.failed("a", 100.0)

    assert throttle.retry_after("a", 100.0) == pytest.approx(10.0)
    assert throttle.retry_after("a", 105.0) == pytest.approx(5.0)
    assert throttle.retry_after("a", 110.0) is None
    assert throttle.retry_after("b", 100.0) is None


def test_a_steady_guesser_gets_one_try_per_drain_interval() -> None:
    throttle = FailureThrottle(limit=10, period=60.0)
    tries = 0
    for tenth in range(0, 36_000):  # an hour, trying every 0.1 s whenever allowed
        now = tenth / 10
        if throttle.retry_after("a", now) is None:
            throttle.failed("a", now)
            tries += 1

    assert tries == pytest.approx(10 + 3600 / 6, abs=2)


def test_a_success_forgets_the_failures() -> None:
    throttle = FailureThrottle(limit=2, period=60.0)
    throttle.failed("a", 0.0)
    throttle.succeeded("a")
    throttle.failed("a", 0.0)

    assert throttle.retry_after("a", 0.0) is None


def test_memory_is_bounded_and_the_stalest_client_goes_first() -> None:
    throttle = FailureThrottle(limit=1, period=60.0, clients=100)
    for n in range(10_000):
        throttle.failed(f"10.0.{n // 256}.{n % 256}", float(n))
    throttle.failed("10.0.39.15", 10_000.0)  # the last one again: kept
    throttle.failed("attacker", 10_001.0)

    assert len(throttle) == 100
    assert throttle.retry_after("attacker", 10_001.0) is not None
    assert throttle.retry_after("10.0.39.15", 10_001.0) is not None
    assert throttle.retry_after("10.0.0.0", 10_001.0) is None  # forgotten


@pytest.mark.parametrize(
    ("address", "key"),
    [
        ("192.0.2.1", "192.0.2.1"),
        ("::ffff:192.0.2.1", "192.0.2.1"),
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:bbbb::9", "2001:db8:1:2::/64"),
        (None, ""),
        ("not an address", "not an address"),
    ],
)
def test_an_ipv6_host_is_its_64_prefix(address: str | None, key: str) -> None:
    assert client_key(address) == key


PROXIES = [ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("::1")]


@pytest.mark.parametrize(
    ("peer", "forwarded", "client"),
    [
        # No proxy trusted, or an untrusted peer: its header is anyone's words.
        ("192.0.2.1", ["198.51.100.1"], "192.0.2.1"),
        # A trusted proxy: the address it saw; what the client wrote left of it is ignored.
        ("10.0.0.2", ["6.6.6.6, 198.51.100.1"], "198.51.100.1"),
        ("10.0.0.2", ["6.6.6.6", "198.51.100.1"], "198.51.100.1"),
        # Two trusted proxies in a row.
        ("::1", ["6.6.6.6, 198.51.100.1, 10.1.1.1"], "198.51.100.1"),
        # Only trusted hops: the leftmost.
        ("10.0.0.2", ["10.0.0.3"], "10.0.0.3"),
        # A hop that is not an address: the proxy that wrote it.
        ("10.0.0.2", ["198.51.100.1, unknown"], "10.0.0.2"),
        ("10.0.0.2", [], "10.0.0.2"),
    ],
)
def test_the_client_is_the_first_address_a_trusted_proxy_did_not_send(
    peer: str, forwarded: list[str], client: str
) -> None:
    assert client_address(peer, forwarded, PROXIES) == client


def test_without_trusted_proxies_the_header_is_never_read() -> None:
    assert client_address("10.0.0.2", ["198.51.100.1"], []) == "10.0.0.2"
