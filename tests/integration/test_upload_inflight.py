"""The bounds of POST /upload's hand-over: the socket reads go to the writing thread as they are.

A file that lags (a pipe nobody reads) stops the reading once ``UPLOAD_BYTES_IN_FLIGHT`` bytes wait
for it, and the bytes still arrive whole and in order once it catches up; a batch of more reads than
one ``writev`` takes is written whole; a client that hangs up mid-body leaves no file and none of
its bytes in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import threading
import time
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.streams import EmptyStreamReader

from argent.limits import (
    UPLOAD_BATCH_BYTES,
    UPLOAD_BATCH_CHUNKS,
    UPLOAD_BATCHES_IN_FLIGHT,
    UPLOAD_BYTES_IN_FLIGHT,
)
from argent.server.uploads import UploadStore, _ChunkWriter, _writev_all

READ = 256 * 1024  # what one socket read of the event loop holds at most
WAIT_SECONDS = 10.0


def full_pipe() -> tuple[int, int, int]:
    """A pipe already full (a file that lags): its ends, and how many bytes fill it."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    filled = 0
    with contextlib.suppress(BlockingIOError):
        while True:
            filled += os.write(write_end, b"\0" * 4096)
    os.set_blocking(write_end, True)
    return read_end, write_end, filled


def drain(fd: int, into: bytearray) -> threading.Thread:
    """Read the pipe ``fd`` to its end in a thread (the file catching up)."""

    def run() -> None:
        while data := os.read(fd, 1 << 20):
            into.extend(data)
        os.close(fd)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


async def test_a_lagging_file_stops_the_reading_at_the_bytes_in_flight() -> None:
    read_end, write_end, filled = full_pipe()
    writer = _ChunkWriter(write_end)
    body = os.urandom(8 * UPLOAD_BYTES_IN_FLIGHT)
    most_held = 0

    async def feed() -> None:
        nonlocal most_held
        for start in range(0, len(body), READ):
            await writer.write(body[start : start + READ])
            most_held = max(most_held, writer.held_bytes)
        await writer.finish()

    feeding = asyncio.ensure_future(feed())
    # Nothing reads the pipe: the thread blocks in its first batch and the rest piles up to the bound
    # (polled with a deadline: no event marks the pile-up).
    deadline = time.monotonic() + WAIT_SECONDS
    while writer.held_bytes < UPLOAD_BYTES_IN_FLIGHT and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    for _ in range(100):  # the loop runs on; the feeder must stay stopped
        await asyncio.sleep(0)
    assert not feeding.done()
    assert UPLOAD_BYTES_IN_FLIGHT <= writer.held_bytes <= UPLOAD_BYTES_IN_FLIGHT + UPLOAD_BATCH_BYTES + READ
    received = bytearray()
    reader = drain(read_end, received)
    await asyncio.wait_for(feeding, WAIT_SECONDS)
    await asyncio.to_thread(reader.join, WAIT_SECONDS)
    assert bytes(received[filled:]) == body
    assert most_held <= UPLOAD_BYTES_IN_FLIGHT + UPLOAD_BATCH_BYTES + READ
    assert writer.held_bytes == 0


async def test_tiny_reads_stop_the_reading_at_the_batches_in_flight() -> None:
    read_end, write_end, filled = full_pipe()
    writer = _ChunkWriter(write_end)
    bound = (UPLOAD_BATCHES_IN_FLIGHT + 1) * UPLOAD_BATCH_CHUNKS
    pieces = [bytes([i % 251]) for i in range(4 * bound)]  # a client sending one byte at a time
    most_held = 0

    async def feed() -> None:
        nonlocal most_held
        for piece in pieces:
            await writer.write(piece)
            most_held = max(most_held, writer.held_reads)
        await writer.finish()

    feeding = asyncio.ensure_future(feed())
    # The thread blocks in its first batch and the rest piles up to the bound (polled: no event marks it).
    deadline = time.monotonic() + WAIT_SECONDS
    while writer.held_reads < bound - UPLOAD_BATCH_CHUNKS and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    for _ in range(100):
        await asyncio.sleep(0)
    assert not feeding.done()
    assert bound - UPLOAD_BATCH_CHUNKS <= writer.held_reads <= bound
    received = bytearray()
    reader = drain(read_end, received)
    await asyncio.wait_for(feeding, WAIT_SECONDS)
    await asyncio.to_thread(reader.join, WAIT_SECONDS)
    assert bytes(received[filled:]) == b"".join(pieces)
    assert most_held <= bound


def test_a_batch_of_more_reads_than_one_writev_takes_is_written_whole(tmp_path: Path) -> None:
    path = tmp_path / "many"
    pieces = [os.urandom(1 + i % 7) for i in range(5000)]  # over Linux's IOV_MAX of 1024
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        _writev_all(fd, list(pieces))
    finally:
        os.close(fd)
    assert path.read_bytes() == b"".join(pieces)


