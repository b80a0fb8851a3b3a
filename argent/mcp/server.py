"""`argent mcp`: an MCP server over stdio that is a client of a tool-server, like the CLI.

Tools are listed and called through the same routing as the CLI (``ARGENT_TOOLS_URL``,
``~/.argent/link.json``, else an embedded tool-server for the life of the process), so over a
link the adapter sends the same file inputs and members. A call has no time limit — a flow
may run for minutes — and is never retried.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from argent import __version__
from argent.client.base import ToolCallError, ToolClient
from argent.client.client_files import RefusedClientFile
from argent.client.routing import resolve_route
from argent.connect import open_client
from argent.limits import MAX_ARTIFACT_IMAGE_BYTES
from argent.link.codec import read_or_none
from argent.link.models import ArtifactImage, FlowRunResult, ImageResult, PrerequisiteNotice, ToolEntry
from argent.link.png import failure_image_paths, is_png, read_png
from argent.reports.html import allowed_image_source
from argent.reports.render import is_report, read_report, step_lines, summary_line, unwritten_baseline_lines

FLOW_EXECUTE = "flow-execute"

#: The guide for agents (docs/agents.md is this file): how to record, check and repair a flow.
GUIDE = "agents.md"


def instructions() -> str:
    """The server's instructions to its client: the guide for agents, from the one file that holds it."""
    return resources.files("argent.mcp").joinpath(GUIDE).read_text(encoding="utf-8")


class _State:
    def __init__(self, client: ToolClient, *, co_located: bool) -> None:
        self.client = client
        #: The tool-server is this process's own (embedded): the paths a result names are on this disk.
        self.co_located = co_located
        self.tools: dict[str, ToolEntry] = {}


@asynccontextmanager
async def _lifespan(_: Server[_State]) -> AsyncIterator[_State]:
    route = resolve_route()
    async with open_client(route) as client:
        yield _State(client, co_located=not route.linked)


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


def flow_answer(result: Any, images: list[types.ContentBlock]) -> types.CallToolResult:
    """flow-execute's answer: the report as text (as the CLI prints it), then the image of each
    failing step; the result as structured content (without the inline images); an error unless the
    flow ran and passed (a run that failed, and a flow that waits for its prerequisite)."""
    report = read_report(result)
    structured = (
        {k: v for k, v in result.items() if k != "artifactImages"} if isinstance(result, dict) else None
    )
    if report is None:
        text = json.dumps(result, indent=2, ensure_ascii=False)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content=structured, is_error=True
        )
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=render_report(report)), *images]
    return types.CallToolResult(content=content, structured_content=structured, is_error=not report.ok)


def _is_flow_answer(result: Any) -> bool:
    """A flow-execute result: a run report, or the notice of a prerequisite to acknowledge."""
    return is_report(result) or read_or_none(result, PrerequisiteNotice) is not None


def _image_blocks(report: FlowRunResult, found: dict[str, str]) -> list[types.ContentBlock]:
    """A caption and the image of each failing step whose image was found (base64 PNG by path)."""
    blocks: list[types.ContentBlock] = []
    for step in report.steps:
        for path in failure_image_paths([step]):
            data = found.get(path)
            if data is None:
                continue
            role = next(role for role, named in (step.artifacts or {}).items() if named == path)
            what = f"{step.kind} {step.target}" if step.target else step.kind
            caption = f"Step {step.index + 1} ({what}) {step.status}ed — its {role} ({path}):"
            blocks.append(types.TextContent(type="text", text=caption))
            blocks.append(types.ImageContent(type="image", data=data, mime_type="image/png"))
    return blocks


def _inline_images(result: Any) -> dict[str, str]:
    """The images a result over a link carries (``artifactImages``), each checked to be a PNG of at
    most ``MAX_ARTIFACT_IMAGE_BYTES``: the client trusts no tool-server."""
    report = read_or_none(result, FlowRunResult)
    found: dict[str, str] = {}
    for image in (report.artifact_images if report is not None else None) or []:
        image = image if isinstance(image, ArtifactImage) else read_or_none(image, ArtifactImage)
        if image is None or len(image.data) > (MAX_ARTIFACT_IMAGE_BYTES * 4) // 3 + 4:
            continue
        try:
            data = base64.b64decode(image.data, validate=True)
        except (binascii.Error, ValueError):
            continue
        if is_png(data):
            found[image.path] = image.data
    return found


def _disk_images(report: FlowRunResult) -> dict[str, str]:
    """The failing steps' images read from this disk (co-located: the embedded tool-server wrote
    them), only from where a report's images come from. Blocking: run in a thread."""
    found: dict[str, str] = {}
    for path in failure_image_paths(report.steps):
        data = read_png(path, MAX_ARTIFACT_IMAGE_BYTES) if allowed_image_source(path) else None
        if data is not None:
            found[path] = base64.b64encode(data).decode("ascii")
    return found


async def failure_images(result: Any, *, co_located: bool) -> list[types.ContentBlock]:
    """The image content of a flow report's failing steps: over a link from the result itself,
    co-located from the paths it names."""
    report = read_report(result)
    if report is None or report.ok:
        return []
    found = _inline_images(result)
    if co_located:
        found = {**await asyncio.to_thread(_disk_images, report), **found}
    return _image_blocks(report, found)


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
    if params.name == FLOW_EXECUTE and _is_flow_answer(result):
        answer = flow_answer(result, await failure_images(result, co_located=state.co_located))
    else:
        answer = types.CallToolResult(content=_content(state.tools.get(params.name), result), is_error=False)
    if refusals:
        # A file the tool-server asked for and the client refused: the agent sees why.
        answer.content.append(types.TextContent(type="text", text="\n".join(r.line() for r in refusals)))
    return answer


def build_server() -> Server[_State]:
    return Server(
        "argent",
        version=__version__,
        instructions=instructions(),
        lifespan=_lifespan,
        on_list_tools=_list_tools,
        on_call_tool=_call_tool,
    )


async def serve_stdio() -> None:
    server = build_server()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
