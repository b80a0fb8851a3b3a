"""The NDJSON progress stream of a tool call: one JSON object per line, flushed as it happens."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

NDJSON = "application/x-ndjson"
STREAM_HEADERS = {
    "Content-Type": NDJSON,
    "Cache-Control": "no-cache, no-transform",
    "X-Accel-Buffering": "no",
}


def wants_stream(request: web.Request) -> bool:
    return NDJSON in request.headers.get("Accept", "")


def encode_line(payload: Any) -> bytes:
    return (json.dumps(payload, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


class NdjsonStream:
    """A 200 response that carries progress lines and exactly one terminal line."""

    def __init__(self, request: web.Request) -> None:
        self._request = request
        self.response = web.StreamResponse(status=200, headers=STREAM_HEADERS)
        self.broken = False

    async def open(self) -> None:
        await self.response.prepare(self._request)

    async def send(self, payload: Any) -> None:
        """Write one line and wait until it is handed to the socket; a gone client marks the stream broken."""
        if self.broken:
            return
        try:
            await self.response.write(encode_line(payload))
        except (ConnectionError, RuntimeError):
            self.broken = True

    async def close(self) -> None:
        if self.broken:
            return
        try:
            await self.response.write_eof()
        except (ConnectionError, RuntimeError):
            self.broken = True
