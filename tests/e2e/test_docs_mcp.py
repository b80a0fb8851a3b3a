"""docs/mcp.md's configurations, pasted as a client would: each JSON block starts `argent mcp` with its
own command, args and env, and a real MCP client lists the tools through it (the shared-server block
against a real `argent server start`, its placeholders filled in)."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.e2e.conftest import Cli, start_server_process

pytestmark = pytest.mark.e2e

DOC = Path(__file__).parents[2] / "docs" / "mcp.md"


def entries() -> list[dict[str, Any]]:
    """Every server entry of every JSON block of the page."""
    found = []
    for block in re.findall(r"```json\n(.*?)```", DOC.read_text(), re.S):
        data = json.loads(block)
        for servers in data.values():
            found.extend(servers.values())
    return found


def test_the_page_has_the_configurations_the_interface_names() -> None:
    found = entries()
    assert len(found) >= 3
    assert all(e["command"] == "argent" and e["args"] == ["mcp"] for e in found)
    assert any(set(e.get("env", {})) == {"ARGENT_TOOLS_URL", "ARGENT_AUTH_TOKEN"} for e in found)
    assert "claude mcp add argent -- argent mcp" in DOC.read_text()


async def test_each_pasted_configuration_starts_a_server_an_mcp_client_uses(cli: Cli) -> None:
    shared = start_server_process(cli)
    try:
        for entry in entries():
            env = cli.env(PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
            for key, value in entry.get("env", {}).items():
                env[key] = (
                    shared.url if key == "ARGENT_TOOLS_URL" else shared.token if "TOKEN" in key else value
                )
            params = StdioServerParameters(
                command=entry["command"], args=entry["args"], env=env, cwd=str(cli.cwd)
            )
            async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                names = {tool.name for tool in (await session.list_tools()).tools}
                assert {"flow-execute", "describe", "boot-device"} <= names
                if entry.get("env"):
                    assert (await session.call_tool("list-devices", {})).is_error is False
    finally:
        shared.stop()
    assert shared.proc.stderr is not None
    # The shared-server block reached the shared server (its call log names the call), not an embedded one.
    assert " - list-devices 200 " in shared.proc.stderr.read()
