"""Deliveries from a webhook proxy's channel (WEBHOOK_PROXY_URL, a smee.io one), relayed to
the bot's own webhook path: what Probot's `serve` does with smee-client, for a trial on a
machine GitHub cannot reach.

smee.io holds a channel open as server-sent events. Each `message` event's data is one JSON
object: the delivery's headers (lower-case names), `body` (the payload, parsed) and `query`;
its other events (`ready`, `ping`) carry nothing to relay. As smee-client does, each delivery
is posted with its headers and the body serialised again as JavaScript does (compact, as
GitHub sends it), so its signature still holds; the webhook endpoint then checks it as any
other's. Connections that drop are made again after a pause.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from dataclasses import dataclass, field
from typing import Any

import aiohttp

log = logging.getLogger("flakybot.webhook_proxy")

# GitHub's cap on a delivery's body, with room for its headers and the event's framing.
MAX_EVENT_BYTES = 26 * 1024 * 1024
RETRY_SECONDS = (1.0, 2.0, 5.0, 10.0, 30.0)
# Headers of the proxy's hop, not of GitHub's delivery.
_HOP_HEADERS = frozenset(
    {"host", "content-length", "content-type", "connection", "transfer-encoding", "timestamp"}
)


@dataclass
class ServerSentEvents:
    """The events of a `text/event-stream`, fed as bytes arrive (the WHATWG rules: `event:`
    and `data:` fields, a blank line ends an event, a line starting with `:` is a comment;
    lines end with LF or CR LF, as smee.io's do)."""

    limit: int = MAX_EVENT_BYTES
    # The bytes after the last line break: a 25 MB delivery arrives in many chunks, which
    # are joined once, at its line's end, not once per chunk.
    _parts: list[bytes] = field(default_factory=list)
    _held: int = 0
    _event: str = ""
    _data: list[str] = field(default_factory=list)
    _size: int = 0

    def feed(self, chunk: bytes) -> list[tuple[str, str]]:
        """The (event type, data) of every event the chunk completes."""
        cut = chunk.rfind(b"\n")
        if cut < 0:
            self._parts.append(chunk)
            self._held += len(chunk)
            if self._held > self.limit:
                raise ValueError(f"an event over {self.limit:,} bytes")
            return []
        text = b"".join([*self._parts, chunk[:cut]])
        self._parts, self._held = [chunk[cut + 1 :]], len(chunk) - cut - 1
        done: list[tuple[str, str]] = []
        for raw in text.split(b"\n"):
            line = raw[:-1] if raw.endswith(b"\r") else raw
            event = self._line(line.decode("utf-8", errors="replace"))
            if event is not None:
                done.append(event)
        return done

    def _line(self, line: str) -> tuple[str, str] | None:
        if not line:
            event = (self._event or "message", "\n".join(self._data))
            had_data = bool(self._data)
            self._event, self._data, self._size = "", [], 0
            return event if had_data else None
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            self._event = value
        elif name == "data":
            self._size += len(value)
            if self._size > self.limit:
                raise ValueError(f"an event over {self.limit:,} bytes")
            self._data.append(value)
        return None


def delivery_request(data: str) -> tuple[dict[str, str], bytes] | None:
    """The headers and body to post for one `message` event's data; None for data that is
    not a delivery."""
    try:
        message: Any = json.loads(data)
    except ValueError:
        return None
    if not isinstance(message, dict) or "body" not in message:
        return None
    body = json.dumps(message.pop("body"), separators=(",", ":"), ensure_ascii=False)
    message.pop("query", None)
    headers = {
        name: value
        for name, value in message.items()
        if isinstance(value, str) and name.lower() not in _HOP_HEADERS
    }
    headers["content-type"] = "application/json"
    return headers, body.encode()


class WebhookProxy:
    """Reads the channel at `source` and posts each delivery to `target` until closed. The
    channel's address is never logged: whoever has it can read the deliveries."""

    def __init__(self, session: aiohttp.ClientSession, source: str, target: str) -> None:
        self.session = session
        self.source = source
        self.target = target
        self.relayed = 0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        failures = 0
        while True:
            try:
                await self._listen()
                failures = 0
            except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
                log.warning("webhook proxy: %s; connecting again", exc or "closed")
                failures += 1
            await asyncio.sleep(RETRY_SECONDS[min(failures, len(RETRY_SECONDS) - 1)])

    async def _listen(self) -> None:
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=30)
        headers = {"Accept": "text/event-stream"}
        async with self.session.get(self.source, headers=headers, timeout=timeout) as stream:
            stream.raise_for_status()
            log.info("webhook proxy: relaying the channel's deliveries to %s", self.target)
            events = ServerSentEvents()
            async for chunk in stream.content.iter_any():
                for kind, data in events.feed(chunk):
                    if kind == "message":
                        await self._relay(data)

    async def _relay(self, data: str) -> None:
        request = delivery_request(data)
        if request is None:
            return
        headers, body = request
        try:
            async with self.session.post(self.target, data=body, headers=headers) as answer:
                await answer.read()
                status = answer.status
        except (aiohttp.ClientError, TimeoutError) as exc:
            log.warning("webhook proxy: could not post a delivery to %s: %s", self.target, exc)
            return
        self.relayed += 1
        log.info(
            "webhook proxy: delivery %s relayed: %s",
            headers.get("x-github-delivery", "?"),
            status,
        )
