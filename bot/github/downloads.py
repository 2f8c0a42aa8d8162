"""Large downloads (job logs, artifact zips): uncached, streamed, byte-capped.

Never through the cached client: the API answers with a redirect to a short-lived blob URL,
and the token goes only to the API, never to the blob host.
"""

from __future__ import annotations

import asyncio
import io
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http import HTTPStatus

import aiohttp
from gidgethub import BadRequest, GitHubBroken, HTTPException

from bot.github.client import MAX_INLINE_WAIT, USER_AGENT, backoff
from bot.github.errors import classify

CHUNK_BYTES = 256 * 1024
TIMEOUT = aiohttp.ClientTimeout(total=300, sock_read=60)
# A redirect or blob answer that failed on the way (5xx, a dropped connection, a short rate
# limit) is asked again, up to this many tries, before the delivery's own retry takes over:
# nothing has reached the caller yet, so asking again is safe.
OPEN_ATTEMPTS = 4


@dataclass(frozen=True)
class Streamed:
    truncated: bool  # True when only the tail of a larger log was passed on
    size_read: int  # bytes received from the blob host


class TooLarge(Exception):
    """A download larger than its cap: refused, not truncated."""


def _raise_for(status: int, headers: object = None, message: str = "") -> None:
    if status >= 500:
        raise GitHubBroken(HTTPStatus(status))
    said = (message,) if message else ()
    raise BadRequest(HTTPStatus(status), *said, headers=headers)  # type: ignore[arg-type]


async def _message(response: aiohttp.ClientResponse) -> str:
    """GitHub's `message` in an API error answer: its words tell a rate limit from a refusal."""
    try:
        data = await response.json(content_type=None)
    except (ValueError, aiohttp.ClientError):
        return ""
    return str(data.get("message") or "") if isinstance(data, dict) else ""


# Told of each API answer (url, method, status): downloads count in the request metrics too.
CountRequest = Callable[[str, str, int], None]


async def _blob_location(
    session: aiohttp.ClientSession, url: str, token: str, count: CountRequest | None
) -> str:
    async with session.get(
        url,
        headers={
            "Authorization": f"token {token}",
            "Accept": "application/vnd.github+json",
            "User-Agent": USER_AGENT,
        },
        allow_redirects=False,
    ) as response:
        if count is not None:
            count(url, "GET", response.status)
        if response.status not in (301, 302, 303, 307, 308):
            _raise_for(response.status, response.headers, await _message(response))
        return response.headers["Location"]


async def _open_blob(
    session: aiohttp.ClientSession,
    url: str,
    token: str,
    count: CountRequest | None,
    *,
    headers: dict[str, str],
    ok: tuple[int, ...],
) -> aiohttp.ClientResponse:
    """The blob behind an API redirect, answered with one of the `ok` statuses, not yet read.

    Transient failures are tried again with backoff (the redirect too: its URL is short-lived);
    a wait longer than MAX_INLINE_WAIT is left to the delivery's retry.
    """
    attempt = 0
    while True:
        attempt += 1
        try:
            location = await _blob_location(session, url, token, count)
            blob = await session.get(location, headers=headers, timeout=TIMEOUT)
            if blob.status not in ok:
                blob.release()
                _raise_for(blob.status, blob.headers)
            return blob
        except (HTTPException, aiohttp.ClientError, TimeoutError) as exc:
            transient = classify(exc)
            if transient is None or attempt >= OPEN_ATTEMPTS:
                raise
            wait = transient.retry_after
            if wait is None:
                wait = backoff(attempt)
            if wait > MAX_INLINE_WAIT:
                raise transient from exc  # a rate limit: the inbox waits it out
            await asyncio.sleep(wait)


async def stream_job_log(
    session: aiohttp.ClientSession,
    *,
    api_url: str,
    token: str,
    repo: str,
    job_id: int,
    cap_bytes: int,
    sink: Callable[[bytes], Awaitable[None]],
    count: CountRequest | None = None,
) -> Streamed:
    """Pass the last `cap_bytes` of an Actions job log to `sink`, chunk by chunk, each
    awaited before the next is read: a sink may hand its chunk to a thread.

    Test summaries sit at the end of a log, so we ask for its tail with a suffix Range and
    stream it straight through. A host that ignores Range sends the whole log: we keep a
    rolling tail of `cap_bytes` and pass it on at the end, so memory stays bounded by the cap
    whatever the log's size. A tail that starts mid-line loses that first, cut line.
    """
    async with await _open_blob(
        session,
        f"{api_url.rstrip('/')}/repos/{repo}/actions/jobs/{job_id}/logs",
        token,
        count,
        headers={"Range": f"bytes=-{cap_bytes}", "User-Agent": USER_AGENT},
        ok=(200, 206),
    ) as blob:
        whole = blob.status == 200 and (
            blob.content_length is not None and blob.content_length <= cap_bytes
        )
        partial = blob.status == 206 and _starts_after_zero(blob.headers.get("Content-Range"))
        read = 0
        if blob.status == 206 or whole:
            first = partial
            async for chunk in blob.content.iter_chunked(CHUNK_BYTES):
                read += len(chunk)
                if first:  # still inside the line the range cut
                    _, newline, chunk = chunk.partition(b"\n")
                    if not newline:
                        continue
                    first = False
                await sink(chunk)
            return Streamed(truncated=partial, size_read=read)
        tail: deque[bytes] = deque()
        kept = 0
        async for chunk in blob.content.iter_chunked(CHUNK_BYTES):
            read += len(chunk)
            tail.append(chunk)
            kept += len(chunk)
            while kept - len(tail[0]) >= cap_bytes:
                kept -= len(tail.popleft())
    data = b"".join(tail)
    truncated = len(data) > cap_bytes or read > len(data)
    if len(data) > cap_bytes:
        data = data[-cap_bytes:]
    if truncated:
        data = data.partition(b"\n")[2]
    await sink(data)
    return Streamed(truncated=truncated, size_read=read)


async def download_artifact(
    session: aiohttp.ClientSession,
    *,
    api_url: str,
    token: str,
    repo: str,
    artifact_id: int,
    cap_bytes: int,
    count: CountRequest | None = None,
) -> bytes:
    """An artifact's zip, refused (TooLarge) past `cap_bytes`: a zip cut short is useless."""
    async with await _open_blob(
        session,
        f"{api_url.rstrip('/')}/repos/{repo}/actions/artifacts/{artifact_id}/zip",
        token,
        count,
        headers={"User-Agent": USER_AGENT},
        ok=(200,),
    ) as blob:
        if blob.content_length is not None and blob.content_length > cap_bytes:
            raise TooLarge(f"artifact {artifact_id} is {blob.content_length} bytes")
        # Written into one buffer whose bytes getvalue() hands over without a copy: a list of
        # chunks joined at the end would hold the zip twice.
        buffer = io.BytesIO()
        async for chunk in blob.content.iter_chunked(CHUNK_BYTES):
            if buffer.tell() + len(chunk) > cap_bytes:
                raise TooLarge(f"artifact {artifact_id} is over {cap_bytes} bytes")
            buffer.write(chunk)
    return buffer.getvalue()


def _starts_after_zero(content_range: str | None) -> bool:
    """`bytes 100-199/200` starts after 0: part of the log was left out."""
    if not content_range or " " not in content_range:
        return False
    span = content_range.split(" ", 1)[1].split("/", 1)[0]
    return not span.startswith("0-")
