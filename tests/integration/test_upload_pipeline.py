"""POST /upload's pipeline: the loop reads while the upload's worker thread writes batches.

Real HTTP into a real ``UploadStore``: bodies of several batches keep their order, and a client that
hangs up mid-body leaves no file, no reservation and no open file descriptor behind.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from argent.limits import UPLOAD_BATCH_BYTES
from argent.server.uploads import UploadStore


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


class Endpoint:
    def __init__(self, store: UploadStore) -> None:
        self.store = store
        self.outcomes: asyncio.Queue[str] = asyncio.Queue()

    async def handle(self, request: web.Request) -> web.Response:
        try:
            upload = await self.store.receive(request.content, request.content_length)
        except BaseException as exc:  # a refusal, a body that ended early, a cancelled handler
            self.outcomes.put_nowait(type(exc).__name__)
            raise
        self.outcomes.put_nowait("stored")
        return web.json_response({"uploadId": upload.upload_id})


@pytest.fixture
async def endpoint(aiohttp_server: Any, tmp_path: Path) -> AsyncIterator[tuple[Endpoint, str]]:
    store = UploadStore(str(tmp_path))
    point = Endpoint(store)
    app = web.Application(client_max_size=1 << 40)
    app.router.add_post("/upload", point.handle)
    server = await aiohttp_server(app)
    yield point, str(server.make_url("/upload"))
    await store.close()


async def test_a_body_of_many_batches_is_stored_in_order(
    endpoint: tuple[Endpoint, str],
) -> None:
    point, url = endpoint
    body = os.urandom(3 * UPLOAD_BATCH_BYTES + UPLOAD_BATCH_BYTES // 2 + 17)

    async def chunks() -> AsyncIterator[bytes]:
        step = 300_007  # never a batch boundary
        for start in range(0, len(body), step):
            yield body[start : start + step]

    async with aiohttp.ClientSession() as session, session.post(url, data=chunks()) as resp:
        assert resp.status == 200, await resp.text()
        upload_id = (await resp.json())["uploadId"]
    upload = point.store.take(upload_id)
    assert upload is not None
    assert upload.size == len(body)
    assert Path(upload.tar_path).read_bytes() == body


async def test_a_client_that_hangs_up_after_several_batches_leaves_nothing_open(
    endpoint: tuple[Endpoint, str], tmp_path: Path
) -> None:
    point, url = endpoint
    before = open_fds()
    host, port = url.split("//")[1].split("/")[0].split(":")
    _reader, writer = await asyncio.open_connection(host, int(port))
    declared = 16 * UPLOAD_BATCH_BYTES
    writer.write(
        f"POST /upload HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Length: {declared}\r\n\r\n".encode()
    )
    sent = 0
    while sent < 3 * UPLOAD_BATCH_BYTES:
        writer.write(os.urandom(1 << 20))
        await writer.drain()
        sent += 1 << 20
    writer.close()
    assert await asyncio.wait_for(point.outcomes.get(), timeout=10) != "stored"
    assert point.store.pending_bytes == 0
    assert len(point.store) == 0
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("argent-upload-")] == []
    # The worker thread closes the file once the batch it is writing is done: no event marks that.
    deadline = time.monotonic() + 5
    while open_fds() > before and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert open_fds() <= before
