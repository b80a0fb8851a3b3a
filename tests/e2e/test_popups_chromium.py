"""A tab a page opens never stalls its device (issue 24 item 4).

Headless Chromium opens a ``target=_blank`` link or a ``window.open`` as a new foreground tab; the
device's page behind it rendered no frame of its own, and every other ``Page.captureScreenshot``
ran into its 20 s bound until the other tab closed (``argent.devices.chromium.front``). The device
keeps the page it drives in front; and a navigation Chromium refuses returns once its error page is
in (a capture right after it found the page between two documents). Real headless Chromium, real
pages on loopback and on disk, and a real ``argent server start --config`` whose policy names
``project_roots``.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web

from argent.devices.base import DeviceError
from argent.devices.chromium import ChromiumDevice, ChromiumDeviceProvider
from argent.devices.chromium import device as chromium_device
from argent.devices.chromium.browser import browser_call, page_targets
from argent.tools.builtin import build_registry
from argent.tools.registry import ToolContext
from tests.e2e.conftest import Cli, chromium_marks, pages_app, serve, start_server_process

pytestmark = chromium_marks()
IN_MODULE_LOOP = pytest.mark.asyncio(loop_scope="module")

#: A stalled capture waits this long here (20 s in the product): a regression fails in seconds, not
#: minutes. A capture of a page in front takes a fraction of it.
STALL_BOUND_SECONDS = 8.0
TOKEN = "p" * 32


def full_screen_link(attributes: str) -> str:
    return (
        '<!doctype html><body style="margin:0">'
        f'<a id="go" {attributes} style="display:block;width:100vw;height:100vh">go</a></body>'
    )


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def site() -> AsyncIterator[str]:
    async def nothing(request: web.Request) -> web.Response:
        return web.Response(status=204)

    pages = {"/other.html": "<!doctype html><title>Other</title><p>other</p>"}
    async with serve(pages_app(pages, web.get("/nothing", nothing))) as url:
        yield url


async def popup_of(device: ChromiumDevice, before: set[str]) -> dict[str, Any]:
    """The page target the device's page opened, once it has committed a page (bounded poll: no
    event of the device's own session reports another tab's load)."""
    async with asyncio.timeout(10):
        while True:
            fresh = [t for t in await page_targets(device.port) if t["id"] not in before]
            if fresh and fresh[0].get("url"):
                return fresh[0]
            await asyncio.sleep(0.05)


async def close_target(device: ChromiumDevice, target_id: str) -> None:
    await browser_call(device.port, "Target.closeTarget", {"targetId": target_id}, destroys=target_id)


@IN_MODULE_LOOP
@pytest.mark.parametrize(
    "kind",
    ["denied-file", "http", "window-open"],
)
async def test_a_tab_the_page_opens_leaves_every_capture_of_the_device_prompt(
    provider: ChromiumDeviceProvider,
    device: ChromiumDevice,
    site: str,
    tmp_path: Path,
    kind: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(chromium_device, "SCREENSHOT_TIMEOUT_SECONDS", STALL_BOUND_SECONDS)
    roots = tmp_path / "roots"
    roots.mkdir()
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("the secret")
    link = {
        "denied-file": f'target="_blank" href="{secret.as_uri()}"',
        "http": f'target="_blank" href="{site}/other.html"',
        "window-open": 'href="#" onclick="window.open(\'about:blank\'); return false"',
    }[kind]
    (roots / "page.html").write_text(full_screen_link(link))
    await device.use_file_access(lambda url: url.startswith(roots.as_uri() + "/"))
    before = {t["id"] for t in await page_targets(device.port)}
    driven = device.target_id
    popup: dict[str, Any] | None = None
    try:
        await device.navigate((roots / "page.html").as_uri())
        await device.tap(0.5, 0.5)
        popup = await popup_of(device, before)
        if kind == "denied-file":
            assert "the secret" not in json.dumps(popup)
        for _ in range(4):  # every other capture stalled: four in a row
            assert (await device.screenshot()).startswith(b"\x89PNG")
            assert (await device.capture()).startswith(b"\x89PNG")
        assert await device.wait_quiet(5.0) is not None
        assert popup["id"] in {t["id"] for t in await page_targets(device.port)}  # still open, behind
        assert device.target_id == driven  # the device still drives its page
    finally:
        await device.use_file_access(None)
        if popup is not None:
            await close_target(device, str(popup["id"]))


@IN_MODULE_LOOP
async def test_a_popup_selected_from_behind_comes_to_the_front(
    provider: ChromiumDeviceProvider, device: ChromiumDevice, site: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The popup stays behind the device's page until chromium-tabs selects it; then it is driven in
    front (its captures answer), and so is the page when selected back."""
    monkeypatch.setattr(chromium_device, "SCREENSHOT_TIMEOUT_SECONDS", STALL_BOUND_SECONDS)
    registry = build_registry(devices=provider)
    ctx = ToolContext()
    first = device.target_id
    before = {t["id"] for t in await page_targets(device.port)}
    await device.navigate(f"data:text/html,{full_screen_link(f'target=_blank href={site}/other.html')}")
    await device.tap(0.5, 0.5)
    popup = await popup_of(device, before)
    try:
        listing = {"udid": device.id, "action": "list"}
        tabs = (await registry.invoke("chromium-tabs", listing, ctx))["tabs"]
        for target_id in (popup["id"], first):
            tab = next(t["tabId"] for t in tabs if t["targetId"] == target_id)
            await registry.invoke("chromium-tabs", {"udid": device.id, "action": "select", "tab": tab}, ctx)
            assert device.target_id == target_id
            for _ in range(4):
                assert (await device.screenshot()).startswith(b"\x89PNG")
    finally:
        if device.target_id != first:
            await device.switch_target(
                str(first),
                str(
                    next(t for t in await page_targets(device.port) if t["id"] == first)[
                        "webSocketDebuggerUrl"
                    ]
                ),
            )
        await close_target(device, str(popup["id"]))


