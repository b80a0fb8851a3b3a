"""The chromium device against a real headless Chromium and real local pages.

One Chromium is booted for the module and shared by every test that leaves it alive; tests
that kill, crash or count Chromiums boot their own. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import struct
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from argent.devices.base import Device, DeviceError, DeviceGoneError, UiNode, UiTree
from argent.devices.chromium import ChromiumDevice, ChromiumDeviceProvider, find_chromium
from argent.devices.chromium.launcher import (
    OWNER_FILE,
    chromium_flags,
    launch_chromium,
    processes_naming,
    sweep_stale_homes,
)
from argent.devices.web.targets import LaunchTargetError, resolve_launch_target
from argent.errors import DeviceResolutionError
from argent.flows.model import LaunchStep, Step
from argent.limits import BROWSER_ANSWER_SECONDS
from argent.runner.engine import DirectiveContext, DirectiveOutcome, GuardOutcome
from argent.runner.execute import FlowRequest, execute_flow
from argent.runner.files import DiskFlowFiles
from argent.runner.report import FlowRunResult
from argent.tools.builtin import build_registry
from argent.tools.invoker import RegistryInvoker
from tests.e2e.conftest import pages_app, serve

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(
        find_chromium() is None,
        reason="no Chromium binary (run scripts/install-system-deps or set ARGENT_CHROMIUM)",
    ),
]

FORM_PAGE = """<!doctype html>
<html><head><title>Form page</title>
<style>body { margin: 0; font: 16px sans-serif } button, input { font: 16px sans-serif }</style></head>
<body>
<h1 id="title">Hello argent</h1>
<button id="btn" onclick="document.getElementById('out').textContent = 'clicked ' + (++window.clicks)">Press me</button>
<button id="dbl" ondblclick="document.getElementById('out').textContent = 'double'">Double me</button>
<button id="off" disabled>Cannot press</button>
<p id="out">not clicked</p>
<form id="f" onsubmit="event.preventDefault(); document.getElementById('submitted').textContent = 'submitted:' + document.getElementById('name').value">
  <input id="name" placeholder="Your name">
  <input id="pw" type="password" value="hunter2">
  <input id="after" aria-label="After field">
  <button id="send">Send</button>
</form>
<p id="submitted"></p>
<div id="gone" style="display:none">Hidden text</div>
<div style="visibility:hidden"><span id="vh">invisible span</span><span id="vv" style="visibility:visible">visible child</span></div>
<div id="transparent" style="opacity:0">transparent text</div>
<a href="#anchor" data-testid="lnk">A link</a>
<input type="checkbox" id="cb" checked aria-label="Agree">
<div role="button" aria-label="Custom control" id="custom" tabindex="0"></div>
<custom-card id="host"></custom-card>
<iframe id="frm" srcdoc="<body style='margin:0'><button id='inner'>Inner button</button></body>"
        style="position:absolute; left:600px; top:100px; width:300px; height:100px; border:0"></iframe>
<div id="box" style="position:absolute; left:100px; top:400px; width:250px; height:80px">Boxed</div>
<div id="below" style="position:absolute; left:0; top:2000px">Far below</div>
<script>
  window.clicks = 0;
  customElements.define("custom-card", class extends HTMLElement {
    constructor() {
      super();
      this.attachShadow({ mode: "open" }).innerHTML = '<span id="shadow-span">In shadow</span>';
    }
  });
  window.events = [];
  document.addEventListener("mousedown", () => window.events.push(["down", performance.now()]));
  document.addEventListener("mouseup", () => window.events.push(["up", performance.now()]));
</script>
</body></html>
"""

SCROLL_PAGE = (
    """<!doctype html>
