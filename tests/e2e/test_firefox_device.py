"""The firefox device against a real headless Firefox (WebDriver BiDi) and real local pages.

One Firefox is booted for the module (through the tool-server's device hub) and shared by the tests
that leave it alive; the tests that kill or count browsers boot their own. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import struct
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from argent.devices.base import (
    DeviceError,
    DeviceGoneError,
    DialogAnswer,
    FileInputs,
    FormControls,
    NativeDialogs,
    UiNode,
)
from argent.devices.firefox import FirefoxDevice, FirefoxDeviceProvider
from argent.devices.firefox.launcher import launch_firefox
from argent.devices.hub import DeviceHub
from argent.errors import DeviceResolutionError, ToolExecutionError
from argent.limits import BROWSER_ANSWER_SECONDS, BROWSER_PING_SECONDS
from argent.tools.builtin import build_registry
from argent.tools.registry import ToolRegistry
from tests.e2e.conftest import firefox_marks, group_alive, pages_app, serve

pytestmark = [*firefox_marks(), pytest.mark.asyncio(loop_scope="module")]

PAGE = """<!doctype html>
<html><head><title>Fox page</title>
<style>body { margin: 0; font: 16px sans-serif } button, input, select { font: 16px sans-serif }</style></head>
<body>
<h1 id="title">Hello fox</h1>
<button id="btn" onclick="document.getElementById('out').textContent = 'clicked ' + (++window.clicks)">Press me</button>
<button id="dbl" ondblclick="document.getElementById('out').textContent = 'double'">Double me</button>
<p id="out">not clicked</p>
<form id="f" onsubmit="event.preventDefault(); document.getElementById('sent').textContent = 'sent:' + document.getElementById('name').value">
  <input id="name" placeholder="Your name">
  <select id="size"><option>Small</option><option>Large</option></select>
  <input id="file" type="file" aria-label="Pick a file">
</form>
<p id="sent"></p>
<button id="ask" onclick="document.getElementById('answer').textContent = String(confirm('Sure?'))">Ask</button>
<p id="answer"></p>
<iframe id="frm" srcdoc="<body style='margin:0'><button id='inner'>Inner button</button></body>"
        style="position:absolute; left:600px; top:100px; width:300px; height:100px; border:0"></iframe>
<div style="height: 3000px"></div>
<p id="far">Far below</p>
<script>
  window.clicks = 0;
  window.keys = [];
  document.addEventListener('keydown', e => window.keys.push([e.key, e.shiftKey, e.ctrlKey]));
  console.warn('fox ready');
  fetch('/api/ping').then(r => r.text());
</script>
</body></html>
"""


#: A docs site's search (MkDocs Material's construct): "/" focuses the box, and the results panel
#: opens when the box has the focus, as ``focusin`` on the body says.
SEARCH_PAGE = """<!doctype html><title>Docs</title>
<style>#panel { display: none } body:has(#q:focus) #panel { display: block }</style>
<input id="q" aria-label="Search"> <input id="other" aria-label="Other">
<p id="panel">1 matching document</p><p id="state">closed</p>
<script>
  document.body.addEventListener('focusin', e => {
    document.getElementById('state').textContent = e.target.id === 'q' ? 'open' : 'closed';
  });
  document.addEventListener('keydown', e => {
    if (e.key === '/' && document.activeElement === document.body) {
      e.preventDefault();
      document.getElementById('q').focus();
    }
  });
