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
from argent.link.codec import event_to_wire, to_wire
from argent.link.models import ResultBody, ResultEvent

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
    return (dumps_in_parts(event_to_wire(ResultEvent(result)), compact=True) + "\n").encode()


def result_body(result: Any) -> bytes:
    """The body of a buffered answer whose call succeeded (as ``web.json_response`` writes it)."""
    return dumps_in_parts(to_wire(ResultBody(result)), compact=False).encode()


async def encode_result(encode: Callable[[Any], bytes], result: Any) -> bytes:
    """``encode(result)``: on the CPU pool for a report of more than RESULT_STEPS_ENCODED_IN_PLACE
    steps (in parts, see ``dumps_in_parts``), any other result in place."""
    steps = getattr(result, "steps", None)
    if isinstance(steps, list) and len(steps) > RESULT_STEPS_ENCODED_IN_PLACE:
        return await run_cpu(encode, result)
    return encode(result)


#: A list longer than this is encoded item by item (see ``dumps_in_parts``).
_PART_ITEMS = 256
_COMPACT = {"ensure_ascii": False, "separators": (",", ":")}


def is_large(value: Any) -> bool:
    """A value holding a long list (a run's 100k step reports, nested results included)."""
    if isinstance(value, list):
        return len(value) > _PART_ITEMS or any(isinstance(v, dict) and is_large(v) for v in value)
    if isinstance(value, dict):
        return any(isinstance(v, list | dict) and is_large(v) for v in value.values())
    return False


def dumps_in_parts(value: Any, *, compact: bool) -> str:
    """``json.dumps(value)`` (``compact``: the NDJSON spelling) in many small calls.

    The C encoder holds the GIL for a whole call: one call over a 12 MB result stalls the event
    loop for as long as it takes, even from a thread. Encoding each item of a long list on its
    own lets the loop run between items; small values go to ``json.dumps`` whole."""
    options: dict[str, Any] = _COMPACT if compact else {}
    item_sep, key_sep = (",", ":") if compact else (", ", ": ")
    if isinstance(value, dict) and is_large(value):
        return (
            "{"
            + item_sep.join(
                json.dumps(str(k), **options) + key_sep + dumps_in_parts(v, compact=compact)
                for k, v in value.items()
            )
            + "}"
        )
    if isinstance(value, list) and is_large(value):
        return "[" + item_sep.join(dumps_in_parts(v, compact=compact) for v in value) + "]"
    return json.dumps(value, **options)


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
