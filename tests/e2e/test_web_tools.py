"""The web tools (upstream's Chromium tools: tabs, cookies, storage, drag, screen idle, run-sequence,
debugger-*, network logs, launch-app) against a real headless Chromium and pages served on loopback."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web

from argent import limits
from argent.devices.base import DeviceError
from argent.devices.chromium import ChromiumDevice, ChromiumDeviceProvider, find_chromium
from argent.devices.chromium.cdp import CdpSession
from argent.errors import InvalidToolInputError, PolicyRefusal, ToolExecutionError
from argent.runner.execute import FlowRequest, execute_flow
from argent.runner.files import DiskFlowFiles
from argent.runner.report import FlowRunResult
from argent.tools.builtin import build_registry
from argent.tools.call_policy import CallPolicy
from argent.tools.invoker import RegistryInvoker
from argent.tools.registry import ToolContext, ToolRegistry
from tests.e2e.conftest import pages_app, serve

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(find_chromium() is None, reason="no Chromium binary (set ARGENT_CHROMIUM)"),
]

WEB_TOOLS = (
    "launch-app",
    "gesture-drag",
    "await-screen-idle",
    "run-sequence",
    "chromium-tabs",
    "chromium-cookies",
    "chromium-storage",
    "view-network-logs",
    "view-network-request-details",
    "debugger-connect",
    "debugger-status",
    "debugger-evaluate",
    "debugger-log-registry",
)
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "upstream_web_tools.yaml"

APP = """<!doctype html><html><head><title>Web app</title>
<style>body { margin: 0; font: 16px sans-serif }
#pad { position: absolute; left: 0; top: 0; width: 1000px; height: 400px; background: #eee }
#btn { position: absolute; left: 100px; top: 500px; width: 200px; height: 50px }
#field { position: absolute; left: 100px; top: 600px; width: 300px }</style></head><body>
<div id="pad"></div>
<button id="btn" onclick="document.getElementById('out').textContent = 'tapped'">Tap here</button>
<input id="field" aria-label="Field">
<p id="out" style="position:absolute; top: 700px">waiting</p>
<script>
  window.drag = [];
  const pad = document.getElementById('pad');
  for (const kind of ['mousedown', 'mousemove', 'mouseup'])
    pad.addEventListener(kind, e => window.drag.push([kind, e.clientX, e.clientY, e.buttons]));
  console.log('app ready', {n: 1});
  console.warn('careful');
</script></body></html>"""
CHANGING = """<!doctype html><title>Changing</title><p id="c">0</p><script>
let n = 0; const stop = Number(new URLSearchParams(location.search).get('stop') || 0);
const t = setInterval(() => { document.getElementById('c').textContent = String(++n);
  if (stop && n * 50 >= stop) clearInterval(t); }, 50);
