"""Running flows for pytest with the CLI's own parts.

The flow items of a process share one client, opened at the first item and closed when the session
ends: routed as the CLI routes (``argent.client.routing``: the configured link, else a tool-server
started in process), so under pytest-xdist each worker has its own tool-server. Each item is one
flow-execute call of the public driver (``argent.driver.FlowDriver``), with the arguments ``argent flow
run`` sends, retried while a shared tool-server is busy, and read into the outcome the reports use
(``argent.reports.model``): the status, the first failing step line, and every line.

The items are synchronous tests, so the client lives on a private event loop (``asyncio.Runner``)
that runs only while an item's call runs; pytest-asyncio's loops never run at the same time.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from argent.client.base import ToolCallError
from argent.client.routing import resolve_route
from argent.driver import FlowDriver, FlowTarget
from argent.reports.model import FlowOutcome, outcome_of
from argent.reports.recorder import run_name
from argent.testing.options import SESSION, platforms, project_root, shares_a_link


def run_options(config: pytest.Config) -> dict[str, Any]:
    """The flow-execute arguments the ``--argent-*`` options add, as ``argent flow run`` sends them."""
    options: dict[str, Any] = {}
    if config.getoption("argent_device", None):
        options["device"] = config.getoption("argent_device")
    chosen = platforms(config)
    if len(chosen) == 1:  # several: each item names its own
        options["platform"] = chosen[0]
    if config.getoption("argent_update_baselines", False):
        options["updateBaselines"] = True
    return options


class FlowSession:
    """The flow items' client of this process, on its own event loop."""

    def __init__(self, root: Path, options: dict[str, Any]) -> None:
        self.root = root
        self.driver = FlowDriver(root, {"prerequisiteAcknowledged": True, **options})
        self.runner = asyncio.Runner(loop_factory=asyncio.new_event_loop)
        self.opened = False

    def run(self, path: str, platform: str | None = None) -> FlowOutcome:
        return self.runner.run(self._run(FlowTarget(path=path, platform=platform)))

    async def _run(self, target: FlowTarget) -> FlowOutcome:
        if not self.opened:
            self.opened = True
            self.driver.room.siblings = shares_a_link(resolve_route().url is not None)
        rel = run_name(target, str(self.root))
        t0 = time.monotonic()
        try:
            run = await self.driver.run(target)
        except ToolCallError as exc:
            return outcome_of(0, target.path, rel, time.monotonic() - t0, stem=target.stem, error=exc.message)
        return outcome_of(
            0,
            target.path,
            rel,
            time.monotonic() - t0,
            stem=target.stem,
            result=run.result,
            refused=[refusal.line() for refusal in run.refused],
        )

    def close(self) -> None:
        """Close the client (an embedded tool-server stops, and with it every Chromium it launched)."""
        try:
            self.runner.run(self.driver.close())
        finally:
            self.runner.close()


def flow_session(config: pytest.Config) -> FlowSession:
    session = config.stash.get(SESSION, None)
    if not isinstance(session, FlowSession):
        session = FlowSession(project_root(config), run_options(config))
        config.stash[SESSION] = session
    return session


def close_flow_session(config: pytest.Config) -> None:
    session = config.stash.get(SESSION, None)
    if isinstance(session, FlowSession):
        del config.stash[SESSION]
        session.close()