class Endpoint:
    def __init__(self, store: UploadStore) -> None:
        self.store = store
        self.outcomes: asyncio.Queue[str] = asyncio.Queue()
        self.stored: list[str] = []

    async def handle(self, request: web.Request) -> web.Response:
        try:
            upload = await self.store.receive(request.content, request.content_length)
        except BaseException as exc:
            self.outcomes.put_nowait(type(exc).__name__)
            raise
        self.stored.append(upload.upload_id)
        self.outcomes.put_nowait("stored")
        return web.json_response({"uploadId": upload.upload_id})


@pytest.fixture
def traced() -> Iterator[None]:
    tracemalloc.start()
    yield
    tracemalloc.stop()


@pytest.fixture
async def endpoint(aiohttp_server: Any, tmp_path: Path) -> AsyncIterator[tuple[Endpoint, str]]:
    store = UploadStore(str(tmp_path))
    point = Endpoint(store)
    app = web.Application(client_max_size=1 << 40)
    app.router.add_post("/upload", point.handle)
    server = await aiohttp_server(app)
    yield point, f"{server.host}:{server.port}"
    await store.close()


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


async def test_a_client_that_hangs_up_mid_body_leaves_no_file_and_frees_its_bytes(
    traced: None, endpoint: tuple[Endpoint, str], tmp_path: Path
) -> None:
    point, address = endpoint
    host, port = address.rsplit(":", 1)
    gc.collect()
    fds_before = open_fds()
    memory_before = tracemalloc.get_traced_memory()[0]
    sent_mib = 3 * UPLOAD_BYTES_IN_FLIGHT // (1 << 20)
    _reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(f"POST /upload HTTP/1.1\r\nHost: {address}\r\nContent-Length: {64 << 20}\r\n\r\n".encode())
    piece = os.urandom(1 << 20)
    for _ in range(sent_mib):
        writer.write(piece)
        await writer.drain()
    del piece
    writer.close()
    assert await asyncio.wait_for(point.outcomes.get(), WAIT_SECONDS) != "stored"
    assert point.store.pending_bytes == 0
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("argent-upload-")] == []
    # The writing thread drops its batch and closes the file once its write is done: no event marks it.
    deadline = time.monotonic() + WAIT_SECONDS
    while open_fds() > fds_before and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert open_fds() <= fds_before
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - memory_before
    assert held < UPLOAD_BATCH_BYTES // 2, f"{held} bytes of the dropped upload are still held"


async def test_a_chunked_body_is_stored_whole_when_chunk_ends_come_after_their_bytes_were_read(
    endpoint: tuple[Endpoint, str],
) -> None:
    point, address = endpoint
    host, port = address.rsplit(":", 1)
    pieces = [os.urandom(1 + (i * 7919) % 70_000) for i in range(8)]
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(f"POST /upload HTTP/1.1\r\nHost: {address}\r\nTransfer-Encoding: chunked\r\n\r\n".encode())
    sent = 0
    for piece in pieces:
        writer.write(b"%x\r\n%s" % (len(piece), piece))
        sent += len(piece)
        # The chunk's end goes only once the store has read its bytes (polled: no event marks it),
        # so the reader meets an HTTP chunk end with nothing after it yet.
        deadline = time.monotonic() + WAIT_SECONDS
        while point.store.pending_bytes < sent and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        assert point.store.pending_bytes == sent
        writer.write(b"\r\n")
    writer.write(b"0\r\n\r\n")
    assert await asyncio.wait_for(point.outcomes.get(), WAIT_SECONDS) == "stored"
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WAIT_SECONDS)
    assert head.startswith(b"HTTP/1.1 200")
    writer.close()
    upload = point.store.take(point.stored[0])
    assert upload is not None
    assert Path(upload.tar_path).read_bytes() == b"".join(pieces)


@pytest.mark.parametrize("framing", ["Content-Length: 0", "Transfer-Encoding: chunked"])
async def test_an_empty_body_is_stored_as_an_empty_upload(
    endpoint: tuple[Endpoint, str], framing: str
) -> None:
    point, address = endpoint
    host, port = address.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    end = b"0\r\n\r\n" if "chunked" in framing else b""
    writer.write(f"POST /upload HTTP/1.1\r\nHost: {address}\r\n{framing}\r\n\r\n".encode() + end)
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), WAIT_SECONDS)
    writer.close()
    assert head.startswith(b"HTTP/1.1 200"), head
    upload = point.store.take(point.stored[0])
    assert upload is not None
    assert upload.size == 0
    assert Path(upload.tar_path).read_bytes() == b""


async def test_a_body_that_is_no_stream_at_all_is_stored_as_an_empty_upload(tmp_path: Path) -> None:
    store = UploadStore(str(tmp_path))
    try:
        upload = await store.receive(EmptyStreamReader(), 0)  # aiohttp's reader of a request without a body
        assert upload.size == 0
        assert Path(upload.tar_path).read_bytes() == b""
    finally:
        await store.close()
