"""A client that hangs up while its upload's file lags (a slow or saturated disk) must not leave its
bytes in memory: the hang-up gives its reservation back to the token's cap at once, so bytes still
queued for the blocked writing thread would be memory no cap counts, and a client repeating
upload-and-hang-up would pile them up for as long as the disk lags.

A real server's disk cannot be made to block from a test, so the file here is a real pipe already
full (as tests/integration/test_upload_inflight.py does), written by the upload's real thread."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys

from argent.limits import UPLOAD_BATCH_BYTES, UPLOAD_BYTES_IN_FLIGHT
from argent.server.uploads import _ChunkWriter

READ = 256 * 1024


def full_pipe() -> tuple[int, int]:
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    with contextlib.suppress(BlockingIOError):
        while True:
            os.write(write_end, b"\0" * 4096)
    os.set_blocking(write_end, True)
    return read_end, write_end


async def test_a_hang_up_while_the_file_lags_drops_the_queued_bytes_at_once() -> None:
    read_end, write_end = full_pipe()
    writer = _ChunkWriter(write_end)
    reads = [os.urandom(READ) for _ in range(UPLOAD_BYTES_IN_FLIGHT // READ)]
    alone = sys.getrefcount(reads[-1])  # held by this list only
    for i in range(len(reads)):
        await writer.write(reads[i])  # under the bound: none of these waits
    assert writer.held_bytes == UPLOAD_BYTES_IN_FLIGHT
    writer.abort()  # the client hung up; the thread is blocked in its first batch
    await asyncio.sleep(0)  # the loop's turn: what the abort scheduled has run
    first_batch = UPLOAD_BATCH_BYTES // READ
    held = []
    for i in range(first_batch, len(reads)):
        if sys.getrefcount(reads[i]) > alone:
            held.append(i)
    try:
        assert held == [], f"{len(held) * READ} bytes queued for the blocked thread are still held"
    finally:
        os.close(read_end)  # the writing thread's write fails (EPIPE), then it closes the file
