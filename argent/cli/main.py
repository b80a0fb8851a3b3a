"""The `argent` command group."""

from __future__ import annotations

import click

from argent import __version__
from argent.cli.flow import flow
from argent.cli.link import link, unlink
from argent.cli.mcp import mcp
from argent.cli.server import server
from argent.cli.tools import run_tool, tools


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-v", "--version", prog_name="argent")
def cli() -> None:
    """Replay recorded UI flows on real devices, locally or through a tool-server."""


cli.add_command(flow)
cli.add_command(tools)
cli.add_command(run_tool)
cli.add_command(link)
cli.add_command(unlink)
cli.add_command(server)
cli.add_command(mcp)


def main() -> None:
    cli(prog_name="argent")
