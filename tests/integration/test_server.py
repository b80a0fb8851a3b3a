"""The tool-server over real HTTP: routes, guards, JSON errors, buffered and streamed calls."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from pathlib import Path
from typing import Any

import attrs
import pytest
from aiohttp import ClientSession, web
from aiohttp.test_utils import TestClient

from argent.errors import FlowError, InvalidToolInputError
from argent.server.app import create_app
from argent.server.config import ServerConfig
from argent.server.serve import start_server
from argent.testing.fixtures import ArgentServer
from argent.tools.args import arg
from argent.tools.builtin import build_registry
from argent.tools.registry import ToolContext, ToolRegistry, ToolSpec

TOKEN = "s3cret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
STREAM = {**AUTH, "Accept": "application/x-ndjson"}


@attrs.frozen
class CountArgs:
    n: int = arg(3, doc="How many progress events.")
    fail: str | None = arg(None, doc="Raise this message after the events.")


@attrs.frozen
class NoArgs:
    pass


class Probe:
    """What the test tools saw."""

    def __init__(self) -> None:
        self.aborted = asyncio.Event()
        self.started = asyncio.Event()


def tool_server(server: ArgentServer) -> ClientSession:
    """A session that asks the plugin's tool-server with its token."""
    return ClientSession(base_url=server.url, headers={"Authorization": f"Bearer {server.token}"})


def make_registry(probe: Probe) -> ToolRegistry:
    async def count(args: CountArgs, ctx: ToolContext) -> Any:
        for i in range(args.n):
            if ctx.emit_progress:
                await ctx.emit_progress({"i": i})
        if args.fail == "flow":
            raise FlowError("flow is broken", error_code="FLOW_FILE_INVALID")
        if args.fail == "input":
            raise InvalidToolInputError("x must be positive")
        if args.fail:
            raise RuntimeError(args.fail)
        return {"count": args.n}

    async def forever(args: NoArgs, ctx: ToolContext) -> Any:
        probe.started.set()
        i = 0
        while not ctx.abort.is_set():
            if ctx.emit_progress:
                await ctx.emit_progress({"tick": i})
            i += 1
            await asyncio.sleep(0.01)
        probe.aborted.set()
        return {"ticks": i}

    return ToolRegistry(
        [
            ToolSpec(name="count", description="Counts.", args_type=CountArgs, execute=count),
            ToolSpec(name="forever", description="Runs until aborted.", args_type=NoArgs, execute=forever),
            ToolSpec(
                name="off",
                description="Cannot run here.",
                args_type=NoArgs,
                execute=forever,
                availability=lambda: "needs hardware this machine lacks",
            ),
        ]
    )


@pytest.fixture
def probe() -> Probe:
    return Probe()


@pytest.fixture
async def client(aiohttp_client: Any, probe: Probe, tmp_path: Path) -> TestClient[Any, Any]:
    config = ServerConfig(token=TOKEN, tmp_dir=str(tmp_path), max_body_bytes=64 * 1024)
    return await aiohttp_client(create_app(config, make_registry(probe)))  # type: ignore[no-any-return]


async def test_healthz_needs_no_auth_and_reports_version(client: TestClient[Any, Any]) -> None:
    resp = await client.get("/healthz")
    assert resp.status == 200
    body = await resp.json()
    assert body["ok"] is True and isinstance(body["version"], str)


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong"},
        {"Authorization": f"Basic {TOKEN}"},
        {"Authorization": "Bearer s3cret-tokeX"},
    ],
)
async def test_missing_or_wrong_token_is_401_json(
    client: TestClient[Any, Any], headers: dict[str, str]
) -> None:
    for method, path in (("GET", "/tools"), ("POST", "/tools/count"), ("POST", "/upload")):
        resp = await client.request(method, path, headers=headers)
        assert resp.status == 401
        body = await resp.json()
        assert "Authorization: Bearer <token>" in body["error"]


