"""A client for one command: over the configured link, or to an embedded tool-server.

This module sits above both ``argent.client`` and ``argent.server`` (they never import each other):
with no link configured (``argent.client.routing``), it starts the real tool-server on loopback for
the duration of the command, so co-located runs read the project from disk. The server is imported
only then, so a linked command does not load it, and the HTTP client (aiohttp) only once a call is
made: resolving a route or listing flows loads neither.
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from argent.client.base import ToolClient
from argent.client.routing import Route, resolve_route

if TYPE_CHECKING:
    from argent.tools.registry import ToolRegistry

__all__ = ["EMBEDDED_HOST", "open_client"]

EMBEDDED_HOST = "127.0.0.1"


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

    from argent.server.config import ServerConfig  # only when needed: a linked command starts no server
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
