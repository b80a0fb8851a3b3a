"""`argent link` and `argent unlink`: remember (or forget) a remote tool-server.

The link lives in ``~/.argent/link.json`` (mode 0600). Before it is written, the tool-server is
asked for its tool list (3 s), so a wrong address or token shows up now rather than on the first
flow run; ``--no-verify`` skips that. That answer is read as every call's is: not decoded, no
redirect followed, within the client's caps. ``ARGENT_TOOLS_URL`` still wins over a link.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import click
from attrs import frozen

from argent.cli.problems import CommandFailed, UsageProblem
from argent.client.link_config import (
    WILDCARD_HOSTS,
    LinkConfig,
    LinkTarget,
    is_loopback,
    link_config_path,
    now_iso,
    parse_link_target,
    read_link_config,
    remove_link_config,
    write_link_config,
)
from argent.client.routing import AUTH_TOKEN_ENV, TOOLS_URL_ENV
from argent.limits import MAX_RESULT_BYTES, MAX_RESULT_JSON_DEPTH, MAX_RESULT_JSON_VALUES
from argent.link.codec import read_or_none
from argent.link.models import ErrorBody, ToolListing
from argent.utils.oserrors import remedy

PREFLIGHT_TIMEOUT_SECONDS = 3.0
#: A link file the disk refused (full, read-only): the link as it was is kept.
NOT_STORED = (
    "Could not {verb} {path}: {reason}. {remedy} and run the command again; the link stays as it was. "
    f"Meanwhile {TOOLS_URL_ENV} (and {AUTH_TOKEN_ENV}) route calls without the file."
)

NO_TARGET = (
    "Pass the tool-server to link to: argent link argent://<token>@<host>:<port> "
    "(the line `argent server start` prints) or an http(s):// URL. "
    "`argent link --show` shows the current link."
)
NOT_A_TARGET = (
    "Not a link target: {value}\nUse argent://[<token>@]<host>:<port> "
    "(the line `argent server start` prints) or an http(s):// URL such as https://tools.example.com."
)
WILDCARD = (
    'Cannot link to "{host}": it is a wildcard address a server binds to, not one a client can connect to. '
    "Use the address of the tool-server's machine (127.0.0.1 when it runs here)."
)
PORT_ZERO = (
    "Cannot link to port 0: it asks the system for a free port when a server starts. Use the port the "
    "tool-server printed (Tools server listening on http://<host>:<port>)."
)
UNREACHABLE = (
    "Could not reach a tool-server at {url} ({detail}). Start it there (argent server start), check the "
    "address, or pass --no-verify to link anyway. Nothing was written."
)
REFUSED = "The tool-server at {url} answered GET /tools with {status} {reason}{error}. Nothing was written."
ANSWER_REFUSED = (
    "The tool-server at {url} answered GET /tools: the answer {what}; the client stopped reading. "
    "Nothing was written."
)
REDIRECTED = (
    "The tool-server at {url} answered GET /tools with {status} {reason}, a redirect to {location}; the client "
    "follows no redirect. If the tool-server is there, link to that URL. Nothing was written."
)
HINT_401 = (
    "The token is missing or wrong: pass the token `argent server start` printed, in the target "
    "(argent://<token>@<host>:<port>) or with --token."
)
HINT_403 = (
    "The tool-server refused the Host header (its DNS-rebinding guard accepts loopback names "
    "and its bind host): start it with --host set to the address "
    "you link to, or link through an address it accepts."
)
NOT_ARGENT = (
    "{url} answered GET /tools, but not with a tool list: is it an argent tool-server (behind a proxy, "
    "is the path right)? Nothing was written."
)


@frozen
class Preflight:
    """What GET /tools answered; ``problem`` is None when the server looks right."""

    problem: str | None
    tools: int = 0


async def preflight(url: str, token: str | None, *, timeout: float = PREFLIGHT_TIMEOUT_SECONDS) -> Preflight:
    """Ask ``url`` for its tool list, as every call will."""
    import aiohttp  # only when there is a server to ask

    from argent.client.bounded import AnswerNotJson, AnswerRefused, parse_json, read_body
    from argent.client.transport import describe_exception

    # Read as every call reads (``argent.client.bounded``): no decoding, no redirect, within the caps.
    headers = {"Accept-Encoding": "identity"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        async with (
            aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=timeout), auto_decompress=False
            ) as session,
            session.get(f"{url}/tools", headers=headers, allow_redirects=False) as resp,
        ):
            status, reason = resp.status, resp.reason or ""
            if 300 <= status < 400:
                location = resp.headers.get("Location") or "no location"
                return Preflight(REDIRECTED.format(url=url, status=status, reason=reason, location=location))
            raw = await read_body(resp.content, MAX_RESULT_BYTES, resp.content_length)
    except AnswerRefused as exc:
        return Preflight(ANSWER_REFUSED.format(url=url, what=exc.what))
    except (aiohttp.ClientError, TimeoutError) as exc:
        return Preflight(UNREACHABLE.format(url=url, detail=describe_exception(exc)))
    try:
        body: Any = (
            parse_json(raw, max_values=MAX_RESULT_JSON_VALUES, max_depth=MAX_RESULT_JSON_DEPTH)
            if raw.strip()
            else None
        )
    except AnswerRefused as exc:
        return Preflight(ANSWER_REFUSED.format(url=url, what=exc.what))
    except AnswerNotJson:
        body = None
    if not 200 <= status < 300:
        answer = read_or_none(body, ErrorBody)
        error = answer.error if answer is not None else None
        message = REFUSED.format(
            url=url,
            status=status,
            reason=reason,
            # The server's error often ends in a full stop, and REFUSED adds one.
            error=f": {error.rstrip().removesuffix('.')}" if isinstance(error, str) else "",
        )
        if status == 401:
            message = f"{message}\n{HINT_401}"
        elif status == 403:
            message = f"{message}\n{HINT_403}"
        return Preflight(message)
    listing = read_or_none(body, ToolListing)
    if listing is None:
        return Preflight(NOT_ARGENT.format(url=url))
    return Preflight(None, tools=len(listing.tools))


def _parse(value: str) -> LinkTarget:
    try:
        target = parse_link_target(value)
    except ValueError as exc:
        raise UsageProblem(str(exc)) from None
    if target is None:
        raise UsageProblem(NOT_A_TARGET.format(value=value))
    if target.host in WILDCARD_HOSTS:
        raise UsageProblem(WILDCARD.format(host=target.host))
    if target.port == 0:
        raise UsageProblem(PORT_ZERO)
    return target


def _warn(text: str) -> None:
    click.echo(f"Warning: {text}", err=True)


def _env_note() -> None:
    shadow = os.environ.get(TOOLS_URL_ENV, "").strip()
    if shadow:
        click.echo(
            f"Note: {TOOLS_URL_ENV} is set ({shadow}) and takes precedence over the link; "
            f"unset it to use the link.",
            err=True,
        )


def _show() -> None:
    config = read_link_config()
    if config is None:
        click.echo("Not linked: calls run on an embedded tool-server this machine starts.")
    else:
        stored = "a token is stored" if config.token else "no token stored"
        click.echo(f"Linked to {config.url} ({stored}; since {config.created_at}).")
    _env_note()


@click.command("link", short_help="Remember a remote tool-server for tool calls.")
@click.argument("target", required=False)
@click.option("--token", help="Token of the tool-server (overrides one in the target).")
@click.option(
    "--no-verify", is_flag=True, help="Write the link without asking the tool-server for its tools."
)
@click.option("--show", is_flag=True, help="Show the current link (never the token).")
def link(target: str | None, token: str | None, no_verify: bool, show: bool) -> None:
    """Send tool calls to a remote tool-server: argent://[TOKEN@]HOST:PORT or an http(s):// URL."""
    if show:
        if target is not None:
            raise UsageProblem("argent link --show takes no target.")
        _show()
        return
    if target is None:
        raise UsageProblem(NO_TARGET)
    parsed = _parse(target)
    chosen = token or parsed.token
    previous = read_link_config()
    if chosen is None and previous is not None and previous.token and previous.url == parsed.url:
        chosen = previous.token
        click.echo("Keeping the token stored for this tool-server.", err=True)
    verified = False
    if not no_verify:
        result = asyncio.run(preflight(parsed.url, chosen))
        if result.problem is not None:
            raise CommandFailed(result.problem)
        verified = True
    config = LinkConfig(
        url=parsed.url, host=parsed.host, port=parsed.port, created_at=now_iso(), token=chosen
    )
    try:
        path = write_link_config(config)
    except OSError as exc:
        raise CommandFailed(_not_stored(exc, "write")) from None
    click.echo(f"Linked to {parsed.url}; tool calls now go to this tool-server ({path}).")
    if parsed.url.startswith("http://") and not is_loopback(parsed.host):
        _warn(
            f"the link uses plain http to {parsed.host}: the token and your project files travel "
            "unencrypted. Put the tool-server behind a TLS proxy and link to its https:// URL "
            "unless the network is trusted."
        )
    if chosen is None:
        if verified and not is_loopback(parsed.host):
            _warn(
                f"no token is stored and the tool-server accepted calls without one: anyone who can reach "
                f"{parsed.host} can run its tools. Start it without --no-auth."
            )
        elif not verified:
            _warn(
                "no token is stored: a tool-server that requires one answers 401. "
                "Link again with argent://<token>@<host>:<port> or --token."
            )
    _env_note()


def _not_stored(exc: OSError, verb: str) -> str:
    """What a link file the disk refused says (the file it names, never the temp file beside it)."""
    return NOT_STORED.format(
        verb=verb,
        path=link_config_path(),
        reason=exc.strerror or exc,
        remedy=remedy(exc) or "Check that disk",
    )


@click.command("unlink", short_help="Forget the remote tool-server.")
def unlink() -> None:
    """Forget the remote tool-server: tool calls run on an embedded tool-server again."""
    path = link_config_path()
    existed = path.exists()
    try:
        previous = remove_link_config(path)
    except OSError as exc:
        raise CommandFailed(_not_stored(exc, "remove")) from None
    if not existed:
        click.echo("Not linked; nothing to remove.")
    elif previous is None:
        click.echo(f"Removed an unreadable link file ({path}); calls run on an embedded tool-server.")
    else:
        click.echo(f"Unlinked from {previous.url}; calls run on an embedded tool-server.")
    _env_note()