<html><head><title>Scroll page</title><style>
  body { margin: 0 } .item { height: 100px; box-sizing: border-box; border-bottom: 1px solid #ccc }
  #list { position: fixed; right: 0; top: 0; width: 200px; height: 300px; overflow-y: auto }
  #list div { height: 50px }
</style></head>
<body>
<div id="list">"""
    + "".join(f'<div id="row-{i}">row {i}</div>' for i in range(40))
    + """</div>
"""
    + "".join(f'<div class="item" id="item-{i}">item {i}</div>' for i in range(60))
    + """
</body></html>
"""
)

SECOND_PAGE = "<!doctype html><html><head><title>Second</title></head><body><p id='second'>Second page</p></body></html>"


# --------------------------------------------------------------------------------------------
# Fixtures


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def site() -> AsyncIterator[str]:
    pages = {"/form.html": FORM_PAGE, "/scroll.html": SCROLL_PAGE, "/second.html": SECOND_PAGE}
    async with serve(pages_app(pages)) as url:
        yield url


@pytest.fixture
def no_stray_chromium() -> Iterator[None]:
    """Fail a test that leaves a Chromium it booted behind (beyond the ones running before it)."""
    before = chromium_homes()
    yield
    extra = chromium_homes() - before
    assert not extra, [
        (pid, Path(f"/proc/{pid}/cmdline").read_bytes()[:300]) for h in extra for pid in processes_naming(h)
    ]


def chromium_homes() -> set[str]:
    """The temp directories of the argent Chromiums this test process launched that have a live
    process (each home's ``owner.pid`` names its launcher: other processes' browsers, e.g. a
    parallel test run on the same machine, are not ours to count)."""
    homes: set[str] = set()
    for pid in processes_naming("argent-chromium-"):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        homes.update(re.findall(r"[^\s\x00=]*/argent-chromium-[A-Za-z0-9_]+", cmdline))
    return {home for home in homes if launched_here(home)}


def launched_here(home: str) -> bool:
    """Whether this process launched the Chromium living in ``home`` (its ``owner.pid``). A live
    process naming a home that is gone counts too: a terminate removes the directory only once
    nothing names it, so that process outlived its sweep, whoever launched it."""
    try:
        return (Path(home) / OWNER_FILE).read_text(encoding="ascii").strip() == str(os.getpid())
    except FileNotFoundError:
        return not os.path.isdir(home)
    except OSError:
        return False


# --------------------------------------------------------------------------------------------
# Helpers


def walk(node: UiNode) -> Iterator[UiNode]:
    yield node
    for child in node.children:
        yield from walk(child)


def by_id(tree: UiTree, identifier: str) -> UiNode:
    found = [n for n in walk(tree.root) if n.identifier == identifier]
    assert found, f"no node with id {identifier!r}"
    return found[0]


def texts(tree: UiTree) -> str:
    return " | ".join(f"{n.label} {n.value}" for n in walk(tree.root))


def png_size(data: bytes) -> tuple[int, int]:
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", data[16:24])
    return width, height


async def until(check: Any, timeout: float = 5.0) -> Any:
    """Poll an async predicate until it returns something truthy (bounded)."""
    async with asyncio.timeout(timeout):
        while True:
            value = await check()
            if value:
                return value
            await asyncio.sleep(0.02)


async def text_of(device: ChromiumDevice, identifier: str) -> str:
    node = by_id(await device.ui_tree(), identifier)
    return f"{node.label}{node.value}"


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[-1].split()[0]
    except (OSError, IndexError):
        return False
    return state != b"Z"


# --------------------------------------------------------------------------------------------
# Launching


async def test_boot_gives_a_1000x800_page_at_dpr_1(device: ChromiumDevice) -> None:
    assert re.fullmatch(r"chromium-cdp-\d+", device.id)
    assert device.platform == "chromium"
    assert device.endpoint is not None
    assert device.endpoint.startswith(f"ws://127.0.0.1:{device.port}/devtools/page/")
    assert device.viewport == (1000, 800)
    assert await device.session.evaluate("[innerWidth, innerHeight, devicePixelRatio]") == [1000, 800, 1]
    assert device.pid is not None and alive(device.pid)
    assert device.profile_dir is not None and os.path.isdir(device.profile_dir)


async def test_screenshot_is_a_1000x800_png(device: ChromiumDevice, site: str) -> None:
    await device.navigate(f"{site}/form.html")
    png = await device.screenshot()
    assert png_size(png) == (1000, 800)
    assert len(png) > 2000  # the page is drawn, not an empty frame


async def test_launch_flags() -> None:
    flags = chromium_flags("/tmp/profile", as_root=False)
    for flag in (
        "--headless=new",
        "--user-data-dir=/tmp/profile",
        "--remote-debugging-port=0",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-gpu",
        "--disable-quic",
        "--disable-features=Translate",
        "--window-size=1000,800",
    ):
        assert flag in flags
    assert "--no-sandbox" not in flags
    assert "--no-sandbox" in chromium_flags("/tmp/profile", as_root=True)


async def test_a_missing_binary_names_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARGENT_CHROMIUM", "/nonexistent/chromium")
    with pytest.raises(
        DeviceError, match=r"apt-get install chromium.*ARGENT_CHROMIUM|ARGENT_CHROMIUM.*apt-get"
    ):
        await launch_chromium()
    assert find_chromium() is None


# --------------------------------------------------------------------------------------------
# The UI tree


async def test_ui_tree_roles_labels_identifiers_and_flags(device: ChromiumDevice, site: str) -> None:
    await device.navigate(f"{site}/form.html")
    tree = await device.ui_tree()
    assert (tree.root.role, tree.root.kind) == ("", "html") and not tree.truncated
    button = by_id(tree, "btn")
    assert (button.role, button.label, button.clickable) == ("button", "Press me", True)
    assert by_id(tree, "off").disabled
    title = by_id(tree, "title")
    assert (title.role, title.label, title.value) == ("heading", "Hello argent", "")  # named from content
    name = by_id(tree, "name")
    assert (name.role, name.kind, name.label, name.clickable) == ("textbox", "input", "Your name", True)
    assert by_id(tree, "after").label == "After field"
    link = by_id(tree, "lnk")
    assert (link.role, link.kind, link.label, link.clickable) == ("link", "a", "A link", True)
    box = by_id(tree, "cb")
    assert (box.label, box.checked) == ("Agree", True)
    custom = by_id(tree, "custom")
    assert (custom.role, custom.label, custom.clickable) == ("button", "Custom control", True)
    password = by_id(tree, "pw")
    assert password.password and password.value == ""
    assert "hunter2" not in texts(tree)


async def test_ui_tree_frames_are_fractions_of_the_viewport(device: ChromiumDevice, site: str) -> None:
    await device.navigate(f"{site}/form.html")
    tree = await device.ui_tree()
    frame = by_id(tree, "box").frame
    assert (frame.x, frame.y, frame.width, frame.height) == pytest.approx((0.1, 0.5, 0.25, 0.1), abs=1e-4)
    assert (tree.root.frame.width, tree.root.frame.height) == (1.0, 1.0)
    below = by_id(tree, "below")
    assert not below.frame.visible  # laid out 2000px down: in the tree, off screen


async def test_ui_tree_prunes_hidden_elements(device: ChromiumDevice, site: str) -> None:
    await device.navigate(f"{site}/form.html")
    tree = await device.ui_tree()
    seen = texts(tree)
    ids = {n.identifier for n in walk(tree.root)}
    assert "Hidden text" not in seen and "gone" not in ids  # display:none
    assert "transparent text" not in seen and "transparent" not in ids  # opacity:0
    assert "invisible span" not in seen  # visibility:hidden …
    assert by_id(tree, "vv").value == "visible child"  # … unless a child turns visible again


async def test_ui_tree_enters_shadow_roots_and_iframes(device: ChromiumDevice, site: str) -> None:
    await device.navigate(f"{site}/form.html")
    tree = await device.ui_tree()
    assert by_id(tree, "shadow-span").value == "In shadow"
    inner = by_id(tree, "inner")
    assert (inner.role, inner.label) == ("button", "Inner button")
    # Offset by the iframe's position: left 600px, top 100px.
    assert inner.frame.x == pytest.approx(0.6, abs=1e-4)
    assert inner.frame.y == pytest.approx(0.125, abs=1e-4)


async def test_ui_tree_node_budget_truncates(device: ChromiumDevice, site: str) -> None:
    await device.navigate(f"{site}/scroll.html")
    tree = await device.ui_tree(max_nodes=20)
    assert tree.truncated
    assert sum(1 for _ in walk(tree.root)) <= 20


# --------------------------------------------------------------------------------------------
# Input


async def test_tap_a_button_changes_its_text(device: ChromiumDevice, site: str) -> None:
    await device.navigate(f"{site}/form.html")
    tree = await device.ui_tree()
    await device.tap(*by_id(tree, "btn").frame.center)
    assert await text_of(device, "out") == "clicked 1"
    await device.tap(*by_id(tree, "dbl").frame.center, click_count=2)
    assert await text_of(device, "out") == "double"


async def test_long_press_holds_the_button_down(device: ChromiumDevice, site: str) -> None:
    await device.navigate(f"{site}/form.html")
    await device.long_press(0.5, 0.9, 300)
    events = await device.session.evaluate("window.events")
    assert [e[0] for e in events] == ["down", "up"]
    assert events[1][1] - events[0][1] >= 290


async def test_type_into_an_input_and_enter_submits(device: ChromiumDevice, site: str) -> None:
    await device.navigate(f"{site}/form.html")
    tree = await device.ui_tree()
    await device.tap(*by_id(tree, "name").frame.center)
    assert by_id(await device.ui_tree(), "name").focused
    await device.type_text("Ada Lovelace é")
    assert by_id(await device.ui_tree(), "name").value == "Ada Lovelace é"
    await device.press_key("backspace")
    await device.press_key("BackSpace")
    await device.press_key("enter")
    assert await text_of(device, "submitted") == "submitted:Ada Lovelace"


async def test_tab_moves_the_focus_and_unknown_keys_are_refused(device: ChromiumDevice, site: str) -> None:
    await device.navigate(f"{site}/form.html")
    await device.tap(*by_id(await device.ui_tree(), "name").frame.center)
    await device.press_key("tab")
    assert by_id(await device.ui_tree(), "pw").focused
    with pytest.raises(DeviceError, match='Unknown key "hyper"'):
        await device.press_key("hyper")


async def test_scroll_moves_the_content(device: ChromiumDevice, site: str) -> None:
    await device.navigate(f"{site}/scroll.html")
    before = by_id(await device.ui_tree(), "item-5").frame
    await device.scroll(0.3, 0.5, 0, 0.5)  # half a screen: 400px
    assert await device.session.evaluate("scrollY") == 400
    after = by_id(await device.ui_tree(), "item-5").frame
    assert after.y == pytest.approx(before.y - 0.5, abs=1e-3)
    # Over the fixed list, the list scrolls (and its rows are clipped to it).
    await device.scroll(0.9, 0.1, 0, 0.25)
    assert await device.session.evaluate("document.getElementById('list').scrollTop") == 200
    tree = await device.ui_tree()
    assert not by_id(tree, "row-0").frame.visible
    assert by_id(tree, "row-4").frame.visible
    assert by_id(tree, "list").scrollable


# --------------------------------------------------------------------------------------------
# Navigation and targets


async def test_navigate_waits_for_the_page(device: ChromiumDevice, site: str, tmp_path: Path) -> None:
    await device.navigate(f"{site}/second.html")
    assert await device.session.evaluate("document.readyState") == "complete"
    assert await text_of(device, "second") == "Second page"
    await device.navigate(f"{site}/second.html#part")  # same document: no load event to wait for
    assert await device.session.evaluate("location.hash") == "#part"
    page = tmp_path / "app"
    page.mkdir()
    (page / "index.html").write_text("<title>Local</title><p id='local'>From disk</p>")
    await device.navigate(resolve_launch_target("app", str(tmp_path)))
    assert await text_of(device, "local") == "From disk"
    with pytest.raises(DeviceError, match=r'could not open "file://.*missing.html": net::ERR_FILE_NOT_FOUND'):
        await device.navigate((tmp_path / "missing.html").as_uri())


async def test_launch_targets(tmp_path: Path) -> None:
    (tmp_path / "page.html").write_text("<p>x</p>")
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("<p>x</p>")
    (tmp_path / "empty").mkdir()
    for url in (
        "http://localhost:3000/a",
        "https://example.test",
        "data:text/html,<p>x</p>",
        "file:///tmp/x.html",
    ):
        assert resolve_launch_target(url, None) == url
    assert resolve_launch_target("page.html", str(tmp_path)) == (tmp_path / "page.html").resolve().as_uri()
    assert (
        resolve_launch_target("./site", str(tmp_path))
        == (tmp_path / "site" / "index.html").resolve().as_uri()
    )
    assert resolve_launch_target(str(tmp_path / "page.html"), None).startswith("file:///")
    with pytest.raises(LaunchTargetError, match=r"without an index\.html"):
        resolve_launch_target("empty", str(tmp_path))
    with pytest.raises(LaunchTargetError, match=r"relative path.*co-located"):
        resolve_launch_target("page.html", None)
    with pytest.raises(LaunchTargetError, match="neither a URL nor an existing file"):
        resolve_launch_target("nope.html", str(tmp_path))
    with pytest.raises(LaunchTargetError, match="needs its http"):
        resolve_launch_target("localhost:3000", str(tmp_path))
    with pytest.raises(LaunchTargetError, match="only http"):
        resolve_launch_target("ftp://example.test/x", None)


# --------------------------------------------------------------------------------------------
# Several devices, closing, crashes


async def test_two_devices_at_once(
    provider: ChromiumDeviceProvider, device: ChromiumDevice, site: str, no_stray_chromium: None
) -> None:
    other = await provider.boot(target=f"{site}/second.html")
    try:
        assert other.id != device.id and other.pid != device.pid
        await device.navigate(f"{site}/form.html")
        assert "Second page" in texts(await other.ui_tree())
        assert "Second page" not in texts(await device.ui_tree())
        assert {d.id for d in await provider.list_booted()} >= {device.id, other.id}
    finally:
        await provider.stop(other.id)
    assert other.id not in {d.id for d in await provider.list_booted()}
    assert device.alive


async def test_close_leaves_no_process_and_no_profile(provider: ChromiumDeviceProvider) -> None:
    booted = await provider.boot()
    assert isinstance(booted, ChromiumDevice)
    pid, profile = booted.pid, booted.profile_dir
    assert pid is not None and profile is not None
    home = os.path.dirname(profile)
    group = processes_naming(home)
    assert pid in group and len(group) > 1  # the browser and its helpers
    await provider.stop(booted.id)
    assert not alive(pid)
    assert processes_naming(home) == []
    assert not os.path.exists(home)
    with pytest.raises(DeviceResolutionError, match=f'No device "{booted.id}" found'):
        await provider.stop(booted.id)


async def test_a_chromium_killed_mid_session_is_a_clear_device_error(
    provider: ChromiumDeviceProvider, site: str
) -> None:
    victim = await provider.boot(target=f"{site}/form.html")
    assert isinstance(victim, ChromiumDevice) and victim.pid is not None
    os.killpg(victim.pid, signal.SIGKILL)
    with pytest.raises(DeviceGoneError) as caught:
        await victim.screenshot()
    message = str(caught.value)
    assert f"Chromium ({victim.id}) exited" in message
    assert "killed by signal SIGKILL" in message
    with pytest.raises(DeviceError, match=re.escape(f"Chromium ({victim.id})")):
        await victim.tap(0.5, 0.5)
    assert victim.id not in {d.id for d in await provider.list_booted()}  # reaped: closed, profile removed
    assert victim.profile_dir is not None and not os.path.exists(victim.profile_dir)
    assert not os.path.exists(f"/proc/{victim.pid}")  # reaped, no zombie


async def test_a_stopped_chromium_is_found_hung_reported_and_reaped(
    provider: ChromiumDeviceProvider, site: str
) -> None:
    """SIGSTOP leaves the DevTools socket open and silent: the watchdog, not the capture's own 20 s
    bound, ends the request, and the device is reaped (group killed, profile removed, no zombie)."""
    victim = await provider.boot(target=f"{site}/form.html")
    assert isinstance(victim, ChromiumDevice) and victim.pid is not None and victim.profile_dir is not None
    home = os.path.dirname(victim.profile_dir)
    os.kill(victim.pid, signal.SIGSTOP)
    with pytest.raises(DeviceGoneError) as caught:
        await victim.screenshot()
    message = str(caught.value)
    assert (
        f"Chromium ({victim.id}) stopped answering: its browser process (its process is stopped)" in message
    )
    assert f"gave no answer within {BROWSER_ANSWER_SECONDS:g}s (BROWSER_ANSWER_SECONDS)" in message
    assert "boot a new one" in message
    assert not victim.alive
    with pytest.raises(DeviceGoneError, match=re.escape(f"Chromium ({victim.id}) stopped answering")):
        await victim.tap(0.5, 0.5)
    assert victim.id not in {d.id for d in await provider.list_booted()}
    assert processes_naming(home) == []
    assert not os.path.exists(home)
    assert not alive(victim.pid) and not os.path.exists(f"/proc/{victim.pid}")  # reaped, no zombie


async def test_a_crashed_renderer_is_a_clear_device_error(
    provider: ChromiumDeviceProvider, site: str
) -> None:
    victim = await provider.boot(target=f"{site}/form.html")
    try:
        with pytest.raises(DeviceError, match=re.escape(f"Chromium ({victim.id}) crashed")):
            await victim.session.send("Page.crash", timeout=5)
        with pytest.raises(
            DeviceError, match=re.escape(f"Chromium ({victim.id}) crashed — its page renderer")
        ):
            await victim.ui_tree()
        assert not victim.alive
    finally:
        await provider.stop(victim.id)


async def test_attach_to_an_external_chromium_by_id(provider: ChromiumDeviceProvider, site: str) -> None:
    external = await launch_chromium()
    try:
        attached = await provider.get(f"chromium-cdp-{external.port}")
        assert attached.id == f"chromium-cdp-{external.port}"
        assert isinstance(attached, ChromiumDevice) and not attached.owned
        await attached.navigate(f"{site}/second.html")
        assert "Second page" in texts(await attached.ui_tree())
        assert await provider.get(attached.id) is attached
        await provider.stop(attached.id)  # detaches, does not kill
        assert alive(external.pid)
    finally:
        await external.terminate()
    with pytest.raises(DeviceResolutionError, match=r'No device "chromium-cdp-1" found — nothing answers'):
        await provider.get("chromium-cdp-1")
    with pytest.raises(DeviceResolutionError, match=r'No device "emulator-5554" found.*Available devices: '):
        await provider.get("emulator-5554")


async def test_closed_provider_kills_everything(site: str) -> None:
    devices = ChromiumDeviceProvider()
    first, second = await asyncio.gather(devices.boot(), devices.boot(target=f"{site}/second.html"))
    homes = [os.path.dirname(d.profile_dir or "") for d in (first, second) if isinstance(d, ChromiumDevice)]
    await devices.close_all()
    for home in homes:
        assert processes_naming(home) == [] and not os.path.exists(home)
    with pytest.raises(DeviceError, match="shutting down"):
        await devices.boot()


# --------------------------------------------------------------------------------------------
# Device resolution of a flow run


class OpenLaunchTarget:
    """A stand-in launch directive: opens the launch target on the run's device."""

    def __init__(self) -> None:
        self.devices: list[Device] = []

    async def execute(self, step: Step, device: Device, ctx: DirectiveContext) -> DirectiveOutcome:
        assert isinstance(step, LaunchStep)
        target = step.app_for("chromium")
        assert target is not None
        self.devices.append(device)
        await device.navigate(resolve_launch_target(target, os.path.dirname(ctx.containing.path)))
        return DirectiveOutcome(status="pass")

    async def check(
        self, condition: Any, device: Device, grace_ms: float, ctx: DirectiveContext
    ) -> GuardOutcome:
        return GuardOutcome(state="indeterminate", reason="not used")


async def test_a_leading_chromium_launch_boots_a_device_for_the_run(
    provider: ChromiumDeviceProvider, tmp_path: Path, no_stray_chromium: None
) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "index.html").write_text("<title>App</title><button id='go'>Go there</button>")
    flows = tmp_path / ".argent" / "flows"
    flows.mkdir(parents=True)
    (flows / "start.yaml").write_text("steps:\n  - launch: { chromium: ../../app }\n")
    (flows / "smoke.yaml").write_text("steps:\n  - echo: first\n  - run: start\n  - tool: describe\n")
    booted_before = {d.id for d in await provider.list_booted()}
    directives = OpenLaunchTarget()
    result = await execute_flow(
        FlowRequest(name="smoke", project_root=str(tmp_path)),
        files=DiskFlowFiles(),
        tools=RegistryInvoker(build_registry(devices=provider)),
        directives=directives,
        devices=provider,
    )
    assert isinstance(result, FlowRunResult)
    assert [s.status for s in result.steps if s.kind != "echo"] == ["pass", "pass", "pass"], result.steps
    assert re.fullmatch(r"chromium-cdp-\d+", result.device) and result.device not in booted_before
    described = result.steps[-1].result
    assert 'button "Go there" id="go" [clickable]' in described["description"]
    # The run owned its device: stopped when the run ended.
    assert {d.id for d in await provider.list_booted()} == booted_before
    run_device = directives.devices[0]
    assert isinstance(run_device, ChromiumDevice) and run_device.pid is not None and not alive(run_device.pid)