async def test_tools_lists_entries_with_schema_and_disabled_reason(client: TestClient[Any, Any]) -> None:
    resp = await client.get("/tools", headers=AUTH)
    assert resp.status == 200
    tools = {t["name"]: t for t in (await resp.json())["tools"]}
    assert tools["count"]["inputSchema"]["properties"]["n"]["type"] == "integer"
    assert tools["off"]["disabled"] == {"reason": "needs hardware this machine lacks"}
    assert "disabled" not in tools["count"]
    assert "access-control-allow-origin" not in {k.lower() for k in resp.headers}


async def test_flow_execute_entry_declares_the_seed_file_inputs(aiohttp_client: Any, tmp_path: Path) -> None:
    client = await aiohttp_client(create_app(ServerConfig(tmp_dir=str(tmp_path)), build_registry()))
    tools = {t["name"]: t for t in (await (await client.get("/tools")).json())["tools"]}
    assert tools["flow-execute"]["fileInputs"] == [
        {
            "target": "flow_path",
            "path": "${flow_path}",
            "kind": "file",
            "optional": True,
            "unwrapWhenSet": "name",
            "collect": "flow",
        },
        {
            "target": "flow_file",
            "path": "${project_root}/.argent/flows/${name}.yaml",
            "kind": "file",
            "skipWhenSet": "flow_path",
            "collect": "flow",
        },
    ]
    assert tools["flow-execute"]["longRunning"] is True


@pytest.mark.parametrize("host", ["evil.com:3001", "10.0.0.1", "evil.com"])
async def test_foreign_host_header_is_refused(client: TestClient[Any, Any], host: str) -> None:
    resp = await client.get("/tools", headers={**AUTH, "Host": host})
    assert resp.status == 403
    error = (await resp.json())["error"]
    assert "loopback" in error and "DNS-rebinding" in error


async def test_a_foreign_host_is_refused_with_the_whole_message(client: TestClient[Any, Any]) -> None:
    resp = await client.get("/tools", headers={**AUTH, "Host": "evil.com:3001"})
    assert (await resp.json())["error"] == (
        'Refusing request with Host "evil.com:3001". The tool-server accepts loopback hostnames '
        "(127.0.0.1, localhost, ::1) to defend against DNS-rebinding. If you are reaching this from your own "
        "client, use one of those instead of a public hostname."
    )


async def raw_answer(client: TestClient[Any, Any], request: bytes) -> tuple[str, Any]:
    """Status line and JSON body of ``request`` written as is on a socket of its own."""
    reader, writer = await asyncio.open_connection(client.server.host, client.server.port)
    writer.write(request)
    await writer.drain()
    answer = await reader.read()
    writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    return head.split(b"\r\n", 1)[0].decode(), json.loads(body)


async def test_hostile_host_and_authorization_bytes_get_answers_not_server_errors(
    client: TestClient[Any, Any],
) -> None:
    """Bytes that are not UTF-8 in Host or in the token, and no Host at all: 403, 401, 400 — never a 500."""
    status, body = await raw_answer(
        client, b"GET /tools HTTP/1.1\r\nHost: evil\xff.com\r\nConnection: close\r\n\r\n"
    )
    assert status == "HTTP/1.1 403 Forbidden"
    assert body["error"].startswith('Refusing request with Host "evil\\xff.com". ')
    status, body = await raw_answer(
        client,
        b"GET /tools HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \xfe\xff\r\nConnection: close\r\n\r\n",
    )
    assert status == "HTTP/1.1 401 Unauthorized"
    status, body = await raw_answer(client, b"GET /tools HTTP/1.0\r\n\r\n")
    assert (status, body) == ("HTTP/1.0 400 Bad Request", {"error": "Missing Host header"})


@pytest.mark.parametrize("host", ["127.0.0.1:3001", "localhost:9", "[::1]:3001", "127.0.0.1"])
async def test_loopback_host_headers_pass(client: TestClient[Any, Any], host: str) -> None:
    resp = await client.get("/tools", headers={**AUTH, "Host": host})
    assert resp.status == 200


