"""ToolServerClient and routing against real aiohttp servers.

The well-behaved server is the real tool-server app (``create_app``) holding small test tools;
misbehaviour (a server ignoring Accept, a connection dropped mid-stream, a stream without a
terminal line, a proxy answering 413) comes from tiny hand-written apps.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import socket
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from attrs import frozen
from click.testing import CliRunner

from argent.cli.main import cli
from argent.client.base import ToolCallError
from argent.client.link_config import read_link_config
from argent.client.routing import Route
from argent.client.session import ToolServerClient
from argent.connect import open_client
from argent.errors import ArgentError
from argent.link.codec import to_wire
from argent.server.app import create_app
from argent.server.config import ServerConfig
from argent.tools.args import arg
from argent.tools.registry import FileInputSpec, ToolContext, ToolRegistry, ToolSpec

ServerFactory = Callable[..., Awaitable[TestServer]]
TOKEN = "test-token"
CLOSED_TEMPLATE = (
    "The connection to the tool-server closed before {name} finished ({detail}). "
    "The tool may have run; check its effect before you run it again."
)

# --------------------------------------------------------------------------------------------------
# Test tools


@frozen
class EchoArgs:
    text: str = arg("")


async def _echo(args: EchoArgs, ctx: ToolContext) -> Any:
    return {"text": args.text, "linked": ctx.linked}


@frozen
class StepsArgs:
    count: int = arg(3)
    big: int = arg(0)


async def _steps(args: StepsArgs, ctx: ToolContext) -> Any:
    for index in range(1, args.count + 1):
        if ctx.emit_progress is not None:
            await ctx.emit_progress({"index": index, "kind": "echo", "status": "pass"})
    return {"done": args.count, "blob": "x" * args.big}


async def _fails(args: StepsArgs, ctx: ToolContext) -> Any:
    for index in range(1, args.count + 1):
        if ctx.emit_progress is not None:
            await ctx.emit_progress({"index": index, "kind": "echo", "status": "pass"})
    raise ArgentError("the flow file is broken", error_code="FLOW_FILE_INVALID", error_kind="validation")


@frozen
class ReadArgs:
    path: str = arg()


async def _read(args: ReadArgs, ctx: ToolContext) -> Any:
    with open(args.path, "rb") as handle:
        data = handle.read()
    return {"content": data.decode(), "meta": to_wire(ctx.file_inputs.get("path"))}


@frozen
class InstallArgs:
    app: str = arg()


async def _install(args: InstallArgs, ctx: ToolContext) -> Any:
    files: dict[str, str] = {}
    if os.path.isdir(args.app):
        for current, _dirs, names in os.walk(args.app):
            for name in names:
                full = os.path.join(current, name)
                with open(full) as handle:
                    files[os.path.relpath(full, args.app)] = handle.read()
    else:
        with open(args.app) as handle:
            files["."] = handle.read()
    return {"base": os.path.basename(args.app), "files": files, "meta": to_wire(ctx.file_inputs.get("app"))}


@frozen
class RecordArgs:
    project_root: str = arg()
    name: str = arg()


async def _record(args: RecordArgs, ctx: ToolContext) -> Any:
    path = os.path.join(args.project_root, ".argent", "flows", f"{args.name}.yaml")
    if ctx.emit_progress is not None:
        await ctx.emit_progress({"index": 1, "kind": "echo", "status": "pass"})
    return {
        "savedTo": {"__argentClientFile": True, "path": path, "content": f"name: {args.name}\n"},
        "refused": {"__argentClientFile": True, "path": "/etc/passwd", "content": "x"},
    }


def _registry() -> ToolRegistry:
    return ToolRegistry(
        [
            ToolSpec("echo", "Echo the text.", EchoArgs, _echo),
            ToolSpec("my tool", "A name that needs quoting.", EchoArgs, _echo),
            ToolSpec("steps", "Emit progress.", StepsArgs, _steps),
            ToolSpec("fails", "Emit progress, then fail.", StepsArgs, _fails),
            ToolSpec(
                "read-file",
                "Read a file input.",
                ReadArgs,
                _read,
                file_inputs=(FileInputSpec(target="path", path="${path}", kind="file"),),
            ),
            ToolSpec(
                "install",
                "Receive a tar-upload.",
                InstallArgs,
                _install,
                file_inputs=(FileInputSpec(target="app", path="${app}", kind="tar-upload"),),
            ),
            # A recording tool's name: only its result's savedTo may write a file on the client.
            ToolSpec("flow-start-recording", "Return client-file directives.", RecordArgs, _record),
        ]
    )


def _url(server: TestServer) -> str:
    return str(server.make_url("")).rstrip("/")


@pytest.fixture
async def tool_server(aiohttp_server: ServerFactory, tmp_path: Path) -> str:
    server_tmp = tmp_path / "server-tmp"
    server_tmp.mkdir()
    app = create_app(
        ServerConfig(host="127.0.0.1", port=0, token=TOKEN, tmp_dir=str(server_tmp)), _registry()
    )
    return _url(await aiohttp_server(app))


@pytest.fixture
def client_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The client's temp dir, to see that upload tars never stay behind."""
    path = tmp_path / "client-tmp"
    path.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(path))
    return path


