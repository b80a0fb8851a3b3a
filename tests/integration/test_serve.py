"""The foreground serve loop: real port with --port 0, idle timeout, graceful stop."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp

from argent.server.config import ServerConfig
from argent.server.serve import serve_forever, start_server
from argent.tools.registry import ToolRegistry


async def test_port_zero_binds_a_real_port_and_stop_frees_it(tmp_path: Path) -> None:
    running = await start_server(ServerConfig(port=0, tmp_dir=str(tmp_path)), ToolRegistry())
    assert running.port > 0
    async with aiohttp.ClientSession() as session, session.get(f"{running.url}/healthz") as resp:
        assert resp.status == 200
    await running.stop()
    async with aiohttp.ClientSession() as session:
        try:
            await session.get(f"{running.url}/healthz", timeout=aiohttp.ClientTimeout(total=2))
        except aiohttp.ClientConnectionError:
            pass
        else:
            raise AssertionError("the server still answers after stop()")


async def test_idle_timeout_stops_the_server(tmp_path: Path) -> None:
    config = ServerConfig(port=0, tmp_dir=str(tmp_path), idle_timeout_minutes=0.3 / 60)
    running = await start_server(config, ToolRegistry())
    said: list[str] = []
    await asyncio.wait_for(serve_forever(running, on_idle=lambda: said.append("idle")), timeout=10)
    assert said == ["idle"]
    assert running.stopped.is_set()


async def test_activity_postpones_the_idle_timeout(tmp_path: Path) -> None:
    config = ServerConfig(port=0, tmp_dir=str(tmp_path), idle_timeout_minutes=0.6 / 60)
    running = await start_server(config, ToolRegistry())
    serving = asyncio.create_task(serve_forever(running))
    async with aiohttp.ClientSession() as session:
        for _ in range(6):  # 1.2 s of steady traffic, twice the timeout
            async with session.get(f"{running.url}/tools") as resp:
                assert resp.status == 200
            await asyncio.sleep(0.2)
        assert not serving.done()
    await asyncio.wait_for(serving, timeout=10)