</script>"""


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def site() -> AsyncIterator[str]:
    from aiohttp import web

    async def ping(request: web.Request) -> web.Response:
        return web.Response(text="pong")

    pages = {"/page.html": PAGE, "/search.html": SEARCH_PAGE}
    async with serve(pages_app(pages, web.get("/api/ping", ping))) as url:
        yield url


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def hub() -> AsyncIterator[DeviceHub]:
    devices = DeviceHub()
    try:
        yield devices
    finally:
        await devices.close_all()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def fox(hub: DeviceHub) -> FirefoxDevice:
    device = await hub.boot("firefox")
    assert isinstance(device, FirefoxDevice)
    return device


@pytest.fixture
def tools(hub: DeviceHub) -> ToolRegistry:
    return build_registry(devices=hub)


@pytest_asyncio.fixture(loop_scope="module")
async def page(fox: FirefoxDevice, site: str) -> FirefoxDevice:
    """The device on a fresh load of the page."""
    await fox.navigate(f"{site}/page.html")
    return fox


async def js(device: FirefoxDevice, expression: str) -> Any:
    outcome = await device.run_script(expression, timeout=5)
    assert outcome.thrown is None and not outcome.timed_out, outcome
    return outcome.value


def find(node: UiNode, identifier: str) -> UiNode | None:
    if node.identifier == identifier:
        return node
    for child in node.children:
        found = find(child, identifier)
        if found is not None:
            return found
    return None


async def center(device: FirefoxDevice, identifier: str) -> tuple[float, float]:
    node = find((await device.ui_tree()).root, identifier)
    assert node is not None, identifier
    return node.frame.center


def png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    return width, height


# --------------------------------------------------------------------------------------------
# The device


async def test_boot_gives_a_1000x800_page_with_a_bidi_endpoint(fox: FirefoxDevice, hub: DeviceHub) -> None:
    assert re.fullmatch(r"firefox-bidi-\d+", fox.id) and fox.platform == "firefox"
    assert fox.endpoint == f"ws://127.0.0.1:{fox.port}/session"
    assert await js(fox, "[innerWidth, innerHeight, devicePixelRatio]") == [1000, 800, 1]
    # The screen and window a page sees are the viewport's, as on Chromium (not headless 1366x768).
    assert await js(fox, "[outerWidth, outerHeight, screen.width, screen.height]") == [1000, 800, 1000, 800]
    assert fox.id in {d.id for d in await hub.list_booted()}
    assert await hub.get(fox.id) is fox


async def test_screenshot_is_a_1000x800_png(page: FirefoxDevice) -> None:
    assert png_size(await page.screenshot()) == (1000, 800)
    assert png_size(await page.capture((10, 20, 110, 70))) == (100, 50)


async def test_the_shared_walker_reads_roles_labels_and_an_iframe(page: FirefoxDevice) -> None:
    root = (await page.ui_tree()).root
    title, btn, name, frame_button = (find(root, i) for i in ("title", "btn", "name", "inner"))
    assert title is not None and (title.role, title.label) == ("heading", "Hello fox")
    assert btn is not None and btn.clickable and btn.label == "Press me"
    assert name is not None and name.role == "textbox" and name.label == "Your name"
    assert frame_button is not None and frame_button.label == "Inner button"
    assert 0.6 <= frame_button.frame.x < 0.9  # in page fractions, placed where the iframe is


async def test_tap_and_double_tap_and_long_press(page: FirefoxDevice) -> None:
    x, y = await center(page, "btn")
    await page.tap(x, y)
    await page.long_press(x, y, 50)
    assert await js(page, "document.getElementById('out').textContent") == "clicked 2"
    x, y = await center(page, "dbl")
    await page.tap(x, y, click_count=2)
    assert await js(page, "document.getElementById('out').textContent") == "double"


async def test_typing_chords_and_enter_submit(page: FirefoxDevice) -> None:
    x, y = await center(page, "name")
    await page.tap(x, y)
    await page.type_text("Ada Lovelace")
    await page.press_key("Control+A")
    await page.type_text("Grace")
    await page.press_key("Shift+Tab")
    assert await js(page, "document.activeElement.id") == "dbl"
    await page.tap(x, y)
    await page.press_key("Enter")
    assert await js(page, "document.getElementById('sent').textContent") == "sent:Grace"
    keys = await js(page, "window.keys")
    assert ["a", False, True] in keys and ["Tab", True, False] in keys
    with pytest.raises(DeviceError, match="Bogus"):
        await page.press_key("Bogus")
    with pytest.raises(DeviceError) as unpressable:
        await page.press_key("Shift+F13")
    assert (
        str(unpressable.value)
        == f'Firefox ({page.id}) cannot press "F13": WebDriver has no key value for it.'
    )


QUIET_FIELD = """<!doctype html><input id="f" aria-label="Field"><script>
  window.seen = [];
  document.getElementById('f').oninput = e => seen.push(e.inputType);
