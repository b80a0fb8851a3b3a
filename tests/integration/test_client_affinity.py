"""INTERFACE.md §10: ``X-Argent-Affinity`` on a call and on every upload of that call.

A real client against the real tool-server app; a middleware in front of the routes records each
request's affinity header (and, for uploads, the id the server answered), so the tests read what
arrived on the socket. Each call's members exceed the 256 KiB inline budget, so it uploads.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import attrs
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from argent.client.affinity import AFFINITY_HEADER
from argent.client.session import ToolServerClient
from argent.limits import INLINE_MEMBERS_BUDGET
from argent.server.app import create_app
from argent.server.config import ServerConfig
from argent.tools.args import arg
from argent.tools.flow_tools import flow_tools
from argent.tools.registry import FileInputSpec, ToolContext, ToolRegistry, ToolSpec

ServerFactory = Callable[..., Awaitable[TestServer]]
TOKEN = "affinity-token"
VALUE = re.compile(r"[0-9a-f]{32}")


@attrs.frozen
class Seen:
    """One request as it arrived: method, path, its affinity header, and an upload's answered id."""

    method: str
    path: str
    affinity: str | None
    upload_id: str | None = None
    upload_ids_used: tuple[str, ...] = ()


@attrs.frozen
class InstallArgs:
    app: str = arg()


async def _install(args: InstallArgs, ctx: ToolContext) -> Any:
    return {"uploaded": ctx.file_inputs["app"].via_upload}


def _registry() -> ToolRegistry:
    registry = ToolRegistry()
    for spec in flow_tools(registry):
        registry.register(spec)
    registry.register(
        ToolSpec(
            name="install",
            description="takes an app as a tar upload",
            args_type=InstallArgs,
            execute=_install,
            file_inputs=(FileInputSpec(target="app", path="${app}", kind="tar-upload"),),
        )
    )
    return registry


def _upload_ids(value: Any) -> list[str]:
    """Every ``uploadId`` anywhere in a call's JSON body."""
    if isinstance(value, dict):
        found = [value["uploadId"]] if isinstance(value.get("uploadId"), str) else []
        return found + [i for v in value.values() for i in _upload_ids(v)]
    if isinstance(value, list):
        return [i for v in value for i in _upload_ids(v)]
    return []


@attrs.define
class Server:
    url: str
    seen: list[Seen]

    def client(self) -> ToolServerClient:
        return ToolServerClient(self.url, TOKEN, linked=True)

    def of(self, method: str, prefix: str) -> list[Seen]:
        return [s for s in self.seen if s.method == method and s.path.startswith(prefix)]


@pytest.fixture
async def server(aiohttp_server: ServerFactory, tmp_path: Path) -> Server:
    seen: list[Seen] = []
    server_tmp = tmp_path / "server-tmp"
    server_tmp.mkdir()
    app = create_app(ServerConfig(token=TOKEN, tmp_dir=str(server_tmp)), _registry())

    @web.middleware
    async def record(request: web.Request, handler: Any) -> web.StreamResponse:
        affinity = request.headers.get(AFFINITY_HEADER)
        used: tuple[str, ...] = ()
        if request.method == "POST" and request.path.startswith("/tools/"):
            used = tuple(_upload_ids(await request.json()))
        response = await handler(request)
        upload_id = None
        if request.path == "/upload" and isinstance(response, web.Response) and response.status == 200:
            assert isinstance(response.body, bytes)
            upload_id = json.loads(response.body)["uploadId"]
        seen.append(Seen(request.method, request.path, affinity, upload_id, used))
        return response

    app.middlewares.insert(0, record)
    running = await aiohttp_server(app)
    return Server(f"http://127.0.0.1:{running.port}", seen)


