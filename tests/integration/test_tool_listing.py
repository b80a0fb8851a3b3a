"""GET /tools stays cheap: every client lists the tools before its first call, so 200 clients at once
list them 200 times (issue 10: a crowd of busy clients must not stall `/healthz`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import attrs

from argent.limits import TOOL_LISTING_CACHE_SECONDS
from argent.server.app import create_app
from argent.server.config import ServerConfig
from argent.server.keys import REGISTRY
from argent.tools.args import arg
from argent.tools.registry import ToolContext, ToolRegistry, ToolSpec


@attrs.frozen
class Args:
    name: str = arg(doc="a name")
    count: int | None = arg(None)


async def nothing(args: Args, ctx: ToolContext) -> Any:
    return None


async def test_a_crowd_of_listings_looks_the_tools_up_once_and_a_new_tool_shows_at_once(
    aiohttp_client: Any, tmp_path: Path
) -> None:
    checks: list[int] = []

    def needs_something() -> str | None:
        checks.append(1)
        return None

    registry = ToolRegistry(
        [ToolSpec(name="t", description="", args_type=Args, execute=nothing, availability=needs_something)]
    )
    app = create_app(ServerConfig(tmp_dir=str(tmp_path)), registry)
    client = await aiohttp_client(app)
    t0 = time.monotonic()
    bodies = [await (await client.get("/tools")).json() for _ in range(50)]
    elapsed = time.monotonic() - t0
    assert bodies == [bodies[0]] * 50 and [t["name"] for t in bodies[0]["tools"]] == ["t"]
    assert len(checks) <= 1 + int(elapsed / TOOL_LISTING_CACHE_SECONDS)  # once per period, not 50 times
    app[REGISTRY].register(ToolSpec(name="late", description="", args_type=Args, execute=nothing))
    listed = await (await client.get("/tools")).json()
    assert [t["name"] for t in listed["tools"]] == ["t", "late"]
