"""The pending-upload store behind POST /upload, over a real aiohttp server, and upload extraction."""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import os
import re
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from argent.errors import ArgentError, FileInputError
from argent.link.archive import FileTooLargeError, NotOneFileError, build_tar_gz, build_tar_gz_bytes
from argent.server.uploads import (
    Upload,
    UploadStore,
    extract_upload,
    read_member_upload,
    upload_not_found,
    upload_not_found_message,
)
from tests.archives import tgz

OURS = ("argent-upload-", "argent-tar-upload-")

STORE = web.AppKey("store", UploadStore)
FINISHED = web.AppKey("finished", asyncio.Queue[str])

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]
ClientFactory = Callable[[TestServer], Awaitable[TestClient[web.Request, web.Application]]]


def ours(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name.startswith(OURS))


def upload_name(harness: Harness, upload_id: str) -> str:
    return f"argent-upload-{harness.store.files.server_id}-{upload_id}.tar.gz"


@pytest.fixture
def tmp_dir(tmp_path: Path) -> Iterator[Path]:
    """The store's temp dir and the extraction parent; nothing of ours may be left in it."""
    directory = tmp_path / "tmp"
    directory.mkdir()
    yield directory
    assert ours(directory) == []


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make_app(store: UploadStore) -> web.Application:
    """A tiny app whose POST /upload does what the real one does: hand the body to the store."""

    async def upload(request: web.Request) -> web.Response:
        outcome = "error"
        try:
            stored = await request.app[STORE].receive(request.content, request.content_length)
            outcome = "stored"
            return web.json_response({"uploadId": stored.upload_id})
        except ArgentError as exc:
            outcome = f"refused {exc.status}"
            response = web.json_response(exc.to_wire(), status=exc.status)
            response.force_close()
            return response
        finally:
            request.app[FINISHED].put_nowait(outcome)

    app = web.Application()
    app[STORE] = store
    app[FINISHED] = asyncio.Queue()
    app.router.add_post("/upload", upload)
    return app


class Harness:
    def __init__(
        self, store: UploadStore, server: TestServer, client: TestClient[web.Request, web.Application]
    ):
        self.store = store
        self.server = server
        self.client = client

    @property
    def finished(self) -> asyncio.Queue[str]:
        return self.server.app[FINISHED]

    async def upload(self, body: bytes) -> str:
        response = await self.client.post("/upload", data=body, headers={"Content-Type": "application/gzip"})
        assert response.status == 200, await response.text()
        upload_id = (await response.json())["uploadId"]
        assert isinstance(upload_id, str) and upload_id
        return upload_id

    async def raw(self, head: bytes, body: bytes, *, close_after_send: bool = False) -> bytes:
        """Send bytes on a plain socket; return the response (b"" when we hung up right away)."""
        reader, writer = await asyncio.open_connection(self.server.host, self.server.port)
        try:
            writer.write(head + body)
            await writer.drain()
            if close_after_send:
                return b""
            head_bytes = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=5)
            length = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head_bytes)
            assert length is not None, head_bytes
            return head_bytes + await asyncio.wait_for(reader.readexactly(int(length[1])), timeout=5)
        finally:
            writer.close()
            await writer.wait_closed()


@pytest.fixture
def make_harness(
    tmp_dir: Path, aiohttp_server: ServerFactory, aiohttp_client: ClientFactory
) -> Iterator[Callable[..., Awaitable[Harness]]]:
    stores: list[UploadStore] = []

    async def build(**options: object) -> Harness:
        store = UploadStore(str(tmp_dir), **options)  # type: ignore[arg-type]
        stores.append(store)
        server = await aiohttp_server(make_app(store))
        client = await aiohttp_client(server)
        return Harness(store, server, client)

    yield build


@pytest.fixture
async def closing(make_harness: Callable[..., Awaitable[Harness]]) -> AsyncIterator[list[Harness]]:
    """Harnesses whose stores are closed after the test, before the temp dir is checked."""
    made: list[Harness] = []
    yield made
    for harness in made:
        await harness.store.close()


async def harness_of(
    make_harness: Callable[..., Awaitable[Harness]], closing: list[Harness], **options: object
) -> Harness:
    harness = await make_harness(**options)
    closing.append(harness)
    return harness


