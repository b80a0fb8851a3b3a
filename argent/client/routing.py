"""Where a command's tool calls go: a configured tool-server, or one the client starts itself.

Precedence (re-read for every command):

1. ``ARGENT_TOOLS_URL`` when non-empty, with the token of ``ARGENT_AUTH_TOKEN`` (source ``env``);
   a valid link file it hides is reported as ``shadowed_link``.
2. A valid ``~/.argent/link.json`` (source ``link``); a corrupt file counts as no link.
3. Otherwise an embedded tool-server on loopback, started for the duration of the command
   (source ``embedded``): co-located, the runner reads the project from disk.

A configured URL means the call is "over a link" (``x-argent-linked: 1``, file contents sent),
also when it points at 127.0.0.1.

The embedded tool-server is started by ``argent.connect.open_client``, above both the client and
the server: the client package never imports the server.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from attrs import frozen

from argent.client.link_config import LinkConfig, read_link_config

__all__ = ["Route", "RouteSource", "resolve_route"]

TOOLS_URL_ENV = "ARGENT_TOOLS_URL"
AUTH_TOKEN_ENV = "ARGENT_AUTH_TOKEN"

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
