"""Issue 27 through the official MCP Python SDK against a real `argent mcp` on real headless Chromium:
a flow that did not pass is an error with its failing step's screen as an image, co-located and over
a link."""

from __future__ import annotations

import base64
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from argent.link.png import is_png
from tests.e2e.conftest import Cli, chromium_marks, start_server_process

pytestmark = chromium_marks()

#: A page with a button "Go" and no "Pay": a tap on "Pay" fails on it.
GO_PAGE = "data:text/html,<title>Go</title><h1>Checkout</h1><button>Go</button>"


@asynccontextmanager
async def mcp_session(cli: Cli, **env: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "argent", "mcp"], env=cli.env(**env), cwd=str(cli.cwd)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def texts(result: types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


def images(result: types.CallToolResult) -> list[bytes]:
    return [base64.b64decode(b.data) for b in result.content if isinstance(b, types.ImageContent)]


def write_flow(project: Path, name: str, text: str) -> None:
    (project / ".argent" / "flows" / f"{name}.yaml").write_text(text)


async def check_failing_flow_answer(session: ClientSession, project: Path) -> None:
    write_flow(
        project, "pay", f"steps:\n  - launch: '{GO_PAGE}'\n  - tap: Go\n  - tap: Pay\n  - echo: never\n"
    )
    failed = await session.call_tool("flow-execute", {"name": "pay", "project_root": str(project)})
    assert failed.is_error is True
    report, caption = texts(failed)
    lines = report.splitlines()
    assert lines[0].startswith('Running flow "pay" on chromium-cdp-') and lines[0].endswith(" (4 steps)")
    assert lines[-1].startswith("FAIL (started on chromium-cdp-")
    assert lines[-1].endswith(") — 2 passed, 1 failed, 0 skipped, 0 errored")
    assert any(line.startswith('  ✗  3 tap "Pay" — no visible element matched') for line in lines)
    assert caption.startswith('Step 3 (tap "Pay") failed — its screenshot (')
    (png,) = images(failed)
    assert is_png(png)
    structured: Any = failed.structured_content
    assert structured is not None
    assert (structured["ok"], structured["passed"], structured["failed"]) == (False, 2, 1)
    assert [s["status"] for s in structured["steps"]] == ["pass", "pass", "fail", "skip"]
    assert "artifactImages" not in structured  # the bytes are the image content, not repeated

    write_flow(project, "go", f"steps:\n  - launch: '{GO_PAGE}'\n  - tap: Go\n")
    passed = await session.call_tool("flow-execute", {"name": "go", "project_root": str(project)})
    assert passed.is_error is False and images(passed) == []
    assert texts(passed)[0].splitlines()[-1].endswith(") — 2 passed, 0 failed, 0 skipped, 0 errored")
    assert passed.structured_content is not None and passed.structured_content["ok"] is True


async def test_a_failing_flow_is_an_error_with_its_screenshot_as_an_image(cli: Cli, project: Path) -> None:
    async with mcp_session(cli) as session:
        await check_failing_flow_answer(session, project)


async def test_over_a_link_the_screenshot_comes_in_the_result(cli: Cli, project: Path) -> None:
    server = start_server_process(cli)
    try:
        async with mcp_session(cli, ARGENT_TOOLS_URL=server.url, ARGENT_AUTH_TOKEN=server.token) as session:
            await check_failing_flow_answer(session, project)
    finally:
        server.stop()


async def test_a_flow_waiting_for_its_prerequisite_is_an_error_that_says_so(cli: Cli, project: Path) -> None:
    write_flow(project, "later", "executionPrerequisite: signed in\nsteps:\n  - echo: hi\n")
    async with mcp_session(cli) as session:
        waiting = await session.call_tool("flow-execute", {"name": "later", "project_root": str(project)})
        assert waiting.is_error is True
        assert "prerequisiteAcknowledged" in texts(waiting)[0]
        assert waiting.structured_content is not None
        assert waiting.structured_content["executionPrerequisite"] == "signed in"
