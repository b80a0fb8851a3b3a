"""POST /upload onto a temp dir whose disk is full, and an upload unpacked onto a read-only one: a
real tmpfs of 256 KiB, in process.

A body the disk cannot hold is a 507 that says so and what to do, whether the disk refuses the one
batch written when the body ends (the real app over a loopback socket) or a batch while the body
still arrives; nothing of it stays on the disk or in the store's count, and the next upload that
fits is stored. A call whose upload cannot be unpacked because the disk refuses is a 507 too.
tests/hostile/test_full_disk.py does the same against a real `argent server start`,
whose code mutation testing cannot see; these run the store in the test's own process.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import StreamReader
from aiohttp.base_protocol import BaseProtocol

from argent.errors import ServerStorageError
from argent.limits import UPLOAD_BATCH_BYTES, UPLOAD_BYTES_IN_FLIGHT
from argent.server.app import create_app
from argent.server.config import ServerConfig
from argent.server.keys import UPLOADS
from argent.server.uploads import UploadStore, extract_upload
from tests.hostile.small_fs import read_only, small_fs
from tests.integration.test_upload_cleanup import stored

SIZE = 256 * 1024
FULL = (
    "The tool-server could not store the upload in its temp dir (No space left on device); the upload "
    "was discarded. Retry later; if it keeps failing, the tool-server's operator must free space in its "
    "temp dir (TMPDIR)."
)


@pytest.fixture
def small_tmp(tmp_path: Path) -> Iterator[Path]:
    """A temp dir on a tmpfs of 256 KiB (unmounted afterwards; skipped where mounting is not allowed)."""
    with small_fs(tmp_path / "small", f"{SIZE // 1024}k") as path:
        yield path


def uploads_in(directory: Path) -> list[str]:
    return [name for name in os.listdir(directory) if name.startswith("argent-upload-")]


def used(directory: Path) -> int:
    stats = os.statvfs(directory)
    return (stats.f_blocks - stats.f_bfree) * stats.f_frsize


def fed(loop: asyncio.AbstractEventLoop, chunk: bytes, count: int) -> StreamReader:
    """aiohttp's reader of a request body that arrived whole: ``count`` reads of ``chunk``."""
    stream = StreamReader(BaseProtocol(loop), len(chunk) * count, loop=loop)  # never pauses
    for _ in range(count):
        stream.feed_data(chunk)
    stream.feed_eof()
    return stream


async def test_a_body_the_disk_cannot_hold_is_a_507_when_it_ends(
    aiohttp_client: Any, small_tmp: Path
) -> None:
    """Under one batch: the store writes it once the body has ended, and that write is refused."""
    client = await aiohttp_client(create_app(ServerConfig(tmp_dir=str(small_tmp))))
    before = used(small_tmp)
    body = os.urandom(2 * SIZE)
    assert len(body) < UPLOAD_BATCH_BYTES

    response = await client.post("/upload", data=body)

    assert response.status == 507
    assert await response.json() == {"error": FULL}
    store = client.server.app[UPLOADS]
    assert uploads_in(small_tmp) == []
    assert used(small_tmp) == before, "the refused upload's space is free"
    assert store.pending_bytes == 0 and len(store) == 0
    small = os.urandom(SIZE // 4)
    response = await client.post("/upload", data=small)
    assert response.status == 200, await response.text()
    upload = store.take((await response.json())["uploadId"])
    assert upload is not None
    assert Path(upload.tar_path).read_bytes() == small
    os.unlink(upload.tar_path)


async def test_a_batch_the_disk_refuses_while_the_body_arrives_is_a_507(small_tmp: Path) -> None:
    """Over the bytes in flight: the refused batch is met while the rest of the body is still read."""
    store = UploadStore(str(small_tmp))
    try:
        chunk = os.urandom(256 * 1024)
        count = 2 * UPLOAD_BYTES_IN_FLIGHT // len(chunk)  # the read stops at the bound: no end in sight
        with pytest.raises(ServerStorageError) as caught:
            await store.receive(fed(asyncio.get_running_loop(), chunk, count), None)
        assert caught.value.status == 507
        assert caught.value.message == FULL
        assert uploads_in(small_tmp) == []
        assert used(small_tmp) == 0
        assert store.pending_bytes == 0 and len(store) == 0
    finally:
        await store.close()


async def test_an_upload_unpacked_onto_a_read_only_disk_is_a_507(small_tmp: Path, tmp_path: Path) -> None:
    upload, digest = stored(tmp_path, "app.apk", b"apk")
    read_only(small_tmp)
    with pytest.raises(ServerStorageError) as caught:
        await extract_upload(upload, digest, "/client/app.apk", str(small_tmp))
    assert caught.value.status == 507
    assert caught.value.message == (
        'The tool-server could not extract the upload for "/client/app.apk" in its temp dir (Read-only file '
        "system); the call did not run. Retry later; if it keeps failing, the tool-server's operator must "
        "make writable its temp dir (TMPDIR)."
    )
    assert not os.path.exists(upload.tar_path)