def app_tarball(tmp_path: Path) -> tuple[bytes, Path]:
    app = tmp_path / "src" / "MyApp.app"
    (app / "Contents").mkdir(parents=True)
    (app / "Contents" / "Info.plist").write_text("<plist/>")
    (app / "Contents" / "bin").write_bytes(os.urandom(3000))
    archive = tmp_path / "MyApp.tar.gz"
    build_tar_gz(str(app), str(archive))
    return archive.read_bytes(), app


# ---------------------------------------------------------------------------------------------
# POST /upload


async def test_an_upload_is_stored_under_an_id_with_its_body(
    make_harness: Callable[..., Awaitable[Harness]], closing: list[Harness], tmp_dir: Path
) -> None:
    harness = await harness_of(make_harness, closing)
    body = os.urandom(3 * 1024 * 1024 + 17)

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 100_000):
            yield body[start : start + 100_000]

    response = await harness.client.post("/upload", data=chunks())
    assert response.status == 200
    upload_id = (await response.json())["uploadId"]

    # The file carries the id of the server that stores it (see argent.server.tmp_files).
    assert re.fullmatch(r"[0-9a-f]{12}", harness.store.files.server_id)
    assert ours(tmp_dir) == [upload_name(harness, upload_id)]
    assert harness.store.pending_bytes == len(body)
    upload = harness.store.take(upload_id)
    assert upload is not None
    assert upload.size == len(body)
    assert Path(upload.tar_path).read_bytes() == body
    assert harness.store.pending_bytes == 0
    os.unlink(upload.tar_path)


async def test_an_upload_id_is_single_use(
    make_harness: Callable[..., Awaitable[Harness]], closing: list[Harness]
) -> None:
    harness = await harness_of(make_harness, closing)
    upload_id = await harness.upload(b"anything")
    first = harness.store.take(upload_id)
    assert first is not None
    assert harness.store.take(upload_id) is None
    assert harness.store.take("no-such-id") is None
    os.unlink(first.tar_path)


def test_the_not_found_helper_says_the_upload_may_have_expired() -> None:
    error = upload_not_found("abc")
    assert isinstance(error, FileInputError) and error.status == 422
    assert (
        error.message
        == upload_not_found_message("abc")
        == (
            'Upload "abc" was not found on the tool-server — it may have expired. '
            "Re-run the tool to upload the path again."
        )
    )


async def test_a_declared_length_over_the_cap_is_refused_before_the_body_is_read(
    make_harness: Callable[..., Awaitable[Harness]], closing: list[Harness], tmp_dir: Path
) -> None:
    harness = await harness_of(make_harness, closing)
    head = (
        b"POST /upload HTTP/1.1\r\nHost: test\r\nContent-Type: application/gzip\r\n"
        b"Content-Length: 2147483649\r\n\r\n"
    )
    answer = await harness.raw(head, b"tiny")
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:80]
    assert b"Upload of 2147483649 bytes exceeds the 2147483648-byte limit on one upload." in answer
    assert await harness.finished.get() == "refused 413"
    assert ours(tmp_dir) == []
    assert harness.store.pending_bytes == 0


async def test_a_body_over_the_cap_is_refused_while_streaming(
    make_harness: Callable[..., Awaitable[Harness]], closing: list[Harness], tmp_dir: Path
) -> None:
    harness = await harness_of(make_harness, closing, max_upload_bytes=8)

    async def chunks() -> AsyncIterator[bytes]:
        yield b"x" * 32
        yield b"y" * 32

    response = await harness.client.post("/upload", data=chunks())
    assert response.status == 413
    assert (await response.json())["error"] == "Upload exceeds the 8-byte limit on one upload."
    assert ours(tmp_dir) == []
    assert harness.store.pending_bytes == 0


async def test_a_small_declared_body_over_a_small_cap_gives_413(
    make_harness: Callable[..., Awaitable[Harness]], closing: list[Harness]
) -> None:
    harness = await harness_of(make_harness, closing, max_upload_bytes=8)
    response = await harness.client.post("/upload", data=b"z" * 64)
    assert response.status == 413
    assert "exceeds" in (await response.json())["error"].lower()


