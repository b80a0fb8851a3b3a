"""The temp dir of a `tool:` step's file arguments in a linked run carries the tool-server's id (issue 10, item 6).

A server killed mid-step leaves that directory behind; with the id in its name, the next server
started on the same temp dir removes it, and never the directory of a server that still runs.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import os
import re
from pathlib import Path
from typing import Any

import aiohttp
import attrs

from argent.link.members import Member, MemberStore
from argent.link.spelling import LISTED
from argent.runner.engine import ToolCallContext
from argent.runner.member_files import MemberFlowFiles
from argent.server.config import ServerConfig
from argent.server.keys import REGISTRY, SERVER_FILES
from argent.server.serve import start_server
from argent.server.tmp_files import new_server_id, reclaim_stopped_servers
from argent.tools.args import arg
from argent.tools.member_invoker import MemberToolInvoker
from argent.tools.registry import FileInputSpec, ToolContext, ToolRegistry, ToolSpec
from tests.unit.test_tmp_files import killed_server

ROOT = "/nowhere/proj"
FLOWS = f"{ROOT}/.argent/flows"
SHOT = f"{ROOT}/shots/home.png"
PNG = b"\x89PNG\r\n\x1a\n not really a picture"


@attrs.frozen
class LookArgs:
    file: str | None = arg(None)


@attrs.define
class Mid:
    """What the tool saw mid-step: its file's directory, its bytes, and what a starting server removed."""

    directory: str = ""
    data: bytes = b""
    reclaimed: dict[str, list[str]] = attrs.field(factory=dict)


def look_tool(tmp_dir: Path, mid: Mid) -> ToolSpec[LookArgs]:
    """A tool with a file argument; mid-step, another server starts on the same temp dir."""

    async def look(args: LookArgs, ctx: ToolContext) -> Any:
        assert args.file is not None
        top = Path(args.file).parent.parent  # <tmp>/argent-file-input-<id>-XXXXXXXX/arg-XXXXXXXX/<name>
        mid.directory = os.path.relpath(top, tmp_dir)
        mid.data = Path(args.file).read_bytes()
        mid.reclaimed = await asyncio.to_thread(reclaim_stopped_servers, str(tmp_dir), new_server_id())
        return {"ok": True}

    return ToolSpec(
        name="look",
        description="reads its file argument",
        args_type=LookArgs,
        execute=look,
        file_inputs=(FileInputSpec(target="file", path="${file}", kind="file"),),
    )


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def linked_call(flow: str, tool_files: dict[str, bytes]) -> dict[str, Any]:
    """flow-execute as a linked client sends it: the flow inline, the step's file as a `tool` member."""
    members = [
        {"role": "tool", "key": path, "path": path, "content": b64(data)} for path, data in tool_files.items()
    ]
    flow_file = {
        "__argentFileInput": True,
        "path": f"{FLOWS}/main.yaml",
        "canonical": f"{FLOWS}/main.yaml",
        "spelling": {"state": "listed"},
        "content": b64(flow.encode()),
        "members": members,
    }
    return {"project_root": ROOT, "name": "main", "flow_file": flow_file, "prerequisiteAcknowledged": True}


async def test_a_servers_file_input_dir_carries_its_id_and_is_kept_while_it_runs(tmp_path: Path) -> None:
    tmp_dir = tmp_path / "server-tmp"
    tmp_dir.mkdir()
    server = await start_server(ServerConfig(port=0, tmp_dir=str(tmp_dir)))
    mid = Mid()
    try:
        server.runner.app[REGISTRY].register(look_tool(tmp_dir, mid))
        server_id = server.runner.app[SERVER_FILES].server_id
        args = linked_call(f"steps:\n  - tool: look\n    args:\n      file: {SHOT}\n", {SHOT: PNG})
        async with (
            aiohttp.ClientSession() as session,
            session.post(f"{server.url}/tools/flow-execute", json=args) as resp,
        ):
            body = await resp.json()
        assert resp.status == 200, body
        assert [(s["kind"], s["status"]) for s in body["data"]["steps"]] == [("tool", "pass")]
        assert re.fullmatch(rf"argent-file-input-{server_id}-[a-z0-9_]{{8}}", mid.directory), mid.directory
        assert mid.data == PNG
        assert mid.reclaimed == {}  # this server runs: a starting one leaves its files alone
        assert sorted(p.name for p in tmp_dir.iterdir() if p.name.startswith("argent-")) == []
    finally:
        await server.stop()


async def test_the_file_input_dir_of_a_server_killed_mid_step_is_removed_by_the_next(tmp_path: Path) -> None:
    tmp_dir = tmp_path / "server-tmp"
    tmp_dir.mkdir()
    dead = killed_server(tmp_dir)  # its lock is free: the process that held it is gone
    mid = Mid()
    registry = ToolRegistry([look_tool(tmp_dir, mid)])
    store = MemberStore()
    store.add(Member(role="tool", key=SHOT, path=SHOT, data=PNG))
    files = MemberFlowFiles.for_root(f"{FLOWS}/main.yaml", f"{FLOWS}/main.yaml", LISTED, b"", store)
    # The killed server's invoker, as its app made it: file-input dirs named by its ServerFiles.
    invoker = MemberToolInvoker(
        registry, files, file_input_dirs=functools.partial(dead.mkdtemp, "file-input")
    )
    call = ToolCallContext(device=None, platform=None, abort=asyncio.Event(), project_root=None, flow="main")
    await invoker.invoke("look", {"file": SHOT}, call)
    assert mid.directory.startswith(f"argent-file-input-{dead.server_id}-")
    assert mid.data == PNG
    assert mid.reclaimed == {dead.server_id: [mid.directory]}
    assert os.listdir(tmp_dir) == []
