"""WebKit (WebKitGTK's WebKitWebDriver driving MiniBrowser, on argent's own Xvfb) as a real device.

One provider per module (its Xvfb starts with the first boot and stops with ``close_all``); the shop
flow of the Chromium directives tests runs here unchanged (its ``launch: { chromium: site }`` is the
web target every engine falls back to); and no WebKitWebDriver, MiniBrowser, WebKit helper or Xvfb
outlives a device, a run or a tool-server.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from argent.devices.base import DeviceError
from argent.devices.registry import WEBKIT
from argent.devices.web.page import ScriptOutcome
from argent.flows.parse import parse_flow
from argent.runner import pixels as P
from argent.runner.directives import DeviceDirectives
from argent.runner.engine import run_flow
from argent.runner.files import DiskFlowFiles
from argent.runner.report import FlowRunResult
from tests.e2e.conftest import Cli, start_server_process
from tests.e2e.test_directives_chromium import SHOP, SHOP_FLOW, SHOP_STATUSES, NoTools

webkit = pytest.importorskip("argent.devices.webkit")
display = pytest.importorskip("argent.devices.webkit.display")
device_module = pytest.importorskip("argent.devices.webkit.device")
_UNAVAILABLE = webkit.webkit_unavailable_reason() or display.xvfb_unavailable_reason()

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(_UNAVAILABLE is not None, reason=str(_UNAVAILABLE))]

#: What a WebKit device runs: the driver, MiniBrowser, WebKit's helper processes, and the X server.
WEBKIT_PROCESSES = (
    b"WebKitWebDriver",
    b"MiniBrowser",
    b"WebKitWebProcess",
    b"WebKitNetworkProcess",
    b"WebKitGPUProcess",
    b"Xvfb",
)


def webkit_processes() -> dict[int, str]:
    """Live (non-zombie) processes of WebKit or Xvfb on this machine, by pid: their program's name."""
    found: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                argv0 = fh.read().split(b"\0", 1)[0]
            with open(f"/proc/{entry}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[-1].split()[:1]
        except OSError:
            continue
        name = os.path.basename(argv0)
        if state != [b"Z"] and any(program in name for program in WEBKIT_PROCESSES):
            found[int(entry)] = name.decode("utf-8", "replace")
    return found


@pytest.fixture(scope="module")
def before() -> Iterator[set[int]]:
    """The WebKit processes running before the module (another run's): the module leaves no other."""
    yield set(webkit_processes())


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def provider(before: set[int]) -> AsyncIterator[Any]:
    devices = webkit.WebKitDeviceProvider()
    try:
        yield devices
    finally:
        await devices.close_all()
    # the module's devices and its Xvfb are gone with the provider
    assert set(webkit_processes()) - before == set()


@pytest.fixture
def flows(project: Path) -> Path:
    site = project / ".argent" / "flows" / "site"
    site.mkdir(parents=True)
    (site / "index.html").write_text(SHOP)
    return project / ".argent" / "flows"


async def run(flows: Path, name: str, text: str, device: Any, *, update: bool = False) -> FlowRunResult:
    path = flows / f"{name}.yaml"
    path.write_text(text)
    files = DiskFlowFiles()
    return await asyncio.wait_for(
        run_flow(
            parse_flow(text),
            await files.locate(str(path)),
            name,
            files=files,
            tools=NoTools(),
            directives=DeviceDirectives(scratch_dir=str(flows.parents[2])),
            device=device,
            platform="webkit",
            update_baselines=update,
        ),
        180,
    )


def statuses(res: FlowRunResult) -> list[tuple[str, str, str | None]]:
    return [(s.kind, s.status, s.reason) for s in res.steps]


@pytest.mark.asyncio(loop_scope="module")
async def test_boot_list_and_stop_leave_nothing_running(provider: Any, before: set[int]) -> None:
    device = await provider.boot()
    assert device.id == WEBKIT.device_id(device.port) and device.platform == "webkit"
    assert device.viewport == (1000.0, 800.0)
    shot = await device.screenshot()
    assert P.png_size(shot) == (1000, 800)
    assert [d.id for d in await provider.list_booted()] == [device.id]
    home = device.profile_dir
    assert home is not None and os.path.isdir(home)
    names = {name for pid, name in webkit_processes().items() if pid not in before}
    assert {"WebKitWebDriver", "MiniBrowser", "Xvfb"} <= names, names
    second = await provider.boot()
    xvfbs = [name for pid, name in webkit_processes().items() if pid not in before and name == "Xvfb"]
    assert xvfbs == ["Xvfb"]  # one X server for the tool-server's devices
    assert sorted(d.id for d in await provider.list_booted()) == sorted([device.id, second.id])
    await provider.stop(second.id)
    await provider.stop(device.id)
    assert await provider.list_booted() == []
    assert not os.path.exists(home)
    # the X server stays for the next boot; every WebKit process is gone
    left = {name for pid, name in webkit_processes().items() if pid not in before}
    assert left == {"Xvfb"}, left


@pytest.mark.asyncio(loop_scope="module")
async def test_the_shop_flow_runs_on_webkit(provider: Any, flows: Path) -> None:
    device = await provider.boot()
    try:
        res = await run(flows, "shop", SHOP_FLOW, device)
    finally:
        await provider.stop(device.id)
    assert [(k, s) for k, s, _ in statuses(res)] == SHOP_STATUSES, statuses(res)
    assert res.steps[9].reason == 'condition not met (visible text="What\'s new") — block skipped (1 step)'
    assert res.ok


@pytest.mark.asyncio(loop_scope="module")
async def test_chords_dialogs_and_what_webkit_lacks(provider: Any, flows: Path) -> None:
    (flows / "site" / "keys.html").write_text(
        '<!doctype html><input id="f" value="">'
        '<p id="seen"></p><button id="ask" onclick="document.getElementById(\'seen\').textContent = '
        "confirm('Delete all?') ? 'deleted' : 'kept'\">Delete</button>"
        "<button onclick=\"document.getElementById('seen').textContent = prompt('Name?', 'Bob')\">Name</button>"
        "<script>document.getElementById('f').addEventListener('keydown', (e) => { "
        "if (e.key === 'Enter' && e.shiftKey) document.getElementById('seen').textContent = 'shift-enter'; });"
        "</script>"
    )
    device = await provider.boot()
    try:
        res = await run(
            flows,
            "keys",
            """
steps:
  - launch: { chromium: site/keys.html }
  - type: { into: { id: f }, text: "héllo wörld" }
  - press: Shift+Enter
  - assert: { text: { in: { id: seen }, equals: shift-enter } }
  - tap: Delete
  - assert: { text: { in: { id: seen }, equals: kept } }
  - dialogs: { accept: true, text: Ann }
  - tap: Name
  - assert: { text: { in: { id: seen }, equals: Ann } }
  - pinch: { scale: 2 }
""",
            device,
        )
        value = await device.run_script("document.getElementById('f').value", timeout=5)
        with pytest.raises(DeviceError) as unpressable:
            await device.press_key("Control+F13")
    finally:
        await provider.stop(device.id)
    assert (
        str(unpressable.value)
        == f'WebKit ({device.id}) cannot press "F13": WebDriver has no key value for it.'
    )
    assert [(k, s) for k, s, _ in statuses(res)] == [
        ("launch", "pass"),
        ("type", "pass"),
        ("press", "pass"),
        ("assert", "pass"),
        ("tap", "pass"),
        ("assert", "pass"),
        ("dialogs", "pass"),
        ("tap", "pass"),
        ("assert", "pass"),
        ("pinch", "fail"),
    ], statuses(res)
    assert value.value == "héllo wörld"
    # the step that opened a dialog reports it (WebDriver cannot tell an alert from a confirm)
    assert res.steps[4].reason == 'dialog confirm "Delete all?" dismissed'
    assert res.steps[7].reason == 'dialog prompt "Name?" accepted with "Ann"'
    pinch = res.steps[9].reason or ""
    assert pinch.startswith("pinch is unsupported on webkit — ") and "WebKit" in pinch, pinch


@pytest.mark.asyncio(loop_scope="module")
async def test_an_outside_driver_is_attached_and_left_running(provider: Any) -> None:
    """``webkit-wd-<port>`` of a driver argent did not start: argent opens its own session there and
    stopping the device ends that session only."""
    from argent.devices.webkit.launcher import launch_driver

    xvfb = await display.start_xvfb()
    driver = await launch_driver(xvfb.display)
    try:
        device = await provider.get(WEBKIT.device_id(driver.port))
        assert not device.owned and device.viewport == (1000.0, 800.0)
        await device.navigate("data:text/html,<title>Outside</title><p>hi</p>")
        assert (await device.page_info())["title"] == "Outside"
        await provider.stop(device.id)
        assert driver.returncode() is None
    finally:
        await driver.terminate()
        xvfb.stop()


@pytest.mark.asyncio(loop_scope="module")
async def test_upload_sets_the_files_of_a_file_input(provider: Any, flows: Path) -> None:
    (flows / "a.txt").write_text("hello")
    (flows / "site" / "pick.html").write_text(
        '<!doctype html><label>Photo <input id="f" type="file"></label><p id="got"></p><button>Plain</button>'
        "<script>document.getElementById('f').addEventListener('change', async (e) => { const f = e.target.files[0]; "
        "document.getElementById('got').textContent = f.name + ' ' + (await f.text()); });</script>"
    )
    device = await provider.boot()
    try:
        res = await run(
            flows,
            "pick",
            """
steps:
  - launch: { chromium: site/pick.html }
  - upload: { into: Photo, files: [a.txt] }
  - await: { text: { in: { id: got }, equals: "a.txt hello" } }
  - upload: { into: Plain, files: [a.txt] }
""",
            device,
        )
    finally:
        await provider.stop(device.id)
    assert [(k, s) for k, s, _ in statuses(res)][:3] == [
        ("launch", "pass"),
        ("upload", "pass"),
        ("await", "pass"),
    ], statuses(res)
    assert res.steps[3].status == "error"
    assert (res.steps[3].reason or "").startswith("the element there, <button>, is not a file input — ")


@pytest.mark.asyncio(loop_scope="module")
async def test_a_snapshot_baseline_is_webkits_own(provider: Any, flows: Path) -> None:
    flow = "steps:\n  - launch: { chromium: site }\n  - snapshot: home\n"
    device = await provider.boot()
    try:
        first = await run(flows, "home", flow, device, update=True)
        second = await run(flows, "home", flow, device)
    finally:
        await provider.stop(device.id)
    assert statuses(first)[1] == (
        "snapshot",
        "pass",
        "baseline written (home__webkit-1000x800.png)",
    ), statuses(first)
    img = P.decode_png((flows / "__baselines__" / "home" / "home__webkit-1000x800.png").read_bytes())
    assert img.shape == (800, 1000, 4)
    # Compared with its own baseline, within the tolerance: WebKit's pixels of one page may differ by a
    # few dozen between two loads on a loaded machine (0.01% once in a full suite run).
    kind, status, reason = statuses(second)[1]
    assert (kind, status) == ("snapshot", "pass"), statuses(second)
    assert re.fullmatch(r"diff 0\.0\d% ≤ 0\.5% \(home__webkit-1000x800\.png\)", reason or ""), reason


@pytest.mark.asyncio(loop_scope="module")
async def test_a_page_that_never_yields_is_a_bounded_error(
    provider: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    device = await provider.boot()
    try:
        monkeypatch.setattr(device_module, "WALK_TIMEOUT_SECONDS", 1.0)
        await device.navigate("data:text/html,<title>Busy</title><p>busy</p>")
        # debugger-evaluate's script that never ends: WebKit stops waiting for it (it cannot stop it)
        assert await device.run_script("for (;;) {}", timeout=1) == ScriptOutcome(timed_out=True)
        with pytest.raises(DeviceError) as caught:
            await device.ui_tree()
        assert str(caught.value).startswith(f"WebKit ({device.id}) did not answer execute within 1s")
        assert "Stop the device (stop-device) and boot a new one." in str(caught.value)
    finally:
        await provider.stop(device.id)


@pytest.mark.asyncio(loop_scope="module")
async def test_a_killed_driver_is_a_clean_death(provider: Any) -> None:
    device = await provider.boot()
    try:
        os.killpg(device.pid, signal.SIGKILL)
        with pytest.raises(DeviceError) as caught:
            await device.ui_tree()
        assert f"WebKit ({device.id}): WebKitWebDriver exited (killed by signal SIGKILL)" in str(caught.value)
        assert not device.alive
    finally:
        await provider.stop(device.id)


@pytest.mark.asyncio(loop_scope="module")
async def test_no_display_and_no_driver_say_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    own = webkit.WebKitDeviceProvider()
    try:
        monkeypatch.setenv("DISPLAY", ":4093")
        with pytest.raises(DeviceError) as caught:
            await own.boot()
        assert str(caught.value) == (
            "Cannot boot a webkit device: DISPLAY=:4093 names no X server that answers — MiniBrowser needs one. "
            "Start it, or unset DISPLAY so that argent starts its own Xvfb."
        )
        monkeypatch.delenv("DISPLAY")
        monkeypatch.setenv("ARGENT_XVFB", "/nonexistent/Xvfb")
        with pytest.raises(DeviceError) as caught:
            await display.start_xvfb()
        assert str(caught.value) == (
            'Cannot boot a webkit device: ARGENT_XVFB="/nonexistent/Xvfb" is not an executable file — install '
            "Xvfb (Debian/Ubuntu: apt-get install xvfb) or set ARGENT_XVFB to the path of an Xvfb binary."
        )
        monkeypatch.delenv("ARGENT_XVFB")
        monkeypatch.setenv("ARGENT_WEBKIT_DRIVER", "/nonexistent/WebKitWebDriver")
        with pytest.raises(DeviceError) as caught:
            await own.boot()
        assert str(caught.value) == (
            'Cannot boot a webkit device: ARGENT_WEBKIT_DRIVER="/nonexistent/WebKitWebDriver" is not an executable '
            "file — install WebKit (Debian/Ubuntu: apt-get install webkit2gtk-driver) or set ARGENT_WEBKIT_DRIVER "
            "to the path of WebKitGTK's WebKitWebDriver."
        )
    finally:
        await own.close_all()


def test_cli_runs_on_webkit_and_a_script_drives_the_session(cli: Cli, flows: Path) -> None:
    before = set(webkit_processes())
    (flows / "title.py").write_text(
        "import json, os, urllib.request\n"
        "url = f\"{os.environ['ARGENT_WEBDRIVER_URL']}/session/{os.environ['ARGENT_WEBDRIVER_SESSION']}/title\"\n"
        "title = json.load(urllib.request.urlopen(url, timeout=10))['value']\n"
        "assert title == 'Shop', title\n"
        "print(os.environ['ARGENT_DEVICE'])\n"
    )
    (flows / "cli-shop.yaml").write_text(
        "steps:\n  - launch: { chromium: site }\n  - tap: Add to cart\n"
        '  - assert: { text: { in: { id: count }, equals: "1" } }\n  - script: title.py\n'
    )
    done = cli.run("flow", "run", "cli-shop", "--platform", "webkit", "--json", timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert [s["status"] for s in report["steps"]] == ["pass"] * 4, report
    assert set(webkit_processes()) - before == set()


def test_a_server_stops_its_webkit_devices_and_xvfb(cli: Cli) -> None:
    before = set(webkit_processes())
    server = start_server_process(cli)
    env = {"ARGENT_TOOLS_URL": server.url, "ARGENT_AUTH_TOKEN": server.token}
    try:
        booted = cli.run("run", "boot-device", "--platform", "webkit", "--json", timeout=90, **env)
        assert booted.returncode == 0, booted.stdout + booted.stderr
        udid = json.loads(booted.stdout)["id"]
        assert WEBKIT.port_of(udid) is not None
        listed = cli.run("run", "list-devices", "--json", timeout=60, **env)
        assert [(d["id"], d["platform"]) for d in json.loads(listed.stdout)["devices"]] == [(udid, "webkit")]
        logs = cli.run("run", "view-network-logs", "--device-id", udid, "--json", timeout=60, **env)
        assert logs.returncode != 0
        assert (
            f"view-network-logs cannot run on {udid}: WebKit (webkit) lacks network and console logs"
            in logs.stdout + logs.stderr
        )
        assert set(webkit_processes()) - before
    finally:
        assert server.stop(signal.SIGTERM) == 0
    assert set(webkit_processes()) - before == set()


def test_a_killed_server_takes_its_webkit_along(cli: Cli) -> None:
    """SIGKILL leaves no cleanup to run: Linux's parent-death signal stops the driver and the Xvfb,
    and MiniBrowser and WebKit's helpers end with their display and their driver."""
    before = set(webkit_processes())
    server = start_server_process(cli)
    env = {"ARGENT_TOOLS_URL": server.url, "ARGENT_AUTH_TOKEN": server.token}
    try:
        booted = cli.run("run", "boot-device", "--platform", "webkit", "--json", timeout=90, **env)
        assert booted.returncode == 0, booted.stdout + booted.stderr
        names = {name for pid, name in webkit_processes().items() if pid not in before}
        assert {"WebKitWebDriver", "MiniBrowser", "Xvfb"} <= names, names
    finally:
        server.stop(signal.SIGKILL)
    deadline = time.monotonic() + 20
    while set(webkit_processes()) - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert {name for pid, name in webkit_processes().items() if pid not in before} == set()
