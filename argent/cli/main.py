"""The `argent` command group."""

from __future__ import annotations

import signal

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


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main() -> None:
    # SIGTERM (a CI timeout, `kill`) unwinds like Ctrl-C: an embedded tool-server and the Chromium it
    # booted are stopped and their temp directories removed. `argent server start` installs its own.
    signal.signal(signal.SIGTERM, _interrupt)
    cli(prog_name="argent")
