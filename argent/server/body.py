"""Reading request bodies so that a stalled client, or a server shutting down, cannot hold a handler.

Every body read goes through ``body_chunks``: each chunk must arrive within the idle timeout.
A read that ends early raises a ``BodyReadInterrupted``; the ``json_errors`` middleware answers
it with JSON and closes the connection, since the rest of that body is not worth waiting for.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

from aiohttp import StreamReader, web

BODY_STALLED = "The request body stalled: no bytes arrived for {seconds:g}s. Send the body without pauses."
T = TypeVar("T", bytes, tuple[bytes, bool])

SERVER_STOPPING = "The tool-server is shutting down; the request body was not read. Retry once it is back."


class BodyReadInterrupted(Exception):
    """A request body that will not be read to its end; the connection closes after the answer."""

    status = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BodyStalled(BodyReadInterrupted):
    status = 408

    def __init__(self, seconds: float) -> None:
        super().__init__(BODY_STALLED.format(seconds=seconds))


class ServerStopping(BodyReadInterrupted):
    """Set on the body of a request still arriving when shutdown starts, so it cannot hold shutdown."""

    status = 503

    def __init__(self) -> None:
        super().__init__(SERVER_STOPPING)


async def body_chunks(stream: StreamReader, idle_seconds: float) -> AsyncIterator[bytes]:
    """The body's chunks as they arrive; a pause over ``idle_seconds`` raises ``BodyStalled``."""
    read = _Reads(stream, idle_seconds)
    while True:
        chunk = await read(stream.readany)
        if not chunk:
            return
        yield chunk


async def body_reads(stream: StreamReader, idle_seconds: float) -> AsyncIterator[bytes]:
    """The body as the socket delivered it, one read at a time, never joined (``readany`` joins
    every read buffered so far: a copy of each byte that a reader which hands the reads on does not
    need); a pause over ``idle_seconds`` raises ``BodyStalled``."""
    read = _Reads(stream, idle_seconds)
    while True:
        chunk, end_of_http_chunk = await read(stream.readchunk)
        if chunk:
            yield chunk
        elif not end_of_http_chunk or stream.at_eof():
            # At the end, also when the reader answers (b"", True) there: aiohttp's one shared reader
            # of every request without a body does so from its second read on, ever after, and the
            # read returns at once, so looping on it would hold the event loop for good.
            return


class _Reads:
    """Reads of one body, each that may wait for the client within ``idle_seconds``.

    A read of bytes already buffered returns at once and takes no timer: a timer per read (a
    scheduled handle, its cancel, a heap entry left until the loop next turns) costs several times
    the read, and a client sending one-byte HTTP chunks makes a read of every byte (400k of them
    took 4 s of the loop's CPU, 0.9 s without the timers; aiohttp's own share is 0.7 s). Buffered
    is what aiohttp has received (``total_bytes``) beyond what was read (its ``_cursor``: no public
    name says it); were that attribute gone, every read would take its timer, as before."""

    def __init__(self, stream: StreamReader, idle_seconds: float) -> None:
        self._stream = stream
        self._idle_seconds = idle_seconds

    def _buffered(self) -> bool:
        stream = self._stream
        cursor = getattr(stream, "_cursor", None)
        return stream.is_eof() or (isinstance(cursor, int) and stream.total_bytes > cursor)

    async def __call__(self, read: Callable[[], Awaitable[T]]) -> T:
        if self._buffered():
            return await read()
        try:
            async with asyncio.timeout(self._idle_seconds):
                return await read()
        except TimeoutError:
            raise BodyStalled(self._idle_seconds) from None


async def read_body(request: web.BaseRequest, *, max_bytes: int, idle_seconds: float) -> bytes:
    """The whole body, at most ``max_bytes`` (else aiohttp's 413), each chunk within ``idle_seconds``."""
    stream = request.content
    if stream.at_eof():
        # Read already (by a middleware, say): aiohttp keeps those bytes for request.read().
        return await request.read()
    if stream.is_eof():
        # The whole body is here already (a small body comes with its headers): nothing to wait for.
        data = stream.read_nowait()
        if len(data) > max_bytes:
            raise web.HTTPRequestEntityTooLarge(max_size=max_bytes, actual_size=len(data))
        return data
    chunks: list[bytes] = []
    size = 0
    async for chunk in body_chunks(stream, idle_seconds):
        size += len(chunk)
        if size > max_bytes:
            raise web.HTTPRequestEntityTooLarge(max_size=max_bytes, actual_size=size)
        chunks.append(chunk)
    return b"".join(chunks)
