"""The NDJSON progress stream of a tool call: one JSON object per line, flushed as it happens.

"As it happens" is within ``STREAM_FLUSH_DELAY_SECONDS``, not line by line: a line starts a short
window, the lines sent during it are joined and written as one chunk, and whatever is queued when
the call ends rides with the end of the body. The response headers wait for the first chunk too
(and go out alone when the window closes with no line). One write per line meant one ``send``
system call and one wake-up of the client per line, most of the server's time on a fast flow;
a 20-step echo flow is now one write. A client that reads slowly holds the call back once
``STREAM_COALESCE_BYTES`` are queued.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web

from argent.limits import STREAM_COALESCE_BYTES, STREAM_FLUSH_DELAY_SECONDS

NDJSON = "application/x-ndjson"
STREAM_HEADERS = {
    "Content-Type": NDJSON,
    "Cache-Control": "no-cache, no-transform",
    "X-Accel-Buffering": "no",
}

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def wants_stream(request: web.Request) -> bool:
    return NDJSON in request.headers.get("Accept", "")


def encode_line(payload: Any) -> bytes:
    return (_encode(payload) + "\n").encode()


class _HeadersWithFirstChunk(web.StreamResponse):
    """A stream response whose ``prepare`` buffers the headers: they go out with the first chunk
    (aiohttp's own ``web.Response`` does the same), not in a write of their own."""

    _send_headers_immediately = False


class NdjsonStream:
    """A 200 response that carries progress lines and exactly one terminal line."""

    def __init__(self, request: web.Request) -> None:
        self._request = request
        self.response: web.StreamResponse = _HeadersWithFirstChunk(status=200, headers=STREAM_HEADERS)
        self.broken = False
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        #: The window before the next write (None: none open) and the task writing (None: idle).
        self._timer: asyncio.TimerHandle | None = None
        self._flusher: asyncio.Task[None] | None = None

    async def open(self) -> None:
        """Commit to the 200 answer; its headers go out with the first lines, or alone once the
        window closes."""
        await self.response.prepare(self._request)
        self._schedule()

    async def send(self, payload: Any) -> None:
        """Queue one line for the next write; a gone client marks the stream broken (seen by a later
        send). Waits for the socket only when ``STREAM_COALESCE_BYTES`` are queued."""
        if self.broken:
            return
        line = encode_line(payload)
        self._pending.append(line)
        self._pending_bytes += len(line)
        if self._pending_bytes < STREAM_COALESCE_BYTES:
            self._schedule()
            return
        flusher = self._flush_now()
        await asyncio.shield(flusher)

    def _schedule(self) -> None:
        if self._timer is None and self._flusher is None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(STREAM_FLUSH_DELAY_SECONDS, self._flush_now)

    def _flush_now(self) -> asyncio.Task[None]:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._flusher is None:
            self._flusher = asyncio.get_running_loop().create_task(self._flush())
        return self._flusher

    async def _flush(self) -> None:
        """Write what is queued (at least the headers) until nothing is."""
        try:
            while not self.broken:
                try:
                    await self.response.write(self._take())
                except (ConnectionError, RuntimeError):
                    self.broken = True
                if not self._pending:
                    break
        finally:
            self._flusher = None

    def _take(self) -> bytes:
        data = b"".join(self._pending)
        self._pending.clear()
        self._pending_bytes = 0
        return data

    async def close(self) -> None:
        """End the body; the lines still queued (the terminal one) go out with its last chunk."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._flusher is not None:
            await asyncio.shield(self._flusher)
        if self.broken:
            return
        try:
            await self.response.write_eof(self._take())
        except (ConnectionError, RuntimeError):
            self.broken = True
