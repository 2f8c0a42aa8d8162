"""Short-lived blobs (job logs, artifact zips) served without credentials, with byte ranges."""

from __future__ import annotations

import re
from dataclasses import dataclass

from aiohttp import web

LOG_TYPE = "text/plain; charset=utf-8"
ZIP_TYPE = "application/zip"
CHUNK = 16 * 1024
# One range only: like Azure blob storage, a list of ranges is not served as multipart.
_RANGE = re.compile(r"bytes=([0-9]*)-([0-9]*)")


@dataclass(frozen=True)
class Blob:
    data: bytes
    content_type: str
    expires_at: float  # time.monotonic()


class UnsatisfiableRange(ValueError):
    """A well-formed Range that selects no byte of the blob: 416."""


def requested_span(header: str | None, total: int) -> range | None:
    """The bytes a `Range` header selects out of `total`; None serves the whole blob.

    Follows RFC 9110: a header that is not one well-formed byte range is ignored, a suffix
    longer than the blob selects all of it, and an end past the blob is cut to its last byte.
    """
    match = _RANGE.fullmatch((header or "").strip())
    if match is None or match.group(1) == match.group(2) == "":
        return None
    first, last = match.group(1), match.group(2)
    if first == "":
        suffix = int(last)
        if suffix == 0:
            raise UnsatisfiableRange(header)
        # A zero-length blob has no byte to name in Content-Range: send it whole.
        return range(max(total - suffix, 0), total) if total else None
    start = int(first)
    if last != "" and int(last) < start:
        return None  # last-pos before first-pos: not a valid range
    if start >= total:
        raise UnsatisfiableRange(header)
    return range(start, total if last == "" else min(int(last) + 1, total))


async def serve(request: web.Request, blob: Blob) -> web.StreamResponse:
    """The blob, or the part of it the request's Range asks for (206), or 416."""
    total = len(blob.data)
    headers = {"Content-Type": blob.content_type, "Accept-Ranges": "bytes"}
    try:
        span = requested_span(request.headers.get("Range"), total)
    except UnsatisfiableRange:
        return web.Response(
            status=416,
            text="The range specified is invalid for the current size of the resource.",
            headers={"Content-Range": f"bytes */{total}", "Accept-Ranges": "bytes"},
        )
    if span is None:
        response = web.StreamResponse(status=200, headers=headers)
        span = range(total)
    else:
        response = web.StreamResponse(status=206, headers=headers)
        response.headers["Content-Range"] = f"bytes {span.start}-{span.stop - 1}/{total}"
    response.content_length = len(span)
    await response.prepare(request)
    for start in range(span.start, span.stop, CHUNK):
        await response.write(blob.data[start : min(start + CHUNK, span.stop)])
    await response.write_eof()
    return response
