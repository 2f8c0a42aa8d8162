"""Which failures are worth retrying, and when."""

from __future__ import annotations

import asyncio
import http
import json
import time
from collections.abc import Mapping

import aiohttp
from gidgethub import BadRequest, GitHubBroken, HTTPException

# GitHub: after a rate limit that names no time to wait, "wait for at least one minute".
UNTIMED_LIMIT_SECONDS = 60.0
# How GitHub's answer words a rate limit: the primary ("API rate limit exceeded for ..."),
# the secondary ("You have exceeded a secondary rate limit ...") and the secondary's old name.
_LIMIT_WORDS = ("rate limit", "abuse detection")


class TransientError(Exception):
    """A failure that should be retried later; `retry_after` in seconds when GitHub said."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class RateLimited(TransientError):
    """GitHub's rate limit, primary or secondary: never a refusal, whatever the endpoint.

    `until`: the epoch time before which GitHub asks not to be asked again. Not a
    `BadRequest`, so no caller that reads a 403 or 404 as an answer can take it for one.
    """

    def __init__(
        self, message: str, until: float, *, status: int | None = None, now: float | None = None
    ) -> None:
        super().__init__(message, max(0.0, until - (time.time() if now is None else now)))
        self.until = until
        self.status = status


def retry_after_from(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait as GitHub asks: `Retry-After`, else `x-ratelimit-reset` when exhausted."""
    lowered = {k.lower(): v for k, v in headers.items()}
    value = lowered.get("retry-after")
    if value is not None:
        try:
            return max(0.0, float(value))
        except ValueError:
            return None
    if lowered.get("x-ratelimit-remaining") == "0" and "x-ratelimit-reset" in lowered:
        try:
            reset = float(lowered["x-ratelimit-reset"])
        except ValueError:
            return None
        return max(0.0, reset - (time.time() if now is None else now))
    return None


def rate_limit_wait(
    status: int, headers: Mapping[str, str], message: str, now: float | None = None
) -> float | None:
    """How long GitHub asks to wait when this answer is a rate limit; None when it is not one.

    GitHub answers a rate limit with 403 or 429, and marks it with `Retry-After`,
    `x-ratelimit-remaining: 0` or the words of its message; a 403 with none of these is a
    refusal (no permission, a run too old to rerun, ...).
    """
    if status not in (403, 429):
        return None
    wait = retry_after_from(headers, now)
    if wait is not None:
        return wait
    lowered = {k.lower(): v for k, v in headers.items()}
    worded = any(words in message.lower() for words in _LIMIT_WORDS)
    if status == 429 or worded or lowered.get("x-ratelimit-remaining") == "0":
        return UNTIMED_LIMIT_SECONDS
    return None


def rate_limited(exc: HTTPException, now: float | None = None) -> RateLimited | None:
    """The rate limit GitHub's error answer stands for; None when it is not one."""
    current = time.time() if now is None else now
    status = int(exc.status_code)
    wait = rate_limit_wait(status, exc.headers, str(exc), current)
    if wait is None:
        return None
    return RateLimited(
        f"rate limited by GitHub ({status}) for {wait:.0f}s",
        current + wait,
        status=status,
        now=current,
    )


def graphql_fault(
    status: int, headers: Mapping[str, str], body: bytes, now: float | None = None
) -> TransientError | None:
    """The transient reading of a GraphQL answer (gidgethub reads neither a rate limit nor,
    before its JSON, a 5xx in one); None when the answer is not a fault.

    A rate limit, primary or secondary, is read from the status, headers and message as on
    REST; a 5xx (a gateway's 502 may not even be JSON) is GitHub broken for now.
    """
    if status >= 500:
        return classify(GitHubBroken(http.HTTPStatus(status)))
    try:
        message = str(json.loads(body).get("message", ""))
    except (ValueError, AttributeError):
        message = ""
    current = time.time() if now is None else now
    wait = rate_limit_wait(status, headers, message, current)
    if wait is None:
        return None
    return RateLimited(
        f"rate limited by GitHub's GraphQL API ({status}) for {wait:.0f}s",
        current + wait,
        status=status,
        now=current,
    )


def classify(exc: BaseException) -> TransientError | None:
    """The transient reading of an exception, or None when retrying cannot help."""
    if isinstance(exc, TransientError):
        return exc
    if isinstance(exc, GitHubBroken):
        return TransientError(f"GitHub answered {int(exc.status_code)}")
    if isinstance(exc, BadRequest):
        return rate_limited(exc)
    if isinstance(exc, aiohttp.ClientError | asyncio.TimeoutError | ConnectionError):
        return TransientError(f"network error: {type(exc).__name__}: {exc}")
    return None
