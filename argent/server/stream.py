"""The NDJSON progress stream of a tool call: one JSON object per line, flushed as it happens.

A call's result is encoded where it costs others nothing: a report of many steps (a fan-out's
100k lines take seconds to encode) on the CPU pool, any other result in place, so a small result
never queues behind the pool's work.

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
from collections.abc import Callable
from typing import Any

from aiohttp import web

from argent.cpu import run_cpu
from argent.limits import RESULT_STEPS_ENCODED_IN_PLACE, STREAM_COALESCE_BYTES, STREAM_FLUSH_DELAY_SECONDS
from argent.link.codec import event_to_wire, result_head_to_wire, step_to_wire, to_wire
from argent.link.models import EVENT_TAGS, FlowRunResult, ProgressEvent, ResultBody, ResultEvent, StepReport

NDJSON = "application/x-ndjson"
STREAM_HEADERS = {
    "Content-Type": NDJSON,
    "Cache-Control": "no-cache, no-transform",
    "X-Accel-Buffering": "no",
}


def _encoder(item_sep: str, key_sep: str, *, ensure_ascii: bool) -> Callable[[Any], str]:
    """``json.dumps`` with these options, built once: ``json.dumps`` (and ``JSONEncoder.encode``)
    builds a new C encoder on every call, which cost more than encoding a progress line itself.
    No circular check (wire values are trees; a cycle still fails, as a RecursionError)."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C accelerator: the library's own path
        return json.JSONEncoder(
            ensure_ascii=ensure_ascii, separators=(item_sep, key_sep), check_circular=False
        ).encode
    quote = json.encoder.encode_basestring_ascii if ensure_ascii else json.encoder.encode_basestring
    assert quote is not None
    encode = make(None, json.JSONEncoder().default, quote, None, key_sep, item_sep, False, False, True)

    def dumps(value: Any) -> str:
        if isinstance(value, str):
            return quote(value)
        return "".join(encode(value, 0))

    return dumps


_encode = _encoder(",", ":", ensure_ascii=False)
#: ``json.dumps(value)`` with the default options, as ``web.json_response`` writes a body.
_encode_default = _encoder(", ", ": ", ensure_ascii=True)


def wants_stream(request: web.Request) -> bool:
    return NDJSON in request.headers.get("Accept", "")


def encode_line(payload: Any) -> bytes:
    return (_encode(payload) + "\n").encode()


class _HeadersWithFirstChunk(web.StreamResponse):
    """A stream response whose ``prepare`` buffers the headers: they go out with the first chunk
    (aiohttp's own ``web.Response`` does the same), not in a write of their own."""

    _send_headers_immediately = False


def result_line(result: Any) -> bytes:
    """The terminal line of a stream whose call succeeded."""
    return (dumps_in_parts(event_to_wire(ResultEvent(result)), compact=True) + "\n").encode()


def result_body(result: Any) -> bytes:
    """The body of a buffered answer whose call succeeded (as ``web.json_response`` writes it)."""
    return dumps_in_parts(to_wire(ResultBody(result)), compact=False).encode()


def _event_head(event: type) -> str:
    """The start of an event line up to its ``data`` value, as ``event_to_wire`` spells it."""
    return "{" + _encode("event") + ":" + _encode(EVENT_TAGS[event]) + "," + _encode("data") + ":"


_STEPS_KEY = "," + _encode("steps") + ":"
_EMPTY_STEPS = _STEPS_KEY + "[]"
_PROGRESS_HEAD = _event_head(ProgressEvent)
_RESULT_HEAD = _event_head(ResultEvent)