@IN_MODULE_LOOP
async def test_a_refused_page_is_in_before_the_next_capture(device: ChromiumDevice, tmp_path: Path) -> None:
    """Chromium answers a refused navigation first and commits its error page after: navigate raises
    once that page is in, so the capture right after it finds a page, not "Not attached to an active
    page" (half the time before; the popup selected above re-opens its file this way)."""
    (tmp_path / "page.html").write_text("<p>inside</p>")
    await device.use_file_access(lambda url: url.startswith(tmp_path.as_uri() + "/"))
    try:
        for _ in range(6):
            await device.navigate((tmp_path / "page.html").as_uri())
            with pytest.raises(
                DeviceError, match=r'could not open "file:///etc/hostname": net::ERR_ACCESS_DENIED'
            ):
                await device.navigate("file:///etc/hostname")
            assert (await device.screenshot()).startswith(b"\x89PNG")
    finally:
        await device.use_file_access(None)


@IN_MODULE_LOOP
async def test_an_aborted_load_leaves_the_page(device: ChromiumDevice, site: str) -> None:
    """A navigation that commits nothing (a 204) has no error page to wait for: it raises, the page stays."""
    await device.navigate(f"{site}/other.html")
    with pytest.raises(DeviceError, match="net::ERR_ABORTED"):
        await device.navigate(f"{site}/nothing")
    assert await device.session.evaluate("location.pathname") == "/other.html"
    assert (await device.screenshot()).startswith(b"\x89PNG")


# --------------------------------------------------------------------------------------------
# Over HTTP: a real tool-server under a policy with project_roots


def http_call(url: str, tool: str, args: dict[str, Any]) -> tuple[int, Any]:
    request = urllib.request.Request(
        f"{url}/tools/{tool}",
        data=json.dumps(args).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def healthz(url: str) -> int:
    with urllib.request.urlopen(f"{url}/healthz", timeout=5) as resp:
        return int(resp.status)


def test_a_denied_file_popup_stalls_no_screenshot_on_a_policy_server(
    cli: Cli, project: Path, tmp_path: Path
) -> None:
    """The issue's repro: a file:// page inside the roots, a full-screen link to a file outside them
    with target=_blank, tapped; every screenshot after it answers, the popup stays open and shows
    nothing of the file, and the server stays healthy."""
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("the secret")
    page = project / "page.html"
    page.write_text(full_screen_link(f'target="_blank" href="{secret.as_uri()}"'))
    config = tmp_path / "server.yaml"
    config.write_text(
        "tokens:\n  - name: dev\n    token_env: TOKEN_DEV\n    tools: ['*']\n"
        f"project_roots: [{json.dumps(str(project))}]\n"
    )
    server = start_server_process(cli, "--config", str(config), TOKEN_DEV=TOKEN)
    try:
        status, booted = http_call(server.url, "boot-device", {"url": page.as_uri()})
        assert status == 200, booted
        udid = booted["data"]["id"]
        assert http_call(server.url, "gesture-tap", {"udid": udid, "x": 0.5, "y": 0.5})[0] == 200
        tabs: list[dict[str, Any]] = []
        for _ in range(200):  # nothing reports another tab's load to a client: poll the listing, bounded
            status, listed = http_call(server.url, "chromium-tabs", {"udid": udid, "action": "list"})
            assert status == 200, listed
            tabs = listed["data"]["tabs"]
            if len(tabs) == 2 and all(t["url"] for t in tabs):
                break
            time.sleep(0.05)
        popup = next(t for t in tabs if not t["active"])
        assert "the secret" not in json.dumps(tabs)
        for _ in range(4):
            status, shot = http_call(server.url, "screenshot", {"udid": udid})
            assert status == 200, shot
            assert healthz(server.url) == 200
        status, described = http_call(server.url, "describe", {"udid": udid})
        assert status == 200 and "go" in json.dumps(described)
        # The popup stays a tab of its own: selected, it is the one in front; back again, the page is.
        for tab in (popup["tabId"], next(t["tabId"] for t in tabs if t["active"])):
            assert (
                http_call(server.url, "chromium-tabs", {"udid": udid, "action": "select", "tab": tab})[0]
                == 200
            )
            for _ in range(2):
                status, shot = http_call(server.url, "screenshot", {"udid": udid})
                assert status == 200, (tab, shot)
        assert http_call(server.url, "stop-device", {"udid": udid})[0] == 200
    finally:
        server.stop()
