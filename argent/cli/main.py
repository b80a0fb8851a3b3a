"""The `argent` command group.

Its subcommands are imported when one runs (or shows its help), not up front: `argent --help`
imports none of them, and `argent flow run` only the flow commands, so neither pays for the
tool-server, the MCP adapter or the link commands it does not use (see Click's "lazily loading
subcommands"). The one-line help `argent --help` lists is kept here beside each command's
module; a test holds it equal to what the imported command says.
"""

from __future__ import annotations

import importlib
import signal
from collections.abc import Mapping
from typing import Any

import click

from argent import __version__

#: Subcommand name -> ("module:attribute" of its Click command, the help `argent --help` shows).
COMMANDS: Mapping[str, tuple[str, str]] = {
    "flow": ("argent.cli.flow:flow", "Run, check and list recorded flows."),
    "init": ("argent.cli.init:init", "Create a starter project: a flow and the page it opens."),
    "tools": ("argent.cli.tools:tools", "Discover the tools of the tool-server."),
    "run": (
        "argent.cli.tools:run_tool",
        "Call one tool: argent run <tool> [--args JSON] [--<arg> <value>...] [--json].",
    ),
    "link": ("argent.cli.link:link", "Remember a remote tool-server for tool calls."),
    "unlink": ("argent.cli.link:unlink", "Forget the remote tool-server."),
    "server": ("argent.cli.server:server", "Run a tool-server that CLIs and agents can link to."),
    "mcp": (
        "argent.cli.mcp:mcp",
        "Run an MCP server over stdio (for AI agents); it talks to the tool-server like the CLI.",
    ),
}


class LazyGroup(click.Group):
    """A group whose subcommands are named up front and imported on first use."""

    def __init__(self, *args: Any, lazy: Mapping[str, tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy and cmd_name not in self.commands:
            module_name, _, attr = self.lazy[cmd_name][0].partition(":")
            command = getattr(importlib.import_module(module_name), attr)
            if not isinstance(command, click.Command):
                raise TypeError(f"{module_name}:{attr} is not a Click command")
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from the table, cut to width as Click cuts a command's own help."""
        names = [name for name in self.list_commands(ctx) if name in self.lazy or name in self.commands]
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            command = self.commands.get(name) or click.Command(name, help=self.lazy[name][1])
            if not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-v", "--version", prog_name="argent")
def cli() -> None:
    """Replay recorded UI flows on real devices, locally or through a tool-server."""


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main() -> None:
    # SIGTERM (a CI timeout, `kill`) unwinds like Ctrl-C: an embedded tool-server and the Chromium it
    # booted are stopped and their temp directories removed. `argent server start` installs its own.
    signal.signal(signal.SIGTERM, _interrupt)
    cli(prog_name="argent")