async def test_bind_host_is_trusted_and_named(aiohttp_client: Any, tmp_path: Path, probe: Probe) -> None:
    config = ServerConfig(host="192.168.92.208", tmp_dir=str(tmp_path))
    client = await aiohttp_client(create_app(config, make_registry(probe)))
    assert (await client.get("/tools", headers={"Host": "192.168.92.208:3001"})).status == 200
    resp = await client.get("/tools", headers={"Host": "evil.com"})
    assert resp.status == 403
    assert "its bind host (192.168.92.208)" in (await resp.json())["error"]


async def test_wildcard_bind_disables_host_check(aiohttp_client: Any, tmp_path: Path, probe: Probe) -> None:
    client = await aiohttp_client(
        create_app(ServerConfig(host="0.0.0.0", tmp_dir=str(tmp_path)), make_registry(probe))
    )
    assert (await client.get("/tools", headers={"Host": "anything.example"})).status == 200


async def test_unknown_route_and_method_answer_json(client: TestClient[Any, Any]) -> None:
    resp = await client.get("/nope", headers=AUTH)
    assert resp.status == 404
    assert (await resp.json())["error"] == "No route GET /nope on the tool-server."
    resp = await client.delete("/tools", headers=AUTH)
    assert resp.status == 405
    assert resp.content_type == "application/json"


async def test_unknown_tool_is_plain_404_even_when_streaming(client: TestClient[Any, Any]) -> None:
    resp = await client.post("/tools/nope", json={}, headers=STREAM)
    assert resp.status == 404
    assert await resp.json() == {"error": 'Tool "nope" not found'}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "Request body is not valid JSON"),
        (b"[1, 2]", "Request body must be a JSON object of tool arguments."),
        (b'"text"', "Request body must be a JSON object of tool arguments."),
        (b"\xff\xfe", "Request body is not valid JSON"),
    ],
)
async def test_bad_json_bodies_are_400_json(client: TestClient[Any, Any], body: bytes, message: str) -> None:
    resp = await client.post(
        "/tools/count", data=body, headers={**STREAM, "Content-Type": "application/json"}
    )
    assert resp.status == 400
    assert (await resp.json())["error"].startswith(message)


async def test_oversized_body_is_413_json(client: TestClient[Any, Any]) -> None:
    big = json.dumps({"n": 1, "pad": "x" * 100_000})
    resp = await client.post("/tools/count", data=big, headers={**AUTH, "Content-Type": "application/json"})
    assert resp.status == 413
    assert "larger than the 65536-byte limit" in (await resp.json())["error"]


async def test_invalid_args_are_400_before_the_tool_runs(client: TestClient[Any, Any]) -> None:
    resp = await client.post("/tools/count", json={"n": "three"}, headers=STREAM)
    assert resp.status == 400
    assert await resp.json() == {
        "error": "Invalid arguments for count: n: expected an integer, got string",
        "message": "`n`: Invalid input: expected number, received string. You sent: `n`.",
        "issues": [
            {
                "code": "invalid_type",
                "path": ["n"],
                "message": "Invalid input: expected number, received string",
                "expected": "number",
            }
        ],
    }


async def test_buffered_call_answers_data(client: TestClient[Any, Any]) -> None:
    resp = await client.post("/tools/count", json={"n": 2}, headers=AUTH)
    assert resp.status == 200
    assert await resp.json() == {"data": {"count": 2}}


async def test_streamed_call_sends_progress_lines_then_one_result(client: TestClient[Any, Any]) -> None:
    resp = await client.post("/tools/count", json={"n": 2}, headers=STREAM)
    assert resp.status == 200
    assert resp.headers["Content-Type"] == "application/x-ndjson"
    assert resp.headers["Cache-Control"] == "no-cache, no-transform"
    assert resp.headers["X-Accel-Buffering"] == "no"
    lines = [json.loads(line) for line in (await resp.text()).splitlines()]
    assert lines == [
        {"event": "progress", "data": {"i": 0}},
        {"event": "progress", "data": {"i": 1}},
        {"event": "result", "data": {"count": 2}},
    ]


