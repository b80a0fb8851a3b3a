"""A careless host on the tool-server's side of the link: its temp dir (uploads, file inputs) and a
co-located project's ``.argent`` (recordings) on a full or read-only file system (a real tmpfs of
2 MiB) under a real `argent server start`.

Each refusal is JSON with a message that says what happened and what to do (507 where the disk
could not hold what the call needs); nothing partial stays behind; the upload store frees what
the refused upload reserved; the server stays healthy and the next call works once space is back.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import os
import signal
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from argent.errors import ArgentError
from argent.server.config import ServerConfig
from argent.server.keys import REGISTRY
from argent.server.serve import start_server
from argent.server.uploads import UploadStore
from tests.e2e.conftest import Cli
from tests.hostile.conftest import Probe, start_probe
from tests.hostile.hostile_server import post_upload
from tests.hostile.small_fs import fill, read_only, read_only_layer, small_fs
from tests.integration.test_file_input_dirs import PNG, SHOT, Mid, linked_call, look_tool

MIB = 1024 * 1024


@pytest.fixture
def full_tmp_server(cli: Cli, project: Path, tmp_path: Path) -> Iterator[Probe]:
    """A real tool-server whose TMPDIR is a 2 MiB tmpfs."""
    with small_fs(tmp_path / "server-tmp"):
        probe = start_probe(cli, project, tmp_path)
        try:
            yield probe
        finally:
            probe.server.stop(signal.SIGKILL)


def raw_upload(probe: Probe, data: bytes) -> tuple[int, Any]:
    """``POST /upload`` of ``data``, sent while the server may answer early and hang up: (status, body)."""
    url = urllib.parse.urlsplit(probe.url)
    conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=30)
    try:
        conn.putrequest("POST", "/upload")
        for key, value in {"Content-Type": "application/gzip", **probe.auth()}.items():
            conn.putheader(key, value)
        conn.putheader("Content-Length", str(len(data)))
        conn.endheaders()
        # The server may answer before the whole body was read and hang up: its answer is waiting.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            conn.send(data)
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def disk_used(path: Path) -> int:
    stats = os.statvfs(path)
    return (stats.f_blocks - stats.f_bfree) * stats.f_frsize


# --------------------------------------------------------------------------------------------
# POST /upload


def test_an_upload_past_the_free_space_is_a_507_and_leaves_nothing(full_tmp_server: Probe) -> None:
    probe = full_tmp_server
    before = disk_used(probe.tmp_dir)
    status, body = raw_upload(probe, os.urandom(3 * MIB))
    assert status == 507, body
    assert set(body) == {"error"}
    assert body["error"] == (
        "The tool-server could not store the upload in its temp dir (No space left on device); the upload "
        "was discarded. Retry later; if it keeps failing, the tool-server's operator must free space in its "
        "temp dir (TMPDIR)."
    )
    assert probe.leftovers() == []
    assert disk_used(probe.tmp_dir) <= before + 64 * 1024
    probe.assert_healthy()
    probe.assert_still_fine()
    # The space is back: the next upload is stored.
    assert post_upload(probe, os.urandom(MIB))


def test_an_upload_to_a_read_only_temp_dir_is_a_507(cli: Cli, project: Path, tmp_path: Path) -> None:
    """A temp dir made read-only under a running server: uploads are refused with a 507 that says
    what to do, and stored again once it is writable."""
    with small_fs(tmp_path / "server-tmp") as tmp_dir:
        probe = start_probe(cli, project, tmp_path)
        try:
            with read_only_layer(tmp_dir):
                status, body = raw_upload(probe, os.urandom(64 * 1024))
                probe.assert_healthy()
            assert status == 507, body
            assert body["error"] == (
                "The tool-server could not store the upload in its temp dir (Read-only file system); the upload "
                "was discarded. Retry later; if it keeps failing, the tool-server's operator must make writable "
                "its temp dir (TMPDIR)."
            )
            assert post_upload(probe, os.urandom(1024))
        finally:
            probe.server.stop(signal.SIGKILL)


async def test_a_refused_upload_frees_what_it_reserved_for_its_token(
    tmp_path: Path, aiohttp_client: Any
) -> None:
    """The store (on a real full tmpfs) counts nothing of an upload the disk refused, for its token
    too: the token may send its whole allowance again."""
    with small_fs(tmp_path / "tmp") as directory:
        store = UploadStore(str(directory), max_pending_bytes_per_token=3 * MIB)

        async def upload(request: web.Request) -> web.Response:
            try:
                stored = await store.receive(request.content, request.content_length, owner="alice")
            except ArgentError as exc:
                return web.json_response(exc.to_wire(), status=exc.status)
            return web.json_response({"uploadId": stored.upload_id})

        app = web.Application(client_max_size=8 * MIB)
        app.router.add_post("/upload", upload)
        client = await aiohttp_client(app)
        refused = await client.post("/upload", data=os.urandom(3 * MIB))
        assert refused.status == 507, await refused.text()
        assert (await refused.json())["error_code"] == "SERVER_STORAGE_FULL"
        assert store.pending_bytes == 0
        assert store._pending_of == {}
        assert sorted(p.name for p in directory.iterdir()) == []
        stored = await client.post("/upload", data=os.urandom(MIB))
        assert stored.status == 200, await stored.text()
        assert store.pending_bytes == MIB
        await store.close()
        assert sorted(p.name for p in directory.iterdir()) == []


# --------------------------------------------------------------------------------------------
# A file input the tool-server materialises from the call's inline bytes


def inline_prerequisite_call(size: int) -> dict[str, Any]:
    """flow-read-prerequisite of a flow file this host lacks, sent inline (base64) by the client."""
    text = ("# " + "x" * 70 + "\n") * (size // 73) + "steps:\n  - echo: hi\n"
    return {
        "project_root": "/nonexistent-on-the-server/proj",
        "name": "big",
        "flow_file": {
            "__argentFileInput": True,
            "path": "/nonexistent-on-the-server/proj/.argent/flows/big.yaml",
            "content": base64.b64encode(text.encode()).decode(),
        },
    }


def test_an_inline_file_input_on_a_full_temp_dir_is_a_507_and_leaves_nothing(full_tmp_server: Probe) -> None:
    probe = full_tmp_server
    filler = fill(probe.tmp_dir)
    status, body = probe.call("flow-read-prerequisite", inline_prerequisite_call(256 * 1024))
    assert status == 507, body
    assert body == {
        "error": 'The tool-server could not write the file input "/nonexistent-on-the-server/proj/.argent/flows/'
        'big.yaml" in its temp dir (No space left on device); the call did not run. Retry later; if it keeps '
        "failing, the tool-server's operator must free space in its temp dir (TMPDIR)."
    }
    assert probe.leftovers() == []
    probe.assert_healthy()
    filler.unlink()
    status, body = probe.call("flow-read-prerequisite", inline_prerequisite_call(256 * 1024))
    assert status == 200, body
    probe.assert_still_fine()


# --------------------------------------------------------------------------------------------
# A recording the tool-server keeps in a co-located project


@pytest.fixture
def disk_project(tmp_path: Path) -> Iterator[Path]:
    with small_fs(tmp_path / "disk") as mounted:
        yield mounted


def test_a_recording_in_a_read_only_project_says_what_to_do(
    hostile_server: Probe, disk_project: Path
) -> None:
    (disk_project / ".argent" / "flows").mkdir(parents=True)
    read_only(disk_project)
    status, body = hostile_server.call(
        "flow-start-recording", {"name": "rec", "project_root": str(disk_project)}
    )
    assert status == 500, body
    assert body["error_code"] == "FLOW_RECORDING_WRITE_FAILED"
    flow = disk_project / ".argent" / "flows" / "rec.yaml"
    assert body["error"] == (
        f"Failed to write flow file {flow} (EROFS) — {disk_project / '.argent' / 'flows'} is on a read-only "
        "file system. Remount it read-write, or record in a project on a writable disk."
    )
    hostile_server.assert_healthy()


def echo_step(root: str, message: str) -> dict[str, Any]:
    return {"name": "rec", "project_root": root, "message": message}


def test_a_recording_made_read_only_meanwhile_says_so_not_chmod(
    hostile_server: Probe, disk_project: Path
) -> None:
    """An existing recording on a file system remounted read-only: the mode of the file is fine, the
    disk is not (``os.access`` answers the same for both)."""
    root = str(disk_project)
    status, body = hostile_server.call("flow-start-recording", {"name": "rec", "project_root": root})
    assert status == 200, body
    flow = disk_project / ".argent" / "flows" / "rec.yaml"
    recorded = flow.read_bytes()
    read_only(disk_project)
    status, body = hostile_server.call("flow-add-echo", echo_step(root, "one"))
    assert status == 500, body
    assert body["error"] == (
        f"Failed to write flow file {flow} (EROFS) — {flow.parent} is on a read-only file system. Remount it "
        "read-write, or record in a project on a writable disk."
    )
    assert flow.read_bytes() == recorded
    hostile_server.assert_healthy()


def test_a_recording_on_a_full_disk_keeps_what_was_recorded(
    hostile_server: Probe, disk_project: Path
) -> None:
    root = str(disk_project)
    status, body = hostile_server.call("flow-start-recording", {"name": "rec", "project_root": root})
    assert status == 200, body
    flow = disk_project / ".argent" / "flows" / "rec.yaml"
    status, body = hostile_server.call("flow-add-echo", echo_step(root, "one"))
    assert status == 200, body
    recorded = flow.read_bytes()
    fill(disk_project)
    status, body = hostile_server.call("flow-add-echo", echo_step(root, "x" * 8192))
    assert status == 500, body
    assert body["error_code"] == "FLOW_RECORDING_WRITE_FAILED"
    assert body["error"] == (
        f"Failed to write flow file {flow} (ENOSPC) — the disk of {flow.parent} is full. Free some space "
        "there and call the tool again; the file as it was is kept."
    )
    assert flow.read_bytes() == recorded
    assert sorted(p.name for p in flow.parent.iterdir()) == ["rec.yaml"]
    hostile_server.assert_healthy()
    (disk_project / ".filler").unlink()
    status, body = hostile_server.call("flow-add-echo", echo_step(root, "two"))
    assert status == 200, body
    status, body = hostile_server.call("flow-finish-recording", {"name": "rec", "project_root": root})
    assert status == 200, body
    assert "echo: one" in flow.read_text() and "echo: two" in flow.read_text()


# --------------------------------------------------------------------------------------------
# The file argument of a `tool:` step in a linked run


async def test_a_tool_steps_file_argument_on_a_full_temp_dir_is_a_clear_step_error(tmp_path: Path) -> None:
    with small_fs(tmp_path / "server-tmp") as tmp_dir:
        server = await start_server(ServerConfig(port=0, tmp_dir=str(tmp_dir)))
        try:
            server.runner.app[REGISTRY].register(look_tool(tmp_dir, Mid()))
            big = PNG + os.urandom(256 * 1024)
            args = linked_call(f"steps:\n  - tool: look\n    args:\n      file: {SHOT}\n", {SHOT: big})
            filler = fill(tmp_dir)
            async with (
                aiohttp.ClientSession() as session,
                session.post(f"{server.url}/tools/flow-execute", json=args) as resp,
            ):
                body = await resp.json()
            assert resp.status == 200, body
            (tool_step,) = body["data"]["steps"]
            assert tool_step["status"] == "error"
            assert tool_step["reason"] == (
                f'The tool-server could not write the file argument "file" ({SHOT}) of look in its temp dir (No '
                "space left on device); the step did not run. Retry later; if it keeps failing, the tool-server's "
                "operator must free space in its temp dir (TMPDIR)."
            )
            assert sorted(p.name for p in tmp_dir.iterdir() if p.name.startswith("argent-")) == []
            filler.unlink()
            async with (
                aiohttp.ClientSession() as session,
                session.post(f"{server.url}/tools/flow-execute", json=args) as resp,
            ):
                body = await resp.json()
            assert [(s["kind"], s["status"]) for s in body["data"]["steps"]] == [("tool", "pass")]
        finally:
            await server.stop()
