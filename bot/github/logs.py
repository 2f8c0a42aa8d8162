"""Job logs: an uncached, streamed, byte-capped download (never through the ETag cache)."""

from __future__ import annotations

from collections import deque
from http import HTTPStatus

import aiohttp
from gidgethub import BadRequest, GitHubBroken

from bot.github.client import USER_AGENT


class JobLog:
    def __init__(self, text: str, truncated: bool, size_read: int) -> None:
        self.text = text
        self.truncated = truncated  # True when only the tail of a larger log was kept
        self.size_read = size_read


async def download_job_log(
    session: aiohttp.ClientSession,
    *,
    api_url: str,
    token: str,
    repo: str,
    job_id: int,
    cap_bytes: int,
) -> JobLog:
    """The tail of an Actions job log, at most `cap_bytes`.

    The API answers with a redirect to a short-lived URL; the token goes only to the API,
    never to the blob host. Test summaries sit at the end of a log, so we keep its tail: we
    ask for it with a suffix Range, and when the host ignores that we stream the whole log
    and keep a rolling tail, so memory stays bounded by the cap whatever the log's size.
    """
    async with session.get(
        f"{api_url.rstrip('/')}/repos/{repo}/actions/jobs/{job_id}/logs",
        headers={
            "Authorization": f"token {token}",
            "Accept": "application/vnd.github+json",
            "User-Agent": USER_AGENT,
        },
        allow_redirects=False,
    ) as response:
        if response.status >= 500:
            raise GitHubBroken(HTTPStatus(response.status))
        if response.status not in (301, 302, 303, 307, 308):
            raise BadRequest(HTTPStatus(response.status), headers=response.headers)
        location = response.headers["Location"]

    async with session.get(
        location,
        headers={"Range": f"bytes=-{cap_bytes}", "User-Agent": USER_AGENT},
        timeout=aiohttp.ClientTimeout(total=300, sock_read=60),
    ) as blob:
        if blob.status >= 500:
            raise GitHubBroken(HTTPStatus(blob.status))
        if blob.status not in (200, 206):
            raise BadRequest(HTTPStatus(blob.status))
        chunks: deque[bytes] = deque()
        kept = read = 0
        dropped = blob.status == 206 and _is_partial(blob.headers.get("Content-Range"))
        async for chunk in blob.content.iter_chunked(64 * 1024):
            read += len(chunk)
            chunks.append(chunk)
            kept += len(chunk)
            while kept - len(chunks[0]) >= cap_bytes:
                kept -= len(chunks.popleft())
                dropped = True
    data = b"".join(chunks)
    if len(data) > cap_bytes:
        data = data[-cap_bytes:]
        dropped = True
    if dropped:
        # The first line is probably cut in the middle: drop it.
        data = data.partition(b"\n")[2]
    return JobLog(data.decode("utf-8", errors="replace"), dropped, read)


def _is_partial(content_range: str | None) -> bool:
    """`bytes 100-199/200` starts after 0: part of the log was left out."""
    if not content_range or " " not in content_range:
        return False
    span = content_range.split(" ", 1)[1].split("/", 1)[0]
    return not span.startswith("0-")