def big_flow(root: Path, name: str) -> Path:
    """A flow whose two fragments are over the inline budget together: at least one is uploaded."""
    flows = root / ".argent" / "flows"
    flows.mkdir(parents=True, exist_ok=True)
    size = INLINE_MEMBERS_BUDGET // 2 + 4096
    for part in ("a", "b"):
        (flows / f"{name}-{part}.yaml").write_text(
            f"steps:\n  - echo: {name} {part}\n#" + os.urandom(size // 2).hex() + "\n"
        )
    main = flows / f"{name}.yaml"
    main.write_text(f"steps:\n  - run: {name}-a.yaml\n  - run: {name}-b.yaml\n")
    return main


async def run_flow(client: ToolServerClient, root: Path, flow: Path) -> Any:
    return await client.call("flow-execute", {"project_root": str(root), "name": flow.stem})


async def test_a_flow_call_and_its_uploads_carry_one_affinity_value(server: Server, tmp_path: Path) -> None:
    root = tmp_path / "proj"
    flow = big_flow(root, "main")
    async with server.client() as client:
        result = await run_flow(client, root, flow)
    assert result["ok"] is True, result
    calls = server.of("POST", "/tools/")
    uploads = server.of("POST", "/upload")
    assert len(calls) == 1 and uploads, server.seen
    value = calls[0].affinity
    assert value is not None and VALUE.fullmatch(value), value
    assert [u.affinity for u in uploads] == [value] * len(uploads)
    assert sorted(calls[0].upload_ids_used) == sorted(u.upload_id for u in uploads if u.upload_id)


async def test_each_call_has_its_own_value(server: Server, tmp_path: Path) -> None:
    root = tmp_path / "proj"
    flow = big_flow(root, "main")
    async with server.client() as client:
        for _ in range(3):
            assert (await run_flow(client, root, flow))["ok"] is True
    values = [c.affinity for c in server.of("POST", "/tools/")]
    assert len(values) == 3 and len(set(values)) == 3, values


async def test_concurrent_calls_on_one_client_keep_their_uploads_apart(
    server: Server, tmp_path: Path
) -> None:
    """Workers share one client: each call's uploads carry that call's value, never another's."""
    root = tmp_path / "proj"
    flows = [big_flow(root, f"flow{i}") for i in range(6)]
    async with server.client() as client:
        results = await asyncio.gather(*(run_flow(client, root, flow) for flow in flows))
    assert all(r["ok"] for r in results), results
    calls = server.of("POST", "/tools/")
    uploaded_with = {u.upload_id: u.affinity for u in server.of("POST", "/upload")}
    assert len(calls) == 6 and len({c.affinity for c in calls}) == 6
    for call in calls:
        assert call.upload_ids_used, call
        assert {uploaded_with[i] for i in call.upload_ids_used} == {call.affinity}


async def test_a_tar_upload_input_carries_the_value_of_its_call(server: Server, tmp_path: Path) -> None:
    app = tmp_path / "My.app"
    (app / "Contents").mkdir(parents=True)
    (app / "Contents" / "Info.plist").write_text("plist")
    async with server.client() as client:
        assert await client.call("install", {"app": str(app)}) == {"uploaded": True}
    (call,) = server.of("POST", "/tools/install")
    (upload,) = server.of("POST", "/upload")
    assert call.affinity is not None and VALUE.fullmatch(call.affinity)
    assert upload.affinity == call.affinity


async def test_a_call_without_uploads_still_carries_a_value(server: Server, tmp_path: Path) -> None:
    """A balancer hashes every call the same way, whether or not it uploads."""
    root = tmp_path / "proj"
    flow = root / ".argent" / "flows" / "small.yaml"
    flow.parent.mkdir(parents=True)
    flow.write_text("steps:\n  - echo: small\n")
    async with server.client() as client:
        assert (await run_flow(client, root, flow))["ok"] is True
    assert server.of("POST", "/upload") == []
    (call,) = server.of("POST", "/tools/flow-execute")
    assert call.affinity is not None and VALUE.fullmatch(call.affinity)


@pytest.mark.parametrize("value", [None, "", "not-hex at all", "x" * 4000])
async def test_the_tool_server_needs_no_affinity_and_reads_none(
    server: Server, tmp_path: Path, value: str | None
) -> None:
    """Only the balancer reads the header: a call without it (an older client) or with any value runs."""
    root = tmp_path / "proj"
    flow = root / ".argent" / "flows" / "small.yaml"
    flow.parent.mkdir(parents=True)
    flow.write_text("steps:\n  - echo: small\n")
    headers = {"Authorization": f"Bearer {TOKEN}"}
    if value is not None:
        headers[AFFINITY_HEADER] = value
    async with (
        aiohttp.ClientSession() as http,
        http.post(
            f"{server.url}/tools/flow-execute",
            json={"project_root": str(root), "name": "small"},
            headers=headers,
        ) as resp,
    ):
        assert resp.status == 200, await resp.text()
        assert (await resp.json())["data"]["ok"] is True
    (call,) = server.of("POST", "/tools/flow-execute")
    assert call.affinity == value
