"""debugger-evaluate of an expression that never returns: the page is given back, not frozen."""

from __future__ import annotations

import time

import pytest

from argent import limits
from argent.devices.chromium import ChromiumDevice, find_chromium
from argent.errors import ToolExecutionError
from argent.tools.registry import ToolRegistry
from tests.e2e.test_web_tools import app, call, site, tools

__all__ = ["app", "site", "tools"]

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(find_chromium() is None, reason="no Chromium binary (set ARGENT_CHROMIUM)"),
]


async def test_an_endless_expression_is_terminated_and_the_page_answers_again(
    tools: ToolRegistry, app: ChromiumDevice, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "EVALUATE_TIMEOUT_SECONDS", 1.0)
    started = time.monotonic()
    with pytest.raises(ToolExecutionError, match="EVALUATE_TIMEOUT_SECONDS") as stopped:
        await call(tools, "debugger-evaluate", {"device_id": app.id, "expression": "while (true) {}"})
    assert stopped.value.error_code == "DEBUGGER_EVALUATE_TIMEOUT"
    assert time.monotonic() - started < 5.0
    assert (await call(tools, "debugger-evaluate", {"device_id": app.id, "expression": "6 * 7"}))[
        "result"
    ] == 42
    assert (await call(tools, "describe", {"udid": app.id})) is not None


async def test_a_busy_promise_chain_is_terminated_too(
    tools: ToolRegistry, app: ChromiumDevice, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past V8's own stop (the script's synchronous part), a microtask loop is ended by terminateExecution."""
    monkeypatch.setattr(limits, "EVALUATE_TIMEOUT_SECONDS", 1.0)
    spin = "Promise.resolve().then(() => { const end = Date.now() + 60000; while (Date.now() < end) {} })"
    with pytest.raises(ToolExecutionError) as stopped:
        await call(tools, "debugger-evaluate", {"device_id": app.id, "expression": spin})
    assert stopped.value.error_code == "DEBUGGER_EVALUATE_TIMEOUT"
    assert (await call(tools, "debugger-evaluate", {"device_id": app.id, "expression": "6 * 7"}))[
        "result"
    ] == 42