async def test_an_upload_of_exactly_the_cap_is_stored_and_one_byte_more_is_not(
    make_harness: Callable[..., Awaitable[Harness]], closing: list[Harness]
) -> None:
    """The edge of the cap on one upload, declared (Content-Length) and streamed alike."""
    body = b"e" * 64
    harness = await harness_of(make_harness, closing, max_upload_bytes=len(body))
    await harness.upload(body)
    response = await harness.client.post("/upload", data=body + b"!")
    assert response.status == 413
    assert (await response.json())["error"] == (
        f"Upload of {len(body) + 1} bytes exceeds the {len(body)}-byte limit on one upload."
    )


async def test_pending_uploads_over_the_storage_cap_give_507(
    make_harness: Callable[..., Awaitable[Harness]], closing: list[Harness], tmp_dir: Path
) -> None:
    body = tgz(("X", b"payload"))
    harness = await harness_of(make_harness, closing, max_pending_bytes=len(body))
    await harness.upload(body)
    response = await harness.client.post("/upload", data=body)
    assert response.status == 507
    assert (await response.json())["error"] == (
        f"Pending uploads exceed the {len(body)}-byte storage limit; retry once earlier uploads are consumed."
    )
    assert len(ours(tmp_dir)) == 1
    assert harness.store.pending_bytes == len(body)


async def test_pending_bytes_of_an_arriving_chunked_upload_count_toward_the_cap(
    make_harness: Callable[..., Awaitable[Harness]], closing: list[Harness], tmp_dir: Path
) -> None:
    harness = await harness_of(make_harness, closing, max_pending_bytes=100)
    first = await harness.upload(b"a" * 60)

    async def chunks() -> AsyncIterator[bytes]:
        yield b"b" * 60

    response = await harness.client.post("/upload", data=chunks())
    assert response.status == 507
    assert "pending uploads" in (await response.json())["error"].lower()
    assert ours(tmp_dir) == [upload_name(harness, first)]
    assert harness.store.pending_bytes == 60


async def test_a_client_that_hangs_up_mid_body_leaves_no_file_and_no_reservation(
    make_harness: Callable[..., Awaitable[Harness]], closing: list[Harness], tmp_dir: Path
) -> None:
    harness = await harness_of(make_harness, closing)
    head = b"POST /upload HTTP/1.1\r\nHost: test\r\nContent-Length: 1024\r\n\r\n"
    await harness.raw(head, b"0123456789abcdef", close_after_send=True)
    assert await asyncio.wait_for(harness.finished.get(), timeout=5) == "error"
    assert ours(tmp_dir) == []
    assert harness.store.pending_bytes == 0
    assert len(harness.store) == 0


async def test_the_sweep_deletes_expired_uploads_and_keeps_the_others(
    make_harness: Callable[..., Awaitable[Harness]], closing: list[Harness], tmp_dir: Path
) -> None:
    clock = Clock()
    harness = await harness_of(make_harness, closing, expiry_seconds=10, clock=clock)
    old = await harness.upload(b"old")
    clock.now += 6
    young = await harness.upload(b"young!")
    clock.now += 5

    assert await harness.store.sweep() == 1
    assert ours(tmp_dir) == [upload_name(harness, young)]
    assert harness.store.take(old) is None
    assert harness.store.pending_bytes == len(b"young!")

    clock.now += 10
    assert harness.store.take(young) is None, "an expired upload is not handed over"
    assert ours(tmp_dir) == []
    assert harness.store.pending_bytes == 0


async def test_an_upload_expires_at_exactly_its_expiry(
    make_harness: Callable[..., Awaitable[Harness]], closing: list[Harness], tmp_dir: Path
) -> None:
    clock = Clock()
    harness = await harness_of(make_harness, closing, expiry_seconds=10, clock=clock)
    await harness.upload(b"due")
    clock.now += 9
    assert await harness.store.sweep() == 0
    clock.now += 1  # the expiry itself: gone
    assert await harness.store.sweep() == 1
    assert ours(tmp_dir) == [] and harness.store.pending_bytes == 0


async def test_the_sweeper_task_runs_until_close(
    make_harness: Callable[..., Awaitable[Harness]], closing: list[Harness], tmp_dir: Path
) -> None:
    harness = await harness_of(make_harness, closing, expiry_seconds=0)
    await harness.upload(b"short-lived")
    task = harness.store.start_sweeper(interval=0.01)
    for _ in range(200):
        if not ours(tmp_dir):
            break
        await asyncio.sleep(0.01)
    assert ours(tmp_dir) == []
    await harness.store.close()
    assert task.done()


