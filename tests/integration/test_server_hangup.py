"""A client that hangs up aborts its call; a server that shuts down still ends its calls gracefully.

The server is the real one (``start_server``: the production runner with aiohttp's handler
cancellation), the clients real sockets. A hang-up cancels the call's handler, which sets the run's
abort event: the run unwinds on it (as on shutdown) instead of working for nobody.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from argent.server.config import ServerConfig
from argent.server.serve import RunningServer, start_server
from argent.tools.registry import ToolContext, ToolRegistry, ToolSpec

TOKEN = "hangup-token"


@attrs.frozen
class NoArgs:
    pass


class Probe:
    """What the run saw: when it started, when its abort event was set, how many ticks it made."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.aborted = asyncio.Event()
        self.ticks = 0


def _registry(probe: Probe) -> ToolRegistry:
    async def forever(args: NoArgs, ctx: ToolContext) -> Any:
        probe.started.set()
        while not ctx.abort.is_set():
            if ctx.emit_progress is not None:
                await ctx.emit_progress({"tick": probe.ticks})
            probe.ticks += 1
            await asyncio.sleep(0.01)
        probe.aborted.set()
        return {"ticks": probe.ticks, "aborted": True}

    return ToolRegistry([ToolSpec("forever", "Runs until aborted.", NoArgs, forever)])


@pytest.fixture
def probe() -> Probe:
    return Probe()


@pytest.fixture
async def server(probe: Probe, tmp_path: Path) -> AsyncIterator[RunningServer]:
    config = ServerConfig(host="127.0.0.1", port=0, token=TOKEN, tmp_dir=str(tmp_path))
    running = await start_server(config, _registry(probe))
    try:
        yield running
    finally:
        await running.stop()


def _request(stream: bool) -> bytes:
    accept = "Accept: application/x-ndjson\r\n" if stream else ""
    return (
        "POST /tools/forever HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n{accept}"
        "Content-Length: 2\r\n\r\n{}"
    ).encode()


async def _connect(server: RunningServer) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", server.port)


@pytest.mark.parametrize("stream", [True, False])
async def test_a_client_that_hangs_up_aborts_its_run_at_once(
    server: RunningServer, probe: Probe, stream: bool
) -> None:
    _, writer = await _connect(server)
    writer.write(_request(stream))
    await asyncio.wait_for(probe.started.wait(), 5)
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # RST
    writer.close()
    await asyncio.wait_for(probe.aborted.wait(), 1.0)
    ticks = probe.ticks
    await asyncio.sleep(0.1)  # the run is over: it ticks no more
    assert probe.ticks == ticks


@pytest.mark.parametrize("stream", [True, False])
async def test_a_half_closed_client_aborts_its_run_like_one_that_hung_up(
    server: RunningServer, probe: Probe, stream: bool
) -> None:
    """A client that shuts down its sending side has gone (asyncio closes such a transport)."""
    _, writer = await _connect(server)
    writer.write(_request(stream))
    await asyncio.wait_for(probe.started.wait(), 5)
    writer.write_eof()
    await asyncio.wait_for(probe.aborted.wait(), 1.0)
    writer.close()


async def test_shutdown_ends_a_running_call_with_its_result_not_a_cut(
    server: RunningServer, probe: Probe
) -> None:
    """On shutdown the run's abort is set and its answer still reaches the client that waits for it."""
    reader, writer = await _connect(server)
    writer.write(_request(stream=True))
    await asyncio.wait_for(probe.started.wait(), 5)
    stopping = asyncio.create_task(server.stop())
    raw = await asyncio.wait_for(reader.read(), 10)
    await stopping
    writer.close()
    lines = [json.loads(line) for line in raw.split(b"\r\n\r\n", 1)[1].splitlines() if line.startswith(b"{")]
    assert lines[-1] == {"event": "result", "data": {"ticks": probe.ticks, "aborted": True}}
    assert all(line["event"] == "progress" for line in lines[:-1])
