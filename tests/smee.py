"""A webhook proxy channel on 127.0.0.1 that behaves as smee.io's does: a POST to the channel
is sent to every listener as a server-sent `message` event whose data is the request's
headers (lower-case names) with `body` (the JSON parsed), `query` and `timestamp`; a new
listener first gets a `ready` event, and `ping` events come between messages.

Made after smee-client's test server (test/helpers/smee-server.ts, ISC licence) and the
event format of smee.io's server (probot/smee.io).
"""

from __future__ import annotations

import asyncio
import json
import time
from types import TracebackType
from typing import Any

from aiohttp import web

CHANNEL = "/flakybot-trial"


class SmeeChannel:
    def __init__(self) -> None:
        self.listeners: list[asyncio.Queue[tuple[str, dict[str, Any]]]] = []
        self.received = 0
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def __aenter__(self) -> SmeeChannel:
        app = web.Application()
        app.router.add_get(CHANNEL, self._listen)
        app.router.add_post(CHANNEL, self._receive)
        self._runner = web.AppRunner(app, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        host, port = site._server.sockets[0].getsockname()[:2]  # type: ignore[union-attr]
        self.url = f"http://{host}:{port}{CHANNEL}"
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for queue in self.listeners:
            queue.put_nowait(("close", {}))
        assert self._runner is not None
        await self._runner.cleanup()

    async def _receive(self, request: web.Request) -> web.Response:
        message: dict[str, Any] = {name.lower(): value for name, value in request.headers.items()}
        message["body"] = json.loads(await request.read())
        message["query"] = dict(request.query)
        message["timestamp"] = int(time.time() * 1000)
        self.received += 1
        for queue in self.listeners:
            queue.put_nowait(("message", message))
        return web.Response(text="ok")

    async def _listen(self, request: web.Request) -> web.StreamResponse:
        stream = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await stream.prepare(request)
        queue: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
        queue.put_nowait(("ready", {}))
        queue.put_nowait(("ping", {}))
        self.listeners.append(queue)
        count = 0
        try:
            while True:
                kind, data = await queue.get()
                if kind == "close":
                    break
                count += 1
                event = "" if kind == "message" else f"event: {kind}\n"
                text = f"id: {count}\n{event}data: {json.dumps(data)}\n\n"
                # In pieces, as a network delivers them: no event is whole in one read.
                raw = text.encode()
                for start in range(0, len(raw), 1000):
                    await stream.write(raw[start : start + 1000])
        finally:
            self.listeners.remove(queue)
        return stream
