"""Flows over a link, end to end: a real client against a real tool-server app.

The project directory is renamed away the moment the call reaches the tool-server (a middleware
in front of the routes), so a run that passes read nothing from the client's paths on this disk:
everything came as members of the call. Crafted HTTP calls prove the server side alone.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import os
import tarfile
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import attrs
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from argent.client.base import ToolCallError
from argent.client.session import ToolServerClient
from argent.limits import INLINE_MEMBERS_BUDGET
from argent.server.app import create_app
from argent.server.config import ServerConfig
from argent.server.keys import REGISTRY, UPLOADS
from argent.tools.args import arg
from argent.tools.flow_tools import flow_tools
from argent.tools.registry import FileInputSpec, ToolContext, ToolRegistry, ToolSpec
from tests.flow_files import flows, new_project, write

ServerFactory = Callable[..., Awaitable[TestServer]]
TOKEN = "link-token"


# --------------------------------------------------------------------------------------------
# The tool-server


@attrs.frozen
class ReadArgs:
    file: str | None = arg(None)
    note: str | None = arg(None)


@attrs.frozen
class Seen:
    reads: list[dict[str, Any]] = attrs.field(factory=list)
    bodies: list[dict[str, Any]] = attrs.field(factory=list)
    headers: list[dict[str, str]] = attrs.field(factory=list)
    uploads_at_call: list[int] = attrs.field(factory=list)


def build_registry(seen: Seen) -> ToolRegistry:
    registry = ToolRegistry()
    for spec in flow_tools(registry):
        registry.register(spec)

    async def read_file(args: ReadArgs, ctx: ToolContext) -> Any:
        record: dict[str, Any] = {"arg": args.file}
        if args.file:
            record["bytes"] = Path(args.file).read_bytes().decode("latin-1")
            record["client_path"] = ctx.file_inputs["file"].client_path
        seen.reads.append(record)
        return {"ok": True}

    registry.register(
        ToolSpec(
            name="read-file",
            description="reads a file argument",
            args_type=ReadArgs,
            execute=read_file,
            file_inputs=(FileInputSpec(target="file", path="${file}", kind="file", optional=True),),
        )
    )
    return registry


@attrs.define
class Link:
    url: str
    app: web.Application
    seen: Seen
    hide: list[Path]
    tmp: Path

    def client(self, log: list[str] | None = None) -> ToolServerClient:
        return ToolServerClient(self.url, TOKEN, linked=True, notice=log.append if log is not None else None)

    @property
    def uploads(self) -> Any:
        return self.app[UPLOADS]


@pytest.fixture
async def link(aiohttp_server: ServerFactory, tmp_path: Path) -> Link:
    seen = Seen()
    hide: list[Path] = []
    server_tmp = tmp_path / "server-tmp"
    server_tmp.mkdir()
    app = create_app(ServerConfig(token=TOKEN, tmp_dir=str(server_tmp)), build_registry(seen))

    @web.middleware
    async def away(request: web.Request, handler: Any) -> web.StreamResponse:
        if request.method == "POST" and request.path.startswith("/tools/"):
            body = await request.json()
            seen.bodies.append(body)
            seen.headers.append(dict(request.headers))
            seen.uploads_at_call.append(len(request.app[UPLOADS]))
            for path in hide:  # the client's files are gone from this disk before the server reads a byte
                if path.exists():
                    path.rename(path.with_name(path.name + ".hidden"))
        return await handler(request)

    app.middlewares.insert(0, away)
    server = await aiohttp_server(app)
    return Link(f"http://127.0.0.1:{server.port}", app, seen, hide, server_tmp)


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    return new_project(tmp_path)


async def run(link: Link, proj: Path, name: str = "main", log: list[str] | None = None, **extra: Any) -> Any:
    progress: list[dict[str, Any]] = []
    async with link.client(log) as client:
        result = await client.call(
            "flow-execute",
            {"project_root": str(proj), "name": name, "prerequisiteAcknowledged": True, **extra},
            on_progress=progress.append,
        )
    assert [s["index"] for s in progress] == [s["index"] for s in result["steps"]]
    return result


def statuses(result: dict[str, Any]) -> list[str]:
    return [f"{s['kind']}:{s['status']}:{s['flow']}" for s in result["steps"]]


# --------------------------------------------------------------------------------------------
# The run reads only members


async def test_a_run_reads_fragments_nested_flows_and_tool_files_only_from_the_members(
    link: Link, proj: Path
) -> None:
    png = proj / "shots" / "a.png"
    png.parent.mkdir()
    png.write_bytes(b"\x89PNG client bytes")
    write(
        flows(proj) / "main.yaml",
        "run: login.yaml",
        "when: { platform: ios }\n    steps:\n      - run: never.yaml",
        f"tool: flow-execute\n    args: {{ name: inner, project_root: {proj} }}",
        f"tool: read-file\n    args: {{ file: {png} }}",
    )
    write(flows(proj) / "login.yaml", "run: sub/deeper.yaml")
    write(flows(proj) / "sub" / "deeper.yaml", "echo: deep")
    write(flows(proj) / "inner.yaml", "run: login.yaml", "echo: inner done")
    link.hide.append(proj)
    result = await run(link, proj, platform="android")
    assert not proj.exists()
    assert statuses(result) == [
        "run:pass:login",
        "run:pass:deeper",
        "echo:pass:deeper",
        "when:skip:main",
        "run:skip:never",
        "tool:pass:main",
        "tool:pass:main",
    ]
    assert result["ok"] is True
    assert link.seen.reads == [
        {"arg": link.seen.reads[0]["arg"], "bytes": "\x89PNG client bytes", "client_path": str(png)}
    ]
    assert link.seen.reads[0]["arg"] != str(png)  # a temporary file on the tool-server
    nested = result["steps"][5]["result"]
    assert [s["kind"] for s in nested["steps"]] == ["run", "run", "echo", "echo"]


async def test_the_call_body_has_the_seeds_flow_file_input(link: Link, proj: Path) -> None:
    write(flows(proj) / "withrun.yaml", "run: frag-echo.yaml")
    frag = write(flows(proj) / "frag-echo.yaml", "echo: from a fragment")
    await run(link, proj, name="withrun")
    wire = link.seen.bodies[0]["flow_file"]
    d = str(flows(proj))
    st = frag.stat()
    assert wire["__argentFileInput"] is True
    assert wire["path"] == f"{d}/withrun.yaml"
    assert wire["canonical"] == f"{d}/withrun.yaml"
    assert wire["spelling"] == {"state": "listed"}
    assert wire["members"] == [
        {
            "role": "flow",
            "key": f"{d}\u0000frag-echo.yaml",
            "path": f"{d}/frag-echo.yaml",
            "canonical": f"{d}/frag-echo.yaml",
            "spelling": {"state": "listed"},
            "size": st.st_size,
            "mtimeMs": st.st_mtime_ns / 1_000_000,
            "content": base64.b64encode(frag.read_bytes()).decode(),
        }
    ]


async def test_a_flow_without_members_sends_an_empty_list_and_still_streams(link: Link, proj: Path) -> None:
    write(flows(proj) / "main.yaml", "echo: alone")
    async with link.client() as client:
        result = await client.call("flow-execute", {"project_root": str(proj), "name": "main"})
    assert result["ok"] is True
    assert link.seen.bodies[0]["flow_file"]["members"] == []
    headers = link.seen.headers[0]
    assert headers["Accept"] == "application/x-ndjson"
    assert headers["Accept-Encoding"] == "identity"
    assert headers["x-argent-linked"] == "1"


async def test_the_flow_files_log_lines_byte_for_byte(
    link: Link, proj: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARGENT_FLOW_FILES_LOG", "1")
    png = proj / "a.png"
    png.write_bytes(b"12345")
    write(
        flows(proj) / "main.yaml",
        "run: frag.yaml",
        "when: { platform: ios }\n    steps:\n      - run: gone.yaml",
        "when: { platform: ios }\n    steps:\n      - run: dir.yaml",
        f"when: {{ platform: ios }}\n    steps:\n      - tool: read-file\n        args: {{ file: {png} }}",
        "snapshot: home",
    )
    frag = write(flows(proj) / "frag.yaml", "echo: f")
    (flows(proj) / "dir.yaml").mkdir()
    shots = flows(proj) / "__baselines__" / "main"
    shots.mkdir(parents=True)
    (shots / "home__chromium-1x1.png").write_bytes(b"pngpng")
    (shots / "away__chromium-1x1.png").write_bytes(b"x")
    log: list[str] = []
    with pytest.raises(ToolCallError):
        await run(link, proj, log=log, platform="chromium")  # snapshot needs a device: the call fails
    d = str(flows(proj))
    assert log == [
        f"[flow-files] flow {d}/frag.yaml: inline {frag.stat().st_size}",
        f"[flow-files] flow {d}/gone.yaml: missing",
        f"[flow-files] flow {d}/dir.yaml: refused (EISDIR: illegal operation on a directory, read)",
        f"[flow-files] tool {png}: inline 5",
        f"[flow-files] baseline {shots}/home__chromium-1x1.png: inline 6",
    ]
    async with link.client(log) as client:
        log.clear()
        with pytest.raises(ToolCallError):
            await client.call(
                "flow-execute", {"project_root": str(proj), "name": "main", "updateBaselines": True}
            )
    assert log[-2:] == [
        f"[flow-files] baseline {shots}/away__chromium-1x1.png: listed",
        f"[flow-files] baseline {shots}/home__chromium-1x1.png: listed",
    ]


async def test_without_the_environment_variable_nothing_is_logged(
    link: Link, proj: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARGENT_FLOW_FILES_LOG", raising=False)
    write(flows(proj) / "main.yaml", "run: frag.yaml")
    write(flows(proj) / "frag.yaml", "echo: f")
    log: list[str] = []
    await run(link, proj, log=log)
    assert log == []


# --------------------------------------------------------------------------------------------
# Transfer: inline budget and uploads


def fragment_of(size: int) -> str:
    head = "steps:\n  - echo: big\n#"
    return head + "x" * (size - len(head) - 1) + "\n"


@pytest.mark.parametrize(("size", "uploaded"), [(INLINE_MEMBERS_BUDGET, 0), (INLINE_MEMBERS_BUDGET + 1, 1)])
async def test_members_ride_inline_up_to_256_kib_and_the_rest_goes_through_upload(
    link: Link, proj: Path, size: int, uploaded: int
) -> None:
    write(flows(proj) / "main.yaml", "run: big.yaml")
    (flows(proj) / "big.yaml").write_text(fragment_of(size))
    assert (flows(proj) / "big.yaml").stat().st_size == size
    link.hide.append(proj)
    result = await run(link, proj)
    assert result["ok"] is True and statuses(result) == ["run:pass:big", "echo:pass:big"]
    (member,) = link.seen.bodies[0]["flow_file"]["members"]
    assert ("uploadId" in member) == bool(uploaded) and ("content" in member) == (not uploaded)
    if uploaded:
        assert len(member["contentHash"]) == 64
    assert link.seen.uploads_at_call == [uploaded]
    assert len(link.uploads) == 0 and os.listdir(link.tmp) == []


async def test_a_proxy_answering_413_on_upload_means_no_call(
    aiohttp_server: ServerFactory, link: Link, proj: Path
) -> None:
    calls: list[str] = []

    async def proxy(request: web.Request) -> web.StreamResponse:
        calls.append(f"{request.method} {request.path}")
        if request.path == "/upload":
            return web.Response(
                status=413, text="<html>413 Request Entity Too Large</html>", content_type="text/html"
            )
        async with (
            aiohttp.ClientSession() as session,
            session.request(
                request.method,
                link.url + request.path,
                headers={"Authorization": f"Bearer {TOKEN}"},
                data=await request.read(),
            ) as resp,
        ):
            return web.Response(status=resp.status, body=await resp.read(), content_type=resp.content_type)

    front = web.Application()
    front.router.add_route("*", "/{tail:.*}", proxy)
    server = await aiohttp_server(front)
    write(flows(proj) / "main.yaml", "run: big.yaml")
    (flows(proj) / "big.yaml").write_bytes(
        b"steps: []\n#" + os.urandom(300_000).hex().encode()[:300_000] + b"\n"
    )
    client = ToolServerClient(f"http://127.0.0.1:{server.port}", TOKEN, linked=True)
    async with client:
        with pytest.raises(ToolCallError) as info:
            await client.call("flow-execute", {"project_root": str(proj), "name": "main"})
    assert calls == ["GET /tools", "POST /upload"]
    message = info.value.message
    assert info.value.status == 413
    assert "refused the " in message and f"archive of {flows(proj)}/big.yaml" in message
    needed = int(message.split("at least ")[1].split(" bytes")[0])
    assert needed > 100_000
    assert "on POST /upload (for example client_max_body_size in nginx)" in message
    assert message.endswith("The call was not sent.")
    assert link.seen.bodies == []


# --------------------------------------------------------------------------------------------
# What the runner reports over a link


async def test_a_missing_fragment_reports_enoent_on_its_canonical_path(link: Link, proj: Path) -> None:
    real = proj / "real-lib"
    real.mkdir()
    (flows(proj) / "lib").symlink_to(real)
    write(flows(proj) / "main.yaml", "run: lib/gone.yaml", "echo: after")
    result = await run(link, proj)
    assert statuses(result) == ["run:error:gone", "echo:skip:main"]
    assert result["steps"][0]["reason"] == (
        f"could not load fragment \"lib/gone.yaml\": ENOENT: no such file or directory, open '{real}/gone.yaml'"
    )


async def test_a_case_folded_fragment_fails_its_step(link: Link, proj: Path) -> None:
    write(flows(proj) / "main.yaml", "run: login.yaml")
    write(flows(proj) / "Login.yaml", "echo: x")
    result = await run(link, proj)
    assert result["steps"][0]["status"] == "error"
    assert result["steps"][0]["reason"].startswith(
        'mis-cased fragment reference "login.yaml": no directory entry'
    )


async def test_a_case_folded_flow_file_stops_the_run(link: Link, proj: Path) -> None:
    write(flows(proj) / "Main.yaml", "echo: x")
    wire_body = {
        "project_root": str(proj),
        "name": "main",
        "flow_file": {
            "__argentFileInput": True,
            "path": f"{flows(proj)}/main.yaml",
            "content": base64.b64encode(b"steps:\n  - echo: x\n").decode(),
            "canonical": f"{flows(proj)}/main.yaml",
            "spelling": {"state": "case_folded", "actual": "Main.yaml", "addressable": True},
            "members": [],
        },
    }
    status, body = await post(link, "flow-execute", wire_body)
    assert status == 500 and body["error_code"] == "FLOW_NAME_INVALID"
    assert body["error"].startswith('Invalid flow name "main": no saved flow is named "main.yaml"')


async def test_a_refused_member_stops_the_run_before_the_first_step(
    link: Link, proj: Path, tmp_path: Path
) -> None:
    write(tmp_path / "outside.yaml", "echo: x")
    (flows(proj) / "ext.yaml").symlink_to(tmp_path / "outside.yaml")
    write(flows(proj) / "main.yaml", "echo: first", "run: ext.yaml")
    progress: list[Any] = []
    async with link.client() as client:
        with pytest.raises(ToolCallError) as info:
            await client.call(
                "flow-execute", {"project_root": str(proj), "name": "main"}, on_progress=progress.append
            )
    assert progress == []
    assert info.value.error_code == "FLOW_FILE_INVALID"
    assert info.value.message.endswith(
        f"step 2 in {flows(proj)}/main.yaml: run: ext.yaml — the client did not send the flow: ext.yaml is "
        f"outside every root this client serves ({proj}, {flows(proj)})"
    )


async def test_a_script_step_stops_the_run_over_a_link(link: Link, proj: Path) -> None:
    write(
        flows(proj) / "main.yaml",
        f"tool: flow-execute\n    args: {{ name: inner-script, project_root: {proj} }}",
    )
    write(flows(proj) / "inner-script.yaml", "script: { path: ../../scripts/hello.mjs }")
    async with link.client() as client:
        with pytest.raises(ToolCallError) as info:
            await client.call("flow-execute", {"project_root": str(proj), "name": "main"})
    assert (
        f"step 1 in {flows(proj)}/inner-script.yaml: script: {{ path: ../../scripts/hello.mjs }}"
        in info.value.message
    )


async def test_a_missing_nested_flow_reports_enoent(link: Link, proj: Path) -> None:
    write(
        flows(proj) / "main.yaml", f"tool: flow-execute\n    args: {{ name: absent, project_root: {proj} }}"
    )
    result = await run(link, proj)
    step = result["steps"][0]
    assert (step["status"], step["reason"]) == (
        "error",
        f"ENOENT: no such file or directory, open '{flows(proj)}/absent.yaml'",
    )


async def test_a_case_folded_nested_flow_reports_invalid_flow_name(link: Link, proj: Path) -> None:
    write(flows(proj) / "main.yaml", f"tool: flow-execute\n    args: {{ name: inner, project_root: {proj} }}")
    write(flows(proj) / "Inner.yaml", "echo: x")
    result = await run(link, proj)
    assert result["steps"][0]["status"] == "error"
    assert result["steps"][0]["reason"].startswith(
        'Invalid flow name "inner": no saved flow is named "inner.yaml"'
    )


async def test_cycles_and_depth_count_fragments_and_nested_runs_together(link: Link, proj: Path) -> None:
    write(flows(proj) / "main.yaml", "run: a.yaml")
    write(flows(proj) / "a.yaml", f"tool: flow-execute\n    args: {{ name: main, project_root: {proj} }}")
    result = await run(link, proj)
    nested_line = result["steps"][1]
    assert nested_line["reason"] == "cyclic flow reference: main → a → main"


async def test_a_tool_file_argument_the_client_has_no_file_for(link: Link, proj: Path) -> None:
    write(flows(proj) / "main.yaml", f"tool: read-file\n    args: {{ file: {proj}/nope.png }}")
    result = await run(link, proj)
    step = result["steps"][0]
    assert (step["status"], step["reason"]) == (
        "error",
        f'the client has no file at "{proj}/nope.png" (argument file of read-file)',
    )
    assert link.seen.reads == []


async def test_a_refused_tool_file_reports_the_clients_reason(link: Link, proj: Path) -> None:
    (proj / "dir.png").mkdir()
    write(flows(proj) / "main.yaml", f"tool: read-file\n    args: {{ file: {proj}/dir.png }}")
    result = await run(link, proj)
    assert result["steps"][0]["reason"] == "EISDIR: illegal operation on a directory, read"


# --------------------------------------------------------------------------------------------
# Crafted calls: the server side alone


async def post(link: Link, tool: str, body: dict[str, Any], *, stream: bool = False) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {TOKEN}", "x-argent-linked": "1"}
    if stream:
        headers["Accept"] = "application/x-ndjson"
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{link.url}/tools/{tool}", json=body, headers=headers) as resp,
    ):
        text = await resp.text()
        if stream:
            return resp.status, [json.loads(line) for line in text.splitlines() if line.strip()]
        return resp.status, json.loads(text)


def b64(text: str | bytes) -> str:
    return base64.b64encode(text.encode() if isinstance(text, str) else text).decode()


def crafted(root: str, main: str, members: list[dict[str, Any]] | None, **extra: Any) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "__argentFileInput": True,
        "path": f"{root}/.argent/flows/main.yaml",
        "content": b64(main),
    }
    if members is not None:
        wire.update(
            canonical=f"{root}/.argent/flows/main.yaml", spelling={"state": "listed"}, members=members
        )
    return {"project_root": root, "name": "main", "flow_file": wire, **extra}


def flow_member(root: str, target: str, text: str | None, **extra: Any) -> dict[str, Any]:
    d = f"{root}/.argent/flows"
    out: dict[str, Any] = {
        "role": "flow",
        "key": f"{d}\0{target}",
        "path": f"{d}/{target}",
        "canonical": f"{d}/{target}",
        "spelling": {"state": "listed"},
    }
    if text is not None:
        out["content"] = b64(text)
    out.update(extra)
    return out


async def test_a_project_root_that_does_not_exist_on_the_server(link: Link) -> None:
    root = "/nowhere/on/this/server/proj"
    assert not os.path.exists(root)
    body = crafted(
        root,
        "steps:\n  - run: frag.yaml\n",
        [flow_member(root, "frag.yaml", "steps:\n  - echo: from the call\n")],
    )
    status, body_out = await post(link, "flow-execute", body)
    assert status == 200
    assert [s.get("message") for s in body_out["data"]["steps"]] == [None, "from the call"]


async def test_member_bytes_win_over_a_file_that_exists_on_the_server(link: Link, proj: Path) -> None:
    write(flows(proj) / "main.yaml", "echo: server copy of main")
    write(flows(proj) / "frag.yaml", "echo: server copy of frag")
    body = crafted(
        str(proj),
        "steps:\n  - run: frag.yaml\n",
        [flow_member(str(proj), "frag.yaml", "steps:\n  - echo: client bytes\n")],
    )
    status, out = await post(link, "flow-execute", body)
    assert status == 200
    assert [s.get("message") for s in out["data"]["steps"]] == [None, "client bytes"]


async def test_bad_member_bytes_answer_422_before_argument_validation(link: Link) -> None:
    body = crafted("/nowhere", "steps: []\n", [flow_member("/nowhere", "a.yaml", None, content="###")])
    body["bogus_argument"] = True  # would be a 400 if the arguments were validated first
    status, out = await post(link, "flow-execute", body)
    assert status == 422
    assert out == {"error": 'Member content for "/nowhere/.argent/flows/a.yaml" is not valid base64.'}


def archive(name: str, data: bytes) -> bytes:
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb") as gz, tarfile.open(fileobj=gz, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


async def upload(link: Link, data: bytes) -> str:
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{link.url}/upload", data=data, headers={"Authorization": f"Bearer {TOKEN}"}) as resp,
    ):
        return str((await resp.json())["uploadId"])


async def test_every_named_upload_is_deleted_also_when_the_call_fails(link: Link) -> None:
    import hashlib

    good = archive("a.yaml", b"steps: []\n")
    first = await upload(link, good)
    later = await upload(link, good)
    assert len(link.uploads) == 2
    members = [
        flow_member("/nowhere", "a.yaml", None, uploadId=first, contentHash=hashlib.sha256(good).hexdigest()),
        flow_member("/nowhere", "b.yaml", None, uploadId="not-an-upload", contentHash="0" * 64),
        flow_member("/nowhere", "c.yaml", None, uploadId=later, contentHash=hashlib.sha256(good).hexdigest()),
    ]
    status, out = await post(link, "flow-execute", crafted("/nowhere", "steps: []\n", members))
    assert status == 422
    assert out["error"].startswith('Upload "not-an-upload" was not found on the tool-server')
    assert len(link.uploads) == 0
    assert [f for f in os.listdir(link.tmp)] == []
    # an upload id is good for one call only
    members = [
        flow_member("/nowhere", "a.yaml", None, uploadId=first, contentHash=hashlib.sha256(good).hexdigest())
    ]
    status, out = await post(link, "flow-execute", crafted("/nowhere", "steps: []\n", members))
    assert status == 422 and out["error"].startswith(f'Upload "{first}" was not found')


async def test_an_upload_whose_hash_does_not_match_is_a_422(link: Link) -> None:
    good = archive("a.yaml", b"steps: []\n")
    upload_id = await upload(link, good)
    members = [flow_member("/nowhere", "a.yaml", None, uploadId=upload_id, contentHash="0" * 64)]
    status, out = await post(link, "flow-execute", crafted("/nowhere", "steps: []\n", members))
    assert status == 422 and "hash mismatch" in out["error"]
    assert os.listdir(link.tmp) == []


def member_tar(*entries: tuple[tarfile.TarInfo, bytes]) -> bytes:
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb") as gz, tarfile.open(fileobj=gz, mode="w|") as tar:
        for info, data in entries:
            tar.addfile(info, io.BytesIO(data) if data else None)
    return buffer.getvalue()


def tar_entry(name: str, data: bytes = b"", type: bytes = tarfile.REGTYPE) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type = type
    info.size = len(data)
    return info, data


def zeros_bomb(name: str, size: int) -> bytes:
    """A gzipped tar of one file of ``size`` zero bytes, compressed a MiB at a time (about 1 KiB each)."""
    header = tar_entry(name)[0]
    header.size = size
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [compressor.compress(header.tobuf(tarfile.GNU_FORMAT))]
    zeros = bytes(1024 * 1024)
    out.extend(compressor.compress(zeros) for _ in range(size // len(zeros)))
    out.append(compressor.compress(bytes(size % len(zeros) + 1024)) + compressor.flush())
    return b"".join(out)


MEMBER_PATH = "/nowhere/.argent/flows/a.yaml"


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (
            lambda: zeros_bomb("a.yaml", 64 * 1024 * 1024),
            f'Member "{MEMBER_PATH}" is 67108864 bytes — exceeds the 33554432-byte limit on one file.',
        ),
        (
            lambda: member_tar(tar_entry("a.yaml", b"steps: []\n"), tar_entry("b.yaml", b"steps: []\n")),
            f'The upload for member "{MEMBER_PATH}" does not hold one regular file of at most 33554432 bytes '
            "(found more than one entry).",
        ),
        (
            lambda: member_tar(tar_entry("a.yaml", type=tarfile.DIRTYPE)),
            f'The upload for member "{MEMBER_PATH}" does not hold one regular file of at most 33554432 bytes '
            '(found a directory "a.yaml").',
        ),
        (
            lambda: member_tar(tar_entry("../a.yaml", b"x")),
            f'Could not extract the uploaded archive for "{MEMBER_PATH}": '
            'Archive contains an unsafe path "../a.yaml" — refusing extraction.',
        ),
    ],
    ids=["bomb", "two-files", "directory", "unsafe-name"],
)
async def test_a_member_upload_that_is_not_one_small_file_is_a_422_and_nothing_is_written(
    link: Link, body: Callable[[], bytes], error: str
) -> None:
    data = body()
    upload_id = await upload(link, data)
    members = [
        flow_member(
            "/nowhere", "a.yaml", None, uploadId=upload_id, contentHash=hashlib.sha256(data).hexdigest()
        )
    ]
    status, out = await post(link, "flow-execute", crafted("/nowhere", "steps: []\n", members))
    assert (status, out["error"]) == (422, error)
    assert len(link.uploads) == 0 and os.listdir(link.tmp) == []


async def test_uploads_of_a_wrapper_the_call_drops_are_deleted_too(link: Link) -> None:
    good = archive("a.yaml", b"steps: []\n")
    upload_id = await upload(link, good)
    body = crafted("/nowhere", "steps: []\n", [flow_member("/nowhere", "a.yaml", None, uploadId=upload_id)])
    body["flow_path"] = "/nowhere/x.yaml"  # flow_file is skipped when flow_path is set
    status, _ = await post(link, "flow-execute", body)
    assert status in (400, 500)
    assert len(link.uploads) == 0 and os.listdir(link.tmp) == []


async def test_thirty_three_mib_of_flow_members_is_a_422(link: Link) -> None:
    chunk = "#" + "x" * (17 * 1024 * 1024)
    members = [flow_member("/nowhere", "a.yaml", chunk), flow_member("/nowhere", "b.yaml", chunk)]
    status, out = await post(link, "flow-execute", crafted("/nowhere", "steps: []\n", members))
    assert status == 422
    assert "over the 33554432-byte limit on the flow files of one call" in out["error"]


async def test_hostile_members_are_refused_cleanly(link: Link) -> None:
    root = "/nowhere"
    members = [
        flow_member(root, "dotdot.yaml", "steps:\n  - echo: x\n", canonical="/nowhere/../etc/passwd"),
        flow_member(root, "rel.yaml", "steps:\n  - echo: x\n", canonical="etc/passwd"),
        {**flow_member(root, "nul.yaml", "steps: []\n"), "key": f"{root}/.argent/flows\0a\0nul.yaml"},
        flow_member(root, "twice.yaml", "steps:\n  - echo: first\n"),
        flow_member(root, "twice.yaml", "steps:\n  - echo: second\n"),
        {"role": "surprise", "key": "/etc/passwd", "content": b64("x")},
    ]
    main = "steps:\n  - run: twice.yaml\n  - when: { platform: ios }\n    steps:\n      - run: dotdot.yaml\n"
    status, out = await post(link, "flow-execute", crafted(root, main, members))
    assert status == 500 and out["error_code"] == "FLOW_FILE_INVALID"
    assert (
        "run: dotdot.yaml — the client did not send the flow: the client sent an invalid canonical path"
        in out["error"]
    )
    status, out = await post(link, "flow-execute", crafted(root, "steps:\n  - run: twice.yaml\n", members))
    assert status == 200 and out["data"]["steps"][1]["message"] == "first"


# --------------------------------------------------------------------------------------------
# Older clients and tool-servers


async def test_an_older_client_that_sends_only_the_flow_file_is_told_to_update(link: Link) -> None:
    body = crafted("/nowhere", "steps:\n  - echo: x\n  - run: frag.yaml\n", None)
    status, out = await post(link, "flow-execute", body)
    assert status == 500 and out["error_code"] == "FLOW_FILE_INVALID"
    assert out["error"].endswith(
        "This tool-server runs run: steps for a client that sends their fragments with the call. Update the "
        "argent CLI or MCP adapter on the client."
    )
    assert "step 2 in /nowhere/.argent/flows/main.yaml: run: frag.yaml" in out["error"]


async def test_an_older_client_runs_a_flow_that_needs_no_other_file(link: Link) -> None:
    status, out = await post(link, "flow-execute", crafted("/nowhere", "steps:\n  - echo: only me\n", None))
    assert status == 200 and out["data"]["steps"][0]["message"] == "only me"


async def test_a_listing_without_collect_makes_the_client_send_only_the_flow_file(
    aiohttp_server: ServerFactory, proj: Path
) -> None:
    seen: list[dict[str, Any]] = []
    listing = {
        "tools": [
            {
                "name": "flow-execute",
                "inputSchema": {"type": "object"},
                "fileInputs": [
                    {
                        "target": "flow_path",
                        "path": "${flow_path}",
                        "kind": "file",
                        "optional": True,
                        "unwrapWhenSet": "name",
                    },
                    {
                        "target": "flow_file",
                        "path": "${project_root}/.argent/flows/${name}.yaml",
                        "kind": "file",
                        "skipWhenSet": "flow_path",
                    },
                ],
            }
        ]
    }

    async def tools(request: web.Request) -> web.Response:
        return web.json_response(listing)

    async def call(request: web.Request) -> web.Response:
        seen.append({"body": await request.json(), "accept": request.headers.get("Accept")})
        return web.json_response({"data": {"ok": True}})

    app = web.Application()
    app.router.add_get("/tools", tools)
    app.router.add_post("/tools/{name}", call)
    server = await aiohttp_server(app)
    write(flows(proj) / "main.yaml", "run: frag.yaml")
    write(flows(proj) / "frag.yaml", "echo: f")
    async with ToolServerClient(f"http://127.0.0.1:{server.port}", None, linked=True) as client:
        await client.call("flow-execute", {"project_root": str(proj), "name": "main"})
    wire = seen[0]["body"]["flow_file"]
    assert set(wire) == {"__argentFileInput", "path", "size", "mtimeMs", "content"}
    assert seen[0]["accept"] != "application/x-ndjson"


# --------------------------------------------------------------------------------------------
# The call is sent once


async def closing_after_one_line(
    aiohttp_server: ServerFactory, link: Link, line: bytes
) -> tuple[str, list[str]]:
    """A tool-server that lists the link's tools and answers each call with ``line`` of its stream,
    then closes the connection: its URL, and the paths of the calls it took."""
    posts: list[str] = []

    async def tools(request: web.Request) -> web.StreamResponse:
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"{link.url}/tools", headers={"Authorization": f"Bearer {TOKEN}"}) as resp,
        ):
            return web.json_response(await resp.json())

    async def drop(request: web.Request) -> web.StreamResponse:
        posts.append(request.path)
        await request.read()
        response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await response.prepare(request)
        await response.write(line)
        assert request.transport is not None
        request.transport.close()
        return response

    app = web.Application()
    app.router.add_get("/tools", tools)
    app.router.add_post("/tools/{name}", drop)
    server = await aiohttp_server(app)
    return f"http://127.0.0.1:{server.port}", posts


async def test_a_call_with_members_is_sent_once_when_the_connection_closes(
    aiohttp_server: ServerFactory, link: Link, proj: Path
) -> None:
    url, posts = await closing_after_one_line(
        aiohttp_server, link, b'{"event":"progress","data":{"index":0,"kind":"echo","status":"pass"}}\n'
    )
    write(flows(proj) / "main.yaml", "echo: x")
    async with ToolServerClient(url, TOKEN, linked=True) as client:
        with pytest.raises(ToolCallError) as info:
            await client.call("flow-execute", {"project_root": str(proj), "name": "main"})
    assert posts == ["/tools/flow-execute"]
    assert info.value.message.startswith(
        "The connection to the tool-server closed before flow-execute finished ("
    )
    assert info.value.message.endswith("). The tool may have run; check its effect before you run it again.")


async def test_flow_read_prerequisite_reads_the_flow_the_client_sent(link: Link, proj: Path) -> None:
    (flows(proj) / "main.yaml").write_text("steps:\n  - echo: x\nexecutionPrerequisite: logged in\n")
    link.hide.append(proj)
    async with link.client() as client:
        result = await client.call("flow-read-prerequisite", {"project_root": str(proj), "name": "main"})
    assert result == {"flow": "main", "executionPrerequisite": "logged in"}


async def test_a_flow_path_over_a_link_runs_from_the_members(link: Link, proj: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere / "standalone.yaml", "run: part.yaml")
    write(elsewhere / "part.yaml", "echo: beside the flow file")
    link.hide.append(elsewhere)
    async with link.client() as client:
        result = await client.call(
            "flow-execute", {"project_root": str(proj), "flow_path": str(elsewhere / "standalone.yaml")}
        )
    assert result["flow"] == "standalone"
    assert [s.get("message") for s in result["steps"]] == [None, "beside the flow file"]
    assert link.seen.bodies[0]["flow_path"]["members"][0]["key"] == f"{elsewhere}\0part.yaml"


async def test_an_older_client_flow_path_still_needs_a_shared_filesystem(link: Link) -> None:
    body = {
        "project_root": "/nowhere",
        "flow_path": {"__argentFileInput": True, "path": "/nowhere/x.yaml", "content": b64("steps: []\n")},
    }
    status, out = await post(link, "flow-execute", body)
    assert status == 500
    assert out["error"].startswith(
        'Invalid flow_path "/nowhere/x.yaml": explicit flow paths require a co-located'
    )


# --------------------------------------------------------------------------------------------
# Seed gaps: "What the tool-server does with the members", "The flow file input", "Members"


async def test_uploads_of_a_later_wrapper_are_deleted_when_an_earlier_one_fails(link: Link) -> None:
    # Seed "What the tool-server does with the members": the tool-server deletes each upload
    # that the call names before the flow starts, also when the call fails.
    good = archive("a.yaml", b"steps: []\n")
    upload_id = await upload(link, good)
    failing = crafted("/nowhere", "steps: []\n", [flow_member("/nowhere", "a.yaml", None, content="###")])
    body = {
        "project_root": "/nowhere",
        "flow_path": {**failing["flow_file"], "path": "/nowhere/x.yaml", "canonical": "/nowhere/x.yaml"},
        "flow_file": crafted(
            "/nowhere", "steps: []\n", [flow_member("/nowhere", "b.yaml", None, uploadId=upload_id)]
        )["flow_file"],
    }
    status, out = await post(link, "flow-execute", body)
    assert (status, out) == (
        422,
        {"error": 'Member content for "/nowhere/.argent/flows/a.yaml" is not valid base64.'},
    )
    assert len(link.uploads) == 0 and os.listdir(link.tmp) == []


async def test_a_flow_file_the_client_cannot_read_carries_no_members(link: Link, proj: Path) -> None:
    # Seed "The flow file input": the client sends these fields only when it can read the flow file.
    (flows(proj) / "dir.yaml").mkdir()
    async with link.client() as client:
        for name in ("absent", "dir"):
            with pytest.raises(ToolCallError):
                await client.call("flow-execute", {"project_root": str(proj), "name": name})
    assert [body["flow_file"] for body in link.seen.bodies] == [
        {"__argentFileInput": True, "path": f"{flows(proj)}/absent.yaml"},
        {"__argentFileInput": True, "path": f"{flows(proj)}/dir.yaml"},
    ]
    # no members field: the call is not a stream (nobody asked for progress)
    assert [headers.get("Accept") == "application/x-ndjson" for headers in link.seen.headers] == [
        False,
        False,
    ]


async def test_a_run_step_fails_when_no_member_has_its_key(link: Link) -> None:
    # Seed: "A run: step finds its member by key. The step fails when no member has that key."
    body = crafted("/nowhere", "steps:\n  - run: frag.yaml\n  - echo: after\n", [])
    status, out = await post(link, "flow-execute", body)
    assert status == 200
    steps = out["data"]["steps"]
    assert [(s["kind"], s["status"]) for s in steps] == [("run", "error"), ("echo", "skip")]
    assert steps[0]["reason"] == (
        'could not load fragment "frag.yaml": the client sent no file for /nowhere/.argent/flows/frag.yaml '
        "with the call"
    )


async def test_a_file_argument_without_any_member_reports_that_the_client_has_no_file(link: Link) -> None:
    # Seed: "A missing member, or no member, makes the step report error: the client has no file at
    # "<path>" (argument <name> of <tool>)."
    body = crafted("/nowhere", "steps:\n  - tool: read-file\n    args: { file: /nowhere/a.png }\n", [])
    status, out = await post(link, "flow-execute", body)
    assert status == 200
    step = out["data"]["steps"][0]
    assert (step["status"], step["reason"]) == (
        "error",
        'the client has no file at "/nowhere/a.png" (argument file of read-file)',
    )
    assert link.seen.reads == []


async def test_a_chain_deeper_than_20_levels_fails_counting_nested_runs_too(link: Link, proj: Path) -> None:
    # Seed: "a chain deeper than 20 levels ... fail[s] the step" and "The cycle guard and the depth
    # limit count run: fragments and nested runs together."
    # main (1), f1..f9 (2..10), the nested run n (11), g1..g9 (12..20): g10 would be level 21.
    write(flows(proj) / "main.yaml", "run: f1.yaml")
    for i in range(1, 9):
        write(flows(proj) / f"f{i}.yaml", f"run: f{i + 1}.yaml")
    write(flows(proj) / "f9.yaml", f"tool: flow-execute\n    args: {{ name: n, project_root: {proj} }}")
    write(flows(proj) / "n.yaml", "run: g1.yaml")
    for i in range(1, 10):
        write(flows(proj) / f"g{i}.yaml", f"run: g{i + 1}.yaml")
    write(flows(proj) / "g10.yaml", "echo: too deep")
    link.hide.append(proj)
    result = await run(link, proj)
    members = [m["key"].split("\0")[1] for m in link.seen.bodies[0]["flow_file"]["members"]]
    assert "g9.yaml" in members and "g10.yaml" not in members  # the client stops at 20 levels too
    nested = result["steps"][-1]
    assert (nested["kind"], nested["status"]) == ("tool", "fail")
    deepest = nested["result"]["steps"]
    assert [(s["target"], s["status"], s.get("reason")) for s in deepest[-2:]] == [
        ("g9.yaml", "pass", None),
        ("g10.yaml", "error", "max run depth exceeded"),
    ]


@attrs.frozen
class NoArgs:
    pass


async def test_uploads_are_gone_before_the_flow_starts(link: Link, proj: Path) -> None:
    # Seed: "The tool-server deletes each upload that the call names before the flow starts."
    during: list[int] = []

    async def count_uploads(args: NoArgs, ctx: ToolContext) -> Any:
        during.append(len(link.uploads))
        return {"ok": True}

    link.app[REGISTRY].register(
        ToolSpec(name="count-uploads", description="", args_type=NoArgs, execute=count_uploads)
    )
    write(flows(proj) / "main.yaml", "tool: count-uploads", "run: big.yaml", "tool: count-uploads")
    (flows(proj) / "big.yaml").write_text(fragment_of(INLINE_MEMBERS_BUDGET + 1))
    result = await run(link, proj)
    assert result["ok"] is True
    assert link.seen.uploads_at_call == [1] and during == [0, 0]


async def test_no_baseline_is_written_when_the_connection_closes_before_the_result(
    aiohttp_server: ServerFactory, link: Link, proj: Path
) -> None:
    # Seed "Baselines in the result": when the connection closes before the result, the client
    # writes no baseline of that call.
    shots = flows(proj) / "__baselines__" / "main"
    target = shots / "home__chromium-1x1.png"
    directive = {
        "__argentClientFile": True,
        "path": str(target),
        "content": b64(b"\x89PNG never"),
        "encoding": "base64",
    }
    line = {"event": "progress", "data": {"index": 0, "kind": "snapshot", "baselineWrites": [directive]}}
    url, _ = await closing_after_one_line(aiohttp_server, link, json.dumps(line).encode() + b"\n")
    write(flows(proj) / "main.yaml", "snapshot: home")
    async with ToolServerClient(url, TOKEN, linked=True) as client:
        with pytest.raises(ToolCallError) as info:
            await client.call(
                "flow-execute", {"project_root": str(proj), "name": "main", "updateBaselines": True}
            )
    assert info.value.message.startswith("The connection to the tool-server closed before flow-execute")
    assert not target.exists() and not shots.exists()


async def test_a_call_over_a_link_sets_no_time_limit(link: Link) -> None:
    # Seed "The call": the MCP server (a client like the CLI, see argent.mcp.server) sets no timeout
    # for this call; only connecting is bounded.
    async with link.client() as client:
        timeout = client.transport._http().timeout
    assert (timeout.total, timeout.sock_read, timeout.connect) == (None, None, None)
    assert timeout.sock_connect == 10.0
