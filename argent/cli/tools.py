"""`argent tools list|show|search` and `argent run <tool>`: discovery and direct calls."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Callable
from typing import Any, cast

import click

from argent.cli.local import chosen_route, local_option, local_param
from argent.cli.problems import CommandFailed, UsageProblem, call_failed, server_message
from argent.cli.tool_command import ToolCommand, build_tool_command
from argent.cli.tool_command import flag as _flag
from argent.client.base import ToolCallError
from argent.client.client_files import RefusedClientFile
from argent.client.routing import resolve_route
from argent.connect import open_client
from argent.link.codec import to_wire
from argent.link.models import ToolEntry
from argent.reports.render import echo, json_text, one_line, unwritten_baseline_lines

EMBEDDED_RECORDING_NOTE = (
    "note: no tool-server is linked, so {tool} runs on an embedded tool-server that stops when this "
    "command ends, and a recording does not outlive it. To record across commands, start one with "
    "`argent server start` and `argent link` to it (or set ARGENT_TOOLS_URL)."
)


def _fetch_tools() -> list[ToolEntry]:
    """The GET /tools entries; a tool-server that cannot be reached or refuses exits 1 with its reason."""

    async def go() -> list[ToolEntry]:
        async with open_client(chosen_route()) as client:
            return await client.list_tools()

    try:
        return asyncio.run(go())
    except ToolCallError as exc:
        raise CommandFailed(server_message(exc)) from None


def _placeholder(name: str, schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return str(schema["enum"][0])
    kind = schema.get("type")
    if kind == "boolean":
        return ""
    if kind in ("integer", "number"):
        return "1"
    if "root" in name or "path" in name:
        return "/abs/path"
    return f"<{name}>"


def _schema(tool: ToolEntry) -> dict[str, Any]:
    """The tool's JSON Schema (kept as JSON by the model); ``{}`` when it has none."""
    return tool.input_schema or {}


def example(tool: ToolEntry) -> str:
    """A runnable example: the tool with its required arguments, and the arguments a derived file
    input is built from (flow-execute's ``flow_file`` needs ``name``)."""
    schema = _schema(tool)
    props = schema.get("properties", {})
    names: list[str] = list(schema.get("required", []))
    for spec in tool.file_inputs:
        if spec.optional or spec.target in names:
            continue
        for ref in re.findall(r"\$\{([A-Za-z0-9_]+)\}", spec.path):
            if ref in props and ref not in names:
                names.append(ref)
    parts = ["argent run", tool.name]
    for name in names:
        value = _placeholder(name, props.get(name, {}))
        parts.append(_flag(name) + (f" {value}" if value else ""))
    return " ".join(parts)


def _summary(tool: ToolEntry) -> str:
    first = (tool.description or "").strip().split("\n", 1)[0]
    line = f"{tool.name}  {first}"
    if tool.disabled is not None:
        line += f"  [disabled: {tool.disabled.reason}]"
    return one_line(line)


def _print_tool_brief(tool: ToolEntry) -> None:
    """One tool in a listing: each of its lines is one line (a name holding a newline cannot pose
    as another tool)."""
    echo(_summary(tool))
    required = _schema(tool).get("required", [])
    if required:
        echo(one_line(f"    required: {', '.join(required)}"))
    echo(one_line(f"    example: {example(tool)}"))


@click.group()
def tools() -> None:
    """Discover the tools of the tool-server."""


@tools.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the GET /tools entries as JSON.")
@local_option
def list_tools(as_json: bool) -> None:
    """Every tool with its required arguments and a runnable example."""
    entries = _fetch_tools()
    if as_json:
        echo(json.dumps([to_wire(entry) for entry in entries], indent=2))
        return
    for tool in entries:
        _print_tool_brief(tool)


@tools.command("search")
@click.argument("words", nargs=-1, required=True)
@local_option
def search_tools(words: tuple[str, ...]) -> None:
    """Tools whose name or description holds every word."""
    wanted = [w.lower() for w in words]
    hits = [t for t in _fetch_tools() if all(w in f"{t.name} {t.description or ''}".lower() for w in wanted)]
    if not hits:
        raise CommandFailed(f"No tool matches {' '.join(words)!r}. Run `argent tools list` to see them all.")
    for tool in hits:
        _print_tool_brief(tool)


