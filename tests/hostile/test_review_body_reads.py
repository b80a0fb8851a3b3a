"""A client that sends its body in one-byte HTTP chunks makes a read of every byte; reading what is
buffered already must not schedule a timer each time (a timer, its cancel and a heap entry cost
several times the read: 400k such reads took 4 s of the loop's CPU, 0.7 s without). A body that
stalls after its buffered bytes still ends in ``BodyStalled`` once no byte came for the idle time."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from aiohttp import web

from argent.server.body import BodyStalled, body_chunks, body_reads

CHUNKS = 20_000
IDLE_SECONDS = 0.5


class TimerCount:
    """Counts the timers the running loop schedules (``call_at``) while the handler reads."""

    def __init__(self) -> None:
        self.timers = 0

    def count(self, loop: asyncio.AbstractEventLoop) -> Callable[[], None]:
        call_at = loop.call_at

        def counted(when: float, callback: Callable[..., Any], *args: Any, context: Any = None) -> Any:
            self.timers += 1
            return call_at(when, callback, *args, context=context)

        loop.call_at = counted  # type: ignore[method-assign]

        def undo() -> None:
            loop.call_at = call_at  # type: ignore[method-assign]

        return undo


async def serve(reader: str, counter: TimerCount) -> AsyncIterator[int]:
    async def handler(request: web.Request) -> web.Response:
        reads = body_reads if reader == "reads" else body_chunks
        undo = counter.count(asyncio.get_running_loop())
        size = 0
        try:
            async for chunk in reads(request.content, IDLE_SECONDS):
                size += len(chunk)
        except BodyStalled:
            return web.Response(status=408, text="stalled")
        finally:
            undo()
        return web.Response(text=str(size))

    app = web.Application()
    app.router.add_post("/u", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    finally:
        await runner.cleanup()


def post_chunks(port: int, chunks: int, *, end: bool) -> bytes:
    """A chunked POST of ``chunks`` one-byte chunks sent at once (and its end, or a stall): the answer."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"POST /u HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n")
        sock.sendall(b"1\r\nx\r\n" * chunks + (b"0\r\n\r\n" if end else b""))
        sock.settimeout(30)
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.split(b"\r\n\r\n", 1)[1]:
            more = sock.recv(4096)
            if not more:
                break
            answer += more
        return answer


@pytest.mark.parametrize("reader", ["reads", "chunks"])
async def test_buffered_one_byte_chunks_take_no_timer_each(reader: str) -> None:
    counter = TimerCount()
    async for port in serve(reader, counter):
        answer = await asyncio.to_thread(post_chunks, port, CHUNKS, end=True)
    assert answer.endswith(str(CHUNKS).encode()), answer
    # One timer per read that waited for the client (the data comes in a few socket reads), not per read.
    assert counter.timers < CHUNKS // 20, counter.timers


@pytest.mark.parametrize("reader", ["reads", "chunks"])
async def test_a_body_that_stalls_after_buffered_bytes_is_stalled(reader: str) -> None:
    counter = TimerCount()
    async for port in serve(reader, counter):
        t0 = time.monotonic()
        answer = await asyncio.to_thread(post_chunks, port, 1000, end=False)
        took = time.monotonic() - t0
    assert b" 408 " in answer.split(b"\r\n", 1)[0], answer
    assert IDLE_SECONDS <= took < IDLE_SECONDS + 5, took
