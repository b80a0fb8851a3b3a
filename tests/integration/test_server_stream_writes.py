"""How a streamed call's lines reach the socket: joined per short window, never held back, bounded."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from aiohttp.test_utils import TestClient

from argent.limits import STREAM_COALESCE_BYTES
from argent.server.app import create_app
from argent.server.config import ServerConfig
from argent.tools.args import arg
from argent.tools.builtin import build_registry
from argent.tools.registry import ToolContext, ToolRegistry, ToolSpec

STREAM = {"Accept": "application/x-ndjson"}


@attrs.frozen
class LinesArgs:
    n: int = arg(3, doc="Progress lines to send.")
    size: int = arg(10, doc="Characters of each line's payload.")


@attrs.frozen
class NoArgs:
    pass


class Probe:
    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.aborted = asyncio.Event()
        self.started = asyncio.Event()
        self.done = asyncio.Event()
        self.sent = 0


def make_registry(probe: Probe) -> ToolRegistry:
    async def lines(args: LinesArgs, ctx: ToolContext) -> Any:
        """Send ``n`` lines as fast as the stream takes them, then finish."""
        assert ctx.emit_progress is not None
        for i in range(args.n):
            await ctx.emit_progress({"i": i, "pad": "x" * args.size})
            probe.sent += args.size
            probe.started.set()
            if ctx.abort.is_set():
                probe.aborted.set()
                return {"sent": i}
        probe.done.set()
        return {"sent": args.n}

    async def pause(args: LinesArgs, ctx: ToolContext) -> Any:
        """Send ``n`` lines, then wait for the test before finishing."""
        assert ctx.emit_progress is not None
        for i in range(args.n):
            await ctx.emit_progress({"i": i})
        await probe.release.wait()
        return {"released": True}

    async def silent(args: NoArgs, ctx: ToolContext) -> Any:
        """Send nothing until aborted."""
        await ctx.abort.wait()
        probe.aborted.set()
        return {}

    return ToolRegistry(
        [
            ToolSpec(name="lines", description="Lines.", args_type=LinesArgs, execute=lines),
            ToolSpec(name="pause", description="Pauses.", args_type=LinesArgs, execute=pause),
            ToolSpec(name="silent", description="Silent.", args_type=NoArgs, execute=silent),
        ]
    )


@pytest.fixture
def probe() -> Probe:
    return Probe()


@pytest.fixture
async def client(aiohttp_client: Any, probe: Probe, tmp_path: Path) -> TestClient[Any, Any]:
    return await aiohttp_client(create_app(ServerConfig(tmp_dir=str(tmp_path)), make_registry(probe)))  # type: ignore[no-any-return]


async def test_a_fast_flows_lines_share_one_write(aiohttp_client: Any, tmp_path: Path) -> None:
    """20 echo steps and the result travel in a chunk or two, not in 21 writes of one line each."""
    flows = tmp_path / "proj" / ".argent" / "flows"
    flows.mkdir(parents=True)
    (flows / "echo20.yaml").write_text("steps:\n" + "".join(f"  - echo: step {i}\n" for i in range(20)))
    client = await aiohttp_client(create_app(ServerConfig(tmp_dir=str(tmp_path)), build_registry()))
    args = {"name": "echo20", "project_root": str(tmp_path / "proj")}
    resp = await client.post("/tools/flow-execute", json=args, headers=STREAM)
    assert resp.status == 200
    body = b""
    chunks = 0
    async for data, end_of_chunk in resp.content.iter_chunks():
        body += data
        chunks += end_of_chunk
    lines = [json.loads(line) for line in body.splitlines()]
    assert [line["event"] for line in lines] == ["progress"] * 20 + ["result"]
    assert [line["data"]["message"] for line in lines[:20]] == [f"step {i}" for i in range(20)]
    assert chunks <= 3


async def test_lines_are_written_while_the_call_waits(client: TestClient[Any, Any], probe: Probe) -> None:
    """Queued lines go out when the window closes, not when the call ends."""
    resp = await client.post("/tools/pause", json={"n": 3}, headers=STREAM)
    assert resp.status == 200
    seen = [json.loads(await asyncio.wait_for(resp.content.readline(), timeout=10)) for _ in range(3)]
    assert seen == [{"event": "progress", "data": {"i": i}} for i in range(3)]
    assert not probe.release.is_set()
    probe.release.set()
    last = json.loads(await asyncio.wait_for(resp.content.readline(), timeout=10))
    assert last == {"event": "result", "data": {"released": True}}
    assert await resp.content.read() == b""


async def test_the_headers_go_out_while_a_call_sends_no_line(
    client: TestClient[Any, Any], probe: Probe
) -> None:
    resp = await asyncio.wait_for(client.post("/tools/silent", json={}, headers=STREAM), timeout=10)
    assert resp.status == 200
    assert resp.headers["Content-Type"] == "application/x-ndjson"
    resp.close()
    await asyncio.wait_for(probe.aborted.wait(), timeout=10)


async def test_a_client_that_does_not_read_holds_the_call_back(
    client: TestClient[Any, Any], probe: Probe
) -> None:
    """The call stops producing once the socket and the queue are full, and stops when the client goes."""
    size = 1024
    body = json.dumps({"n": 64 * 1024, "size": size}).encode()  # 64 MiB of lines in all
    _reader, writer = await asyncio.open_connection(client.host, client.port)  # never read
    head = (
        f"POST /tools/lines HTTP/1.1\r\nHost: {client.host}:{client.port}\r\nAccept: application/x-ndjson\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    writer.write(head.encode() + body)
    await writer.drain()
    await asyncio.wait_for(probe.started.wait(), timeout=10)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(probe.done.wait(), timeout=1.0)
    # Held back at the socket's buffers plus the stream's queue, far below the 64 MiB asked for.
    assert probe.sent < 16 * 1024 * 1024 + STREAM_COALESCE_BYTES
    writer.close()
    await asyncio.wait_for(probe.aborted.wait(), timeout=10)