</script>"""


async def test_text_goes_in_one_edit_only_where_no_key_listener_would_see_the_keys(
    fox: FirefoxDevice,
) -> None:
    async def typed(page: str, text: str) -> tuple[Any, Any]:
        await fox.navigate("data:text/html," + page)
        await js(fox, "document.getElementById('f').focus()")
        await fox.enter_text(text)
        return await js(fox, "document.getElementById('f').value"), await js(fox, "window.seen")

    value, seen = await typed(QUIET_FIELD, "ada@example.com")
    assert value == "ada@example.com" and seen == ["insertText"]  # one trusted edit, no keys
    assert "[native code]" in await js(fox, "EventTarget.prototype.addEventListener.toString()")
    late = QUIET_FIELD.replace(
        "</script>", "setTimeout(() => addEventListener('keyup', () => 0), 0);</script>"
    )
    for page in (
        QUIET_FIELD.replace("</script>", "document.addEventListener('keydown', () => 0);</script>"),
        QUIET_FIELD.replace('id="f"', 'id="f" onkeypress="0"'),
        late,
    ):
        value, seen = await typed(page, "ab")
        assert value == "ab" and seen == ["insertText", "insertText"], page  # key by key
    value, seen = await typed(QUIET_FIELD, "x\ty")
    assert value == "x" and seen == ["insertText"]  # Tab is a key: the focus moved on


async def test_the_page_has_the_focus_and_hears_it_move(hub: DeviceHub, site: str) -> None:
    """A headless Firefox whose first page was blank kept the focus in its address bar: no page ever
    had it (no focus events, ``:focus`` never matched), and the docs site's search never opened. A
    device of its own: a Tab past a page's last field (another test) moves the focus to the toolbar."""
    fresh = await hub.boot("firefox")
    assert isinstance(fresh, FirefoxDevice)
    try:
        await fresh.navigate(f"{site}/search.html")
        assert await js(fresh, "document.hasFocus()") is True
        await fresh.press_key("/")
        assert await js(fresh, "[document.activeElement.id, document.querySelector(':focus')?.id]") == [
            "q",
            "q",
        ]
        assert await js(fresh, "document.getElementById('state').textContent") == "open"
        assert await js(fresh, "getComputedStyle(document.getElementById('panel')).display") == "block"
        x, y = await center(fresh, "other")
        await fresh.tap(x, y)
        assert await js(fresh, "document.getElementById('state').textContent") == "closed"
        x, y = await center(fresh, "q")
        await fresh.tap(x, y)
        assert await js(fresh, "document.getElementById('state').textContent") == "open"
    finally:
        await hub.stop(fresh.id)


async def test_scroll_moves_the_content(page: FirefoxDevice) -> None:
    assert await js(page, "scrollY") == 0
    await page.scroll(0.5, 0.5, 0, 0.5)
    assert await js(page, "scrollY") == 400
    await page.scroll(0.5, 0.5, 0, -1)
    assert await js(page, "scrollY") == 0


async def test_select_upload_and_dialogs(page: FirefoxDevice, tmp_path: Path) -> None:
    assert isinstance(page, FormControls) and isinstance(page, FileInputs) and isinstance(page, NativeDialogs)
    x, y = await center(page, "size")
    choice = await page.choose(x, y, ("Large",), False)
    assert choice.problem is None and choice.changed
    assert await js(page, "document.getElementById('size').value") == "Large"
    missing = await page.choose(x, y, ("Huge",), False)
    assert missing.problem == "missing" and missing.options == ("Small", "Large")
    upload = tmp_path / "notes.txt"
    upload.write_text("hello")
    x, y = await center(page, "file")
    await page.set_input_files(x, y, [str(upload)])
    assert await js(page, "document.getElementById('file').files[0].name") == "notes.txt"
    # A confirm is dismissed by default, accepted when asked; none freezes the page.
    mark = page.dialog_mark()
    x, y = await center(page, "ask")
    await page.tap(x, y)
    assert await js(page, "document.getElementById('answer').textContent") == "false"
    undo = page.answer_dialogs(DialogAnswer(accept=True))
    await page.tap(x, y)
    undo()
    assert await js(page, "document.getElementById('answer').textContent") == "true"
    seen = page.dialogs_since(mark)
    assert [(d.kind, d.message, d.accepted) for d in seen] == [
        ("confirm", "Sure?", False),
        ("confirm", "Sure?", True),
    ]


async def test_run_script_values_errors_and_timeouts(page: FirefoxDevice) -> None:
    assert await js(page, "Promise.resolve({a: [1, 'two', null]})") == {"a": [1, "two", None]}
    thrown = await page.run_script("(() => { throw new Error('boom') })()", timeout=5)
    assert thrown.thrown is not None and "boom" in thrown.thrown
    late = await page.run_script("new Promise(() => {})", timeout=0.3)
    assert late.timed_out