async def test_an_explicit_device_is_used_and_not_stopped(
    provider: ChromiumDeviceProvider, device: ChromiumDevice, tmp_path: Path
) -> None:
    flows = tmp_path / ".argent" / "flows"
    flows.mkdir(parents=True)
    page = tmp_path / "page.html"
    page.write_text("<p id='p'>pinned</p>")
    (flows / "pinned.yaml").write_text("steps:\n  - launch: { chromium: ../../page.html }\n")
    result = await execute_flow(
        FlowRequest(name="pinned", project_root=str(tmp_path), device=device.id),
        files=DiskFlowFiles(),
        tools=RegistryInvoker(build_registry(devices=provider)),
        directives=OpenLaunchTarget(),
        devices=provider,
    )
    assert isinstance(result, FlowRunResult) and result.ok
    assert result.device == device.id and device.alive
    assert await text_of(device, "p") == "pinned"


async def test_a_later_launch_removes_what_a_killed_owner_left(tmp_path: Path) -> None:
    stale = tmp_path / "argent-chromium-stale"
    (stale / "profile").mkdir(parents=True)
    (stale / "owner.pid").write_text("999999999")  # no such process
    busy = tmp_path / "argent-chromium-busy"
    busy.mkdir()
    (busy / "owner.pid").write_text(str(os.getpid()))  # ours: alive
    foreign = tmp_path / "argent-chromium-foreign"
    foreign.mkdir()  # no owner file: not ours to judge
    assert sweep_stale_homes(str(tmp_path)) == [str(stale)]
    assert not stale.exists() and busy.exists() and foreign.exists()