async def test_tool_failure_after_progress_is_an_error_line_with_codes(client: TestClient[Any, Any]) -> None:
    resp = await client.post("/tools/count", json={"n": 1, "fail": "flow"}, headers=STREAM)
    assert resp.status == 200
    lines = [json.loads(line) for line in (await resp.text()).splitlines()]
    assert lines[0] == {"event": "progress", "data": {"i": 0}}
    assert lines[1] == {
        "event": "error",
        "error": "flow is broken",
        "error_code": "FLOW_FILE_INVALID",
        "error_kind": "validation",
    }
    assert len(lines) == 2


async def test_buffered_tool_failures_keep_status_and_codes(client: TestClient[Any, Any]) -> None:
    resp = await client.post("/tools/count", json={"n": 0, "fail": "flow"}, headers=AUTH)
    assert resp.status == 500
    assert await resp.json() == {
        "error": "flow is broken",
        "error_code": "FLOW_FILE_INVALID",
        "error_kind": "validation",
    }
    resp = await client.post("/tools/count", json={"n": 0, "fail": "input"}, headers=AUTH)
    assert resp.status == 400
    assert (await resp.json())["error"] == "x must be positive"
    resp = await client.post("/tools/count", json={"n": 0, "fail": "boom"}, headers=AUTH)
    assert resp.status == 500
    body = await resp.json()
    assert body["error"] == "[Tool:count] boom"
    assert "Traceback" not in json.dumps(body)


async def test_disabled_tool_refuses_to_run(client: TestClient[Any, Any]) -> None:
    resp = await client.post("/tools/off", json={}, headers=AUTH)
    assert resp.status == 500
    assert "needs hardware this machine lacks" in (await resp.json())["error"]


async def test_client_disconnect_aborts_the_running_tool(client: TestClient[Any, Any], probe: Probe) -> None:
    resp = await client.post("/tools/forever", json={}, headers=STREAM)
    first = await resp.content.readline()
    assert json.loads(first)["event"] == "progress"
    resp.close()
    await asyncio.wait_for(probe.aborted.wait(), timeout=5)


async def test_buffered_client_disconnect_aborts_too(client: TestClient[Any, Any], probe: Probe) -> None:
    task = asyncio.create_task(client.post("/tools/forever", json={}, headers=AUTH))
    await asyncio.wait_for(probe.started.wait(), timeout=5)
    task.cancel()
    await asyncio.wait_for(probe.aborted.wait(), timeout=5)


async def test_shutdown_aborts_running_calls(aiohttp_server: Any, probe: Probe, tmp_path: Path) -> None:
    server = await aiohttp_server(create_app(ServerConfig(tmp_dir=str(tmp_path)), make_registry(probe)))
    import aiohttp

    async with aiohttp.ClientSession() as session:
        resp = await session.post(
            server.make_url("/tools/forever"), json={}, headers={"Accept": "application/x-ndjson"}
        )
        await resp.content.readline()
        await server.close()
        await asyncio.wait_for(probe.aborted.wait(), timeout=5)


