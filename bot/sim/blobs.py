"""Short-lived blobs (job logs, artifact zips) served without credentials, with byte ranges."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from aiohttp import web

LOG_TYPE = "text/plain; charset=utf-8"
ZIP_TYPE = "application/zip"
CHUNK = 16 * 1024
# One range only: like Azure blob storage, a list of ranges is not served as multipart.
_RANGE = re.compile(r"bytes=([0-9]*)-([0-9]*)")


class PaddedLog:
    """A job log of `padding` bytes of generated build output, then `tail`, made as it is read:
    a log of gigabytes costs no memory. Sliced like bytes (`len`, `[start:stop]`)."""

    LINE = b"2026-11-30T10:00:00.0000000Z   building module: compiled, nothing to report\n"

    def __init__(self, padding: int, tail: bytes) -> None:
        self.padding = padding - padding % len(self.LINE)  # whole lines only
        self.tail = tail

    def __len__(self) -> int:
        return self.padding + len(self.tail)

    def __getitem__(self, span: slice) -> bytes:
        start, stop, _ = span.indices(len(self))
        if start >= stop:
            return b""
        head = b""
        if start < self.padding:
            end = min(stop, self.padding)
            offset = start % len(self.LINE)
            lines = (offset + end - start) // len(self.LINE) + 1
            head = (self.LINE * lines)[offset : offset + end - start]
        return head + self.tail[max(start - self.padding, 0) : max(stop - self.padding, 0)]


@dataclass(frozen=True)
class Blob:
    data: bytes | PaddedLog
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


async def serve(
    request: web.Request,
    blob: Blob,
    *,
    ranges: bool = True,
    sent: Callable[[int], None] | None = None,
) -> web.StreamResponse:
    """The blob, or the part of it the request's Range asks for (206), or 416; with
    `ranges` False, always the whole blob, as a host that ignores Range sends it. `sent` is
    told the size of each chunk once written."""
    total = len(blob.data)
    headers = {"Content-Type": blob.content_type, "Accept-Ranges": "bytes" if ranges else "none"}
    try:
        span = requested_span(request.headers.get("Range") if ranges else None, total)
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
        chunk = blob.data[start : min(start + CHUNK, span.stop)]
        await response.write(chunk)
        if sent is not None:
            sent(len(chunk))
    await response.write_eof()
    return response
