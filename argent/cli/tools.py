"""`argent tools list|show|search` and `argent run <tool>`: discovery and direct calls."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Callable
from typing import Any

import click

from argent.cli.render import echo, json_text, unwritten_baseline_lines
from argent.cli.targets import UsageProblem
from argent.client.base import ToolCallError
from argent.client.client_files import RefusedClientFile
from argent.client.routing import open_client, resolve_route
from argent.link.codec import to_wire

EMBEDDED_RECORDING_NOTE = (
    "note: no tool-server is linked, so {tool} runs on an embedded tool-server that stops when this "
    "command ends, and a recording does not outlive it. To record across commands, start one with "
    "`argent server start` and `argent link` to it (or set ARGENT_TOOLS_URL)."
)


def _fetch_tools() -> list[dict[str, Any]]:
    """The GET /tools entries; a tool-server that cannot be reached or refuses exits 1 with its reason."""

    async def go() -> list[dict[str, Any]]:
        async with open_client() as client:
            return [to_wire(entry) for entry in await client.list_tools()]

    try:
        return asyncio.run(go())
    except ToolCallError as exc:
        echo(f"Error: {exc.message}", err=True)
        sys.exit(1)


def _flag(name: str) -> str:
    return "--" + re.sub(r"(?<=[a-z0-9])([A-Z])", r"-\1", name).replace("_", "-").lower()


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


def example(tool: dict[str, Any]) -> str:
    """A runnable example: the tool with its required arguments, and the arguments a derived file
    input is built from (flow-execute's ``flow_file`` needs ``name``)."""
    schema = tool.get("inputSchema", {})
    props = schema.get("properties", {})
    names: list[str] = list(schema.get("required", []))
    for spec in tool.get("fileInputs") or []:
        if not isinstance(spec, dict) or spec.get("optional") or spec.get("target") in names:
            continue
        for ref in re.findall(r"\$\{([A-Za-z0-9_]+)\}", str(spec.get("path", ""))):
            if ref in props and ref not in names:
                names.append(ref)
    parts = ["argent run", tool["name"]]
    for name in names:
        value = _placeholder(name, props.get(name, {}))
        parts.append(_flag(name) + (f" {value}" if value else ""))
    return " ".join(parts)


def _summary(tool: dict[str, Any]) -> str:
    first = (tool.get("description") or "").strip().split("\n", 1)[0]
    line = f"{tool['name']}  {first}"
    if tool.get("disabled"):
        line += f"  [disabled: {tool['disabled'].get('reason', '')}]"
    return line


def _print_tool_brief(tool: dict[str, Any]) -> None:
    echo(_summary(tool))
    required = tool.get("inputSchema", {}).get("required", [])
    if required:
        echo(f"    required: {', '.join(required)}")
    echo(f"    example: {example(tool)}")


@click.group()
def tools() -> None:
    """Discover the tools of the tool-server."""


@tools.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the GET /tools entries as JSON.")
def list_tools(as_json: bool) -> None:
    """Every tool with its required arguments and a runnable example."""
    entries = _fetch_tools()
    if as_json:
        echo(json.dumps(entries, indent=2))
        return
    for tool in entries:
        _print_tool_brief(tool)


@tools.command("search")
@click.argument("words", nargs=-1, required=True)
def search_tools(words: tuple[str, ...]) -> None:
    """Tools whose name or description holds every word."""
    wanted = [w.lower() for w in words]
    hits = [
        t
        for t in _fetch_tools()
        if all(w in f"{t['name']} {t.get('description', '')}".lower() for w in wanted)
    ]
    if not hits:
        raise click.ClickException(
            f"No tool matches {' '.join(words)!r}. Run `argent tools list` to see them all."
        )
    for tool in hits:
        _print_tool_brief(tool)


@tools.command("show")
@click.argument("name")
def show_tool(name: str) -> None:
    """One tool: description, arguments as flags, file inputs, an example."""
    entries = {t["name"]: t for t in _fetch_tools()}
    tool = entries.get(name)
    if tool is None:
        raise UsageProblem(f'Tool "{name}" not found. Run `argent tools list` to see the tools.')
    echo(tool["name"])
    if tool.get("disabled"):
        echo(f"  [disabled: {tool['disabled'].get('reason', '')}]")
    echo("")
    echo(tool.get("description", ""))
    schema = tool.get("inputSchema", {})
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
            echo(f"  {flag:<34} {kind}{tag}  {prop.get('description', '')}".rstrip())
    if tool.get("fileInputs"):
        echo("\nFile inputs:")
        for spec in tool["fileInputs"]:
            echo(f"  {spec['target']}: {spec['kind']} {spec['path']}")
    if tool.get("longRunning"):
        echo("\nLong running: progress streams while it works.")
    echo(f"\nExample:\n  {example(tool)}")


def _is_recorder_tool(name: str) -> bool:
    from argent.runner.link_rules import RECORDING_TOOLS

    return name in RECORDING_TOOLS


def _norm(name: str) -> str:
    return name.replace("-", "").replace("_", "").lower()


def _coerce(flag: str, raw: str, schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    if kind == "integer":
        try:
            return int(raw)
        except ValueError:
            raise UsageProblem(f"{flag} expected an integer, got {raw!r}") from None
    if kind == "number":
        try:
            return float(raw) if any(c in raw for c in ".eE") else int(raw)
        except ValueError:
            raise UsageProblem(f"{flag} expected a number, got {raw!r}") from None
    if kind == "boolean":
        if raw.lower() in ("true", "1"):
            return True
        if raw.lower() in ("false", "0"):
            return False
        raise UsageProblem(f"{flag} expected true or false, got {raw!r}")
    if kind in ("object", "array") and schema.get("items", {}).get("type") not in (
        "string",
        "number",
        "integer",
    ):
        try:
            return json.loads(raw)
        except json.JSONDecodeError as exc:
            raise UsageProblem(f"{flag} expected JSON: {exc.msg}") from None
    return raw


def _plain_warning(text: str) -> None:
    echo(text, err=True)


def parse_tool_flags(
    tokens: list[str], schema: dict[str, Any], warn: Callable[[str], None] = _plain_warning
) -> dict[str, Any]:
    """`--field value`, `--field=value`, bare/`--no-` booleans, repeatable arrays, `--field-json '<json>'`."""
    props: dict[str, Any] = schema.get("properties", {})
    by_norm = {_norm(n): n for n in props}
    out: dict[str, Any] = {}
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if token == "--":
            if i < len(tokens):
                warn(f"note: ignoring extra arguments: {' '.join(tokens[i:])}")
            break
        if not token.startswith("--"):
            raise UsageProblem(f"unexpected argument {token!r}; pass tool arguments as --<name> <value>")
        flag, eq, inline = token.partition("=")
        key = flag[2:]
        as_json = key.endswith("-json") and _norm(key[:-5]) in by_norm
        negated = key.startswith("no-") and _norm(key[3:]) in by_norm and _norm(key) not in by_norm
        name = by_norm.get(_norm(key[:-5] if as_json else key[3:] if negated else key))
        if name is None:
            known = ", ".join(_flag(n) for n in props) or "none"
            raise UsageProblem(f"unknown flag {flag} (this tool takes: {known})")
        prop = props[name]
        if negated:
            out[name] = False
            continue
        if prop.get("type") == "boolean" and not eq:
            if i < len(tokens) and tokens[i].lower() in ("true", "false", "1", "0"):
                out[name] = _coerce(flag, tokens[i], prop)
                i += 1
            else:
                out[name] = True
            continue
        if not eq:
            if i >= len(tokens) or tokens[i].startswith("--"):
                raise UsageProblem(f"{flag} requires a value")
            inline = tokens[i]
            i += 1
        if as_json:
            try:
                out[name] = json.loads(inline)
            except json.JSONDecodeError as exc:
                raise UsageProblem(f"{flag} expected JSON: {exc.msg}") from None
        elif prop.get("type") == "array":
            out.setdefault(name, []).append(_coerce(flag, inline, prop.get("items", {})))
        else:
            out[name] = _coerce(flag, inline, prop)
    return out


@click.command(
    "run",
    context_settings={
        "ignore_unknown_options": True,
        "allow_extra_args": True,
        "help_option_names": ["-h", "--help"],
    },
)
@click.argument("tool")
@click.option(
    "--args", "args_json", help="The whole argument object as JSON ('-' reads stdin); flags override it."
)
@click.option("--json", "as_json", is_flag=True, help="Print the raw JSON result.")
@click.pass_context
def run_tool(ctx: click.Context, tool: str, args_json: str | None, as_json: bool) -> None:
    """Call one tool: argent run <tool> [--args JSON] [--<arg> <value>...]."""

    def warn(text: str) -> None:
        """A note on stderr; a JSON warning object with --json, so stderr stays machine-readable."""
        echo(json_text({"warning": text}, indent=None) if as_json else text, err=True)

    entries = {t["name"]: t for t in _fetch_tools()}
    entry = entries.get(tool)
    if entry is None:
        raise UsageProblem(f'Tool "{tool}" not found. Run `argent tools list` to see the tools.')
    args: dict[str, Any] = {}
    if args_json is not None:
        text = sys.stdin.read() if args_json == "-" else args_json
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageProblem(
                f"--args is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
            ) from None
        if not isinstance(parsed, dict):
            raise UsageProblem("--args must be a JSON object")
        args.update(parsed)
    args.update(parse_tool_flags(list(ctx.args), entry.get("inputSchema", {}), warn))
    missing = [n for n in entry.get("inputSchema", {}).get("required", []) if n not in args]
    if missing:
        raise UsageProblem(
            f"{tool} requires {', '.join(_flag(n) for n in missing)}\nExample: {example(entry)}"
        )

    route = resolve_route()
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
        echo(f"Error: {exc.message}", err=True)
        sys.exit(2 if exc.is_usage else 1)
    if isinstance(result, str) and not as_json:
        echo(result)
    else:
        echo(json_text(result))
    unwritten = unwritten_baseline_lines(result)
    for line in unwritten:
        warn(line)
    if refusals or unwritten:
        sys.exit(1)
