"""Server-side file inputs over real HTTP: in place, materialised, uploaded, refused — and cleaned up."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import tarfile
from pathlib import Path
from typing import Any

import attrs
import pytest
from aiohttp.test_utils import TestClient

from argent.link.archive import build_tar_gz
from argent.server.app import create_app
from argent.server.config import ServerConfig
from argent.tools.args import arg
from argent.tools.registry import FileInputSpec, ToolContext, ToolRegistry, ToolSpec


@attrs.frozen
class FileArgs:
    src: str | None = arg(None)
    name: str | None = arg(None)
    derived: str | None = arg(None)
    folder: str | None = arg(None)
    maybe: str | None = arg(None)
    app: str | None = arg(None)


SPECS = (
    FileInputSpec(target="src", path="${src}", kind="file", optional=True, unwrap_when_set="name"),
    FileInputSpec(target="derived", path="${folder}/${name}.yaml", kind="file", skip_when_set="src"),
    FileInputSpec(target="folder", path="${folder}", kind="directory", optional=True),
    FileInputSpec(target="maybe", path="${maybe}", kind="probe", optional=True),
    FileInputSpec(target="app", path="${app}", kind="tar-upload", optional=True),
)


class Seen:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []


def registry(seen: Seen) -> ToolRegistry:
    async def look(args: FileArgs, ctx: ToolContext) -> Any:
        record: dict[str, Any] = {
            "args": attrs.asdict(args),
            "meta": {k: attrs.asdict(v) for k, v in ctx.file_inputs.items()},
        }
        for key in ("src", "derived", "app"):
            value = getattr(args, key)
            if value and os.path.isfile(value):
                record[f"{key}_bytes"] = Path(value).read_bytes().decode("latin-1")
            if value and os.path.isdir(value):
                record[f"{key}_listing"] = sorted(os.listdir(value))
        seen.calls.append(record)
        return {"ok": True}

    return ToolRegistry(
        [ToolSpec(name="look", description="", args_type=FileArgs, execute=look, file_inputs=SPECS)]
    )


@pytest.fixture
def seen() -> Seen:
    return Seen()


@pytest.fixture
def tmp_server_dir(tmp_path: Path) -> Path:
    d = tmp_path / "server-tmp"
    d.mkdir()
    return d


@pytest.fixture
async def client(aiohttp_client: Any, seen: Seen, tmp_server_dir: Path) -> TestClient[Any, Any]:
    config = ServerConfig(tmp_dir=str(tmp_server_dir))
    return await aiohttp_client(create_app(config, registry(seen)))  # type: ignore[no-any-return]


def wrapper(path: Path | str, **extra: Any) -> dict[str, Any]:
    return {"__argentFileInput": True, "path": str(path), **extra}


def stat_of(path: Path) -> dict[str, Any]:
    st = path.stat()
    return {"size": st.st_size, "mtimeMs": st.st_mtime_ns / 1e6}


async def call(client: TestClient[Any, Any], args: dict[str, Any]) -> tuple[int, Any]:
    resp = await client.post("/tools/look", json=args)
    return resp.status, await resp.json()


async def test_plain_string_passes_through_without_metadata(client: TestClient[Any, Any], seen: Seen) -> None:
    status, _ = await call(client, {"src": "/not/a/wrapper"})
    assert status == 200
    assert seen.calls[0]["args"]["src"] == "/not/a/wrapper"
    assert seen.calls[0]["meta"] == {}


async def test_matching_stat_resolves_in_place_and_verified(
    client: TestClient[Any, Any], seen: Seen, tmp_path: Path
) -> None:
    f = tmp_path / "flow.yaml"
    f.write_text("steps: []\n")
    status, _ = await call(client, {"src": wrapper(f, **stat_of(f))})
    assert status == 200
    assert seen.calls[0]["args"]["src"] == str(f)
    assert seen.calls[0]["meta"]["src"] == {
        "client_path": str(f),
        "present_on_host": True,
        "via_upload": False,
        "stat_verified": True,
        "read_checked": True,  # the policy's read check ran with the presence check
    }


async def test_partial_stat_resolves_in_place_unverified(
    client: TestClient[Any, Any], seen: Seen, tmp_path: Path
) -> None:
    f = tmp_path / "flow.yaml"
    f.write_text("steps: []\n")
    for extra in ({}, {"size": f.stat().st_size}, {"mtimeMs": stat_of(f)["mtimeMs"]}):
        status, _ = await call(client, {"src": wrapper(f, **extra)})
        assert status == 200
        assert seen.calls[-1]["meta"]["src"]["stat_verified"] is None


async def test_stale_host_file_with_content_is_materialised(
    client: TestClient[Any, Any], seen: Seen, tmp_path: Path, tmp_server_dir: Path
) -> None:
    f = tmp_path / "shot.png"
    f.write_bytes(b"host bytes")
    client_bytes = b"client bytes, longer"
    args = {
        "src": wrapper(
            f, size=len(client_bytes), mtimeMs=1.0, content=base64.b64encode(client_bytes).decode()
        )
    }
    status, _ = await call(client, args)
    assert status == 200
    call0 = seen.calls[0]
    assert call0["src_bytes"] == client_bytes.decode()
    assert call0["args"]["src"] != str(f)
    assert call0["meta"]["src"]["via_upload"] is True and call0["meta"]["src"]["present_on_host"] is False
    assert os.listdir(tmp_server_dir) == []  # removed when the response closed


async def test_materialised_name_is_sanitised(client: TestClient[Any, Any], seen: Seen) -> None:
    args = {"src": wrapper("/client/only/we ird$name.png", content=base64.b64encode(b"x").decode())}
    status, _ = await call(client, args)
    assert status == 200
    assert os.path.basename(seen.calls[0]["args"]["src"]) == "we_ird_name.png"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            {},
            'File "/client/gone.png" was not found on the tool-server host and the client did not upload its content.',
        ),
        (
            {"contentOmitted": "size-limit", "size": 36 * 1024 * 1024},
            'File "/client/gone.png" is 36 MB — larger than the 32 MB file-input transfer limit',
        ),
        (
            {"content": base64.b64encode(b"abc").decode(), "size": 5},
            'Uploaded content for "/client/gone.png" is 3 bytes but the client recorded 5 — refusing a truncated or corrupted upload.',
        ),
        ({"content": "!!not base64!!"}, 'Uploaded content for "/client/gone.png" is not valid base64.'),
    ],
)
async def test_absent_file_refusals_are_422(
    client: TestClient[Any, Any], seen: Seen, tmp_server_dir: Path, extra: dict[str, Any], message: str
) -> None:
    status, body = await call(client, {"src": wrapper("/client/gone.png", **extra)})
    assert status == 422
    assert body["error"].startswith(message)
    assert seen.calls == []
    assert os.listdir(tmp_server_dir) == []


async def test_a_later_failure_removes_earlier_materialised_files(
    client: TestClient[Any, Any], seen: Seen, tmp_server_dir: Path
) -> None:
    args = {
        "src": wrapper("/client/a.png", content=base64.b64encode(b"a").decode()),
        "folder": wrapper("/client/not-here"),
    }
    status, body = await call(client, args)
    assert status == 422
    assert body["error"].startswith('Directory "/client/not-here" does not exist on the tool-server host.')
    assert os.listdir(tmp_server_dir) == []


async def test_directory_and_probe_kinds(client: TestClient[Any, Any], seen: Seen, tmp_path: Path) -> None:
    status, _ = await call(client, {"folder": wrapper(tmp_path), "maybe": wrapper("/nowhere/at/all")})
    assert status == 200
    meta = seen.calls[0]["meta"]
    assert meta["folder"]["present_on_host"] is True and meta["folder"]["stat_verified"] is None
    assert meta["maybe"] == {
        "client_path": "/nowhere/at/all",
        "present_on_host": False,
        "via_upload": False,
        "stat_verified": None,
        "read_checked": False,
    }
    assert seen.calls[0]["args"]["maybe"] == "/nowhere/at/all"


async def test_skip_when_set_drops_the_derived_wrapper(
    client: TestClient[Any, Any], seen: Seen, tmp_path: Path
) -> None:
    f = tmp_path / "x.yaml"
    f.write_text("a")
    status, _ = await call(client, {"src": wrapper(f), "derived": wrapper("/ghost.yaml"), "name": None})
    # name is set (null counts as set), so src unwraps to its plain path and derived is dropped
    assert status == 200
    assert seen.calls[0]["args"]["src"] == str(f)
    assert seen.calls[0]["args"]["derived"] is None
    assert seen.calls[0]["meta"] == {}


async def test_unwrap_when_set_keeps_a_ghost_path_as_text(client: TestClient[Any, Any], seen: Seen) -> None:
    status, _ = await call(client, {"src": wrapper("/ghost.yaml"), "name": ""})
    assert status == 200
    assert seen.calls[0]["args"]["src"] == "/ghost.yaml"


async def test_wrapper_on_an_undeclared_key_is_refused_by_validation(
    client: TestClient[Any, Any], seen: Seen
) -> None:
    status, body = await call(client, {"name": wrapper("/x")})
    assert status == 400
    assert body["error"].startswith("Invalid arguments for look: name:")


async def upload(client: TestClient[Any, Any], data: bytes) -> str:
    resp = await client.post("/upload", data=data, headers={"Content-Type": "application/gzip"})
    assert resp.status == 200, await resp.text()
    return str((await resp.json())["uploadId"])


async def test_tar_upload_extracts_the_bundle_and_cleans_up(
    client: TestClient[Any, Any], seen: Seen, tmp_path: Path, tmp_server_dir: Path
) -> None:
    bundle = tmp_path / "MyApp.app"
    (bundle / "Contents").mkdir(parents=True)
    (bundle / "Contents" / "Info.plist").write_text("plist")
    tar = tmp_path / "b.tar.gz"
    digest = build_tar_gz(str(bundle), str(tar))
    upload_id = await upload(client, tar.read_bytes())
    status, _ = await call(
        client, {"app": wrapper("/client/MyApp.app", uploadId=upload_id, contentHash=digest)}
    )
    assert status == 200
    assert os.path.basename(seen.calls[0]["args"]["app"]) == "MyApp.app"
    assert seen.calls[0]["app_listing"] == ["Contents"]
    assert seen.calls[0]["meta"]["app"]["via_upload"] is True
    assert os.listdir(tmp_server_dir) == []
    # single use
    status, body = await call(
        client, {"app": wrapper("/client/MyApp.app", uploadId=upload_id, contentHash=digest)}
    )
    assert status == 422
    assert body["error"] == (
        f'Upload "{upload_id}" was not found on the tool-server — it may have expired. Re-run the tool to upload the path again.'
    )


async def test_tar_upload_with_wrong_hash_is_422_and_deleted(
    client: TestClient[Any, Any], tmp_path: Path, tmp_server_dir: Path
) -> None:
    f = tmp_path / "app.apk"
    f.write_bytes(b"apk")
    tar = tmp_path / "a.tar.gz"
    build_tar_gz(str(f), str(tar))
    upload_id = await upload(client, tar.read_bytes())
    status, body = await call(
        client, {"app": wrapper("/client/app.apk", uploadId=upload_id, contentHash="0" * 64)}
    )
    assert status == 422
    assert "content hash mismatch" in body["error"].lower()
    assert os.listdir(tmp_server_dir) == []


async def test_tar_upload_with_an_escaping_member_is_refused(
    client: TestClient[Any, Any], tmp_server_dir: Path
) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        info = tarfile.TarInfo("../evil")
        info.size = 1
        tf.addfile(info, io.BytesIO(b"x"))
    data = buf.getvalue()
    upload_id = await upload(client, data)
    digest = hashlib.sha256(data).hexdigest()
    status, body = await call(
        client, {"app": wrapper("/client/evil", uploadId=upload_id, contentHash=digest)}
    )
    assert status == 422
    assert 'unsafe path "../evil"' in body["error"]
    assert os.listdir(tmp_server_dir) == []


async def test_tar_upload_without_upload_and_absent_path(client: TestClient[Any, Any]) -> None:
    status, body = await call(client, {"app": wrapper("/client/Nope.app")})
    assert status == 422
    assert body["error"].startswith(
        'Path "/client/Nope.app" does not exist on the tool-server host and no upload was provided.'
    )


async def test_upload_route_caps_declared_length(
    aiohttp_client: Any, seen: Seen, tmp_server_dir: Path
) -> None:
    config = ServerConfig(tmp_dir=str(tmp_server_dir), max_upload_bytes=8)
    client = await aiohttp_client(create_app(config, registry(seen)))
    resp = await client.post("/upload", data=b"x" * 64)
    assert resp.status == 413
    assert "exceeds" in json.dumps(await resp.json())
    assert os.listdir(tmp_server_dir) == []
