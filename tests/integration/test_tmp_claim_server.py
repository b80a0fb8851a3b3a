"""A started tool-server claims its temp dir and removes what killed servers left there (issue 10, item 6)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from argent.server.config import ServerConfig
from argent.server.keys import SERVER_FILES
from argent.server.serve import start_server
from argent.tools.registry import ToolRegistry
from tests.unit.test_tmp_files import killed_server, make_files


async def test_a_started_server_holds_its_lock_and_removes_it_when_it_stops(tmp_path: Path) -> None:
    first = await start_server(ServerConfig(port=0, tmp_dir=str(tmp_path)), ToolRegistry())
    second = await start_server(ServerConfig(port=0, tmp_dir=str(tmp_path)), ToolRegistry())
    locks = {Path(server.runner.app[SERVER_FILES].lock_path).name for server in (first, second)}
    assert len(locks) == 2 and set(os.listdir(tmp_path)) == locks
    await first.stop()
    await second.stop()
    assert os.listdir(tmp_path) == []


async def test_a_started_server_removes_the_files_of_a_killed_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    dead = killed_server(tmp_path)
    names = make_files(dead)
    server = await start_server(ServerConfig(port=0, tmp_dir=str(tmp_path)), ToolRegistry())
    await server.stop()  # the clean-up waits for the removal to finish
    assert os.listdir(tmp_path) == []
    assert (
        f"[argent] Removed {len(names)} files left by stopped tool-servers in {tmp_path}" in caplog.messages
    )


async def test_a_server_whose_temp_dir_cannot_be_locked_still_starts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    missing = tmp_path / "missing"
    with caplog.at_level(logging.WARNING):
        server = await start_server(ServerConfig(port=0, tmp_dir=str(missing)), ToolRegistry())
        await server.stop()
    assert any(
        message.startswith(f"[argent] Could not lock {missing}/.argent-server-")
        for message in caplog.messages
    )
