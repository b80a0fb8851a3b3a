"""`argent mcp` spoken to by a real MCP client over stdio."""

from __future__ import annotations

import sys
from pathlib import Path

import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.e2e.conftest import Cli

pytestmark = pytest.mark.e2e


def params(cli: Cli) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "argent", "mcp"], env=cli.env(), cwd=str(cli.cwd)
    )


async def test_lists_tools_and_runs_a_flow(cli: Cli, project: Path) -> None:
    flows = project / ".argent" / "flows"
    (flows / "hello.yaml").write_text(
        "executionPrerequisite: none really\nsteps:\n  - echo: hi\n  - wait: 1\n"
    )
    async with stdio_client(params(cli)) as (read, write), ClientSession(read, write) as session:
        initialized = await session.initialize()
        # The guide for agents (docs/agents.md) is the server's instructions.
        assert initialized.instructions == (Path(__file__).parents[2] / "docs" / "agents.md").read_text()
        listed = await session.list_tools()
        names = {tool.name for tool in listed.tools}
        assert {"flow-execute", "flow-read-prerequisite"} <= names
        result = await session.call_tool(
            "flow-execute", {"name": "hello", "project_root": str(project), "prerequisiteAcknowledged": True}
        )
        assert result.is_error is False
        text = result.content[0]
        assert isinstance(text, types.TextContent)
        assert text.text.splitlines() == [
            "Prerequisite: none really",
            'Running flow "hello" (2 steps)',
            "  › hi",
            "  ✓  2 wait",
            "PASS — 1 passed, 0 failed, 0 skipped, 0 errored",
        ]
        failed = await session.call_tool("flow-execute", {"name": "nope", "project_root": str(project)})
        assert failed.is_error is True
        message = failed.content[0]
        assert isinstance(message, types.TextContent)
        assert "nope.yaml" in message.text and "was not found" in message.text