# --------------------------------------------------------------------------------------------
# The tools


async def test_device_tools_and_web_tools_work(tools: ToolRegistry, page: FirefoxDevice, site: str) -> None:
    ids = {"udid": page.id}
    described = await tools.invoke("describe", ids)
    assert 'button "Press me" id="btn"' in described["description"] and described["source"] == "bidi-dom"
    shot = await tools.invoke("screenshot", {**ids, "scale": 0.5})
    assert (shot["width"], shot["height"]) == (500, 400)
    await tools.invoke("open-url", {**ids, "url": f"{site}/page.html"})
    x, y = await center(page, "name")
    await tools.invoke("gesture-tap", {**ids, "x": x, "y": y})
    await tools.invoke("keyboard", {**ids, "text": "Typed"})
    await tools.invoke("keyboard", {**ids, "key": "Enter"})
    assert await js(page, "document.getElementById('sent').textContent") == "sent:Typed"
    await js(page, "void (window.scrolled = new Promise(r => addEventListener('scroll', () => r(scrollY))))")
    await tools.invoke("gesture-scroll", {**ids, "deltaY": 0.5})
    assert await js(page, "window.scrolled") == 400
    waited = await tools.invoke(
        "await-ui-element",
        {**ids, "selector": {"text": "Far below"}, "condition": "exists", "timeoutMs": 3000},
    )
    assert waited["success"] is True
    listed = await tools.invoke("list-devices", {})
    assert any(d["id"] == page.id and d["platform"] == "firefox" for d in listed["devices"])
    evaluated = await tools.invoke("debugger-evaluate", {"device_id": page.id, "expression": "40 + 2"})
    assert evaluated["result"] == 42 and evaluated["deviceName"] == "Firefox"
    await tools.invoke("await-screen-idle", {"udid": page.id, "timeoutMs": 5000})
    logs = await tools.invoke("view-network-logs", {"device_id": page.id, "port": "8081"})
    assert "GET /api/ping" in logs and "/page.html" in logs
    console = await tools.invoke("debugger-log-registry", {"device_id": page.id})
    assert "fox ready" in str(console)


async def test_the_chromium_tools_name_the_engine_and_what_it_lacks(
    tools: ToolRegistry, page: FirefoxDevice
) -> None:
    for tool, args in (
        ("chromium-tabs", {"udid": page.id, "action": "list"}),
        ("chromium-cookies", {"udid": page.id, "action": "get"}),
    ):
        with pytest.raises(ToolExecutionError) as refused:
            await tools.invoke(tool, args)
        message = str(refused.value)
        assert message.endswith(
            f"{tool} takes Chromium devices only; {page.id} is a firefox device (Firefox lacks the DevTools "
            "extras (tabs, cookies and storage over CDP))."
        ), message


async def test_gesture_drag_and_run_sequence(tools: ToolRegistry, page: FirefoxDevice) -> None:
    await js(
        page, "window.moves = []; addEventListener('mousemove', e => e.buttons && moves.push(e.clientX))"
    )
    args = {"udid": page.id, "fromX": 0.1, "fromY": 0.9, "toX": 0.5, "toY": 0.9, "durationMs": 100}
    assert (await tools.invoke("gesture-drag", args))["dragged"] is True
    moves = await js(page, "window.moves")
    assert len(moves) >= 3 and moves[-1] == 500
    x, y = await center(page, "btn")
    steps = [
        {"tool": "gesture-tap", "args": {"x": x, "y": y}},
        {"tool": "await-ui-element", "args": {"selector": {"text": "clicked 1"}, "timeoutMs": 3000}},
    ]
    await js(page, "window.clicks = 0")
    done = await tools.invoke("run-sequence", {"udid": page.id, "steps": steps})
    assert done["completed"] == 2, done


# --------------------------------------------------------------------------------------------
# Lifetimes


async def test_stop_device_kills_the_whole_process_tree_and_removes_the_profile(hub: DeviceHub) -> None:
    booted = await hub.boot("firefox")
    assert isinstance(booted, FirefoxDevice) and booted.pid is not None and booted.profile_dir is not None
    group = os.getpgid(booted.pid)
    await booted.navigate("data:text/html,<p>content process</p>")
    assert len(group_alive(group)) > 1  # the browser and its content processes
    home = os.path.dirname(booted.profile_dir)
    await hub.stop(booted.id)
    assert group_alive(group) == [] and not os.path.exists(home)
    with pytest.raises(DeviceResolutionError, match=f'No device "{booted.id}" found'):
        await hub.stop(booted.id)