async def test_close_deletes_every_pending_upload_and_refuses_new_ones(
    make_harness: Callable[..., Awaitable[Harness]], closing: list[Harness], tmp_dir: Path
) -> None:
    harness = await harness_of(make_harness, closing)
    await harness.upload(b"one")
    await harness.upload(b"two")
    assert len(ours(tmp_dir)) == 2
    await harness.store.close()
    assert ours(tmp_dir) == []
    assert harness.store.pending_bytes == 0
    response = await harness.client.post("/upload", data=b"three")
    assert response.status == 503  # unavailable, as every answer of a server shutting down
    assert (await response.json())["error_code"] == "UPLOAD_STORE_CLOSED"
    assert "shutting down" in (await response.json())["error"]
    await harness.store.close()


# ---------------------------------------------------------------------------------------------
# extract_upload


def digest_of(upload: Upload) -> str:
    """The SHA-256 of what the store holds for ``upload`` (the store itself keeps no digest)."""
    return hashlib.sha256(Path(upload.tar_path).read_bytes()).hexdigest()


async def take_uploaded(harness: Harness, body: bytes) -> Upload:
    upload = harness.store.take(await harness.upload(body))
    assert upload is not None
    return upload


async def test_a_directory_upload_is_extracted_under_a_hash_named_temp_dir(
    make_harness: Callable[..., Awaitable[Harness]], closing: list[Harness], tmp_dir: Path, tmp_path: Path
) -> None:
    harness = await harness_of(make_harness, closing)
    body, app = app_tarball(tmp_path)
    upload = await take_uploaded(harness, body)
    digest_of_body = hashlib.sha256(body).hexdigest()

    path = Path(await extract_upload(upload, digest_of_body, "/client/proj/MyApp.app", str(tmp_dir)))

    assert path.name == "MyApp.app"
    assert path.parent.parent == tmp_dir
    assert path.parent.name.startswith(f"argent-tar-upload-{digest_of_body[:16]}-")
    assert (path / "Contents" / "Info.plist").read_text() == "<plist/>"
    assert (path / "Contents" / "bin").read_bytes() == (app / "Contents" / "bin").read_bytes()
    assert not os.path.exists(upload.tar_path), "the tar is deleted after extraction"
    shutil.rmtree(path.parent)


async def test_a_single_file_upload_holds_the_original_bytes(
    make_harness: Callable[..., Awaitable[Harness]], closing: list[Harness], tmp_dir: Path, tmp_path: Path
) -> None:
    harness = await harness_of(make_harness, closing)
    apk = tmp_path / "app.apk"
    apk.write_bytes(os.urandom(50_000))
    build_tar_gz(str(apk), str(tmp_path / "apk.tgz"))
    upload = await take_uploaded(harness, (tmp_path / "apk.tgz").read_bytes())
    path = Path(await extract_upload(upload, digest_of(upload).upper(), "C:\\builds\\app.apk", str(tmp_dir)))
    assert path.name == "app.apk"
    assert path.read_bytes() == apk.read_bytes()
    shutil.rmtree(path.parent)


async def test_an_appledouble_entry_beside_the_bundle_is_ignored(
    make_harness: Callable[..., Awaitable[Harness]], closing: list[Harness], tmp_dir: Path
) -> None:
    harness = await harness_of(make_harness, closing)
    body = tgz(("._MyApp.app", b"\x00\x05\x16\x07"), ("MyApp.app/Info.plist", b"<plist/>"))
    upload = await take_uploaded(harness, body)
    path = Path(await extract_upload(upload, digest_of(upload), "/client/Other.app", str(tmp_dir)))
    assert path.name == "MyApp.app"
    assert (path / "Info.plist").read_bytes() == b"<plist/>"
    shutil.rmtree(path.parent)


async def test_a_missing_content_hash_is_refused_and_the_tar_deleted(
    make_harness: Callable[..., Awaitable[Harness]], closing: list[Harness], tmp_dir: Path
) -> None:
    harness = await harness_of(make_harness, closing)
    upload = await take_uploaded(harness, tgz(("X", b"x")))
    with pytest.raises(FileInputError) as caught:
        await extract_upload(upload, None, "/client/X", str(tmp_dir))
    assert caught.value.status == 422
    assert caught.value.message == (
        'Upload for "/client/X" is missing a content hash — update argent to a version that supports '
        "tar uploads for remote sessions."
    )
    assert not os.path.exists(upload.tar_path)


