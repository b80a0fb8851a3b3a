"""`argent mcp`: an MCP server over stdio that is a client of a tool-server, like the CLI.

Tools are listed and called through the same routing as the CLI (``ARGENT_TOOLS_URL``,
``~/.argent/link.json``, else an embedded tool-server for the life of the process), so over a
link the adapter sends the same file inputs and members. A call has no time limit — a flow
may run for minutes — and is never retried.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from argent import __version__
from argent.client.base import ToolCallError, ToolClient
from argent.client.client_files import RefusedClientFile
from argent.connect import open_client
from argent.link.codec import read_or_none
from argent.link.models import ImageResult, ToolEntry
from argent.reports.render import is_report, read_report, step_lines, summary_line, unwritten_baseline_lines

INSTRUCTIONS = (
    "argent replays recorded UI flows and drives devices (headless Chromium first). Use flow-execute to run a "
    "saved flow (name + absolute project_root); use describe or screenshot before tapping — never guess "
    "coordinates. Record a flow with flow-start-recording, flow-add-step and flow-finish-recording."
)


class _State:
    def __init__(self, client: ToolClient) -> None:
        self.client = client
        self.tools: dict[str, ToolEntry] = {}


@asynccontextmanager
async def _lifespan(_: Server[_State]) -> AsyncIterator[_State]:
    async with open_client() as client:
        yield _State(client)


def render_report(result: Any) -> str:
    """A flow report as text: one line per step, then the summary (and refused baseline writes)."""
    report = read_report(result)
    if report is None:
        raise ValueError("not a flow report")
    lines: list[str] = []
    if report.execution_prerequisite:
        lines.append(f"Prerequisite: {report.execution_prerequisite}")
    device = f" on {report.device}" if report.device else ""
    lines.append(f'Running flow "{report.flow}"{device} ({len(report.steps)} steps)')
    for step in report.steps:
        lines.extend(step_lines(step, report.flow))
    lines.extend(unwritten_baseline_lines(report))
    lines.append(summary_line(report))
    return "\n".join(lines)


def _content(entry: ToolEntry | None, result: Any) -> list[types.ContentBlock]:
    if is_report(result):
        return [types.TextContent(type="text", text=render_report(result))]
    image = read_or_none(result, ImageResult) if entry is not None and entry.output_hint == "image" else None
    if image is not None:
        meta = {k: v for k, v in result.items() if k != "image"}
        return [
            types.ImageContent(type="image", data=image.image, mime_type=image.mime_type),
            types.TextContent(type="text", text=json.dumps(meta, indent=2)),
        ]
    if isinstance(result, str):
        return [types.TextContent(type="text", text=result)]
    return [types.TextContent(type="text", text=json.dumps(result, indent=2, ensure_ascii=False))]


async def _list_tools(
    ctx: ServerRequestContext[_State, Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    state = ctx.lifespan_context
    entries = await state.client.list_tools()
    state.tools = {e.name: e for e in entries}
    tools = []
    for entry in entries:
        description = entry.description or ""
        if entry.disabled is not None:
            description = f"[disabled: {entry.disabled.reason}] {description}"
        tools.append(
            types.Tool(
                name=entry.name,
                description=description,
                input_schema=entry.input_schema or {},
                _meta=tool_meta(entry),
            )
        )
    return types.ListToolsResult(tools=tools)


def tool_meta(entry: ToolEntry) -> dict[str, Any] | None:
    """A tool's loading and search hints as upstream's MCP adapter passes them (``_meta``)."""
    meta: dict[str, Any] = {}
    if entry.always_load:
        meta["anthropic/alwaysLoad"] = True
    if entry.search_hint:
        meta["anthropic/searchHint"] = entry.search_hint
    return meta or None


async def _call_tool(
    ctx: ServerRequestContext[_State, Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    state = ctx.lifespan_context
    if not state.tools:
        state.tools = {e.name: e for e in await state.client.list_tools()}
    refusals: list[RefusedClientFile] = []
    try:
        result = await state.client.call(
            params.name, dict(params.arguments or {}), on_refused=refusals.append
        )
    except ToolCallError as exc:
        return types.CallToolResult(content=[types.TextContent(type="text", text=exc.message)], is_error=True)
    content = _content(state.tools.get(params.name), result)
    if refusals:
        # A file the tool-server asked for and the client refused: the agent sees why.
        content.append(types.TextContent(type="text", text="\n".join(r.line() for r in refusals)))
    return types.CallToolResult(content=content, is_error=False)


def build_server() -> Server[_State]:
    return Server(
        "argent",
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=_lifespan,
        on_list_tools=_list_tools,
        on_call_tool=_call_tool,
    )


async def serve_stdio() -> None:
    server = build_server()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