async def test_a_firefox_killed_mid_session_is_a_clear_device_error(hub: DeviceHub) -> None:
    victim = await hub.boot("firefox")
    assert isinstance(victim, FirefoxDevice) and victim.pid is not None and victim.profile_dir is not None
    home = os.path.dirname(victim.profile_dir)
    os.killpg(victim.pid, signal.SIGKILL)
    with pytest.raises(DeviceGoneError) as caught:  # a wait that reads it again ends at once
        await victim.screenshot()
    assert f"Firefox ({victim.id}) exited (killed by signal SIGKILL)" in str(caught.value)
    assert "The device is gone (its processes killed, its profile removed): boot a new one" in str(
        caught.value
    )
    assert victim.id not in {d.id for d in await hub.list_booted()}
    async with asyncio.timeout(10):
        while os.path.exists(home):  # reaped in the background: the profile goes with it
            await asyncio.sleep(0.05)
    assert not os.path.exists(f"/proc/{victim.pid}")  # reaped, no zombie


async def test_a_stopped_firefox_is_found_hung_reported_and_reaped(hub: DeviceHub) -> None:
    """SIGSTOP leaves the BiDi socket open and silent: the watchdog, not the capture's own 20 s bound,
    ends the command, and the device is reaped (group killed, profile removed, no zombie)."""
    victim = await hub.boot("firefox")
    assert isinstance(victim, FirefoxDevice) and victim.pid is not None and victim.profile_dir is not None
    home = os.path.dirname(victim.profile_dir)
    group = os.getpgid(victim.pid)
    os.kill(victim.pid, signal.SIGSTOP)
    with pytest.raises(DeviceGoneError) as caught:
        async with asyncio.timeout(BROWSER_ANSWER_SECONDS + BROWSER_PING_SECONDS + 10):
            await victim.screenshot()
    message = str(caught.value)
    assert f"Firefox ({victim.id}) stopped answering: its browser process (its process is stopped)" in message
    assert f"gave no answer within {BROWSER_ANSWER_SECONDS:g}s (BROWSER_ANSWER_SECONDS)" in message
    assert "boot a new one" in message
    assert not victim.alive
    with pytest.raises(DeviceGoneError, match=re.escape(f"Firefox ({victim.id}) stopped answering")):
        await victim.tap(0.5, 0.5)
    assert victim.id not in {d.id for d in await hub.list_booted()}
    async with asyncio.timeout(10):
        while os.path.exists(home) or group_alive(group):
            await asyncio.sleep(0.05)
    assert not os.path.exists(f"/proc/{victim.pid}")


async def test_closing_the_provider_stops_every_firefox() -> None:
    devices = FirefoxDeviceProvider()
    first, second = await asyncio.gather(devices.boot(), devices.boot())
    groups = [os.getpgid(d.pid) for d in (first, second) if d.pid is not None]
    await devices.close_all()
    assert all(group_alive(g) == [] for g in groups)
    with pytest.raises(DeviceError, match="shutting down"):
        await devices.boot()


async def test_attach_to_an_outside_firefox_and_detach(hub: DeviceHub) -> None:
    outside = await launch_firefox()
    try:
        attached = await hub.get(f"firefox-bidi-{outside.port}")
        assert isinstance(attached, FirefoxDevice) and not attached.owned
        await attached.navigate("data:text/html,<title>outside</title>")
        assert (await attached.page_info())["title"] == "outside"
        await hub.stop(attached.id)  # ends the session, leaves the browser running
        assert outside.returncode() is None
    finally:
        await outside.terminate()


async def test_a_missing_binary_names_the_variable_and_the_package(
    monkeypatch: pytest.MonkeyPatch, hub: DeviceHub
) -> None:
    monkeypatch.setenv("ARGENT_FIREFOX", "/nonexistent/firefox")
    with pytest.raises(DeviceError) as caught:
        await FirefoxDeviceProvider().boot()
    message = str(caught.value)
    assert 'ARGENT_FIREFOX="/nonexistent/firefox" is not an executable file' in message
    assert "apt-get install firefox-esr" in message


