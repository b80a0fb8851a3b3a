"""The NDJSON progress stream of a tool call: one JSON object per line, flushed as it happens.

A call's result is encoded where it costs others nothing: a report of many steps (a fan-out's
100k lines take seconds to encode) on the CPU pool, any other result in place, so a small result
never queues behind the pool's work.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from aiohttp import web

from argent.cpu import run_cpu
from argent.limits import RESULT_STEPS_ENCODED_IN_PLACE
from argent.link.wire import to_wire

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


def result_line(result: Any) -> bytes:
    """The terminal line of a stream whose call succeeded."""
    return encode_line({"event": "result", "data": to_wire(result)})


def result_body(result: Any) -> bytes:
    """The body of a buffered answer whose call succeeded (as ``web.json_response`` writes it)."""
    return json.dumps({"data": to_wire(result)}).encode()


async def encode_result(encode: Callable[[Any], bytes], result: Any) -> bytes:
    """``encode(result)``: on the CPU pool for a report of more than RESULT_STEPS_ENCODED_IN_PLACE steps."""
    steps = getattr(result, "steps", None)
    if isinstance(steps, list) and len(steps) > RESULT_STEPS_ENCODED_IN_PLACE:
        return await run_cpu(encode, result)
    return encode(result)


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
        await self.send_line(encode_line(payload))

    async def send_line(self, line: bytes) -> None:
        """``send`` of a line already encoded."""
        if self.broken:
            return
        try:
            await self.response.write(line)
        except (ConnectionError, RuntimeError):
            self.broken = True

    async def close(self) -> None:
        if self.broken:
            return
        try:
            await self.response.write_eof()
        except (ConnectionError, RuntimeError):
            self.broken = True