class ReportLines:
    """The lines of a streamed run, each ``StepReport`` converted to the wire and encoded once.

    A report goes out as a progress line as it happens and again inside the result line; the
    result line splices in the text its progress line carried (the same bytes: both are compact
    encodings of ``to_wire(report)``). Only the reports of a result encoded in place are kept
    (RESULT_STEPS_ENCODED_IN_PLACE); a longer run's result is encoded afresh, off the loop."""

    def __init__(self) -> None:
        #: Each kept report's text by its ``id`` (the report is held too, so the id stays its own).
        self._texts: dict[int, tuple[StepReport, str]] = {}

    def progress_line(self, event: Any) -> bytes:
        """``encode_line(event_to_wire(ProgressEvent(event)))``."""
        if type(event) is not StepReport:
            return encode_line(event_to_wire(ProgressEvent(event)))
        text = _encode(step_to_wire(event))
        if len(self._texts) <= RESULT_STEPS_ENCODED_IN_PLACE:
            self._texts[id(event)] = (event, text)
        return (_PROGRESS_HEAD + text + "}\n").encode()

    def result_line(self, result: Any) -> bytes:
        """``result_line(result)``, with the text of each report already sent."""
        if type(result) is not FlowRunResult or len(result.steps) > RESULT_STEPS_ENCODED_IN_PLACE:
            return result_line(result)
        data = result_head_to_wire(result)
        steps = "[" + ",".join(self._text(step) for step in result.steps) + "]"
        if not is_large(data):
            # One encoding of the head, the steps spliced in for its empty list: the keys before
            # ``steps`` hold scalars, and no encoded string holds an unescaped `"`, so the first
            # ``,"steps":[]`` is the key's own.
            before, mark, after = _encode(data).partition(_EMPTY_STEPS)
            if mark:
                return (_RESULT_HEAD + before + _STEPS_KEY + steps + after + "}\n").encode()
        body = ",".join(
            _encode(key) + ":" + (steps if key == "steps" else dumps_in_parts(value, compact=True))
            for key, value in data.items()
        )
        return (_RESULT_HEAD + "{" + body + "}}\n").encode()

    def _text(self, step: StepReport) -> str:
        known = self._texts.get(id(step))
        if known is not None and known[0] is step:
            return known[1]
        return dumps_in_parts(to_wire(step), compact=True)


async def encode_result(encode: Callable[[Any], bytes], result: Any) -> bytes:
    """``encode(result)``: on the CPU pool for a report of more than RESULT_STEPS_ENCODED_IN_PLACE
    steps (in parts, see ``dumps_in_parts``), any other result in place."""
    steps = getattr(result, "steps", None)
    if isinstance(steps, list) and len(steps) > RESULT_STEPS_ENCODED_IN_PLACE:
        return await run_cpu(encode, result)
    return encode(result)


#: A list longer than this is encoded item by item (see ``dumps_in_parts``).
_PART_ITEMS = 256


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
    encode = _encode if compact else _encode_default
    item_sep, key_sep = (",", ":") if compact else (", ", ": ")
    if isinstance(value, dict) and is_large(value):
        return (
            "{"
            + item_sep.join(
                encode(str(k)) + key_sep + dumps_in_parts(v, compact=compact) for k, v in value.items()
            )
            + "}"
        )
    if isinstance(value, list) and is_large(value):
        return "[" + item_sep.join(dumps_in_parts(v, compact=compact) for v in value) + "]"
    return encode(value)


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
        await self.send_line(encode_line(payload))

    async def send_line(self, line: bytes) -> None:
        """``send`` of a line already encoded."""
        if self.queue(line):
            await self.drain()

    def queue(self, line: bytes) -> bool:
        """``send_line`` without its wait: True when ``STREAM_COALESCE_BYTES`` are queued, and the
        caller must then await ``drain`` (a progress line per step costs no coroutine this way)."""
        if self.broken:
            return False
        self._pending.append(line)
        self._pending_bytes += len(line)
        if self._pending_bytes < STREAM_COALESCE_BYTES:
            self._schedule()
            return False
        return True

    async def drain(self) -> None:
        """Write what is queued, waiting for the client to take it."""
        await asyncio.shield(self._flush_now())

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