# --------------------------------------------------------------------------------------------
# Start-up: ready on the first tab's load, before Firefox's idle start-up tasks answer session.new


async def test_a_page_opened_the_moment_the_device_is_ready_is_still_shown_once_firefox_has_started(
    hub: DeviceHub,
) -> None:
    device = await hub.boot("firefox")
    assert isinstance(device, FirefoxDevice) and device.started is not None
    try:
        # At this moment Firefox is still starting (session.new unanswered on most boots); the
        # browser's own first load is over, so nothing it does later cancels or replaces this one.
        await device.navigate("data:text/html,<title>mine</title>")
        # The focus has reached it (the first page takes it once painted, maybe after this load).
        assert await js(device, "document.hasFocus()") is True
        async with asyncio.timeout(30):
            await asyncio.shield(device.started)
        assert (await device.page_info())["title"] == "mine"
        assert await js(device, "[innerWidth, innerHeight, devicePixelRatio]") == [1000, 800, 1]
    finally:
        await hub.stop(device.id)


async def test_a_second_session_on_a_firefox_is_refused_with_firefox_s_own_reason() -> None:
    browser = await launch_firefox()
    first = await FirefoxDevice.open(browser.port)
    try:
        with pytest.raises(DeviceError) as caught:
            await FirefoxDevice.open(browser.port)
        # session.new's answer, not that of a set-up command sent behind it on no session.
        assert "refused session.new: session not created: Maximum number of active sessions" in str(
            caught.value
        )
        assert await first.page_info() is not None  # the first session is untouched
    finally:
        await first.close()
        await browser.terminate()


@pytest_asyncio.fixture(loop_scope="module")
async def held() -> AsyncIterator[tuple[str, asyncio.Event, asyncio.Event]]:
    """A server whose ``/held.html`` answers its first request only once ``release`` is set (the
    request's arrival sets ``asked``), and at once after."""
    from aiohttp import web

    asked, release = asyncio.Event(), asyncio.Event()

    async def page(request: web.Request) -> web.Response:
        asked.set()
        await release.wait()
        return web.Response(text="<title>held</title>", content_type="text/html")

    async with serve(pages_app({"/other.html": "<title>other</title>"}, web.get("/held.html", page))) as url:
        yield url, asked, release


async def _cancelled_by_another_load(
    device: FirefoxDevice, url: str, asked: asyncio.Event
) -> asyncio.Task[None]:
    """``navigate`` to ``url/held.html`` in flight, then cancelled by a load the page begins itself (as
    the browser's own first load does: not a load sent over BiDi, which Firefox reports otherwise)."""
    going = asyncio.create_task(device.navigate(f"{url}/held.html"))
    async with asyncio.timeout(10):
        await asked.wait()
    await device.session.send(
        "script.evaluate",
        {
            "expression": f"location.href = {url + '/other.html'!r}",
            "target": {"context": device._context},
            "awaitPromise": False,
        },
    )
    return going


async def test_a_navigation_cancelled_while_firefox_starts_is_sent_again_once_it_has_started(
    fox: FirefoxDevice, held: tuple[str, asyncio.Event, asyncio.Event]
) -> None:
    url, asked, release = held
    asked.clear()
    release.clear()
    starting: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
    answered, fox._started = fox._started, starting  # Firefox still starting, for this test
    try:
        going = await _cancelled_by_another_load(fox, url, asked)
        await asyncio.sleep(0)
        assert not going.done()  # cancelled, waiting for start-up to end before trying again
        release.set()
        starting.set_result({})
        async with asyncio.timeout(15):
            await going
        assert (await fox.page_info())["title"] == "held"
    finally:
        release.set()
        fox._started = answered


async def test_a_navigation_cancelled_once_firefox_has_started_is_an_error(
    fox: FirefoxDevice, held: tuple[str, asyncio.Event, asyncio.Event]
) -> None:
    url, asked, release = held
    asked.clear()
    release.clear()
    assert fox.started is not None
    async with asyncio.timeout(30):
        await asyncio.shield(fox.started)  # Firefox has started
    try:
        going = await _cancelled_by_another_load(fox, url, asked)
        with pytest.raises(
            DeviceError, match=r'could not open ".*/held.html": unknown error: .*NS_BINDING_ABORTED'
        ):
            async with asyncio.timeout(15):
                await going
    finally:
        release.set()