@tools.command("show")
@click.argument("name")
@local_option
def show_tool(name: str) -> None:
    """One tool: description, arguments as flags, file inputs, an example."""
    entries = {t.name: t for t in _fetch_tools()}
    tool = entries.get(name)
    if tool is None:
        raise UsageProblem(f'Tool "{name}" not found. Run `argent tools list` to see the tools.')
    echo(one_line(tool.name))
    if tool.disabled is not None:
        echo(one_line(f"  [disabled: {tool.disabled.reason}]"))
    echo("")
    echo(tool.description or "")
    schema = _schema(tool)
    required = set(schema.get("required", []))
    props = schema.get("properties", {})
    if props:
        echo("\nArguments:")
        for arg_name, prop in props.items():
            kind = prop.get("type", "any")
            if "enum" in prop:
                kind = "|".join(str(v) for v in prop["enum"])
            flag = f"{_flag(arg_name)} <value>" if prop.get("type") != "boolean" else _flag(arg_name)
            tag = " (required)" if arg_name in required else ""
            echo(one_line(f"  {flag:<34} {kind}{tag}  {prop.get('description', '')}".rstrip()))
    if tool.file_inputs:
        echo("\nFile inputs:")
        for spec in tool.file_inputs:
            echo(one_line(f"  {spec.target}: {spec.kind} {spec.path}"))
    if tool.long_running:
        echo("\nLong running: progress streams while it works.")
    echo(f"\nExample:\n  {one_line(example(tool))}")


def _is_recorder_tool(name: str) -> bool:
    from argent.link.rules import RECORDING_TOOLS

    return name in RECORDING_TOOLS


def _json_option() -> click.Option:
    return click.Option(["--json", "as_json"], is_flag=True, default=None, help="Print the raw JSON result.")


def _args_option() -> click.Option:
    return click.Option(
        ["--args", "args_json"],
        metavar="JSON",
        help="The whole argument object as JSON ('-' reads stdin); flags override it.",
    )


def _args_object(text: str) -> dict[str, Any]:
    """The object of ``--args`` (``-`` reads stdin)."""
    if text == "-":
        text = sys.stdin.read()
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageProblem(
            f"--args is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    if not isinstance(parsed, dict):
        raise UsageProblem("--args must be a JSON object")
    return parsed


class RunGroup(click.Group):
    """`argent run`: each tool of the tool-server is a subcommand built from its schema."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return []  # listing them asks the tool-server: `argent tools list` does

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entries = {t.name: t for t in _fetch_tools()}
        entry = entries.get(cmd_name)
        if entry is None:
            raise UsageProblem(f'Tool "{cmd_name}" not found. Run `argent tools list` to see the tools.')
        return build_tool_command(
            entry, [_args_option(), _json_option()], _run_tool_callback(entry), example=example(entry)
        )


@click.group(
    "run",
    cls=RunGroup,
    subcommand_metavar="TOOL [--<arg> <value>...]",
    params=[_args_option(), _json_option(), local_param()],
)
def run_tool(args_json: str | None, as_json: bool | None) -> None:
    """Call one tool: argent run <tool> [--args JSON] [--<arg> <value>...] [--json].

    `argent tools list` shows the tools; `argent run <tool> --help` shows the arguments of one.
    Bad arguments exit 2, a failed tool 1.
    """


def _run_tool_callback(entry: ToolEntry) -> Callable[..., None]:
    def callback(args_json: str | None, as_json: bool | None, **_flags: Any) -> None:
        ctx = click.get_current_context()
        outer = ctx.parent.params if ctx.parent is not None else {}
        run_entry(
            entry,
            args_json if args_json is not None else outer.get("args_json"),
            flags=cast(ToolCommand, ctx.command).tool_args(ctx),
            as_json=bool(as_json or outer.get("as_json")),
        )

    return callback


def run_entry(entry: ToolEntry, args_json: str | None, *, flags: dict[str, Any], as_json: bool) -> None:
    """Call the tool of ``entry`` with ``--args`` and the flags merged; print its result."""
    tool = entry.name

    def warn(text: str) -> None:
        """A note on stderr; a JSON warning object with --json, so stderr stays machine-readable."""
        echo(json_text({"warning": text}, indent=None) if as_json else text, err=True)

    args: dict[str, Any] = _args_object(args_json) if args_json is not None else {}
    args.update(flags)
    schema = _schema(entry)
    missing = [n for n in schema.get("required", []) if n not in args]
    if missing:
        raise UsageProblem(
            f"{tool} requires {', '.join(_flag(n) for n in missing)}\nExample: {example(entry)}"
        )

    route = chosen_route() or resolve_route()
    if route.url is None and _is_recorder_tool(tool):
        warn(EMBEDDED_RECORDING_NOTE.format(tool=tool))

    refusals: list[RefusedClientFile] = []

    def refused(refusal: RefusedClientFile) -> None:
        refusals.append(refusal)
        warn(refusal.line())

    async def go() -> Any:
        async with open_client(route, notice=warn) as client:
            return await client.call(tool, args, on_refused=refused)

    try:
        result = asyncio.run(go())
    except ToolCallError as exc:
        raise call_failed(exc) from None
    if isinstance(result, str) and not as_json:
        echo(result)
    else:
        echo(json_text(result))
    unwritten = unwritten_baseline_lines(result)
    for line in unwritten:
        warn(line)
    if refusals or unwritten:
        click.get_current_context().exit(1)
