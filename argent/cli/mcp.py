"""`argent mcp`: serve the tools over MCP on stdin/stdout."""

from __future__ import annotations

import anyio
import click


@click.command("mcp")
def mcp() -> None:
    """Run an MCP server over stdio (for AI agents); it talks to the tool-server like the CLI."""
    from argent.mcp.server import serve_stdio

    anyio.run(serve_stdio)
