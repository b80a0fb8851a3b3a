"""Where a command's tool calls go: a configured tool-server, or one the client starts itself.

Precedence (re-read for every command):

1. ``ARGENT_TOOLS_URL`` when non-empty, with the token of ``ARGENT_AUTH_TOKEN`` (source ``env``);
   a valid link file it hides is reported as ``shadowed_link``.
2. A valid ``~/.argent/link.json`` (source ``link``); a corrupt file counts as no link.
3. Otherwise an embedded tool-server on loopback, started for the duration of the command
   (source ``embedded``): co-located, the runner reads the project from disk.

A configured URL means the call is "over a link" (``x-argent-linked: 1``, file contents sent),
also when it points at 127.0.0.1.

This module is the one place where the client starts a server: the embedded tool-server is the
real one (``argent.server.serve``), imported only when it is needed, as is the HTTP client
(``argent.client.session``, aiohttp): resolving a route or listing flows loads neither.
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from attrs import frozen

from argent.client.base import ToolClient
from argent.client.link_config import LinkConfig, read_link_config

if TYPE_CHECKING:
    from argent.tools.registry import ToolRegistry

__all__ = ["Route", "RouteSource", "open_client", "resolve_route"]

TOOLS_URL_ENV = "ARGENT_TOOLS_URL"
AUTH_TOKEN_ENV = "ARGENT_AUTH_TOKEN"
EMBEDDED_HOST = "127.0.0.1"

RouteSource = Literal["env", "link", "embedded"]


@frozen
class Route:
    """Where calls go; ``url`` is None for an embedded tool-server."""

    url: str | None
    token: str | None
    source: RouteSource
    shadowed_link: LinkConfig | None = None

    @property
    def linked(self) -> bool:
        """Calls over a configured URL are over a link, whatever host it names."""
        return self.url is not None


def resolve_route(environ: Mapping[str, str] | None = None, *, home: Path | None = None) -> Route:
    env = os.environ if environ is None else environ
    link_path = None if home is None else home / ".argent" / "link.json"
    link = read_link_config(link_path)
    url = env.get(TOOLS_URL_ENV, "").strip()
    if url:
        token = env.get(AUTH_TOKEN_ENV) or None
        return Route(url=url, token=token, source="env", shadowed_link=link)
    if link is not None:
        return Route(url=link.url, token=link.token, source="link")
    return Route(url=None, token=None, source="embedded")


def _stderr_notice(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


@asynccontextmanager
async def open_client(
    route: Route | None = None,
    *,
    registry: ToolRegistry | None = None,
    notice: Callable[[str], None] | None = _stderr_notice,
) -> AsyncIterator[ToolClient]:
    """A client for the block: over the configured link, or to an embedded tool-server.

    The embedded tool-server listens on a free loopback port with a fresh random token and is
    stopped when the block ends, also on an error or an interrupt. ``registry`` replaces its
    built-in tools (tests); ``notice`` receives progress notes such as uploads.
    """
    from argent.client.session import ToolServerClient  # aiohttp: only once a call is made

    chosen = route or resolve_route()
    if chosen.url is not None:
        async with ToolServerClient(
            chosen.url, chosen.token, linked=True, source=chosen.source, notice=notice
        ) as client:
            yield client
        return

    from argent.server.config import ServerConfig
    from argent.server.serve import start_server

    token = secrets.token_urlsafe(32)
    server = await start_server(ServerConfig(host=EMBEDDED_HOST, port=0, token=token), registry)
    try:
        async with ToolServerClient(
            server.url, token, linked=False, source="embedded", notice=notice
        ) as client:
            yield client
    finally:
        await server.stop()