async def test_a_launch_that_cannot_boot_is_a_device_resolution_error(tmp_path: Path) -> None:
    flows = tmp_path / ".argent" / "flows"
    flows.mkdir(parents=True)
    (flows / "web.yaml").write_text("steps:\n  - launch: { chromium: https://example.test }\n")
    broken = ChromiumDeviceProvider(binary=str(tmp_path / "no-chromium"))
    with pytest.raises(
        DeviceResolutionError, match=r"launches a chromium page, but no device could be booted: .*failed"
    ):
        await execute_flow(
            FlowRequest(name="web", project_root=str(tmp_path)),
            files=DiskFlowFiles(),
            tools=RegistryInvoker(build_registry(devices=broken)),
            directives=OpenLaunchTarget(),
            devices=broken,
        )


async def test_chromium_starts_under_a_long_temp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Chromium's singleton socket lives in $TMPDIR and a unix socket path holds 107 bytes at most.
    long_tmp = tmp_path / ("t" * 60)
    long_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(long_tmp))
    monkeypatch.setattr("tempfile.tempdir", None)  # re-read from TMPDIR
    process = await launch_chromium()
    try:
        assert process.port > 0
        assert os.path.dirname(process.home) == str(long_tmp)
        [short_tmp] = process.outside_dirs
        assert os.path.isdir(short_tmp)
    finally:
        process.terminate_now()
    assert os.listdir(long_tmp) == []
    assert not os.path.exists(short_tmp)


async def test_a_stopped_chromium_leaves_nothing_in_the_temp_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    # Killed Chromiums leave their singleton directory (org.chromium.Chromium.*) in their TMPDIR.
    short_tmp = tempfile.mkdtemp(dir="/tmp")
    try:
        monkeypatch.setenv("TMPDIR", short_tmp)
        monkeypatch.setattr("tempfile.tempdir", None)  # re-read from TMPDIR
        process = await launch_chromium()
        assert process.port > 0
        assert process.outside_dirs == []
        await process.terminate()
        assert os.listdir(short_tmp) == []
    finally:
        shutil.rmtree(short_tmp, ignore_errors=True)
