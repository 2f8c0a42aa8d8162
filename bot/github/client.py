"""The GitHub API client: gidgethub with retries, rate-limit hooks and per-installation tokens."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import logging
import math
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, MutableMapping
from contextlib import asynccontextmanager
from datetime import datetime
from enum import IntEnum
from typing import Any

import aiohttp
import cachetools
import orjson
from gidgethub import BadRequest, GitHubBroken, HTTPException
from gidgethub import aiohttp as gh_aiohttp
from gidgethub.apps import get_installation_access_token

from bot.github.errors import RateLimited, graphql_fault, rate_limited
from bot.metrics import Metrics, endpoint_group
from bot.shared import WriteSchedule

log = logging.getLogger(__name__)

USER_AGENT = "flaky-triage"
# Refresh an installation token this long before GitHub says it expires.
TOKEN_REFRESH_MARGIN = 300.0
# Files found missing are remembered per installation, this many at most.
MISSING_FILES_KEPT = 500
# GitHub's answers kept for conditional requests, all installations together, by default.
RESPONSE_CACHE_BYTES = 32 * 1024 * 1024
# What an answer holds in memory parsed, per byte of its JSON (tracemalloc: about 3 for a
# list of objects, 1 for a file's base64 text), and besides its JSON (URL, ETag, tuple).
PARSED_PER_JSON_BYTE = 3
ANSWER_BYTES = 1024
# GitHub asks integrations to leave a second between content-creating requests; its secondary
# rate limit allows 80 a minute.
WRITE_INTERVAL = 1.0
WRITE_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})
# A 404 has no ETag to revalidate, and most repositories have no `.github/flaky.yml`: a file
# found missing is not asked for again for this long (adding one takes effect within it).
MISSING_FILE_SECONDS = 300.0
# A rate limit asking for a longer wait than this is not waited out in the handler, which
# would hold its worker slot and its delivery's lease: the inbox takes the delivery again then.
MAX_INLINE_WAIT = 10.0
# Asked again on 5xx and dropped connections. The bot's PATCHes set whole fields (a body, a
# title, a state), so one that reached GitHub changes nothing when repeated; a POST creates.
# (A check run's annotations are the exception: GitHub appends them, so a PATCH that carries
# some goes through `unrepeated()` and its caller reads back what came through.)
REPEATABLE_METHODS = frozenset({"GET", "PATCH"})


def backoff(attempt: int, base: float = 0.5, cap: float = 30.0) -> float:
    """Exponential backoff with full jitter, for the attempt that just failed (1-based)."""
    return random.uniform(0, min(cap, base * 2 ** (attempt - 1)))


def is_write(method: str, url: str, body: bytes) -> bool:
    """Whether a request creates or changes content, and so waits for the write pace: a
    GraphQL query is a read sent with POST, and never waits behind writes."""
    if method not in WRITE_METHODS:
        return False
    if method == "POST" and url.endswith("/graphql"):
        try:
            query = orjson.loads(body).get("query", "")
        except (orjson.JSONDecodeError, AttributeError):
            return True
        return not isinstance(query, str) or query.lstrip().startswith("mutation")
    return True


class WriteSkipped(Exception):
    """A spare write was not made: another was already waiting for its turn."""


class WriteClass(IntEnum):
    """Whose write it is, first served first: a class waits while a write of a class before
    it waits. Anyone who may comment can cause command replies and refusal answers; only a
    failed check causes triage."""

    TRIAGE = 0  # the triage of a check: its comment, rerun, issues, check run
    REPLY = 1  # what a `/flaky` command does and answers
    SPARE = 2  # answers to refused commands: skipped when one already waits


class WritePacer:
    """One installation's writes, one at a time and at least `interval` seconds apart.

    A secondary rate limit answer pushes every later write back by the wait GitHub asked
    for, so concurrent handlers of one installation back off together. With a `shared`
    schedule (the PostgreSQL store) the pace also holds across replicas: each write takes
    a slot there, `interval` after the previous one whichever replica took it.

    Writes go by `WriteClass`: a command reply waits while any triage write waits, and a
    spare write while any other waits. The later classes queue in a lane of their own, one
    write of each class in the pace's queue at a time, so a triage write waits behind one
    reply and one spare write at most, however many of them are waiting; and one spare
    write arriving while another waits is skipped, so a flood of them costs nothing.
    """

    def __init__(
        self,
        interval: float = WRITE_INTERVAL,
        *,
        shared: WriteSchedule | None = None,
        installation_id: int = 0,
    ) -> None:
        self.interval = interval
        self.shared = shared
        self.installation_id = installation_id
        self._lock = asyncio.Lock()
        self._next = 0.0
        self._lanes = {kind: asyncio.Lock() for kind in WriteClass if kind > WriteClass.TRIAGE}
        self._waiting = dict.fromkeys(WriteClass, 0)  # writes waiting for or taking their turn
        self._idle = {kind: asyncio.Event() for kind in WriteClass}
        for idle in self._idle.values():
            idle.set()

    @asynccontextmanager
    async def turn(
        self, max_wait: float = math.inf, kind: WriteClass = WriteClass.TRIAGE
    ) -> AsyncIterator[None]:
        """Wait for this installation's next write of class `kind`; a wait longer than
        `max_wait` (a rate limit's) is not waited out here but raised as `RateLimited`, so
        the caller gives back what it holds (a worker slot, a delivery's lease) and comes
        back then. A spare write raises WriteSkipped when another spare write waits."""
        lane = self._lanes.get(kind)
        if kind is WriteClass.SPARE and lane is not None and lane.locked():
            raise WriteSkipped
        self._waiting[kind] += 1
        self._idle[kind].clear()
        try:
            async with lane or contextlib.nullcontext():
                await self._after_earlier_classes(kind)
                async with self._paced(max_wait):
                    yield
        finally:
            self._waiting[kind] -= 1
            if not self._waiting[kind]:
                self._idle[kind].set()

    async def _after_earlier_classes(self, kind: WriteClass) -> None:
        while busy := [k for k in WriteClass if k < kind and self._waiting[k]]:
            await self._idle[busy[0]].wait()

    @asynccontextmanager
    async def _paced(self, max_wait: float) -> AsyncIterator[None]:
        # The pace itself is always waited out: only a rate limit's hold sends a write back.
        max_wait = max(max_wait, self.interval)
        async with self._lock:
            wait = self._next - time.monotonic()
            if wait <= max_wait and self.shared is not None:
                # The slot starts no sooner than this process's own pace allows, so the
                # next replica's slot is counted from when this write really starts.
                wait = await self.shared.reserve_write(
                    self.installation_id, self.interval, max(wait, 0.0), max_wait
                )
            if wait > max_wait:
                raise RateLimited(
                    f"writes of installation {self.installation_id} are held back "
                    f"{wait:.0f}s (GitHub's rate limit)",
                    time.time() + wait,
                )
            if wait > 0:
                await asyncio.sleep(wait)
            try:
                yield
            finally:
                self._next = max(self._next, time.monotonic() + self.interval)

    async def back_off(self, seconds: float) -> None:
        self._next = max(self._next, time.monotonic() + seconds)
        if self.shared is not None:
            await self.shared.defer_writes(self.installation_id, seconds)


class GitHubClient(gh_aiohttp.GitHubAPI):
    """A gidgethub client that retries what is safe to retry and waits when GitHub asks.

    GETs and PATCHes are retried on 5xx and dropped connections; POSTs are not (one that
    reached GitHub must not be repeated: the inbox retries the whole handler, which finds
    what an earlier try created).
    A rate-limit answer, on any endpoint, is read as one before anything else reads the
    status: waited out inline when the wait is short, else raised as `RateLimited` (never a
    `BadRequest`, so no caller takes it for a refusal), which the inbox waits out by
    queueing the delivery again for then.
    """

    def __init__(
        self,
        session: aiohttp.ClientSession,
        *,
        base_url: str,
        metrics: Metrics,
        installation_id: int | None = None,
        max_retries: int = 3,
        max_inline_wait: float = MAX_INLINE_WAIT,
        pacer: WritePacer | None = None,
        token_source: Callable[[], Awaitable[str]] | None = None,
        missing_files: MutableMapping[str, bool] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(session, USER_AGENT, base_url=base_url, **kwargs)
        self.metrics = metrics
        self.installation_id = installation_id
        self.max_retries = max_retries
        self.max_inline_wait = max_inline_wait
        self.pacer = pacer
        self._token_source = token_source
        # Files found missing (404), by API path: shared by an installation's clients.
        self.missing_files: MutableMapping[str, bool] = (
            missing_files if missing_files is not None else {}
        )
        self.repeat_patches = True
        self.write_class = WriteClass.TRIAGE

    def spare(self) -> GitHubClient:
        """This client, but its writes are spare (`WriteClass.SPARE`): they wait for every
        other write of the installation, and raise WriteSkipped when one already waits."""
        return self.writing_as(WriteClass.SPARE)

    def writing_as(self, kind: WriteClass) -> GitHubClient:
        """This client, its writes paced as `kind` (`WritePacer`)."""
        clone = copy.copy(self)
        clone.write_class = kind
        return clone

    def unrepeated(self) -> GitHubClient:
        """This client, but a PATCH whose answer fails (5xx, a dropped connection) is not
        asked again: for an update GitHub does not take as a whole (a check run's
        annotations are appended), whose caller reads back what came through instead."""
        clone = copy.copy(self)
        clone.repeat_patches = False
        return clone

    def _repeatable(self, method: str) -> bool:
        return method in REPEATABLE_METHODS and (method != "PATCH" or self.repeat_patches)

    @property
    def session(self) -> aiohttp.ClientSession:
        return self._session

    async def access_token(self) -> str:
        """The token for downloads, which go around this client (GitHub's redirect to the
        blob host must be followed without it). An installation's is refreshed when due."""
        if self._token_source is not None:
            return await self._token_source()
        if self.oauth_token is None:
            raise ValueError("this client authenticates without a token")
        return self.oauth_token

    def count_request(self, url: str, method: str, status: int) -> None:
        path = url.removeprefix(self.base_url.rstrip("/"))
        self.metrics.github_requests.labels(endpoint_group(path), method, str(status)).inc()

    async def _request(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes = b""
    ) -> tuple[int, Mapping[str, str], bytes]:
        attempt = 0
        while True:
            attempt += 1
            try:
                if self.pacer is not None and is_write(method, url, body):
                    async with self.pacer.turn(self.max_inline_wait, self.write_class):
                        status, response_headers, data = await super()._request(
                            method, url, headers, body
                        )
                else:
                    status, response_headers, data = await super()._request(
                        method, url, headers, body
                    )
            except (TimeoutError, aiohttp.ClientConnectionError):
                if not self._repeatable(method) or attempt > self.max_retries:
                    raise
                await self.sleep(backoff(attempt))
                continue
            self.count_request(url, method, status)
            remaining = response_headers.get("x-ratelimit-remaining")
            if remaining is not None and self.installation_id is not None:
                self.metrics.rate_limit_remaining.labels(str(self.installation_id)).set(
                    float(remaining)
                )
            if status >= 400 and method == "POST" and url.endswith("/graphql"):
                fault = graphql_fault(status, response_headers, data)
                if fault is not None:  # raised as the inbox reads it: retried, not a refusal
                    raise fault
            return status, response_headers, data

    async def handle_rate_limit_error(
        self, *, method: str, url: str, exception: HTTPException, attempt: int
    ) -> bool:
        if isinstance(exception, BadRequest):
            limited = rate_limited(exception)
            if limited is None:
                return False
            wait = limited.retry_after or 0.0
            if self.pacer is not None and method in WRITE_METHODS:
                await self.pacer.back_off(wait)
            if attempt > self.max_retries or wait > self.max_inline_wait:
                raise limited from exception
            log.info("rate limited on %s %s, waiting %.1fs", method, url, wait)
            await self.sleep(wait + random.uniform(0, 0.25))
            return True
        if attempt > self.max_retries:
            return False
        if isinstance(exception, GitHubBroken):
            if not self._repeatable(method):
                return False
            await self.sleep(backoff(attempt))
            return True
        return False


CachedAnswer = tuple[str | None, str | None, Any, str | None]  # gidgethub's: ETag, date, data, next


def answer_bytes(answer: CachedAnswer) -> int:
    """What a kept answer holds in memory, by estimate from its JSON's length."""
    try:
        text = len(orjson.dumps(answer[2]))
    except TypeError:  # not JSON (gidgethub keeps a text answer as its text)
        text = len(str(answer[2]))
    return ANSWER_BYTES + PARSED_PER_JSON_BYTE * text


class ResponseCache:
    """The answers gidgethub keeps to ask again conditionally (a 304 costs no rate limit),
    for every installation together, bounded by an estimate of their bytes. ETags are tied
    to the token that fetched them, so each installation sees only its own (`partition`)."""

    def __init__(self, max_bytes: int = RESPONSE_CACHE_BYTES) -> None:
        self.answers: cachetools.LRUCache[tuple[int, str], CachedAnswer] = cachetools.LRUCache(
            max_bytes, getsizeof=answer_bytes
        )

    def partition(self, installation_id: int) -> MutableMapping[str, CachedAnswer]:
        return _Partition(self, installation_id)


class _Partition(MutableMapping[str, CachedAnswer]):
    """One installation's answers in a `ResponseCache`, by URL (gidgethub's cache)."""

    def __init__(self, cache: ResponseCache, installation_id: int) -> None:
        self._answers = cache.answers
        self._id = installation_id

    def __getitem__(self, url: str) -> CachedAnswer:
        return self._answers[self._id, url]

    def __setitem__(self, url: str, answer: CachedAnswer) -> None:
        # A commit's tree never changes, and the walks keep it parsed (SourceCache.trees):
        # its JSON kept here too was twice that again, 70 MB for 100,000 files.
        if "/git/trees/" in url:
            return
        with contextlib.suppress(ValueError):  # larger than the whole bound: not kept
            self._answers[self._id, url] = answer

    def __delitem__(self, url: str) -> None:
        del self._answers[self._id, url]

    def __iter__(self) -> Iterator[str]:
        return (url for owner, url in list(self._answers) if owner == self._id)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class GitHubApp:
    """One per process: the App's identity, its installation tokens and its ETag caches."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        *,
        api_url: str,
        app_id: int,
        private_key: str,
        metrics: Metrics,
        write_interval: float = WRITE_INTERVAL,
        write_schedule: WriteSchedule | None = None,
        response_cache_bytes: int = RESPONSE_CACHE_BYTES,
    ) -> None:
        self.session = session
        self.api_url = api_url.rstrip("/")
        self.app_id = app_id
        self._private_key = private_key
        self.metrics = metrics
        self._tokens: dict[int, tuple[str, float]] = {}
        self._token_locks: dict[int, asyncio.Lock] = {}
        self._responses = ResponseCache(response_cache_bytes)
        self._missing: dict[int, cachetools.TTLCache[str, bool]] = {}
        self._bot_login: str | None = None
        self.write_interval = write_interval
        self.write_schedule = write_schedule
        self._pacers: dict[int, WritePacer] = {}

    def app_client(self) -> GitHubClient:
        """A client that authenticates as the App itself (a JWT), for /app endpoints."""
        return GitHubClient(
            self.session,
            base_url=self.api_url,
            metrics=self.metrics,
            app_id=str(self.app_id),
            private_key=self._private_key,
        )

    async def token(self, installation_id: int, now: float | None = None) -> str:
        """A valid installation token; many tasks asking at once cause one refresh."""
        lock = self._token_locks.setdefault(installation_id, asyncio.Lock())
        async with lock:
            current = time.time() if now is None else now
            cached = self._tokens.get(installation_id)
            if cached is not None and current < cached[1] - TOKEN_REFRESH_MARGIN:
                return cached[0]
            response = await get_installation_access_token(
                self.app_client(),
                installation_id=str(installation_id),
                app_id=str(self.app_id),
                private_key=self._private_key,
            )
            expires_at = datetime.fromisoformat(
                str(response["expires_at"]).replace("Z", "+00:00")
            ).timestamp()
            self._tokens[installation_id] = (str(response["token"]), expires_at)
            return str(response["token"])

    async def installation_client(self, installation_id: int) -> GitHubClient:
        return GitHubClient(
            self.session,
            base_url=self.api_url,
            metrics=self.metrics,
            installation_id=installation_id,
            oauth_token=await self.token(installation_id),
            cache=self._responses.partition(installation_id),
            pacer=self._pacer(installation_id),
            token_source=functools.partial(self.token, installation_id),
            missing_files=self._missing.setdefault(
                installation_id,
                cachetools.TTLCache(MISSING_FILES_KEPT, ttl=MISSING_FILE_SECONDS),
            ),
        )

    def _pacer(self, installation_id: int) -> WritePacer:
        pacer = self._pacers.get(installation_id)
        if pacer is None:
            pacer = self._pacers[installation_id] = WritePacer(
                self.write_interval, shared=self.write_schedule, installation_id=installation_id
            )
        return pacer

    async def bot_login(self) -> str:
        """The login the App's comments carry, e.g. `flaky-triage[bot]`."""
        if self._bot_login is None:
            app = await self.app_client().getitem("/app")
            self._bot_login = f"{app['slug']}[bot]"
        return self._bot_login
