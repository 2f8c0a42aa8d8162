"""The dashboard over real HTTP, filled by the real bot triaging simulator scenarios."""

from __future__ import annotations

import asyncio
import hmac
import html
import re
import time
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from yarl import URL

from bot import dashboard, throttle
from bot.demo import running, settle
from bot.sim.scenario import builtin_scenario
from bot.store import Store
from bot.triage.failures import match_key
from tests.conftest import Serve

TEST_KEY = match_key("tests/bus/test_core.py::test_publish_waits_for_ack")
TOKEN = "dashboard-token-for-tests-0123456789abcdefXYZ"


def private_demo() -> object:
    scenario = builtin_scenario()
    return scenario.model_copy(update={"repo": scenario.repo.model_copy(update={"private": True})})


async def test_demo_dashboard_ranks_the_flaky_test_with_its_sparkline_and_page(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    async with running(builtin_scenario(), tmp_path) as (sim, bot):
        await sim.play()
        await settle(sim, bot)
        index = await session.get(bot.url + "/")
        repo = await session.get(bot.url + "/acme/bus")
        repo_html = await repo.text()
        test = await session.get(bot.url + "/acme/bus/tests/" + TEST_KEY)
        test_html = await test.text()
        (issue,) = sim.issues_created

    assert index.status == 200
    assert 'href="/acme/bus"' in await index.text()
    assert repo.status == 200
    assert "test_publish_waits_for_ack" in repo_html
    assert repo_html.count('class="sparkline"') == 1
    assert "failed 1 of 2 runs" in repo_html
    assert f'/acme/bus/issues/{issue.number}">#{issue.number}</a>' in repo_html
    assert test.status == 200
    assert 'class="outcomes"' in test_html
    assert "Failure modes" in test_html
    assert "#7" in test_html  # the occurrence links its pull request
    assert "<script" not in repo_html + test_html


async def test_private_repository_is_invisible_without_the_token(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    async with running(private_demo(), tmp_path) as (sim, bot):  # type: ignore[arg-type]
        await sim.play()
        await settle(sim, bot)
        index = await (await session.get(bot.url + "/")).text()
        repo = await session.get(bot.url + "/acme/bus")
        test = await session.get(bot.url + "/acme/bus/tests/" + TEST_KEY)

    assert "acme/bus" not in index
    assert "test_publish" not in index
    assert repo.status == 404
    assert test.status == 404
    assert "test_publish" not in await repo.text() + await test.text()


async def test_with_a_token_every_page_asks_for_it_and_private_repos_show_after_sign_in(
    tmp_path: Path,
) -> None:
    async with running(private_demo(), tmp_path, dashboard_token=TOKEN) as (sim, bot):  # type: ignore[arg-type]
        await sim.play()
        await settle(sim, bot)
        async with aiohttp.ClientSession() as stranger:
            anonymous = await stranger.get(bot.url + "/acme/bus", allow_redirects=False)
            wrong = await stranger.post(bot.url + "/login", data={"token": "guess"})
            still_out = await stranger.get(bot.url + "/acme/bus", allow_redirects=False)
        # unsafe=True: aiohttp's jar refuses cookies from IP addresses; browsers do not.
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser:
            signed_in = await browser.post(bot.url + "/login", data={"token": TOKEN})
            cookie_html = await (await browser.get(bot.url + "/acme/bus")).text()
            cookies = [c.value for c in browser.cookie_jar]
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as client:
            bearer = await client.get(bot.url + "/acme/bus/tests/" + TEST_KEY)

    assert anonymous.status == 303
    assert anonymous.headers["Location"] == "/login"
    assert wrong.status == 401
    assert still_out.status == 303
    assert signed_in.status == 200  # redirected to the index after the cookie was set
    assert "test_publish_waits_for_ack" in cookie_html
    assert TOKEN not in "".join(cookies)  # the cookie holds a MAC of the token, not the token
    assert bearer.status == 200


async def guess(url: str, token: str, *, source: str = "127.0.0.1", **headers: str) -> int:
    """The status of one sign-in through the form, from the local address `source`."""
    connector = aiohttp.TCPConnector(local_addr=(source, 0))
    async with aiohttp.ClientSession(connector=connector, headers=headers) as client:
        answer = await client.post(url + "/login", data={"token": token}, allow_redirects=False)
        return answer.status


async def test_wrong_tokens_get_429_after_a_few_and_the_right_one_still_works_elsewhere(
    tmp_path: Path,
) -> None:
    async with running(builtin_scenario(), tmp_path, dashboard_token=TOKEN) as (_, bot):
        started = time.monotonic()
        statuses = [await guess(bot.url, f"guess-{n}") for n in range(200)]
        elapsed = time.monotonic() - started
        async with aiohttp.ClientSession() as client:
            held = await client.post(bot.url + "/login", data={"token": TOKEN})
            held_page = await held.text()
        right_elsewhere = await guess(bot.url, TOKEN, source="127.0.0.2")

    assert statuses[: throttle.FAILURES_ALLOWED] == [401] * throttle.FAILURES_ALLOWED
    assert statuses[throttle.FAILURES_ALLOWED] == 429
    # One more try is forgiven every period / allowed seconds, however slow this machine was.
    forgiven = elapsed * throttle.FAILURES_ALLOWED / throttle.FAILURE_PERIOD + 1
    assert statuses.count(401) <= throttle.FAILURES_ALLOWED + forgiven
    assert statuses.count(429) + statuses.count(401) == 200
    # Held back, even the right token waits: otherwise the guessing would go on.
    assert held.status == 429
    assert 1 <= int(held.headers["Retry-After"]) <= throttle.FAILURE_PERIOD
    assert "Too many wrong tokens" in held_page
    assert right_elsewhere == 303  # signed in, sent to the index


async def test_wrong_bearer_tokens_are_throttled_too_and_answered_401_not_a_redirect(
    tmp_path: Path,
) -> None:
    elsewhere = aiohttp.TCPConnector(local_addr=("127.0.0.2", 0))
    async with (
        running(builtin_scenario(), tmp_path, dashboard_token=TOKEN) as (_, bot),
        aiohttp.ClientSession() as client,
        aiohttp.ClientSession(connector=elsewhere) as other,
    ):
        statuses = []
        for n in range(throttle.FAILURES_ALLOWED + 1):
            headers = {"Authorization": f"Bearer guess-{n}"}
            statuses.append((await client.get(bot.url + "/", headers=headers)).status)
        right = await other.get(bot.url + "/", headers={"Authorization": f"Bearer {TOKEN}"})

    assert statuses == [401] * throttle.FAILURES_ALLOWED + [429]
    assert right.status == 200


async def test_forged_x_forwarded_for_does_not_escape_the_throttle(tmp_path: Path) -> None:
    async with running(builtin_scenario(), tmp_path, dashboard_token=TOKEN) as (_, bot):
        statuses = [
            await guess(bot.url, "guess", **{"X-Forwarded-For": f"198.51.100.{n}"})
            for n in range(throttle.FAILURES_ALLOWED + 1)
        ]

    assert statuses == [401] * throttle.FAILURES_ALLOWED + [429]


async def test_behind_a_trusted_proxy_each_forwarded_client_is_throttled_on_its_own(
    tmp_path: Path,
) -> None:
    async with running(
        builtin_scenario(), tmp_path, dashboard_token=TOKEN, trusted_proxies="127.0.0.1"
    ) as (_, bot):
        # The client wrote the first address itself; the proxy appended the one it saw.
        attacker = {"X-Forwarded-For": "10.9.9.9, 203.0.113.7"}
        statuses = [
            await guess(bot.url, "guess", **attacker) for _ in range(throttle.FAILURES_ALLOWED + 1)
        ]
        other_client = await guess(bot.url, TOKEN, **{"X-Forwarded-For": "203.0.113.8"})
        same_client = await guess(bot.url, TOKEN, **{"X-Forwarded-For": "10.1.1.1, 203.0.113.7"})
        untrusted_proxy = await guess(
            bot.url, TOKEN, source="127.0.0.2", **{"X-Forwarded-For": "203.0.113.7"}
        )

    assert statuses == [401] * throttle.FAILURES_ALLOWED + [429]
    assert other_client == 303
    assert same_client == 429
    assert untrusted_proxy == 303  # its header is not believed: 127.0.0.2 is the client


async def test_every_token_comparison_is_of_two_digests_whatever_was_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compared: list[tuple[int, int]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        assert isinstance(a, bytes) and isinstance(b, bytes)
        compared.append((len(a), len(b)))
        return real(a, b)

    guesses = ["", "x", "y" * 5000, TOKEN[:-1], TOKEN + "x", "ünïcødé ✓"]
    async with running(builtin_scenario(), tmp_path, dashboard_token=TOKEN) as (_, bot):
        monkeypatch.setattr(hmac, "compare_digest", spy)
        for given in guesses[:4]:
            assert await guess(bot.url, given) == 401
        async with aiohttp.ClientSession() as client:
            for given in guesses[4:]:
                answer = await client.get(
                    bot.url + "/", headers={"Authorization": f"Bearer {given}"}
                )
                assert answer.status == 401
        monkeypatch.undo()

    # Each sign-in compared once, each bearer request its (absent) cookie and its token.
    assert len(compared) == 4 + 2 * 2
    assert set(compared) == {(32, 32)}


async def test_an_authorization_header_that_is_not_utf8_is_refused_not_an_error(
    tmp_path: Path,
) -> None:
    async with running(builtin_scenario(), tmp_path, dashboard_token=TOKEN) as (_, bot):
        url = URL(bot.url)
        reader, writer = await asyncio.open_connection(url.host, url.port)
        writer.write(
            b"GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \xff\xfe\r\n"
            b"Connection: close\r\n\r\n"
        )
        status_line = await reader.readline()
        writer.close()
        await writer.wait_closed()

    assert status_line.split()[1] == b"401"


async def test_dashboard_is_off_without_a_token_outside_the_demo(
    store: Store, serve: Serve, session: aiohttp.ClientSession
) -> None:
    app = web.Application()
    dashboard.install(app, store, dashboard.Access(token=None))
    url = await serve(app)

    answer = await session.get(url + "/")

    assert answer.status == 404
    assert "DASHBOARD_TOKEN" in await answer.text()


DEMO_LOG = (Path(__file__).parents[1] / "bot/sim/scenarios/demo-attempt-1.log").read_text()
NAME = "test_publish_waits_for_ack"


@pytest.mark.parametrize(
    "odd_name",
    [
        f"{NAME}[100%25]",
        f"{NAME}[50% off]",
        f"{NAME}[a/b#c?d=e&f]",
        f"{NAME}[ünïcødé ✓ 测试]",
        f"{NAME}[%2F%3F%23 %zz%]",
    ],
)
async def test_a_test_named_with_url_syntax_gets_a_link_that_shows_it(
    tmp_path: Path, session: aiohttp.ClientSession, odd_name: str
) -> None:
    scenario = builtin_scenario()
    check = scenario.checks[0]
    log = DEMO_LOG.replace(NAME, odd_name)
    check.attempts[0] = check.attempts[0].model_copy(update={"log": log})
    async with running(scenario, tmp_path) as (sim, bot):
        await sim.play()
        await settle(sim, bot)
        repo_html = await (await session.get(bot.url + "/acme/bus")).text()
        (href,) = re.findall(r'href="(/acme/bus/tests/[^"]*)"', repo_html)
        # As a browser follows it: the address exactly as the page wrote it.
        test = await session.get(URL(bot.url + html.unescape(href), encoded=True))
        test_html = await test.text()

    assert test.status == 200, test_html
    assert f"<code>tests/bus/test_core.py::{html.escape(odd_name)}</code>" in test_html