@contextlib.asynccontextmanager
async def _client(
    url: str, *, linked: bool = True, token: str | None = TOKEN, **kw: Any
) -> AsyncIterator[ToolServerClient]:
    async with ToolServerClient(url, token, linked=linked, **kw) as client:
        yield client


# --------------------------------------------------------------------------------------------------
# Hand-written servers


class Recorder:
    """What a hand-written server saw."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []

    def count(self, method: str, prefix: str) -> int:
        return sum(1 for m, p, _h, _b in self.requests if m == method and p.startswith(prefix))

    def last(self, method: str, prefix: str) -> tuple[dict[str, str], bytes]:
        for m, p, headers, body in reversed(self.requests):
            if m == method and p.startswith(prefix):
                return headers, body
        raise AssertionError(f"no {method} {prefix}")


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
LISTING = {
    "tools": [
        {"name": "t", "description": "", "inputSchema": {"type": "object"}},
        {
            "name": "reader",
            "description": "",
            "inputSchema": {"type": "object"},
            "fileInputs": [{"target": "path", "path": "${path}", "kind": "file"}],
        },
        {
            "name": "installer",
            "description": "",
            "inputSchema": {"type": "object"},
            "fileInputs": [{"target": "app", "path": "${app}", "kind": "tar-upload"}],
        },
    ]
}


async def _fake_server(
    aiohttp_server: ServerFactory,
    call: Handler,
    *,
    upload: Handler | None = None,
) -> tuple[str, Recorder]:
    recorder = Recorder()

    @web.middleware
    async def record(request: web.Request, handler: Handler) -> web.StreamResponse:
        body = await request.read() if request.path != "/upload" else b""
        recorder.requests.append((request.method, request.raw_path, dict(request.headers), body))
        return await handler(request)

    async def tools(_: web.Request) -> web.StreamResponse:
        return web.json_response(LISTING)

    async def no_upload(_: web.Request) -> web.StreamResponse:
        return web.json_response({"uploadId": "u-1"})

    app = web.Application(middlewares=[record])
    app.router.add_get("/tools", tools)
    app.router.add_post("/tools/{name}", call)
    app.router.add_post("/upload", upload or no_upload)
    return _url(await aiohttp_server(app)), recorder


async def _ok_json(request: web.Request) -> web.StreamResponse:
    return web.json_response({"data": {"ok": True}})


def _ndjson(*events: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(e).encode() + b"\n" for e in events)


async def _open_stream(request: web.Request) -> web.StreamResponse:
    resp = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
    await resp.prepare(request)
    return resp


# --------------------------------------------------------------------------------------------------
# Listing


async def test_list_tools_is_fetched_once_for_the_clients_life(aiohttp_server: ServerFactory) -> None:
    url, recorder = await _fake_server(aiohttp_server, _ok_json)
    async with _client(url) as client:
        first = await client.list_tools()
        await client.list_tools()
        await client.call("t", {})
        await client.call("t", {})
    assert [t.name for t in first] == ["t", "reader", "installer"]
    assert recorder.count("GET", "/tools") == 1
    assert recorder.count("POST", "/tools/") == 2


async def test_list_tools_with_a_wrong_token_fails_with_the_status_and_a_token_hint(tool_server: str) -> None:
    async with _client(tool_server, token="wrong", source="link") as client:
        with pytest.raises(ToolCallError) as info:
            await client.list_tools()
    assert info.value.status == 401
    assert info.value.message.startswith(f"GET {tool_server}/tools failed: 401 Unauthorized")
    assert "argent link argent://<token>@<host>:<port>" in info.value.message


async def test_list_tools_from_the_real_server(tool_server: str) -> None:
    async with _client(tool_server) as client:
        tools = {t.name: to_wire(t) for t in await client.list_tools()}
    assert tools["install"]["fileInputs"] == [{"target": "app", "path": "${app}", "kind": "tar-upload"}]


# --------------------------------------------------------------------------------------------------
# Headers and the call


async def test_call_headers_over_a_link_with_progress(aiohttp_server: ServerFactory) -> None:
    url, recorder = await _fake_server(aiohttp_server, _ok_json)
    async with _client(url) as client:
        await client.call("t", {"a": 1}, on_progress=lambda _: None)
    headers, body = recorder.last("POST", "/tools/t")
    assert headers["Authorization"] == f"Bearer {TOKEN}"
    assert headers["x-argent-linked"] == "1"
    assert headers["Accept"] == "application/x-ndjson"
    assert headers["Accept-Encoding"] == "identity"
    assert headers["Content-Type"] == "application/json"
    assert json.loads(body) == {"a": 1}


async def test_no_ndjson_accept_without_progress_and_no_linked_header_when_co_located(
    aiohttp_server: ServerFactory,
) -> None:
    url, recorder = await _fake_server(aiohttp_server, _ok_json)
    async with _client(url, linked=False, token=None) as client:
        assert await client.call("t", {}) == {"ok": True}
    headers, _body = recorder.last("POST", "/tools/t")
    assert "application/x-ndjson" not in headers.get("Accept", "")
    assert "x-argent-linked" not in {k.lower() for k in headers}
    assert "Authorization" not in headers


async def test_the_tool_name_is_url_quoted(aiohttp_server: ServerFactory, tool_server: str) -> None:
    url, recorder = await _fake_server(aiohttp_server, _ok_json)
    async with _client(url) as client:
        await client.call("my tool/x", {})
    assert recorder.count("POST", "/tools/my%20tool%2Fx") == 1
    async with _client(tool_server) as client:
        assert await client.call("my tool", {"text": "hi"}) == {"text": "hi", "linked": True}


async def test_the_linked_header_reaches_the_tool(tool_server: str) -> None:
    async with _client(tool_server, linked=True) as client:
        assert (await client.call("echo", {"text": "a"}))["linked"] is True
    async with _client(tool_server, linked=False) as client:
        assert (await client.call("echo", {"text": "a"}))["linked"] is False


# --------------------------------------------------------------------------------------------------
# Streaming (stream.test.ts)


async def test_progress_lines_reach_the_callback_in_order_and_the_result_is_returned(
    tool_server: str,
) -> None:
    seen: list[dict[str, Any]] = []
    async with _client(tool_server) as client:
        result = await client.call("steps", {"count": 3}, on_progress=seen.append)
    assert [s["index"] for s in seen] == [1, 2, 3]
    assert result == {"done": 3, "blob": ""}


async def test_an_async_progress_callback_is_awaited(tool_server: str) -> None:
    seen: list[int] = []

    async def progress(step: dict[str, Any]) -> None:
        await asyncio.sleep(0)
        seen.append(step["index"])

    async with _client(tool_server) as client:
        await client.call("steps", {"count": 2}, on_progress=progress)
    assert seen == [1, 2]


async def test_progress_arrives_while_the_tool_still_runs(aiohttp_server: ServerFactory) -> None:
    release = asyncio.Event()

    async def slow(request: web.Request) -> web.StreamResponse:
        resp = await _open_stream(request)
        await resp.write(_ndjson({"event": "progress", "data": {"index": 1}}))
        await release.wait()
        await resp.write(_ndjson({"event": "result", "data": "done"}))
        await resp.write_eof()
        return resp

    url, _ = await _fake_server(aiohttp_server, slow)
    first = asyncio.Event()
    async with _client(url) as client:
        call = asyncio.create_task(client.call("t", {}, on_progress=lambda _: first.set()))
        await asyncio.wait_for(first.wait(), 5)
        assert not call.done()
        release.set()
        assert await call == "done"


async def test_a_result_line_larger_than_aiohttps_line_limit_is_read(tool_server: str) -> None:
    async with _client(tool_server) as client:
        result = await client.call("steps", {"count": 1, "big": 3 * 1024 * 1024}, on_progress=lambda _: None)
    assert len(result["blob"]) == 3 * 1024 * 1024


async def test_a_server_that_ignores_accept_is_read_buffered_and_no_events_fire(
    aiohttp_server: ServerFactory,
) -> None:
    url, recorder = await _fake_server(aiohttp_server, _ok_json)
    seen: list[Any] = []
    async with _client(url) as client:
        assert await client.call("t", {}, on_progress=seen.append) == {"ok": True}
    assert seen == []
    assert recorder.last("POST", "/tools/t")[0]["Accept"] == "application/x-ndjson"


async def test_an_error_line_rejects_with_its_message_codes_and_earlier_progress_delivered(
    tool_server: str,
) -> None:
    seen: list[dict[str, Any]] = []
    async with _client(tool_server) as client:
        with pytest.raises(ToolCallError) as info:
            await client.call("fails", {"count": 2}, on_progress=seen.append)
    assert [s["index"] for s in seen] == [1, 2]
    assert info.value.message == "the flow file is broken"
    assert (info.value.error_code, info.value.error_kind) == ("FLOW_FILE_INVALID", "validation")
    assert info.value.may_have_run is False


async def test_a_buffered_500_error_carries_the_same_codes(tool_server: str) -> None:
    async with _client(tool_server) as client:
        with pytest.raises(ToolCallError) as info:
            await client.call("fails", {"count": 1})
    assert info.value.status == 500
    assert info.value.message == "the flow file is broken"
    assert (info.value.error_code, info.value.error_kind) == ("FLOW_FILE_INVALID", "validation")


async def test_an_unknown_tool_and_bad_args_are_usage_errors(tool_server: str) -> None:
    async with _client(tool_server) as client:
        with pytest.raises(ToolCallError) as missing:
            await client.call("nope", {}, on_progress=lambda _: None)
        with pytest.raises(ToolCallError) as invalid:
            await client.call("echo", {"text": 5}, on_progress=lambda _: None)
    assert (missing.value.status, missing.value.message) == (404, 'Tool "nope" not found')
    assert invalid.value.status == 400 and "text" in invalid.value.message
    assert missing.value.is_usage and invalid.value.is_usage


async def test_a_non_json_error_page_names_the_status(aiohttp_server: ServerFactory) -> None:
    async def gateway(_: web.Request) -> web.StreamResponse:
        return web.Response(status=502, text="<html>Bad Gateway</html>", content_type="text/html")

    url, _ = await _fake_server(aiohttp_server, gateway)
    async with _client(url) as client:
        with pytest.raises(ToolCallError) as info:
            await client.call("t", {})
    assert info.value.status == 502
    assert info.value.message == f"The tool-server at {url} answered 502 Bad Gateway to t."


# --------------------------------------------------------------------------------------------------
# A connection that closes before the result: never retried, the exact message


async def test_a_stream_that_ends_without_a_terminal_line(aiohttp_server: ServerFactory) -> None:
    async def ends_early(request: web.Request) -> web.StreamResponse:
        resp = await _open_stream(request)
        await resp.write(_ndjson({"event": "progress", "data": {"index": 1}}))
        await resp.write_eof()
        return resp

    url, recorder = await _fake_server(aiohttp_server, ends_early)
    seen: list[Any] = []
    async with _client(url) as client:
        with pytest.raises(ToolCallError) as info:
            await client.call("flow-execute", {}, on_progress=seen.append)
    assert info.value.message == CLOSED_TEMPLATE.format(
        name="flow-execute", detail="the stream ended without a result"
    )
    assert info.value.may_have_run is True
    assert len(seen) == 1
    assert recorder.count("POST", "/tools/") == 1


async def test_a_connection_dropped_mid_stream(aiohttp_server: ServerFactory) -> None:
    async def drops(request: web.Request) -> web.StreamResponse:
        resp = await _open_stream(request)
        await resp.write(_ndjson({"event": "progress", "data": {"index": 1}}))
        await asyncio.sleep(0.05)
        assert request.transport is not None
        request.transport.close()
        return resp

    url, recorder = await _fake_server(aiohttp_server, drops)
    seen: list[Any] = []
    async with _client(url) as client:
        with pytest.raises(ToolCallError) as info:
            await client.call("flow-execute", {}, on_progress=seen.append)
    assert info.value.message == CLOSED_TEMPLATE.format(
        name="flow-execute", detail="response payload is not completed"
    )
    assert info.value.error_code == "TOOL_SERVER_CONNECTION_CLOSED"
    assert not info.value.is_usage
    assert len(seen) == 1
    assert recorder.count("POST", "/tools/") == 1


async def test_a_connection_closed_before_any_response(aiohttp_server: ServerFactory) -> None:
    async def hangs_up(request: web.Request) -> web.StreamResponse:
        assert request.transport is not None
        request.transport.close()
        await asyncio.sleep(0.05)
        return web.json_response({})

    url, recorder = await _fake_server(aiohttp_server, hangs_up)
    async with _client(url) as client:
        with pytest.raises(ToolCallError) as info:
            await client.call("t", {})
    assert info.value.message == CLOSED_TEMPLATE.format(name="t", detail="server disconnected")
    assert recorder.count("POST", "/tools/") == 1


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    ("source", "needle"),
    [("env", "ARGENT_TOOLS_URL routes calls there"), ("link", "run argent unlink")],
)
async def test_an_unreachable_server_names_the_url_and_the_routing(source: str, needle: str) -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    async with _client(url, source=source) as client:
        with pytest.raises(ToolCallError) as info:
            await client.call("t", {})
    message = info.value.message
    assert message.startswith(f"Could not reach the tool-server at {url} (connection refused). ")
    assert needle in message
    assert info.value.error_code == "TOOL_SERVER_UNREACHABLE"
    assert "may have run" not in message


@pytest.mark.parametrize("url", ["tools.example", "ftp://host", "http://", "http://[::1", "http://h/?q=1"])
async def test_a_url_that_is_not_http_is_an_unreachable_server_not_a_crash(url: str) -> None:
    async with _client(url, source="env") as client:
        with pytest.raises(ToolCallError) as info:
            await client.list_tools()
    assert info.value.message.startswith(
        f"Could not reach the tool-server at {url.rstrip('/')} (not an http:// or https:// URL with a host). "
        "ARGENT_TOOLS_URL routes calls there."
    )
    assert info.value.error_code == "TOOL_SERVER_UNREACHABLE"


async def test_a_tool_server_under_a_path_prefix_gets_every_request_there_with_the_token(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    """Behind a proxy that mounts the tool-server at /argent/: listing, call and upload all go there."""
    seen: list[tuple[str, str, str | None]] = []

    @web.middleware
    async def record(request: web.Request, handler: Handler) -> web.StreamResponse:
        seen.append((request.method, request.raw_path, request.headers.get("Authorization")))
        return await handler(request)

    async def tools(_: web.Request) -> web.StreamResponse:
        return web.json_response(LISTING)

    async def upload(request: web.Request) -> web.StreamResponse:
        await request.read()
        return web.json_response({"uploadId": "u-1"})

    app = web.Application(middlewares=[record])
    app.router.add_get("/argent/tools", tools)
    app.router.add_post("/argent/tools/{name}", _ok_json)
    app.router.add_post("/argent/upload", upload)
    url = _url(await aiohttp_server(app)) + "/argent/"
    (tmp_path / "app").write_text("x")
    async with _client(url) as client:
        assert await client.call("installer", {"app": str(tmp_path / "app")}) == {"ok": True}
    assert seen == [
        ("GET", "/argent/tools", f"Bearer {TOKEN}"),
        ("POST", "/argent/upload", f"Bearer {TOKEN}"),
        ("POST", "/argent/tools/installer", f"Bearer {TOKEN}"),
    ]


# --------------------------------------------------------------------------------------------------
# File inputs over the wire


async def test_a_file_input_over_a_link_carries_its_content(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    url, recorder = await _fake_server(aiohttp_server, _ok_json)
    path = tmp_path / "in.yaml"
    path.write_text("hello")
    async with _client(url, linked=True) as client:
        await client.call("reader", {"path": str(path)})
    async with _client(url, linked=False) as client:
        await client.call("reader", {"path": str(path)})
    bodies = [json.loads(b) for m, p, _h, b in recorder.requests if m == "POST"]
    assert base64.b64decode(bodies[0]["path"]["content"]) == b"hello"
    assert bodies[0]["path"]["size"] == 5
    assert "content" not in bodies[1]["path"] and bodies[1]["path"]["size"] == 5


async def test_a_file_input_resolves_on_the_real_server(tool_server: str, tmp_path: Path) -> None:
    path = tmp_path / "in.yaml"
    path.write_text("hello")
    async with _client(tool_server) as client:
        result = await client.call("read-file", {"path": str(path)}, on_progress=lambda _: None)
    assert result["content"] == "hello"
    assert result["meta"]["clientPath"] == str(path)
    assert result["meta"]["statVerified"] is True


@pytest.mark.parametrize("as_dir", [True, False])
async def test_tar_upload_over_a_link_is_uploaded_and_extracted(
    tool_server: str, tmp_path: Path, client_tmp: Path, as_dir: bool
) -> None:
    if as_dir:
        source = tmp_path / "MyApp.app"
        (source / "Contents").mkdir(parents=True)
        (source / "Contents" / "Info.plist").write_text("plist")
        expected = {os.path.join("Contents", "Info.plist"): "plist"}
    else:
        source = tmp_path / "app.apk"
        source.write_text("apk-bytes")
        expected = {".": "apk-bytes"}
    notes: list[str] = []
    async with _client(tool_server, notice=notes.append) as client:
        result = await client.call("install", {"app": str(source)})
    assert result["base"] == source.name
    assert result["files"] == expected
    assert result["meta"]["viaUpload"] is True
    assert notes == [f"Uploading {source.name} to the remote tool-server..."]
    assert os.listdir(client_tmp) == []


async def test_upload_returns_the_id_and_the_tar_hash(
    tool_server: str, tmp_path: Path, client_tmp: Path
) -> None:
    source = tmp_path / "f.bin"
    source.write_bytes(b"x" * 100)
    async with _client(tool_server) as client:
        upload_id, digest = await client.upload(str(source))
    assert upload_id and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)
    assert os.listdir(client_tmp) == []


async def test_tar_upload_co_located_does_not_upload(tool_server: str, tmp_path: Path) -> None:
    source = tmp_path / "app.apk"
    source.write_text("apk")
    async with _client(tool_server, linked=False) as client:
        result = await client.call("install", {"app": str(source)})
    assert result["meta"]["viaUpload"] is False
    assert result["files"] == {".": "apk"}


async def test_a_413_on_upload_names_the_size_and_sends_no_call(
    aiohttp_server: ServerFactory, tmp_path: Path, client_tmp: Path
) -> None:
    async def too_large(request: web.Request) -> web.StreamResponse:
        return web.Response(
            status=413, text="<html>413 Request Entity Too Large</html>", content_type="text/html"
        )

    url, recorder = await _fake_server(aiohttp_server, _ok_json, upload=too_large)
    source = tmp_path / "Big.app"
    source.mkdir()
    (source / "blob").write_bytes(os.urandom(256 * 1024))
    with pytest.raises(ToolCallError) as info:
        async with _client(url) as client:
            await client.call("installer", {"app": str(source)})
    message = info.value.message
    size = int(message.split("refused the ")[1].split("-byte")[0])
    assert size > 256 * 1024
    assert f"must accept request bodies of at least {size} bytes on POST /upload" in message
    assert "client_max_body_size" in message
    assert info.value.status == 413
    assert recorder.count("POST", "/tools/") == 0
    assert recorder.count("POST", "/upload") == 1
    assert os.listdir(client_tmp) == []


async def test_an_upload_failure_names_the_url_and_status(
    aiohttp_server: ServerFactory, tmp_path: Path, client_tmp: Path
) -> None:
    async def broken(request: web.Request) -> web.StreamResponse:
        return web.Response(status=500, text="oops")

    url, recorder = await _fake_server(aiohttp_server, _ok_json, upload=broken)
    source = tmp_path / "app.apk"
    source.write_text("apk")
    async with _client(url) as client:
        with pytest.raises(ToolCallError, match="failed") as info:
            await client.call("installer", {"app": str(source)})
    assert info.value.message == f"Upload to {url}/upload failed: 500 Internal Server Error"
    assert recorder.count("POST", "/tools/") == 0
    assert os.listdir(client_tmp) == []


# --------------------------------------------------------------------------------------------------
# Client-file directives in results


@pytest.mark.parametrize("streamed", [False, True])
async def test_client_file_directives_are_applied_to_results(
    tool_server: str, tmp_path: Path, streamed: bool
) -> None:
    project = tmp_path / "proj"
    progress = (lambda _: None) if streamed else None
    async with _client(tool_server) as client:
        result = await client.call(
            "flow-start-recording", {"project_root": str(project), "name": "login"}, on_progress=progress
        )
    target = project / ".argent" / "flows" / "login.yaml"
    assert result == {"savedTo": str(target), "refused": None}
    assert target.read_text() == "name: login\n"


# --------------------------------------------------------------------------------------------------
# Routing: env / link / embedded


def _listening(url: str) -> bool:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=1):
            return True
    except OSError:
        return False


async def test_the_embedded_server_runs_for_the_block_and_stops_after_it() -> None:
    route = Route(url=None, token=None, source="embedded")
    async with open_client(route, registry=_registry()) as client:
        assert isinstance(client, ToolServerClient)
        assert client.url.startswith("http://127.0.0.1:")
        assert client.linked is False and client.token
        assert await client.call("echo", {"text": "hi"}) == {"text": "hi", "linked": False}
        url = client.url
        assert _listening(url)
    assert not _listening(url)


async def test_the_embedded_server_requires_its_token() -> None:
    async with open_client(Route(url=None, token=None, source="embedded"), registry=_registry()) as client:
        assert isinstance(client, ToolServerClient)
        async with aiohttp.ClientSession() as session, session.get(f"{client.url}/tools") as resp:
            assert resp.status == 401


async def test_the_embedded_server_stops_on_an_error_in_the_block() -> None:
    urls: list[str] = []
    with pytest.raises(RuntimeError, match="boom"):
        async with open_client(
            Route(url=None, token=None, source="embedded"), registry=_registry()
        ) as client:
            assert isinstance(client, ToolServerClient)
            urls.append(client.url)
            raise RuntimeError("boom")
    assert not _listening(urls[0])


async def test_the_embedded_server_stops_when_the_command_is_cancelled() -> None:
    urls: list[str] = []
    inside = asyncio.Event()

    async def command() -> None:
        async with open_client(
            Route(url=None, token=None, source="embedded"), registry=_registry()
        ) as client:
            assert isinstance(client, ToolServerClient)
            urls.append(client.url)
            inside.set()
            await asyncio.sleep(60)

    task = asyncio.create_task(command())
    await asyncio.wait_for(inside.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not _listening(urls[0])


async def test_without_env_or_link_open_client_starts_the_embedded_builtin_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ARGENT_TOOLS_URL", raising=False)
    async with open_client() as client:
        assert isinstance(client, ToolServerClient)
        assert (client.source, client.linked) == ("embedded", False)
        assert "flow-execute" in {t.name for t in await client.list_tools()}
        url = client.url
    assert not _listening(url)


async def test_open_client_over_env_routing_is_linked(
    tool_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("ARGENT_TOOLS_URL", tool_server)
    monkeypatch.setenv("ARGENT_AUTH_TOKEN", TOKEN)
    async with open_client() as client:
        assert isinstance(client, ToolServerClient)
        assert (client.url, client.source, client.linked) == (tool_server, "env", True)
        assert await client.call("echo", {"text": "x"}) == {"text": "x", "linked": True}


async def test_open_client_over_a_link_file(
    tool_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ARGENT_TOOLS_URL", raising=False)
    host, port = tool_server.removeprefix("http://").rsplit(":", 1)
    (tmp_path / ".argent").mkdir()
    (tmp_path / ".argent" / "link.json").write_text(
        json.dumps({"url": tool_server, "host": host, "port": int(port), "createdAt": "t", "token": TOKEN})
    )
    async with open_client() as client:
        assert isinstance(client, ToolServerClient)
        assert (client.source, client.linked, client.token) == ("link", True, TOKEN)
        assert (await client.call("echo", {"text": "x"}))["linked"] is True


# --------------------------------------------------------------------------------------------------
# `argent link` preflight against a server in another thread (the CLI runs its own event loop)


class ThreadedServer:
    """An aiohttp app served from its own thread and loop."""

    def __init__(self, app_factory: Callable[[], web.Application]) -> None:
        self._factory = app_factory
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None
        self.port = 0

    def __enter__(self) -> ThreadedServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    async def _start(self) -> None:
        self._runner = web.AppRunner(self._factory())
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = int(self._runner.addresses[0][1])

    def __exit__(self, *exc: object) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()


@pytest.fixture
def link_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ARGENT_TOOLS_URL", raising=False)
    return tmp_path


@pytest.fixture
def real_threaded(tmp_path: Path) -> Iterator[ThreadedServer]:
    config = ServerConfig(host="127.0.0.1", port=0, token=TOKEN, tmp_dir=str(tmp_path))
    with ThreadedServer(lambda: create_app(config, _registry())) as server:
        yield server


def _link(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["link", *args])
    return result.exit_code, result.stdout, result.stderr


def test_link_verifies_the_server_and_writes_the_link(link_home: Path, real_threaded: ThreadedServer) -> None:
    code, out, err = _link(f"argent://{TOKEN}@127.0.0.1:{real_threaded.port}")
    assert code == 0, out + err
    config = read_link_config()
    assert config is not None
    assert (config.url, config.token) == (f"http://127.0.0.1:{real_threaded.port}", TOKEN)
    assert TOKEN not in out + err


def test_link_with_a_wrong_token_gets_the_401_hint_and_writes_nothing(
    link_home: Path, real_threaded: ThreadedServer
) -> None:
    code, _out, err = _link(f"argent://wrong@127.0.0.1:{real_threaded.port}")
    assert code == 1
    assert "401 Unauthorized" in err and "The token is missing or wrong" in err
    assert ".." not in err  # the server's sentence and ours share one full stop
    assert read_link_config() is None
    code, _out, _err = _link(f"argent://wrong@127.0.0.1:{real_threaded.port}", "--no-verify")
    assert code == 0 and read_link_config() is not None


def test_link_to_a_host_guard_refusal_gets_the_403_hint(link_home: Path) -> None:
    def app() -> web.Application:
        async def forbidden(_: web.Request) -> web.StreamResponse:
            return web.json_response({"error": 'Refusing request with Host "x"'}, status=403)

        application = web.Application()
        application.router.add_get("/tools", forbidden)
        return application

    with ThreadedServer(app) as server:
        code, _out, err = _link(f"argent://t@127.0.0.1:{server.port}")
    assert code == 1
    assert "403 Forbidden" in err and "DNS-rebinding guard" in err
    assert read_link_config() is None


def test_link_to_something_that_is_not_a_tool_server(link_home: Path) -> None:
    def app() -> web.Application:
        async def page(_: web.Request) -> web.StreamResponse:
            return web.Response(text="<html>hello</html>", content_type="text/html")

        application = web.Application()
        application.router.add_get("/tools", page)
        return application

    with ThreadedServer(app) as server:
        code, _out, err = _link(f"http://127.0.0.1:{server.port}")
    assert code == 1 and "not with a tool list" in err
    assert read_link_config() is None


def test_link_to_an_unreachable_server_fails_and_writes_nothing(link_home: Path) -> None:
    code, _out, err = _link(f"argent://t@127.0.0.1:{_free_port()}")
    assert code == 1
    assert "Could not reach a tool-server" in err and "(connection refused)" in err and "--no-verify" in err
    assert read_link_config() is None
