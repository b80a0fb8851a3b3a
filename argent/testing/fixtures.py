"""The fixtures ``argent_server`` and ``argent_run_flow``, on pytest-aiohttp and pytest-asyncio.

``argent_server`` is the real tool-server app (``argent.server.app.create_app``, the built-in tools)
served by pytest-aiohttp's ``aiohttp_server`` on a free loopback port, with a fresh token and its own
temp dir: one per test, on the test's event loop, stopped (and every Chromium it launched with it)
when the test ends. ``argent_run_flow`` runs one flow as ``argent flow run <ref>`` would: over the
configured link when there is one, else on ``argent_server`` (co-located, like the CLI's embedded
tool-server), and hands back the FlowRunResult whether the flow passed or not.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from attrs import frozen

from argent.testing.options import project_root, shares_a_link

__all__ = ["ArgentServer", "FlowNotRun", "RunFlow", "argent_run_flow", "argent_server"]

LOOPBACK = "127.0.0.1"


@frozen
class ArgentServer:
    """A tool-server running in this process: its base URL and bearer token."""

    url: str
    token: str

    @property
    def env(self) -> dict[str, str]:
        """The environment that routes an ``argent`` command to this tool-server (over a link)."""
        return {"ARGENT_TOOLS_URL": self.url, "ARGENT_AUTH_TOKEN": self.token}


class FlowNotRun(Exception):
    """The flow could not run at all: a bad name or path, an invalid flow file, a tool-server that
    refused the call or could not be reached. ``error_code`` is the tool-server's, when it sent one."""

    def __init__(self, message: str, *, error_code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.error_code = error_code


RunFlow = Callable[..., Awaitable[dict[str, Any]]]


@pytest_asyncio.fixture(loop_scope="function")
async def argent_server(aiohttp_server: Any, tmp_path_factory: pytest.TempPathFactory) -> ArgentServer:
    from argent.server.app import create_app
    from argent.server.config import ServerConfig

    token = secrets.token_urlsafe(32)
    tmp_dir = tmp_path_factory.mktemp("argent-server")
    app = create_app(ServerConfig(host=LOOPBACK, port=0, token=token, tmp_dir=str(tmp_dir)))
    server = await aiohttp_server(app, host=LOOPBACK)
    return ArgentServer(url=f"http://{LOOPBACK}:{server.port}", token=token)


@pytest.fixture
def argent_run_flow(request: pytest.FixtureRequest, pytestconfig: pytest.Config) -> RunFlow:
    from argent.client.routing import resolve_route
    from argent.client.session import ToolServerClient
    from argent.testing.runs import run_options

    route = resolve_route()
    defaults = run_options(pytestconfig)
    default_root = project_root(pytestconfig)

    # Without a link, the flows run on argent_server, started now on the test's event loop.
    server: ArgentServer | None = None if route.url is not None else request.getfixturevalue("argent_server")

    async def run_flow(
        ref: str | Path, *, project_root: str | Path | None = None, **args: Any
    ) -> dict[str, Any]:
        """Run one flow (a saved name, or a path to its YAML) and return its FlowRunResult as a dict,
        whether it passed or not; ``args`` are flow-execute arguments (``device``, ``platform``,
        ``updateBaselines``). Raises ``FlowNotRun`` only when the flow could not run at all."""
        from argent.cli.problems import CommandFailed
        from argent.cli.targets import FlowTarget, resolve_flow_ref
        from argent.client.base import ToolCallError
        from argent.driver import BrowserRoom, FlowDriver

        root = Path(project_root).resolve() if project_root is not None else default_root
        if project_root is not None and not root.is_dir():
            raise FlowNotRun(f"project_root is not a directory: {root}")
        try:
            target = resolve_flow_ref(str(ref), root, recursive=False)
        except CommandFailed as exc:
            raise FlowNotRun(exc.message) from None
        if not isinstance(target, FlowTarget):
            raise FlowNotRun(f"argent_run_flow runs one flow; {ref} is a directory of flows.")
        options = {"prerequisiteAcknowledged": True, **defaults, **args}
        room = BrowserRoom(siblings=shares_a_link(server is None))
        try:
            async with contextlib.AsyncExitStack() as stack:
                tools = None
                if server is not None:
                    tools = await stack.enter_async_context(
                        ToolServerClient(server.url, server.token, linked=False, source="embedded")
                    )
                driver = FlowDriver(root, options, client=tools, route=route, room=room)
                run = await (await stack.enter_async_context(driver)).run(target)
        except ToolCallError as exc:
            raise FlowNotRun(exc.message, error_code=exc.error_code) from None
        result = run.result
        if run.report is None:
            notice = result.get("notice") if isinstance(result, dict) else None
            raise FlowNotRun(
                notice if isinstance(notice, str) and notice else f'"{target.stem}" did not run.'
            )
        assert isinstance(result, dict)
        return result

    return run_flow
