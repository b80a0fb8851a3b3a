"""What a refused, failed or cancelled use of an upload leaves behind: nothing, and in time.

A refusal while the upload's thread still writes a batch is raised only once that thread has closed
the file (until then the unlinked file keeps its space); a call cancelled while its upload is being
unpacked has what the thread unpacks removed when the thread ends; an upload that cannot be unpacked
where the call asks is a 422 naming the file input. Real files, aiohttp's real body reader.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from pathlib import Path

import pytest
from aiohttp import StreamReader
from aiohttp.base_protocol import BaseProtocol

from argent.errors import FileInputError, UploadTooLargeError
from argent.link.archive import build_tar_gz_bytes
from argent.server.uploads import Upload, UploadStore, extract_upload

MIB = 1024 * 1024
WAIT_SECONDS = 10.0


def fed(loop: asyncio.AbstractEventLoop, *reads: bytes) -> StreamReader:
    """aiohttp's reader of a request body that arrived whole, as ``reads``."""
    stream = StreamReader(BaseProtocol(loop), sum(map(len, reads)), loop=loop)  # never pauses
    for read in reads:
        stream.feed_data(read)
    stream.feed_eof()
    return stream


def open_upload_files() -> list[str]:
    """The upload files this process holds open (deleted ones included)."""
    targets = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except FileNotFoundError:  # the listing's own descriptor, closed meanwhile
            continue
        if "argent-upload-" in target:
            targets.append(target)
    return targets


async def test_a_refusal_while_a_batch_is_written_comes_once_the_file_is_closed(tmp_path: Path) -> None:
    limit = 64 * MIB
    store = UploadStore(str(tmp_path), max_upload_bytes=limit)
    try:
        # One read of the whole cap: the thread writes it as one batch; the next byte breaks the cap
        # while that write is still under way.
        body = fed(asyncio.get_running_loop(), bytes(limit), b"!")
        with pytest.raises(UploadTooLargeError) as caught:
            await store.receive(body, None)
        assert open_upload_files() == [], "the refusal came while the file still held its space"
        assert caught.value.status == 413
        assert caught.value.message == f"Upload exceeds the {limit}-byte limit on one upload."
        assert os.listdir(tmp_path) == []
        assert store.pending_bytes == 0
    finally:
        await store.close()


def stored(tmp_path: Path, name: str, data: bytes) -> tuple[Upload, str]:
    """An upload as the store hands it to a call (its tar file), and its SHA-256."""
    archive = build_tar_gz_bytes(name, data)
    tar_path = tmp_path / "argent-upload-test.tar.gz"
    tar_path.write_bytes(archive)
    return Upload("test", str(tar_path), len(archive), time.monotonic() + 60), hashlib.sha256(
        archive
    ).hexdigest()


async def test_a_call_cancelled_while_its_upload_is_unpacked_leaves_nothing(tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    upload, digest = stored(tmp_path, "big.bin", os.urandom(8 * MIB))
    call = asyncio.ensure_future(extract_upload(upload, digest, "/client/big.bin", str(dest)))
    await asyncio.sleep(0)  # the call's turn: it now waits for the thread that unpacks
    assert call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    # The thread cannot be stopped: it unpacks on, deletes the tar, and what it unpacked is removed
    # once it ends (polled with a deadline: no event marks that end to the test).
    deadline = time.monotonic() + WAIT_SECONDS
    while (os.path.exists(upload.tar_path) or os.listdir(dest)) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert not os.path.exists(upload.tar_path)
    assert os.listdir(dest) == [], "what the cancelled call's thread unpacked stayed behind"


async def test_an_upload_that_cannot_be_unpacked_where_asked_is_a_422_naming_its_input(
    tmp_path: Path,
) -> None:
    upload, digest = stored(tmp_path, "app.apk", b"apk")
    with pytest.raises(FileInputError) as caught:
        await extract_upload(upload, digest, "/client/app.apk", str(tmp_path / "gone"))
    assert caught.value.status == 422
    assert caught.value.message == (
        'Could not extract the uploaded archive for "/client/app.apk": No such file or directory'
    )
    assert not os.path.exists(upload.tar_path)
