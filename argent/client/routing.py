"""Where a command's tool calls go.

For now every command talks to an in-process registry (co-located: the runner reads
the project from disk). The link transport (``ARGENT_TOOLS_URL``, ``~/.argent/link.json``)
and the embedded tool-server slot in here without touching the callers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from argent.client.base import ToolClient
from argent.client.local import InProcessClient


@asynccontextmanager
async def open_client() -> AsyncIterator[ToolClient]:
    from argent.tools.builtin import build_registry

    yield InProcessClient(build_registry())
