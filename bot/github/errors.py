"""Which failures are worth retrying, and when."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping

import aiohttp
from gidgethub import BadRequest, GitHubBroken, HTTPException, RateLimitExceeded


class TransientError(Exception):
    """A failure that should be retried later; `retry_after` in seconds when GitHub said."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


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


def is_rate_limited(exc: HTTPException) -> bool:
    if isinstance(exc, RateLimitExceeded) or exc.status_code == 429:
        return True
    if exc.status_code == 403:
        # Secondary rate limits are 403s with Retry-After and no remaining=0.
        return retry_after_from(exc.headers) is not None
    return False


def classify(exc: BaseException) -> TransientError | None:
    """The transient reading of an exception, or None when retrying cannot help."""
    if isinstance(exc, TransientError):
        return exc
    if isinstance(exc, GitHubBroken):
        return TransientError(f"GitHub answered {int(exc.status_code)}")
    if isinstance(exc, BadRequest) and is_rate_limited(exc):
        return TransientError(
            f"rate limited by GitHub ({int(exc.status_code)})", retry_after_from(exc.headers)
        )
    if isinstance(exc, aiohttp.ClientError | asyncio.TimeoutError | ConnectionError):
        return TransientError(f"network error: {type(exc).__name__}: {exc}")
    return None
