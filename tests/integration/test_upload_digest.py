"""An upload's SHA-256 is checked where a call uses it, not while it arrives: over real HTTP, real tars.

``POST /upload`` only stores the body; the call that names the upload with its ``contentHash`` reads
the tar, digesting it in the same read. A digest other than the one named fails exactly as it did
when it was checked first (422, the same message, whatever else is wrong with the archive) and
leaves nothing unpacked; an upload never used is still swept, and one cut short leaves nothing.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from aiohttp.test_utils import TestClient

from argent.link.archive import build_tar_gz, build_tar_gz_bytes
from argent.server.app import create_app
from argent.server.config import ServerConfig
from argent.server.keys import UPLOADS
from argent.tools.args import arg
from argent.tools.registry import FileInputSpec, ToolContext, ToolRegistry, ToolSpec
from tests.archives import tgz

MIB = 1024 * 1024
Client = TestClient[Any, Any]


@attrs.frozen
class AppArgs:
    app: str | None = arg(None)


def registry(calls: list[str | None]) -> ToolRegistry:
    async def install(args: AppArgs, ctx: ToolContext) -> Any:
        calls.append(args.app)
        return {"ok": True}

    spec = FileInputSpec(target="app", path="${app}", kind="tar-upload", optional=True)
    return ToolRegistry(
        [ToolSpec(name="install", description="", args_type=AppArgs, execute=install, file_inputs=(spec,))]
    )


@pytest.fixture
def server_tmp(tmp_path: Path) -> Path:
    directory = tmp_path / "server-tmp"
    directory.mkdir()
    return directory


@pytest.fixture
def calls() -> list[str | None]:
    return []


async def serve(aiohttp_client: Any, tmp: Path, calls: list[str | None], **config: Any) -> Client:
    app = create_app(ServerConfig(tmp_dir=str(tmp), **config), registry(calls))
    return await aiohttp_client(app)  # type: ignore[no-any-return]


@pytest.fixture
async def client(aiohttp_client: Any, server_tmp: Path, calls: list[str | None]) -> Client:
    return await serve(aiohttp_client, server_tmp, calls)


async def upload(client: Client, data: bytes) -> str:
    resp = await client.post("/upload", data=data, headers={"Content-Type": "application/gzip"})
    assert resp.status == 200, await resp.text()
    return str((await resp.json())["uploadId"])


async def install(client: Client, upload_id: str, content_hash: str, path: str = "/client/MyApp.app") -> Any:
    wire = {"__argentFileInput": True, "path": path, "uploadId": upload_id, "contentHash": content_hash}
    resp = await client.post("/tools/install", json={"app": wire})
    return resp.status, await resp.json()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def mismatch(path: str) -> str:
    return (
        f'Upload content hash mismatch for "{path}" — the tarball may have been corrupted in transit. '
        "Re-run the tool to upload again."
    )


def bundle_tar(tmp_path: Path, name: str = "MyApp.app", files: int = 20) -> bytes:
    """A real app bundle of ``files`` files (about 2 MiB), tarred as the client tars it."""
    app = tmp_path / "src" / name
    (app / "Contents").mkdir(parents=True)
    for index in range(files):
        (app / "Contents" / f"f{index:02}").write_bytes(os.urandom(100_000))
    archive = tmp_path / f"{name}.tar.gz"
    build_tar_gz(str(app), str(archive))
    return archive.read_bytes()


def ours(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name.startswith("argent-"))


def wait_until(done: Callable[[], bool], timeout: float = 5) -> None:
    """Poll with a deadline: no event tells the test that a file outside the server is gone."""
    deadline = time.monotonic() + timeout
    while not done() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert done()


# ---------------------------------------------------------------------------------------------
# A wrong contentHash: the same 422 as before, nothing unpacked


async def test_a_valid_tar_named_with_another_tars_hash_is_refused_and_nothing_is_unpacked(
    client: Client, calls: list[str | None], server_tmp: Path, tmp_path: Path
) -> None:
    body = bundle_tar(tmp_path)
    other = build_tar_gz_bytes("MyApp.app", b"another archive")
    upload_id = await upload(client, body)
    assert await install(client, upload_id, sha(other)) == (
        422,
        {"error": mismatch("/client/MyApp.app")},
    )
    assert calls == []
    assert ours(server_tmp) == [], "no upload, no extracted file, no extraction directory"
    status, out = await install(client, upload_id, sha(body))
    assert (status, out["error"]) == (
        422,
        f'Upload "{upload_id}" was not found on the tool-server — it may have expired. '
        "Re-run the tool to upload the path again.",
    )


@pytest.mark.parametrize(
    "body",
    [
        tgz(("../evil", b"x")),
        b"not gzip at all",
        gzip.compress(b""),
        tgz(("a", b"x"), ("a", b"y")),
    ],
    ids=["unsafe-path", "not-gzip", "empty", "repeated-name"],
)
async def test_a_wrong_hash_wins_over_anything_else_wrong_with_the_archive(
    client: Client, calls: list[str | None], server_tmp: Path, body: bytes
) -> None:
    upload_id = await upload(client, body)
    assert await install(client, upload_id, "ab" * 32) == (422, {"error": mismatch("/client/MyApp.app")})
    assert calls == [] and ours(server_tmp) == []


async def test_bytes_after_the_gzip_stream_count_toward_the_digest(
    client: Client, calls: list[str | None], server_tmp: Path, tmp_path: Path
) -> None:
    body = bundle_tar(tmp_path, files=2)
    # gzip skips NUL padding after its stream: the archive reads the same, the upload is not the same.
    upload_id = await upload(client, body + bytes(4096))
    assert await install(client, upload_id, sha(body)) == (422, {"error": mismatch("/client/MyApp.app")})
    assert calls == [] and ours(server_tmp) == []
    padded = await upload(client, body + bytes(4096))
    assert (await install(client, padded, sha(body + bytes(4096))))[0] == 200
    assert calls and calls[-1] is not None and calls[-1].endswith("/MyApp.app")


@pytest.mark.parametrize("named", ["", "xyz", "0" * 63, "0" * 65, "g" * 64])
async def test_a_hash_no_sha256_can_have_is_refused_before_the_tar_is_read(
    client: Client, server_tmp: Path, tmp_path: Path, named: str
) -> None:
    upload_id = await upload(client, bundle_tar(tmp_path, files=1))
    status, out = await install(client, upload_id, named)
    expected = (
        'Upload for "/client/MyApp.app" is missing a content hash — update argent to a version that '
        "supports tar uploads for remote sessions."
        if not named
        else mismatch("/client/MyApp.app")
    )
    assert (status, out["error"]) == (422, expected)
    assert ours(server_tmp) == []


async def test_the_right_hash_in_capitals_extracts_under_a_directory_named_after_it(
    client: Client, calls: list[str | None], server_tmp: Path, tmp_path: Path
) -> None:
    body = bundle_tar(tmp_path)
    upload_id = await upload(client, body)
    status, out = await install(client, upload_id, sha(body).upper())
    assert status == 200, out
    extracted = calls[0]
    assert extracted is not None
    assert Path(extracted).name == "MyApp.app"
    assert Path(extracted).parent.name.startswith(f"argent-tar-upload-{sha(body)[:16]}-")
    assert ours(server_tmp) == [], "the call removed what it extracted"


# ---------------------------------------------------------------------------------------------
# The right hash: the archive's own rules, as before


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (tgz(("../evil", b"x")), 'Archive contains an unsafe path "../evil" — refusing extraction.'),
        (tgz(("a", b"x"), ("a/b", b"y")), 'Archive contains an unsafe path "a/b" — refusing extraction.'),
        (b"not gzip at all", "Could not read archive: Not a gzipped file (b'no')"),
        (gzip.compress(b""), "Archive is empty."),
        (
            tgz(("A.app/x", b"x"))[:-9],
            "Could not read archive: Compressed file ended before the end-of-stream marker was reached",
        ),
    ],
    ids=["unsafe-path", "beneath-a-file", "not-gzip", "empty", "truncated"],
)
async def test_a_tar_with_the_right_hash_that_breaks_a_rule_fails_as_before(
    client: Client, calls: list[str | None], server_tmp: Path, body: bytes, reason: str
) -> None:
    upload_id = await upload(client, body)
    assert await install(client, upload_id, sha(body)) == (
        422,
        {"error": f'Could not extract the uploaded archive for "/client/MyApp.app": {reason}'},
    )
    assert calls == [] and ours(server_tmp) == []


# ---------------------------------------------------------------------------------------------
# Uploads never used, and uploads cut short


async def test_an_upload_never_used_is_swept_and_then_unknown(
    aiohttp_client: Any, server_tmp: Path, calls: list[str | None], tmp_path: Path
) -> None:
    client = await serve(
        aiohttp_client, server_tmp, calls, upload_expiry_seconds=0.05, sweep_interval_seconds=0.02
    )
    body = bundle_tar(tmp_path, files=1)
    upload_id = await upload(client, body)
    store = client.server.app[UPLOADS]
    # The sweeper runs on its own clock: poll, with a deadline, for it to have removed the file.
    await asyncio.to_thread(wait_until, lambda: ours(server_tmp) == [])
    assert upload_id not in store and store.pending_bytes == 0
    status, out = await install(client, upload_id, sha(body))
    assert (status, out["error"]) == (
        422,
        f'Upload "{upload_id}" was not found on the tool-server — it may have expired. '
        "Re-run the tool to upload the path again.",
    )


async def test_an_upload_cut_short_leaves_no_file_and_no_reservation(
    client: Client, server_tmp: Path
) -> None:
    store = client.server.app[UPLOADS]
    reader, writer = await asyncio.open_connection(client.server.host, client.server.port)
    writer.write(
        f"POST /upload HTTP/1.1\r\nHost: {client.server.host}\r\nContent-Length: {64 * MIB}\r\n\r\n".encode()
    )
    for _ in range(5):  # several batches handed to the writing thread
        writer.write(os.urandom(MIB))
        await writer.drain()
    await asyncio.to_thread(wait_until, lambda: len(ours(server_tmp)) == 1)
    writer.close()
    await writer.wait_closed()
    await asyncio.to_thread(wait_until, lambda: ours(server_tmp) == [])
    assert store.pending_bytes == 0 and len(store) == 0
    del reader