</script>"""


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def site() -> AsyncIterator[str]:
    async def data(request: web.Request) -> web.Response:
        body = json.dumps({"auth": request.headers.get("Authorization", ""), "big": "x" * 3000})
        return web.json_response(text=body, headers={"X-Session-Token": "s3cret", "X-Plain": "plain"})

    pages = {"/app.html": APP, "/changing.html": CHANGING}
    async with serve(pages_app(pages, web.route("*", "/api/data", data))) as url:
        yield url


@pytest.fixture
def tools(provider: ChromiumDeviceProvider) -> ToolRegistry:
    return build_registry(devices=provider)


@pytest_asyncio.fixture(loop_scope="module")
async def app(device: ChromiumDevice, site: str) -> ChromiumDevice:
    """The device on a fresh load of the app page."""
    await device.navigate(f"{site}/app.html")
    return device


async def call(tools: ToolRegistry, name: str, args: dict[str, Any], ctx: ToolContext | None = None) -> Any:
    return await tools.invoke(name, args, ctx)


async def page(device: ChromiumDevice, expression: str) -> Any:
    return await device.session.evaluate(expression, await_promise=True)


async def loaded(device: ChromiumDevice, url: str, within: float = 10.0) -> None:
    """Until the device's active page is ``url``, fully loaded. No event of a tab opened by
    ``Target.createTarget`` can be awaited without missing one that came before the session
    attached, so ask, bounded."""
    deadline = asyncio.get_running_loop().time() + within
    probe = f"location.href === {json.dumps(url)} && document.readyState === 'complete'"
    while True:
        try:  # a navigation under way destroys the context an evaluation runs in
            if await page(device, probe):
                return
        except DeviceError:
            pass
        assert asyncio.get_running_loop().time() < deadline, f"{url} never loaded in the new tab"
        await asyncio.sleep(0.02)


# --------------------------------------------------------------------------------------------


async def test_every_web_tool_is_registered_with_a_schema(tools: ToolRegistry) -> None:
    names = [spec.name for spec in tools]
    assert all(name in names for name in WEB_TOOLS)
    drag = tools.get("gesture-drag").input_schema()
    assert drag["required"] == ["udid", "fromX", "fromY", "toX", "toY"]
    assert set(tools.get("view-network-logs").params) == {"device_id", "port", "pageIndex"}
    assert set(tools.get("debugger-evaluate").params) == {"device_id", "port", "expression"}


async def test_launch_app_acknowledges_the_tag(tools: ToolRegistry, app: ChromiumDevice) -> None:
    result = await call(tools, "launch-app", {"udid": app.id, "bundleId": "com.example.web"})
    assert result == {"launched": True, "bundleId": "com.example.web"}
    ignored = await call(tools, "launch-app", {"udid": app.id, "bundleId": "x", "activity": ".Main"})
    assert ignored["launched"] is True
    with pytest.raises(InvalidToolInputError, match="bundleId may only contain"):
        await call(tools, "launch-app", {"udid": app.id, "bundleId": "-bad id"})


async def test_tabs_list_new_select_close(tools: ToolRegistry, app: ChromiumDevice, site: str) -> None:
    listed = (await call(tools, "chromium-tabs", {"udid": app.id, "action": "list"}))["tabs"]
    assert len(listed) == 1 and listed[0]["active"] and listed[0]["title"] == "Web app"
    first = listed[0]["tabId"]
    opened = await call(
        tools,
        "chromium-tabs",
        {"udid": app.id, "action": "new", "url": f"{site}/changing.html", "label": "two"},
    )
    tabs = {t["tabId"]: t for t in opened["tabs"]}
    second = next(t for t in tabs.values() if t.get("label") == "two")
    assert second["active"] and not tabs[first]["active"] and second["tabId"] != first
    # Every other tool follows the active tab.
    assert await page(app, "document.readyState === 'complete' || new Promise(r => onload = () => r(true))")
    assert await page(app, "location.pathname") == "/changing.html"
    await call(tools, "chromium-tabs", {"udid": app.id, "action": "select", "tab": first})
    assert await page(app, "document.title") == "Web app"
    with pytest.raises(ToolExecutionError, match='No tab matches "nope"'):
        await call(tools, "chromium-tabs", {"udid": app.id, "action": "select", "tab": "nope"})
    with pytest.raises(ToolExecutionError, match="`select` requires `tab`"):
        await call(tools, "chromium-tabs", {"udid": app.id, "action": "select"})
    closed = (await call(tools, "chromium-tabs", {"udid": app.id, "action": "close", "tab": "two"}))["tabs"]
    assert [t["tabId"] for t in closed] == [first]
    with pytest.raises(ToolExecutionError, match="Cannot close the only tab"):
        await call(tools, "chromium-tabs", {"udid": app.id, "action": "close"})
    assert app.alive


async def test_closing_the_active_tab_activates_another(tools: ToolRegistry, app: ChromiumDevice) -> None:
    opened = await call(tools, "chromium-tabs", {"udid": app.id, "action": "new"})
    new_id = next(t["tabId"] for t in opened["tabs"] if t["active"])
    after = (await call(tools, "chromium-tabs", {"udid": app.id, "action": "close"}))["tabs"]
    assert len(after) == 1 and after[0]["active"] and after[0]["tabId"] != new_id
    assert await page(app, "document.title") == "Web app"


async def test_cookies_set_get_delete_clear(tools: ToolRegistry, app: ChromiumDevice, site: str) -> None:
    base = {"udid": app.id}
    assert await call(tools, "chromium-cookies", {**base, "action": "clear"}) == {"cleared": True}
    made = {**base, "action": "set", "name": "sid", "value": "v1", "url": site, "httpOnly": True}
    assert await call(tools, "chromium-cookies", {**made, "sameSite": "Lax"}) == {"set": True}
    got = await call(tools, "chromium-cookies", {**base, "action": "get"})
    assert got["count"] == 1 and got["cookies"][0]["name"] == "sid" and got["cookies"][0]["httpOnly"] is True
    assert await page(app, "document.cookie") == ""  # HttpOnly: the page cannot see it
    with pytest.raises(ToolExecutionError, match="either `url` or `domain`"):
        await call(tools, "chromium-cookies", {**base, "action": "set", "name": "a", "value": "b"})
    with pytest.raises(ToolExecutionError, match="`delete` requires `name`"):
        await call(tools, "chromium-cookies", {**base, "action": "delete"})
    assert await call(
        tools, "chromium-cookies", {**base, "action": "delete", "name": "sid", "url": site}
    ) == {"deleted": True}
    assert (await call(tools, "chromium-cookies", {**base, "action": "get", "url": site}))["count"] == 0
    with pytest.raises(InvalidToolInputError):
        await call(tools, "chromium-cookies", {**base, "action": "set", "sameSite": "lax"})


async def test_local_and_session_storage(tools: ToolRegistry, app: ChromiumDevice) -> None:
    for store, area in (("local", "localStorage"), ("session", "sessionStorage")):
        base = {"udid": app.id, "store": store}
        await call(tools, "chromium-storage", {**base, "action": "clear"})
        assert await call(
            tools, "chromium-storage", {**base, "action": "set", "key": "k", "value": 'v"1'}
        ) == {"set": True}
        assert await page(app, f"{area}.getItem('k')") == 'v"1'
        assert await call(tools, "chromium-storage", {**base, "action": "get", "key": "k"}) == {
            "value": 'v"1'
        }
        assert await call(tools, "chromium-storage", {**base, "action": "get", "key": "none"}) == {
            "value": None
        }
        all_entries = await call(tools, "chromium-storage", {**base, "action": "get"})
        assert all_entries == {"entries": {"k": 'v"1'}, "count": 1}
        assert await call(tools, "chromium-storage", {**base, "action": "remove", "key": "k"}) == {
            "removed": True
        }
        assert (await call(tools, "chromium-storage", {**base, "action": "get"}))["count"] == 0
        with pytest.raises(ToolExecutionError, match="`set` requires `key` and `value`"):
            await call(tools, "chromium-storage", {**base, "action": "set", "key": "k"})


async def test_gesture_drag_presses_moves_and_releases(tools: ToolRegistry, app: ChromiumDevice) -> None:
    args = {"udid": app.id, "fromX": 0.1, "fromY": 0.1, "toX": 0.6, "toY": 0.3, "durationMs": 160}
    result = await call(tools, "gesture-drag", args)
    assert result["dragged"] is True and isinstance(result["timestampMs"], int)
    events = await page(app, "window.drag")
    assert events[0] == ["mousedown", 100, 80, 1]
    assert events[-1] == ["mouseup", 600, 240, 0]
    moves = [e for e in events if e[0] == "mousemove" and e[3] == 1]
    assert len(moves) >= 5 and all(100 < m[1] < 600 for m in moves)
    # Momentum-free: eased, so the first move covers more ground than a linear one would.
    await page(app, "window.drag = []")
    await call(tools, "gesture-drag", {**args, "momentum": False})
    eased = [e for e in await page(app, "window.drag") if e[0] == "mousemove" and e[3] == 1]
    assert eased[0][1] - 100 > (600 - 100) / len(eased)
    with pytest.raises(InvalidToolInputError, match="renamed to `momentum`"):
        await call(tools, "gesture-drag", {**args, "settle": True})
    with pytest.raises(InvalidToolInputError, match="durationMs must be at most 10000"):
        await call(tools, "gesture-drag", {**args, "durationMs": 10_001})


async def test_a_drag_is_released_when_aborted(tools: ToolRegistry, app: ChromiumDevice) -> None:
    await page(app, "window.drag = []")
    ctx = ToolContext()
    args = {"udid": app.id, "fromX": 0.1, "fromY": 0.1, "toX": 0.9, "toY": 0.1, "durationMs": 5000}
    running = asyncio.ensure_future(call(tools, "gesture-drag", args, ctx))
    while not await page(app, "window.drag.length"):
        await asyncio.sleep(0.02)  # no event tells when the page saw the press: poll the page
    ctx.abort.set()
    with pytest.raises(ToolExecutionError, match="aborted"):
        await asyncio.wait_for(running, 2)
    assert (await page(app, "window.drag"))[-1][0] == "mouseup"


async def test_await_screen_idle(tools: ToolRegistry, device: ChromiumDevice, site: str) -> None:
    await device.navigate(f"{site}/changing.html?stop=600")
    settled = await call(
        tools, "await-screen-idle", {"udid": device.id, "timeoutMs": 5000, "minStableMs": 300}
    )
    assert settled["settled"] is True and settled["polls"] >= 3
    assert await page(device, "Number(document.getElementById('c').textContent)") >= 12
    await device.navigate(f"{site}/changing.html")
    busy = await call(
        tools, "await-screen-idle", {"udid": device.id, "timeoutMs": 700, "pollIntervalMs": 100}
    )
    assert busy["settled"] is False and 650 <= busy["waitedMs"] < 3000
    with pytest.raises(InvalidToolInputError, match="pollIntervalMs must be between 50 and 5000"):
        await call(tools, "await-screen-idle", {"udid": device.id, "pollIntervalMs": 10})


async def test_run_sequence_runs_steps_and_stops_at_the_first_failure(
    tools: ToolRegistry, app: ChromiumDevice
) -> None:
    steps = [
        {"tool": "gesture-tap", "args": {"x": 0.2, "y": 0.65}},
        {"tool": "await-ui-element", "args": {"selector": {"text": "tapped"}, "timeoutMs": 3000}},
        {"tool": "gesture-tap", "args": {"x": 0.25, "y": 0.76}, "delayMs": 0},
        {"tool": "keyboard", "args": {"text": "hello", "udid": "ignored"}},
    ]
    done = await call(tools, "run-sequence", {"udid": app.id, "steps": steps})
    assert done["completed"] == 4 and done["total"] == 4
    assert [s["tool"] for s in done["steps"]] == [s["tool"] for s in steps]
    assert await page(app, "document.getElementById('field').value") == "hello"
    assert tools.get("run-sequence").outcome(done).verdict is None

    unmet = [
        {"tool": "await-ui-element", "args": {"selector": {"text": "never"}, "timeoutMs": 200}},
        steps[0],
    ]
    stopped = await call(tools, "run-sequence", {"udid": app.id, "steps": unmet})
    assert stopped["completed"] == 0 and stopped["total"] == 2 and len(stopped["steps"]) == 1
    assert stopped["steps"][0]["error"].startswith("await-ui-element condition not met: No visible element")
    assert tools.get("run-sequence").outcome(stopped).verdict.status == "fail"  # type: ignore[union-attr]

    swipe = await call(
        tools, "run-sequence", {"udid": app.id, "steps": [{"tool": "gesture-swipe", "args": {}}]}
    )
    assert "not available on this tool-server" in swipe["steps"][0]["error"]
    shot = await call(tools, "run-sequence", {"udid": app.id, "steps": [{"tool": "screenshot", "args": {}}]})
    assert shot["steps"][0]["error"].startswith('Tool "screenshot" is not allowed in run-sequence.')
    bad = await call(
        tools, "run-sequence", {"udid": app.id, "steps": [{"tool": "gesture-tap", "args": {"x": 2}}]}
    )
    assert "gesture-tap" in bad["steps"][0]["error"] and bad["completed"] == 0
    with pytest.raises(InvalidToolInputError, match="at least one step"):
        await call(tools, "run-sequence", {"udid": app.id, "steps": []})


async def test_network_logs_and_request_details(tools: ToolRegistry, app: ChromiumDevice) -> None:
    sent = app.session.expect(
        "Network.requestWillBeSent", lambda p: p["request"]["url"].endswith("/api/data")
    )
    done: dict[str, asyncio.Event] = {}
    off = app.session.on(
        "Network.loadingFinished", lambda p: done.setdefault(p["requestId"], asyncio.Event()).set()
    )
    status = await page(
        app,
        "fetch('/api/data', {method: 'POST', body: 'payload', headers: {Authorization: 'Bearer t'}}).then(r => r.status)",
    )
    assert status == 200
    rid = (await asyncio.wait_for(sent, 5))["requestId"]
    await asyncio.wait_for(
        done.setdefault(rid, asyncio.Event()).wait(), 5
    )  # this request's end, not another's
    off()
    text = await call(tools, "view-network-logs", {"device_id": app.id, "port": "8081"})
    assert text.startswith("=== NETWORK LOGS (page 1/1, ")
    line = next(row for row in text.splitlines() if '"POST /api/data"' in row)
    assert " 200 OK Fetch " in line and line.endswith(" ms")
    request_id = line.split("}")[0].removeprefix("{id: ")
    details = await call(
        tools, "view-network-request-details", {"device_id": app.id, "requestId": request_id}
    )
    assert details["state"] == "complete" and details["resourceType"] == "Fetch"
    assert details["request"]["method"] == "POST" and details["request"]["postData"] == "payload"
    assert details["request"]["headers"]["Authorization"] == "[REDACTED]"
    assert details["response"]["headers"]["X-Session-Token"] == "[REDACTED]"
    assert details["response"]["headers"]["X-Plain"] == "plain"
    body = details["response"]["body"]
    assert body.startswith("[TRUNCATED — original size: ") and len(body) < limits.MAX_NETWORK_BODY_CHARS + 200
    bare = await call(
        tools,
        "view-network-request-details",
        {"device_id": app.id, "requestId": request_id, "includeBody": False},
    )
    assert "body" not in bare["response"]
    missing = await call(tools, "view-network-request-details", {"device_id": app.id, "requestId": "nope"})
    assert missing == "Request nope not found. Use view-network-logs to list available requests."
    out_of_range = await call(tools, "view-network-logs", {"device_id": app.id, "pageIndex": 99})
    assert out_of_range.startswith("Page index out of range. Valid range: 0-0 (1 pages, ")
    with pytest.raises(InvalidToolInputError, match="pageIndex"):
        await call(tools, "view-network-logs", {"device_id": app.id, "pageIndex": -1})


async def test_the_network_recording_is_a_bounded_ring(tools: ToolRegistry, app: ChromiumDevice) -> None:
    log = app.network
    capacity, log.capacity = log.capacity, 5
    try:
        await page(
            app,
            "(async () => { for (let i = 0; i < 8; i++) await (await fetch('/api/data?n=' + i)).text() })()",
        )
        assert [r.url.rsplit("=", 1)[-1] for r in log.records()][-5:] == ["3", "4", "5", "6", "7"]
        assert len(log.records()) == 5
        text = await call(tools, "view-network-logs", {"device_id": app.id, "pageIndex": 0})
        rows = text.splitlines()[2:]
        assert text.startswith("=== NETWORK LOGS (page 1/1, 5 total)") and len(rows) == 5
        assert all('"GET /api/data" 200 OK Fetch' in row for row in rows), rows
    finally:
        log.capacity = capacity


async def test_debugger_tools_on_the_page(tools: ToolRegistry, app: ChromiumDevice) -> None:
    ids = {"device_id": app.id}
    connected = await call(tools, "debugger-connect", {**ids, "port": 8081})
    assert connected == {
        "port": app.port,
        "projectRoot": "",
        "deviceName": "Chromium",
        "appName": "Chromium",
        "logicalDeviceId": app.id,
        "isNewDebugger": True,
        "connected": True,
    }
    evaluated = await call(tools, "debugger-evaluate", {**ids, "expression": "Promise.resolve(40 + 2)"})
    assert evaluated == {
        "result": 42,
        "deviceName": "Chromium",
        "appName": "Chromium",
        "logicalDeviceId": app.id,
    }
    title = await call(tools, "debugger-evaluate", {**ids, "expression": "document.title"})
    assert title["result"] == "Web app"
    with pytest.raises(ToolExecutionError, match="boom") as thrown:
        await call(tools, "debugger-evaluate", {**ids, "expression": "(() => { throw new Error('boom') })()"})
    assert thrown.value.error_code == "DEBUGGER_EVALUATE_EXPRESSION_THREW"
    status = await call(tools, "debugger-status", ids)
    assert (
        status["status"] == "connected" and status["loadedScripts"] == 1 and status["sourceMapReady"] is True
    )
    gone = await call(tools, "debugger-status", {"device_id": "chromium-cdp-1"})
    assert gone["status"] == "not_connected" and gone["reason"] == "cdp_unreachable" and not gone["connected"]
    assert (await call(tools, "debugger-log-registry", {"device_id": "chromium-cdp-1"}))[
        "status"
    ] == "not_connected"


async def test_debugger_log_registry_summarises_the_console(tools: ToolRegistry, app: ChromiumDevice) -> None:
    await page(app, "for (let i = 0; i < 3; i++) console.error('failed to load', i); true")
    before = app.console.total
    logs = await call(tools, "debugger-log-registry", {"device_id": app.id})
    assert logs["status"] == "connected" and logs["totalEntries"] == before
    assert logs["byLevel"]["error"] >= 3 and logs["byLevel"]["log"] >= 1 and logs["byLevel"]["warning"] >= 1
    cluster = next(c for c in logs["clusters"] if c["message"].startswith("failed to load"))
    assert cluster["level"] == "error" and cluster["count"] == 1  # distinct texts: 'failed to load 0', …
    text = Path(logs["file"]).read_text()
    assert logs["fileSizeBytes"] == len(text.encode())
    assert "LOG   - | app ready Object" in text  # as upstream: an object by its description, no source file
    assert any(line.startswith("[L:") and "ERROR" in line for line in text.splitlines())


async def test_web_tools_record_with_flow_add_step(
    tools: ToolRegistry, provider: ChromiumDeviceProvider, app: ChromiumDevice, tmp_path: Path
) -> None:
    root = tmp_path / "proj"
    (root / ".argent" / "flows").mkdir(parents=True)
    rec = {"name": "web", "project_root": str(root)}
    await call(tools, "flow-start-recording", rec)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("launch-app", {"udid": app.id, "bundleId": "com.example.web"}),
        ("chromium-storage", {"udid": app.id, "store": "local", "action": "set", "key": "f", "value": "1"}),
        ("chromium-cookies", {"udid": app.id, "action": "get"}),
        ("chromium-tabs", {"udid": app.id, "action": "list"}),
        ("gesture-drag", {"udid": app.id, "fromX": 0.1, "fromY": 0.1, "toX": 0.2, "toY": 0.1}),
        ("await-screen-idle", {"udid": app.id, "timeoutMs": 3000}),
        ("run-sequence", {"udid": app.id, "steps": [{"tool": "gesture-tap", "args": {"x": 0.2, "y": 0.65}}]}),
        ("debugger-connect", {"device_id": app.id}),
        ("debugger-evaluate", {"device_id": app.id, "expression": "1 + 1"}),
        ("debugger-status", {"device_id": app.id}),
        ("debugger-log-registry", {"device_id": app.id}),
        ("view-network-logs", {"device_id": app.id}),
        ("view-network-request-details", {"device_id": app.id, "requestId": "x"}),
    ]
    for n, (command, args) in enumerate(calls, 1):
        added = await call(tools, "flow-add-step", {**rec, "command": command, "args": json.dumps(args)})
        assert added["recorded"].startswith(f"{n}. tool: {command}"), added
        assert app.id not in added["recorded"]
    await call(tools, "flow-finish-recording", rec)
    result = await execute_flow(
        FlowRequest(name="web", project_root=str(root), device=app.id),
        files=DiskFlowFiles(),
        tools=RegistryInvoker(tools),
        devices=provider,
    )
    assert isinstance(result, FlowRunResult) and result.ok, [
        (s.tool, s.status, s.reason) for s in result.steps
    ]
    assert [s.tool for s in result.steps] == [c for c, _ in calls]


async def test_an_upstream_recorded_flow_replays(
    tools: ToolRegistry, provider: ChromiumDeviceProvider, app: ChromiumDevice, tmp_path: Path
) -> None:
    root = tmp_path / "proj"
    (root / ".argent" / "flows").mkdir(parents=True)
    (root / ".argent" / "flows" / "upstream-web.yaml").write_text(FIXTURE.read_text())
    await page(app, "localStorage.clear(); true")
    result = await execute_flow(
        FlowRequest(
            name="upstream-web", project_root=str(root), device=app.id, prerequisite_acknowledged=True
        ),
        files=DiskFlowFiles(),
        tools=RegistryInvoker(tools),
        devices=provider,
    )
    assert isinstance(result, FlowRunResult)
    lines = [(s.tool, s.status, s.reason) for s in result.steps]
    assert result.ok and all(status == "pass" for _, status, _ in lines), lines
    assert await page(app, "localStorage.getItem('feature')") == "on"
    assert await page(app, "document.getElementById('field').value") == "typed"
    by_tool = {s.tool: s.result for s in result.steps}
    assert by_tool["debugger-evaluate"]["result"] == 200
    assert "/api/data" in by_tool["view-network-logs"]
    assert len(by_tool["chromium-tabs"]["tabs"]) == 1


async def test_a_console_flood_stays_bounded(tools: ToolRegistry, app: ChromiumDevice) -> None:
    log = app.console
    capacity, log.capacity = log.capacity, 50
    try:
        before = log.total
        last = app.session.expect(
            "Runtime.consoleAPICalled", lambda p: p.get("args", [{}])[0].get("value") == "end"
        )
        await page(
            app,
            "for (let i = 0; i < 2000; i++) console.log('flood ' + i); console.log('x'.repeat(1e6)); "
            "console.log('end'); true",
        )
        await asyncio.wait_for(last, 10)
        logs = await call(tools, "debugger-log-registry", {"device_id": app.id})
        assert logs["totalEntries"] == before + 2002
        lines = Path(logs["file"]).read_text().splitlines()
        assert len(lines) == 50 and lines[-1].endswith("| end")
        assert max(len(line) for line in lines) < limits.MAX_CONSOLE_MESSAGE_CHARS + 100
        assert len(log.clusters) <= limits.MAX_CONSOLE_CLUSTERS and len(logs["clusters"]) == 20
    finally:
        log.capacity = capacity


async def test_debugger_status_of_a_killed_device_is_not_connected(
    tools: ToolRegistry, provider: ChromiumDeviceProvider
) -> None:
    other = await provider.boot()
    try:
        assert other.pid is not None
        died = other.session.expect("Inspector.detached")
        os.kill(other.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(died, 5)
        status = await call(tools, "debugger-status", {"device_id": other.id})
        assert status["status"] == "not_connected" and status["reason"] == "cdp_unreachable"
        assert other.id in status["detail"]
        with pytest.raises(ToolExecutionError) as failed:
            await call(tools, "debugger-evaluate", {"device_id": other.id, "expression": "1"})
        assert failed.value.error_code == "DEVICE_FAILED"
    finally:
        with contextlib.suppress(Exception):
            await provider.stop(other.id)


async def test_run_sequence_refuses_malformed_or_oversized_steps(
    tools: ToolRegistry, app: ChromiumDevice
) -> None:
    base = {"udid": app.id}
    with pytest.raises(InvalidToolInputError, match=r"steps\.0: unknown key wait"):
        await call(tools, "run-sequence", {**base, "steps": [{"tool": "keyboard", "args": {}, "wait": 1}]})
    with pytest.raises(InvalidToolInputError, match=r"steps\.0\.args must be an object"):
        await call(tools, "run-sequence", {**base, "steps": [{"tool": "keyboard", "args": [1]}]})
    with pytest.raises(InvalidToolInputError, match="1001 steps, more than the 1000 one call may run"):
        many = [{"tool": "keyboard", "args": {"key": "tab"}}] * (limits.MAX_SEQUENCE_STEPS + 1)
        await call(tools, "run-sequence", {**base, "steps": many})
    nested = await call(tools, "run-sequence", {**base, "steps": [{"tool": "run-sequence", "args": {}}]})
    assert "is not allowed in run-sequence" in nested["steps"][0]["error"]


async def test_run_sequence_steps_obey_the_tokens_tools(tools: ToolRegistry, app: ChromiumDevice) -> None:
    """A token that may call run-sequence but not keyboard cannot type through a sequence."""
    await page(
        app, "document.getElementById('field').value = ''; document.getElementById('field').focus(); true"
    )
    policy = CallPolicy(guard="token:seq", tools=("run-sequence",))
    steps = [{"tool": "keyboard", "args": {"text": "sneaky"}}]
    done = await call(tools, "run-sequence", {"udid": app.id, "steps": steps}, ToolContext(policy=policy))
    assert (
        done["completed"] == 0
        and done["steps"][0]["error"] == 'tool "keyboard" is not allowed: guard "token:seq" did not pass'
    )
    assert await page(app, "document.getElementById('field').value") == ""
    with pytest.raises(PolicyRefusal):
        await call(tools, "chromium-tabs", {"udid": app.id, "action": "list"}, ToolContext(policy=policy))


async def test_a_window_the_page_opens_is_a_tab(tools: ToolRegistry, app: ChromiumDevice, site: str) -> None:
    opener = f"document.getElementById('btn').onclick = () => window.open('{site}/changing.html'); true"
    await call(tools, "debugger-evaluate", {"device_id": app.id, "expression": opener})
    await call(tools, "gesture-tap", {"udid": app.id, "x": 0.2, "y": 0.65})  # a popup needs a user's click
    for _ in range(100):  # nothing here reports when /json/list shows the window: poll it, bounded
        tabs = (await call(tools, "chromium-tabs", {"udid": app.id, "action": "list"}))["tabs"]
        if any(t["url"].endswith("/changing.html") for t in tabs):
            break
        await asyncio.sleep(0.05)
    popup = next(t for t in tabs if not t["active"])
    assert len(tabs) == 2 and popup["url"].endswith("/changing.html")
    after = (
        await call(tools, "chromium-tabs", {"udid": app.id, "action": "close", "tab": popup["targetId"]})
    )["tabs"]
    assert len(after) == 1 and after[0]["active"]


async def test_each_page_session_enables_the_network_domain_once(
    tools: ToolRegistry, provider: ChromiumDeviceProvider, site: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The quiet signals and the network recorder both follow a page's ``Network`` events; one
    ``Network.enable`` per page session serves both (the first device's session and a new tab's)."""
    sent: list[tuple[CdpSession, str]] = []
    send = CdpSession.send

    async def counted(
        self: CdpSession, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        sent.append((self, method))
        return await send(self, method, params, timeout=timeout)

    monkeypatch.setattr(CdpSession, "send", counted)
    other = await provider.boot()
    try:
        await other.navigate(f"{site}/app.html")
        await call(tools, "chromium-tabs", {"udid": other.id, "action": "new", "url": f"{site}/app.html"})
        pages = {id(session) for session, method in sent if method == "Page.enable"}
        enables = [id(session) for session, method in sent if method == "Network.enable"]
        assert len(pages) == 2 and sorted(enables) == sorted(pages)
        # ... and that one serves the recorder of the new tab, once its page is in (the tool returns
        # when the tab is listed and active, maybe still on its first about:blank document)
        await loaded(other, f"{site}/app.html")
        finished = other.session.expect("Network.loadingFinished")
        assert await page(other, "fetch('/api/data').then(r => r.status)") == 200
        await asyncio.wait_for(finished, 5)
        listed = await call(tools, "view-network-logs", {"device_id": other.id})
        assert "/api/data" in listed
    finally:
        with contextlib.suppress(Exception):
            await provider.stop(other.id)