async def test_flow_execute_streams_each_step_of_a_real_flow(
    argent_server: ArgentServer, tmp_path: Path
) -> None:
    """On the pytest plugin's tool-server: the real app and built-in tools on a loopback socket."""
    flows = tmp_path / "proj" / ".argent" / "flows"
    flows.mkdir(parents=True)
    (flows / "hello.yaml").write_text("steps:\n  - echo: one\n  - wait: 1\n  - run: frag\n")
    (flows / "frag.yaml").write_text("steps:\n  - echo: two\n")
    args = {"name": "hello", "project_root": str(tmp_path / "proj")}
    async with tool_server(argent_server) as client:
        resp = await client.post("/tools/flow-execute", json=args, headers={"Accept": "application/x-ndjson"})
        lines = [json.loads(line) for line in (await resp.text()).splitlines()]
    progress = [line["data"] for line in lines if line["event"] == "progress"]
    result = lines[-1]
    assert result["event"] == "result"
    assert progress == result["data"]["steps"]
    assert [(s["kind"], s["status"], s["flow"]) for s in progress] == [
        ("echo", "pass", "hello"),
        ("wait", "pass", "hello"),
        ("run", "pass", "frag"),
        ("echo", "pass", "frag"),
    ]
    assert result["data"]["ok"] is True and result["data"]["device"] == ""
    assert all(isinstance(s["durationMs"], int | float) for s in progress)


def test_app_factory_uses_typed_keys() -> None:
    app = create_app(ServerConfig(), ToolRegistry())
    assert isinstance(app, web.Application)


async def _raw_request(client: TestClient[Any, Any], head: str, body: bytes) -> bytes:
    reader, writer = await asyncio.open_connection(client.host, client.port)
    try:
        writer.write(head.encode() + body)
        await writer.drain()
        return await asyncio.wait_for(reader.read(65536), timeout=5)
    finally:
        writer.close()


@pytest.mark.parametrize(
    ("path", "declared"),
    [("/tools/count", 2 * 1000**3), ("/upload", 2 * 1024**3 + 1)],  # the upload cap is 2 GiB
)
async def test_an_oversized_declared_body_is_refused_before_it_is_read(
    client: TestClient[Any, Any], path: str, declared: int
) -> None:
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {declared}\r\n\r\n"
    )
    answer = await _raw_request(client, head, b"{}")
    status_line, _, rest = answer.partition(b"\r\n")
    assert b" 413 " in status_line + b" "
    body = json.loads(rest.split(b"\r\n\r\n", 1)[1])
    assert "limit" in body["error"]


async def test_a_client_that_hangs_up_mid_upload_is_no_error_in_the_log(
    tmp_path: Path, probe: Probe, caplog: pytest.LogCaptureFixture
) -> None:
    # The real runner (start_server): aiohttp's test server cancels the handler instead.
    caplog.set_level(logging.DEBUG, logger="argent.server")
    server = await start_server(
        ServerConfig(port=0, token=TOKEN, tmp_dir=str(tmp_path)), make_registry(probe)
    )
    try:
        head = (
            f"POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n"
            "Content-Length: 1024\r\n\r\n"
        )
        _, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(head.encode() + b"0123456789abcdef")
        await writer.drain()
        await asyncio.sleep(0.2)  # the handler is reading the body
        writer.close()
        for _ in range(100):
            if any(r.name == "argent.server" for r in caplog.records):
                break
            await asyncio.sleep(0.05)
        assert [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "argent.server"] == [
            ("DEBUG", "client closed the connection during POST /upload")
        ]
        assert [name for name in os.listdir(tmp_path) if name.startswith("argent-upload-")] == []
    finally:
        await server.stop()


@pytest.mark.parametrize("extra", [{}, {"name": "a", "flow_path": "/elsewhere/a.yaml"}])
async def test_the_exactly_one_source_rule_is_a_plain_400_also_when_streaming(
    argent_server: ArgentServer, tmp_path: Path, extra: dict[str, str]
) -> None:
    args = {"project_root": str(tmp_path), **extra}
    async with tool_server(argent_server) as client:
        for headers in ({}, {"Accept": "application/x-ndjson"}):
            resp = await client.post("/tools/flow-execute", json=args, headers=headers)
            assert resp.status == 400
            assert resp.content_type == "application/json"
            rule = "Pass exactly one flow source: name or flow_path."
            sent = ", ".join(f"`{key}`" for key in args)
            assert await resp.json() == {
                "error": rule,
                "message": f"{rule} You sent: {sent}.",  # upstream's words for its own refine
                "issues": [{"code": "custom", "path": [], "message": rule}],
            }