async def test_a_wrong_content_hash_is_refused_and_the_tar_still_deleted(
    make_harness: Callable[..., Awaitable[Harness]], closing: list[Harness], tmp_dir: Path
) -> None:
    harness = await harness_of(make_harness, closing)
    upload = await take_uploaded(harness, tgz(("X", b"x")))
    with pytest.raises(FileInputError) as caught:
        await extract_upload(upload, "0" * 64, "/client/X", str(tmp_dir))
    assert caught.value.message == (
        'Upload content hash mismatch for "/client/X" — the tarball may have been corrupted in transit. '
        "Re-run the tool to upload again."
    )
    assert not os.path.exists(upload.tar_path)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (tgz(("/etc/evil", b"x")), 'Archive contains an unsafe path "/etc/evil" — refusing extraction.'),
        (tgz(("../evil", b"x")), 'Archive contains an unsafe path "../evil" — refusing extraction.'),
        (b"not gzip at all", "Could not read archive: Not a gzipped file (b'no')"),
        (gzip.compress(b""), "Archive is empty."),
    ],
    ids=["absolute", "dotdot", "not-gzip", "empty"],
)
async def test_an_archive_that_cannot_be_extracted_gives_422_and_leaves_nothing(
    make_harness: Callable[..., Awaitable[Harness]],
    closing: list[Harness],
    tmp_dir: Path,
    body: bytes,
    reason: str,
) -> None:
    harness = await harness_of(make_harness, closing)
    upload = await take_uploaded(harness, body)
    with pytest.raises(FileInputError) as caught:
        await extract_upload(upload, digest_of(upload), "/client/X", str(tmp_dir))
    assert caught.value.status == 422
    assert caught.value.message == f'Could not extract the uploaded archive for "/client/X": {reason}'
    assert not os.path.exists(upload.tar_path)
    assert ours(tmp_dir) == []


async def test_a_gzip_bomb_upload_is_refused_with_the_expansion_limit(
    make_harness: Callable[..., Awaitable[Harness]], closing: list[Harness], tmp_dir: Path
) -> None:
    harness = await harness_of(make_harness, closing)
    upload = await take_uploaded(harness, tgz(("X", bytes(4 * 1024 * 1024))))
    with pytest.raises(FileInputError, match="expands beyond the 1048576-byte limit"):
        await extract_upload(
            upload, digest_of(upload), "/client/X", str(tmp_dir), max_total_bytes=1024 * 1024
        )
    assert ours(tmp_dir) == []


# ---------------------------------------------------------------------------------------------
# read_member_upload: a member's one file, in memory


async def test_a_member_upload_is_read_into_memory_and_nothing_is_written(
    make_harness: Callable[..., Awaitable[Harness]], closing: list[Harness], tmp_dir: Path
) -> None:
    harness = await harness_of(make_harness, closing)
    upload = await take_uploaded(harness, build_tar_gz_bytes("a.yaml", b"steps: []\n"))
    before = set(os.listdir(tmp_dir)) - {os.path.basename(upload.tar_path)}
    assert await read_member_upload(upload, digest_of(upload), "/client/a.yaml") == b"steps: []\n"
    assert not os.path.exists(upload.tar_path)
    assert set(os.listdir(tmp_dir)) == before


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (tgz(("a.yaml", b"a"), ("b.yaml", b"b")), NotOneFileError),
        (tgz(("a.yaml", bytes(2048))), FileTooLargeError),
        (b"not gzip", FileInputError),
    ],
    ids=["two-files", "too-large", "not-gzip"],
)
async def test_a_member_upload_that_fails_a_check_is_deleted(
    make_harness: Callable[..., Awaitable[Harness]],
    closing: list[Harness],
    tmp_dir: Path,
    body: bytes,
    error: type[Exception],
) -> None:
    harness = await harness_of(make_harness, closing)
    upload = await take_uploaded(harness, body)
    with pytest.raises(error):
        await read_member_upload(upload, digest_of(upload), "/client/a.yaml", max_file_bytes=1024)
    assert not os.path.exists(upload.tar_path)
    wrong = await take_uploaded(harness, build_tar_gz_bytes("a.yaml", b"x"))
    with pytest.raises(FileInputError, match="hash mismatch"):
        await read_member_upload(wrong, "0" * 64, "/client/a.yaml")
    assert not os.path.exists(wrong.tar_path)
