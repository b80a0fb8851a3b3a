"""`argent server start`: run a tool-server in the foreground."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import secrets
import socket
import sys

import click

from argent.cli.problems import CommandFailed, UsageProblem
from argent.server.config import LOOPBACK_HOSTS, WILDCARD_HOSTS, ServerConfig
from argent.server.policy import PolicyFileError, ServerPolicy, load_policy

TOKEN_ON_COMMAND_LINE = (
    "warning: --token puts the token on the command line, where other users of this machine can read it "
    "(ps, /proc). Set ARGENT_AUTH_TOKEN instead, or name tokens with token_env in a --config file."
)
OPEN_SERVER_REFUSED = (
    "--no-auth on {host}, a non-loopback address, would let anyone who reaches port {port} drive the "
    "tool-server (run its tools and flows). Bind 127.0.0.1, keep auth on (set ARGENT_AUTH_TOKEN), or pass "
    "--allow-open-server to accept an open server."
)
OPEN_SERVER_WARNING = (
    "warning: authentication is off on {host}, a non-loopback address (--allow-open-server): anyone who "
    "reaches this port can drive the tool-server."
)
AUTH_OFF_WARNING = (
    "warning: authentication is off; any process that reaches this port can drive the tool-server."
)
ONE_SOURCE_OF_TOKENS = (
    "{config} names its tokens (tokens:), so {other} cannot be used as well: the config file is the one "
    "source of tokens. Remove {other}, or remove tokens from the config file."
)
#: What the banner's link line shows when the tokens are named in the config file (never their values).
NAMED_TOKEN_PLACEHOLDER = "<token>"


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


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
@click.option(
    "--token",
    help="Bearer token clients must send (visible in ps: prefer $ARGENT_AUTH_TOKEN; default: a new one).",
)
@click.option("--no-auth", is_flag=True, help="Accept calls without a token (development only).")
@click.option(
    "--allow-open-server",
    is_flag=True,
    help="With --no-auth on a non-loopback address: accept that anyone who reaches the port drives the server.",
)
@click.option(
    "--config",
    "config_file",
    metavar="FILE.yaml",
    help="Policy of a shared tool-server: named tokens, project_roots, local_flows, scripts, limits.",
)
@click.option(
    "--idle-timeout",
    type=click.FloatRange(min=0),
    default=0,
    help="Stop after this many idle minutes (0: never).",
)
def start(
    host: str,
    port: int,
    token: str | None,
    no_auth: bool,
    allow_open_server: bool,
    config_file: str | None,
    idle_timeout: float,
) -> None:
    """Start a tool-server in the foreground; SIGINT/SIGTERM stop it gracefully."""
    if no_auth and token:
        raise UsageProblem("--token and --no-auth cannot be combined")
    policy = ServerPolicy()
    if config_file is not None:
        try:
            policy = load_policy(config_file)
        except PolicyFileError as exc:
            raise UsageProblem(str(exc)) from None
    env_token = os.environ.get("ARGENT_AUTH_TOKEN")
    if policy.tokens:
        for given, what in ((token, "--token"), (env_token, "ARGENT_AUTH_TOKEN"), (no_auth, "--no-auth")):
            if given:
                raise UsageProblem(ONE_SOURCE_OF_TOKENS.format(config=config_file, other=what))
    if no_auth and not is_loopback(host) and not allow_open_server:
        raise UsageProblem(OPEN_SERVER_REFUSED.format(host=host, port=port))
    if token:
        click.echo(TOKEN_ON_COMMAND_LINE, err=True)
    chosen: str | None = None
    if no_auth:
        click.echo(AUTH_OFF_WARNING if is_loopback(host) else OPEN_SERVER_WARNING.format(host=host), err=True)
    elif not policy.tokens:
        chosen = token or env_token or secrets.token_hex(32)
    config = ServerConfig(
        host=host, port=port, token=chosen, idle_timeout_minutes=idle_timeout, policy=policy, log_calls=True
    )
    asyncio.run(_run(config))


async def _run(config: ServerConfig) -> None:
    from argent.server.call_log import calls_logged_to_stderr  # aiohttp: once it starts

    with calls_logged_to_stderr():
        await _serve(config)


async def _serve(config: ServerConfig) -> None:
    from argent.server.serve import format_origin, serve_forever, start_server

    try:
        running = await start_server(config)
    except OSError as exc:
        raise CommandFailed(
            f"Could not listen on {format_origin(config.host, config.port)}: {exc.strerror or exc}"
        ) from None
    origin = format_origin(config.host, running.port)
    lines = [f"Tools server listening on http://{origin}"]
    shown = config.token or (NAMED_TOKEN_PLACEHOLDER if config.policy.tokens else None)
    if shown:
        link_host = reachable_address() if config.host in WILDCARD_HOSTS else config.host
        lines.append(f"argent link argent://{shown}@{format_origin(link_host, running.port)}")

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
