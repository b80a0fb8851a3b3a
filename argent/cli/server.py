"""`argent server start`: run a tool-server in the foreground."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import socket
import sys

import click

from argent.cli.targets import UsageProblem
from argent.server.config import WILDCARD_HOSTS, ServerConfig
from argent.server.serve import format_origin, serve_forever, start_server


@click.group()
def server() -> None:
    """Run a tool-server that CLIs and agents can link to."""


@server.command("start")
@click.option(
    "--host", default="127.0.0.1", show_default=True, help="Address to bind (a non-loopback host for nginx)."
)
@click.option(
    "--port",
    "-p",
    type=click.IntRange(0, 65535),
    default=3001,
    show_default=True,
    help="Port; 0 picks a free one.",
)
@click.option("--token", help="Bearer token clients must send (default: $ARGENT_AUTH_TOKEN, else a new one).")
@click.option("--no-auth", is_flag=True, help="Accept calls without a token (development only).")
@click.option(
    "--idle-timeout",
    type=click.FloatRange(min=0),
    default=0,
    help="Stop after this many idle minutes (0: never).",
)
def start(host: str, port: int, token: str | None, no_auth: bool, idle_timeout: float) -> None:
    """Start a tool-server in the foreground; SIGINT/SIGTERM stop it gracefully."""
    if no_auth and token:
        raise UsageProblem("--token and --no-auth cannot be combined")
    if no_auth:
        chosen = None
        click.echo(
            "warning: authentication is off; any process that reaches this port can drive the tool-server.",
            err=True,
        )
    else:
        chosen = token or os.environ.get("ARGENT_AUTH_TOKEN") or secrets.token_hex(32)
    config = ServerConfig(host=host, port=port, token=chosen, idle_timeout_minutes=idle_timeout)
    asyncio.run(_run(config))


async def _run(config: ServerConfig) -> None:
    try:
        running = await start_server(config)
    except OSError as exc:
        raise click.ClickException(
            f"Could not listen on {format_origin(config.host, config.port)}: {exc.strerror or exc}"
        ) from None
    origin = format_origin(config.host, running.port)
    lines = [f"Tools server listening on http://{origin}"]
    if config.token:
        link_host = reachable_address() if config.host in WILDCARD_HOSTS else config.host
        lines.append(f"argent link argent://{config.token}@{format_origin(link_host, running.port)}")

    def ready() -> None:
        sys.stdout.write("\n".join(lines) + "\n")
        sys.stdout.flush()

    def idle() -> None:
        click.echo(f"[argent] No activity for {config.idle_timeout_minutes:g}min — shutting down", err=True)

    await serve_forever(running, on_idle=idle, on_ready=ready)


def reachable_address() -> str:
    """An address other machines can reach a wildcard-bound server on: this machine's first
    non-loopback IPv4 address (the one its default route leaves from), else 127.0.0.1."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # TEST-NET-1: picks the outgoing interface, sends nothing
        address = str(probe.getsockname()[0])
        if not address.startswith("127.") and address != "0.0.0.0":
            return address
    return "127.0.0.1"
