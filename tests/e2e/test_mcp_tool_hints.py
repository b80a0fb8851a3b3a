"""`argent mcp` passes each tool's alwaysLoad / searchHint to the agent as upstream's adapter does:
in the tool's `_meta`, as `anthropic/alwaysLoad` and `anthropic/searchHint`."""

from __future__ import annotations

import sys

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.e2e.conftest import Cli

pytestmark = pytest.mark.e2e


async def test_tools_carry_upstreams_hints_in_meta(cli: Cli) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "argent", "mcp"], env=cli.env(), cwd=str(cli.cwd)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert tools["list-devices"].meta == {
        "anthropic/alwaysLoad": True,
        "anthropic/searchHint": "list devices simulators emulators avd serial udid ios android chromium vega app "
        "fire tv session start",
    }
    assert tools["keyboard"].meta == {
        "anthropic/searchHint": "type text keyboard input named key enter escape arrow tv vega fire tv search "
        "field hid leanback"
    }
    assert tools["open-url"].meta is None and tools["flow-execute"].meta is None
