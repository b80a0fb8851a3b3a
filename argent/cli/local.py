"""``--local``: run on a tool-server this command starts itself, whatever link is configured.

A link (``ARGENT_TOOLS_URL``, ``~/.argent/link.json``) sends every command of every project to one
tool-server; ``--local`` on `argent flow run`, `argent flow check`, `argent run` and `argent tools`
keeps one command on an embedded tool-server (co-located: the project is read from disk), as if no
link were configured.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from argent.client.routing import Route

F = TypeVar("F", bound=Callable[..., Any])

#: Where ``--local`` is remembered for the command (Click's context meta, shared by its subcommands).
LOCAL_KEY = "argent.local"
LOCAL_HELP = "Run on a tool-server started for this command, whatever link is configured."
EMBEDDED = Route(url=None, token=None, source="embedded")


def _remember(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta[LOCAL_KEY] = True


def local_option(fn: F) -> F:
    """A ``--local`` flag that the command reads with ``chosen_route()`` (not as a parameter)."""
    option = click.option(
        "--local", is_flag=True, expose_value=False, is_eager=True, callback=_remember, help=LOCAL_HELP
    )
    return option(fn)


def local_param() -> click.Option:
    """``--local`` as a parameter object (for a group built with ``params=``)."""
    return click.Option(
        ["--local"], is_flag=True, expose_value=False, is_eager=True, callback=_remember, help=LOCAL_HELP
    )


def chosen_route() -> Route | None:
    """The embedded route when ``--local`` was given to this command (or its group), else None: the
    configured one."""
    ctx = click.get_current_context(silent=True)
    return EMBEDDED if ctx is not None and ctx.meta.get(LOCAL_KEY) else None
