"""A hostile review of the web tools against a real headless Chromium: the policy's file rules for
every page a tool opens, the call's step budget inside run-sequence, and bounds on what a page can
make a tool hold (tabs, waits, evaluate results)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from argent import limits
from argent.devices.chromium import ChromiumDevice, ChromiumDeviceProvider, find_chromium
from argent.errors import ArgentError, InvalidToolInputError, PolicyRefusal, ToolExecutionError
from argent.runner.budget import StepBudget
from argent.tools.call_policy import CallPolicy
from argent.tools.registry import ToolContext, ToolRegistry
from tests.e2e.test_web_tools import app, call, page, site, tools

__all__ = ["app", "site", "tools"]

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(find_chromium() is None, reason="no Chromium binary (set ARGENT_CHROMIUM)"),
]


async def _tab_count(tools: ToolRegistry, device: ChromiumDevice) -> int:
    return len((await call(tools, "chromium-tabs", {"udid": device.id, "action": "list"}))["tabs"])


@pytest.mark.parametrize(
    "url",
    ["file:/etc/hostname", "file:etc/hostname", "view-source:file:///etc/hostname", "fi\tle:///etc/hostname"],
)
async def test_a_new_tab_obeys_the_file_rules_of_open_url(
    tools: ToolRegistry, app: ChromiumDevice, tmp_path: Path, url: str
) -> None:
    before = await _tab_count(tools, app)
    policy = CallPolicy(project_roots=(str(tmp_path),))
    with pytest.raises(PolicyRefusal) as refused:
        await call(
            tools, "chromium-tabs", {"udid": app.id, "action": "new", "url": url}, ToolContext(policy=policy)
        )
    assert refused.value.error_code == "WORKSPACE_UNSAFE"
    with pytest.raises(PolicyRefusal):
        await call(tools, "open-url", {"udid": app.id, "url": url}, ToolContext(policy=policy))
    assert await _tab_count(tools, app) == before


async def test_a_new_tab_takes_only_what_open_url_opens(tools: ToolRegistry, app: ChromiumDevice) -> None:
    """Without a policy, chromium-tabs `new` still refuses what open-url refuses (view-source:, chrome:)."""
    before = await _tab_count(tools, app)
    for url in ("view-source:https://example.com/", "chrome://version"):
        with pytest.raises(InvalidToolInputError, match=r"chromium launch target|Cannot open"):
            await call(tools, "chromium-tabs", {"udid": app.id, "action": "new", "url": url})
    assert await _tab_count(tools, app) == before


async def test_tabs_a_device_may_open_are_bounded(
    tools: ToolRegistry, app: ChromiumDevice, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = await _tab_count(tools, app)
    monkeypatch.setattr(limits, "MAX_CHROMIUM_TABS", start + 2)
    opened: list[str] = []
    try:
        for _ in range(2):
            tabs = (await call(tools, "chromium-tabs", {"udid": app.id, "action": "new"}))["tabs"]
            opened.append(next(t["tabId"] for t in tabs if t["active"]))
        with pytest.raises(ToolExecutionError, match="MAX_CHROMIUM_TABS") as refused:
            await call(tools, "chromium-tabs", {"udid": app.id, "action": "new"})
        assert refused.value.error_code == "CHROMIUM_TAB_LIMIT"
        assert await _tab_count(tools, app) == start + 2
    finally:
        for tab in reversed(opened):
            await call(tools, "chromium-tabs", {"udid": app.id, "action": "close", "tab": tab})


async def test_run_sequence_spends_the_calls_step_budget(tools: ToolRegistry, app: ChromiumDevice) -> None:
    budget = StepBudget(limit=3)
    steps = [{"tool": "keyboard", "args": {"key": "tab"}, "delayMs": 0}] * 5
    done = await call(tools, "run-sequence", {"udid": app.id, "steps": steps}, ToolContext(budget=budget))
    assert done["completed"] == 3 and done["total"] == 5
    assert done["steps"][-1] == {"tool": "keyboard", "error": budget.message}
    assert budget.exhausted


async def test_run_sequence_waits_are_bounded(tools: ToolRegistry, app: ChromiumDevice) -> None:
    steps = [{"tool": "keyboard", "args": {"key": "tab"}, "delayMs": limits.MAX_SEQUENCE_DELAY_MS + 1}]
    with pytest.raises(InvalidToolInputError) as refused:
        await call(tools, "run-sequence", {"udid": app.id, "steps": steps})
    issue = refused.value.issues[0]
    assert issue.code == "too_big" and issue.path == ["steps", 0, "delayMs"]
    assert issue.maximum == limits.MAX_SEQUENCE_DELAY_MS


async def test_an_aborted_sequence_stops_in_its_wait(tools: ToolRegistry, app: ChromiumDevice) -> None:
    ctx = ToolContext()
    steps = [{"tool": "keyboard", "args": {"key": "tab"}, "delayMs": 30_000}] * 3
    running = asyncio.create_task(call(tools, "run-sequence", {"udid": app.id, "steps": steps}, ctx))
    await asyncio.sleep(0.3)  # the first step is typed and its wait begun; no event says so from outside
    started = time.monotonic()
    ctx.abort.set()
    done = await asyncio.wait_for(running, 5)
    assert time.monotonic() - started < 1.0 and done["completed"] == 1


async def test_a_huge_evaluate_result_is_refused_in_the_page(
    tools: ToolRegistry, app: ChromiumDevice
) -> None:
    started = time.monotonic()
    with pytest.raises(ToolExecutionError, match="MAX_EVALUATE_RESULT_CHARS") as refused:
        await call(tools, "debugger-evaluate", {"device_id": app.id, "expression": "'x'.repeat(2e8)"})
    assert refused.value.error_code == "DEBUGGER_EVALUATE_RESULT_TOO_LARGE"
    assert time.monotonic() - started < 8.0 and app.alive
    deep = "(() => { let o = 1; for (let i = 0; i < 5000; i++) o = [o]; return o })()"
    with pytest.raises(ToolExecutionError, match="MAX_EVALUATE_RESULT_DEPTH"):
        await call(tools, "debugger-evaluate", {"device_id": app.id, "expression": deep})
    ok = await call(tools, "debugger-evaluate", {"device_id": app.id, "expression": "var a = 2; a * 21"})
    assert ok["result"] == 42
    assert (await call(tools, "debugger-evaluate", {"device_id": app.id, "expression": "void 0"}))[
        "result"
    ] is None
    got = await call(
        tools, "debugger-evaluate", {"device_id": app.id, "expression": "Promise.resolve({a: [1, 'b']})"}
    )
    assert got["result"] == {"a": [1, "b"]}


async def test_web_tool_range_errors_carry_upstream_issues(tools: ToolRegistry, app: ChromiumDevice) -> None:
    drag = {"udid": app.id, "fromX": 0.1, "fromY": 0.1, "toX": 0.2, "toY": 0.2, "durationMs": 20_000}
    with pytest.raises(InvalidToolInputError) as refused:
        await call(tools, "gesture-drag", drag)
    issue = refused.value.issues[0]
    assert (issue.code, issue.path, issue.maximum) == ("too_big", ["durationMs"], limits.MAX_DRAG_DURATION_MS)
    with pytest.raises(InvalidToolInputError) as refused:
        await call(tools, "await-screen-idle", {"udid": app.id, "pollIntervalMs": 10})
    issue = refused.value.issues[0]
    assert (issue.code, issue.path, issue.minimum) == ("too_small", ["pollIntervalMs"], 50)
    with pytest.raises(InvalidToolInputError) as refused:
        await call(tools, "await-screen-idle", {"udid": app.id, "timeoutMs": 0})
    issue = refused.value.issues[0]
    assert (issue.code, issue.path, issue.minimum, issue.inclusive) == ("too_small", ["timeoutMs"], 0, False)
    with pytest.raises(InvalidToolInputError) as refused:
        await call(tools, "run-sequence", {"udid": app.id, "steps": []})
    issue = refused.value.issues[0]
    assert (issue.code, issue.path, issue.minimum, issue.origin) == ("too_small", ["steps"], 1, "array")
    with pytest.raises(InvalidToolInputError) as refused:
        await call(tools, "launch-app", {"udid": app.id, "bundleId": "-bad"})
    assert refused.value.issues[0].path == ["bundleId"]


UPSTREAM_HINTS: dict[str, tuple[bool, str | None]] = {
    "chromium-tabs": (
        False,
        "tab tabs window windows switch select close new open multi-tab chromium electron",
    ),
    "chromium-cookies": (
        False,
        "cookies cookie get set delete clear httponly samesite session auth chromium",
    ),
    "chromium-storage": (
        False,
        "storage localstorage sessionstorage local session get set remove clear key value chromium",
    ),
    "gesture-drag": (True, "drag drop slider mouse press move release chromium select"),
    "run-sequence": (True, "batch sequence multiple gesture steps sequentially"),
    "launch-app": (
        True,
        "open start app bundle id package simulator emulator chromium vega launch tvos apple tv fire tv",
    ),
    "await-screen-idle": (
        False,
        "wait until screen settles idle stable stops changing animation transition rendered ready before "
        "screenshot",
    ),
    "debugger-evaluate": (False, None),
    "view-network-logs": (False, None),
}


async def test_web_tools_carry_upstreams_always_load_and_search_hint(tools: ToolRegistry) -> None:
    for name, (always, hint) in UPSTREAM_HINTS.items():
        spec: Any = tools.get(name)
        assert (spec.always_load, spec.search_hint) == (always, hint), name


async def test_keyboard_text_is_bounded_before_any_key_is_sent(
    tools: ToolRegistry, app: ChromiumDevice
) -> None:
    await page(
        app, "document.getElementById('field').value = ''; document.getElementById('field').focus(); true"
    )
    started = time.monotonic()
    with pytest.raises(InvalidToolInputError, match="MAX_TYPED_CHARS") as refused:
        await call(tools, "keyboard", {"udid": app.id, "text": "a" * (limits.MAX_TYPED_CHARS + 1)})
    issue = refused.value.issues[0]
    assert (issue.code, issue.path, issue.maximum) == ("too_big", ["text"], limits.MAX_TYPED_CHARS)
    assert time.monotonic() - started < 1.0
    assert await page(app, "document.getElementById('field').value") == ""


async def test_a_device_killed_mid_call_fails_each_web_tool_clearly(
    tools: ToolRegistry, provider: ChromiumDeviceProvider
) -> None:
    """A drag in flight when Chromium dies, and every web tool after: device errors, not tool bugs."""
    other = await provider.boot()
    try:
        assert other.pid is not None
        drag = {"udid": other.id, "fromX": 0.1, "fromY": 0.1, "toX": 0.9, "toY": 0.9, "durationMs": 5000}
        dragging = asyncio.create_task(call(tools, "gesture-drag", drag))
        await asyncio.sleep(0.3)  # the button is down and moves are flowing; nothing outside reports it
        os.kill(other.pid, signal.SIGKILL)
        calls: list[tuple[str, dict[str, Any]]] = [
            ("chromium-tabs", {"udid": other.id, "action": "list"}),
            ("chromium-tabs", {"udid": other.id, "action": "new"}),
            ("chromium-cookies", {"udid": other.id, "action": "get"}),
            ("chromium-storage", {"udid": other.id, "action": "get"}),
            ("debugger-evaluate", {"device_id": other.id, "expression": "1"}),
            ("await-screen-idle", {"udid": other.id, "timeoutMs": 500}),
            ("run-sequence", {"udid": other.id, "steps": [{"tool": "keyboard", "args": {"key": "tab"}}]}),
        ]
        with pytest.raises(ToolExecutionError) as failed:
            await asyncio.wait_for(dragging, 10)
        assert failed.value.error_kind == "device" and not failed.value.message.startswith("[Tool:")
        for name, args in calls:
            try:
                result = await asyncio.wait_for(call(tools, name, args), 15)
            except ArgentError as exc:
                assert not exc.message.startswith("[Tool:"), (name, exc.message)
                assert "Traceback" not in exc.message
            else:
                assert name in ("await-screen-idle", "run-sequence"), (name, result)
                if name == "run-sequence":
                    assert result["completed"] == 0 and "error" in result["steps"][0]
    finally:
        with contextlib.suppress(Exception):
            await provider.stop(other.id)


SECRET = "/etc/hostname"


async def _settled_away(device: ChromiumDevice, pathname: str) -> None:
    """Wait (bounded) until the page is off ``pathname``: nothing reports the page's own navigation
    (allowed or refused) to a tool, so it is polled."""
    for _ in range(40):
        await asyncio.sleep(0.05)
        where = await page(device, "location.protocol + location.pathname")
        if where != "file:" + pathname:
            return


async def _not_on_secret(device: ChromiumDevice) -> None:
    assert await page(device, "location.pathname") != SECRET
    shown = await page(device, "document.documentElement ? document.documentElement.innerText : ''")
    assert Path(SECRET).read_text().strip() not in str(shown)


async def test_a_project_file_page_cannot_navigate_to_other_local_files(
    tools: ToolRegistry, app: ChromiumDevice, tmp_path: Path
) -> None:
    """The device itself refuses a local file the call may not read, whoever asks for it: a script
    of the page, a link it follows, a tap on that link."""
    (tmp_path / "page.html").write_text(
        f'<a id="go" href="file://{SECRET}" style="display:block;width:100%;height:100%">go</a>'
    )
    ctx = ToolContext(policy=CallPolicy(project_roots=(str(tmp_path),)))
    try:
        project_page = (tmp_path / "page.html").as_uri()
        await call(tools, "open-url", {"udid": app.id, "url": project_page}, ctx)
        leak = f"location.href = 'file://{SECRET}'; true"
        await call(tools, "debugger-evaluate", {"device_id": app.id, "expression": leak}, ctx)
        await _settled_away(app, str(tmp_path / "page.html"))
        await _not_on_secret(app)
        for attempt in ("document.getElementById('go').click(); true", None):
            await call(tools, "open-url", {"udid": app.id, "url": project_page}, ctx)
            if attempt is None:
                await call(tools, "gesture-tap", {"udid": app.id, "x": 0.5, "y": 0.5}, ctx)
            else:
                await call(tools, "debugger-evaluate", {"device_id": app.id, "expression": attempt}, ctx)
            await _settled_away(app, str(tmp_path / "page.html"))
            await _not_on_secret(app)
    finally:
        await app.use_file_access(None)


async def test_an_allowed_file_page_loads_its_files_and_no_other(
    tools: ToolRegistry, app: ChromiumDevice, tmp_path: Path
) -> None:
    """A project page still loads the image beside it; an image or frame of a file outside the
    project fails to load, and a call without a policy turns the interception off again."""
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="7" height="5"><rect width="7" height="5"/></svg>'
    project, other = tmp_path / "project", tmp_path / "other"
    for directory in (project, other):
        directory.mkdir()
        (directory / "dot.svg").write_text(svg)
    (project / "page.html").write_text(
        f'<img id="mine" src="dot.svg"><img id="theirs" src="{(other / "dot.svg").as_uri()}">'
        f'<iframe id="frame" src="file://{SECRET}"></iframe>'
    )
    ctx = ToolContext(policy=CallPolicy(project_roots=(str(project),)))
    loaded = (
        "new Promise(r => { const i = document.getElementById(ID); "
        "const done = () => r(i.naturalWidth); if (i.complete) done(); else { i.onload = done; i.onerror = done; } })"
    )
    try:
        await call(tools, "open-url", {"udid": app.id, "url": (project / "page.html").as_uri()}, ctx)
        assert await page(app, loaded.replace("ID", "'mine'")) == 7
        assert await page(app, loaded.replace("ID", "'theirs'")) == 0
        assert app.file_access is not None
        await call(tools, "open-url", {"udid": app.id, "url": "about:blank"})
        assert app.file_access is None
    finally:
        await app.use_file_access(None)


async def test_the_file_rule_follows_the_device_to_another_tab(
    tools: ToolRegistry, app: ChromiumDevice, tmp_path: Path
) -> None:
    (tmp_path / "page.html").write_text("<p>project page</p>")
    ctx = ToolContext(policy=CallPolicy(project_roots=(str(tmp_path),)))
    project_page = (tmp_path / "page.html").as_uri()
    before = {
        t["tabId"] for t in (await call(tools, "chromium-tabs", {"udid": app.id, "action": "list"}))["tabs"]
    }
    opened: str | None = None
    try:
        tabs = await call(tools, "chromium-tabs", {"udid": app.id, "action": "new", "url": project_page}, ctx)
        opened = next(t["tabId"] for t in tabs["tabs"] if t["active"])
        assert opened not in before
        leak = f"location.href = 'file://{SECRET}'; true"
        await call(tools, "debugger-evaluate", {"device_id": app.id, "expression": leak}, ctx)
        await _settled_away(app, str(tmp_path / "page.html"))
        await _not_on_secret(app)
    finally:
        await app.use_file_access(None)
        if opened is not None:
            with contextlib.suppress(Exception):
                await call(tools, "chromium-tabs", {"udid": app.id, "action": "close", "tab": opened})


async def test_a_tab_the_page_opened_on_a_refused_file_shows_nothing_of_it(
    tools: ToolRegistry, app: ChromiumDevice, tmp_path: Path
) -> None:
    """A popup the page opens is a page of its own (outside the session that intercepts): selecting
    it loads it again under the rule, so no tool reads the refused file through it."""
    (tmp_path / "page.html").write_text(
        f'<a id="go" target="_blank" href="file://{SECRET}" style="display:block;width:100%;height:100%">go</a>'
    )
    ctx = ToolContext(policy=CallPolicy(project_roots=(str(tmp_path),)))
    listing = {"udid": app.id, "action": "list"}
    before = {t["tabId"] for t in (await call(tools, "chromium-tabs", listing))["tabs"]}
    popup: str | None = None
    try:
        await call(tools, "open-url", {"udid": app.id, "url": (tmp_path / "page.html").as_uri()}, ctx)
        await call(tools, "gesture-tap", {"udid": app.id, "x": 0.5, "y": 0.5}, ctx)
        for _ in range(40):
            tabs = (await call(tools, "chromium-tabs", listing, ctx))["tabs"]
            fresh = [t["tabId"] for t in tabs if t["tabId"] not in before]
            if fresh:
                popup = fresh[0]
                break
            await asyncio.sleep(0.05)
        if popup is None:
            pytest.skip("this Chromium opened no popup for the tap")
        await call(tools, "chromium-tabs", {"udid": app.id, "action": "select", "tab": popup}, ctx)
        await _not_on_secret(app)
    finally:
        await app.use_file_access(None)
        if popup is not None:
            with contextlib.suppress(Exception):
                await call(tools, "chromium-tabs", {"udid": app.id, "action": "close", "tab": popup})


async def test_a_flow_run_taps_no_way_to_other_local_files(
    tools: ToolRegistry, app: ChromiumDevice, tmp_path: Path
) -> None:
    """A flow's own launch and tap drive the device the run resolved: the rule holds there too."""
    (tmp_path / "page.html").write_text(f'<a id="go" href="file://{SECRET}">Leave</a>')
    flows = tmp_path / ".argent" / "flows"
    flows.mkdir(parents=True)
    (flows / "leave.yaml").write_text(
        "steps:\n  - launch: { chromium: ../../page.html }\n  - tap: { id: go }\n"
    )
    ctx = ToolContext(policy=CallPolicy(project_roots=(str(tmp_path),)))
    try:
        args = {"project_root": str(tmp_path), "name": "leave", "device": app.id}
        await call(tools, "flow-execute", args, ctx)
        await _settled_away(app, str(tmp_path / "page.html"))
        await _not_on_secret(app)
        assert app.file_access is not None
    finally:
        await app.use_file_access(None)
