"""A shared tool-server's Chromium devices, attacked by a client holding a valid token.

Each test drives a real `argent server start` and real headless Chromium: a page's download must never
land on the server's disk, one named token never sees, drives or stops another's devices, a named token
never attaches to a Chromium the server did not boot (another local user's browser), and the browsers one
token (and the whole server) may hold at once are capped with a clear error.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from argent.devices.chromium.launcher import find_chromium, launch_chromium
from tests.e2e.conftest import Cli
from tests.hostile.conftest import Probe, start_probe

pytestmark = pytest.mark.skipif(find_chromium() is None, reason="needs Chromium")

ALICE = "a" * 32
BOB = "b" * 32
#: A page that downloads a file as soon as it loads (what a hostile page a flow visits can do).
DOWNLOADING_PAGE = (
    "data:text/html,<a id=a download=planted.txt href='data:text/plain,planted'>x</a>"
    "<script>document.getElementById('a').click()</script>"
)
#: How long a download that Chromium would save gets to appear (it lands within a second when allowed).
DOWNLOAD_WAIT_SECONDS = 4.0


def config_file(tmp_path: Path, limits: str = "") -> Path:
    config = tmp_path / "server.yaml"
    config.write_text(
        "tokens:\n"
        "  - name: alice\n    token_env: TOKEN_ALICE\n    tools: ['*']\n"
        "  - name: bob\n    token_env: TOKEN_BOB\n    tools: ['*']\n" + limits
    )
    return config


def start_shared_server(cli: Cli, project: Path, tmp_path: Path) -> Probe:
    """A tool-server with two named tokens (``config_file``); the probe calls as alice."""
    probe = start_probe(
        cli, project, tmp_path, "--config", str(config_file(tmp_path)), TOKEN_ALICE=ALICE, TOKEN_BOB=BOB
    )
    probe.server.token = ALICE
    return probe


@pytest.fixture
def shared_server(cli: Cli, project: Path, tmp_path: Path) -> Iterator[Probe]:
    """A tool-server with two named tokens; the probe calls as alice."""
    probe = start_shared_server(cli, project, tmp_path)
    yield probe
    probe.server.stop()


def call_as(probe: Probe, token: str, tool: str, args: dict[str, Any]) -> tuple[int, Any]:
    saved = probe.server.token
    probe.server.token = token
    try:
        return probe.call(tool, args, timeout=60)
    finally:
        probe.server.token = saved


def boot(probe: Probe, token: str, url: str = "about:blank") -> str:
    status, body = call_as(probe, token, "boot-device", {"platform": "chromium", "url": url})
    assert status == 200, body
    return str(body["data"]["id"])


def planted(root: Path) -> list[Path]:
    return [p for p in root.rglob("planted*") if p.is_file()]


def test_a_pages_download_never_lands_on_the_servers_disk(hostile_server: Probe, cli: Cli) -> None:
    status, body = hostile_server.call("boot-device", {"platform": "chromium", "url": DOWNLOADING_PAGE})
    assert status == 200, body
    device = body["data"]["id"]
    try:
        deadline = time.monotonic() + DOWNLOAD_WAIT_SECONDS
        while time.monotonic() < deadline and not planted(cli.home) and not planted(hostile_server.tmp_dir):
            time.sleep(0.1)
        assert planted(cli.home) == [] and planted(hostile_server.tmp_dir) == []
    finally:
        hostile_server.call("stop-device", {"udid": device})
    hostile_server.assert_still_fine()


def test_one_tokens_devices_are_invisible_to_another(shared_server: Probe) -> None:
    device = boot(shared_server, ALICE, "data:text/html,<h1>alice's secret</h1>")
    try:
        status, body = call_as(shared_server, BOB, "list-devices", {})
        assert status == 200 and body["data"]["devices"] == [], body
        for tool, args in (
            ("debugger-evaluate", {"device_id": device, "expression": "document.body.innerText"}),
            ("describe", {"udid": device}),
            ("view-network-logs", {"device_id": device}),
            ("stop-device", {"udid": device}),
        ):
            status, body = call_as(shared_server, BOB, tool, args)
            assert status != 200, (tool, body)
            assert "secret" not in json.dumps(body), (tool, body)
            assert f'No device "{device}" found' in body["error"], (tool, body)
        status, body = call_as(
            shared_server, ALICE, "debugger-evaluate", {"device_id": device, "expression": "1+1"}
        )
        assert status == 200 and body["data"]["result"] == 2, body
        status, body = call_as(shared_server, ALICE, "list-devices", {})
        assert [d["id"] for d in body["data"]["devices"]] == [device]
    finally:
        call_as(shared_server, ALICE, "stop-device", {"udid": device})
    shared_server.assert_still_fine()


async def test_a_named_token_never_attaches_to_a_chromium_the_server_did_not_boot(
    shared_server: Probe, tmp_path: Path
) -> None:
    """Another local user's browser with a DevTools port (or a developer's) is no device of a shared server."""
    other = await launch_chromium()
    try:
        device = f"chromium-cdp-{other.port}"
        status, body = await asyncio.to_thread(
            call_as, shared_server, BOB, "debugger-evaluate", {"device_id": device, "expression": "1"}
        )
        assert status == 500 and body["error_code"] == "FLOW_DEVICE_RESOLUTION", body
        assert body["error"].startswith(f'No device "{device}" found'), body
        assert "boots" in body["error"], body
        status, body = await asyncio.to_thread(call_as, shared_server, BOB, "list-devices", {})
        assert body["data"]["devices"] == []
    finally:
        await other.terminate()


def test_the_browsers_of_one_token_are_capped_with_a_clear_error(
    cli: Cli, project: Path, tmp_path: Path
) -> None:
    config = config_file(tmp_path, "limits:\n  devices_per_token: 1\n")
    probe = start_probe(cli, project, tmp_path, "--config", str(config), TOKEN_ALICE=ALICE, TOKEN_BOB=BOB)
    probe.server.token = ALICE
    try:
        first = boot(probe, ALICE)
        t0 = time.monotonic()
        status, body = call_as(probe, ALICE, "boot-device", {"platform": "chromium"})
        assert status == 429, body
        assert time.monotonic() - t0 < 15
        assert body["error_code"] == "TOO_MANY_DEVICES"
        assert "1 Chromium device" in body["error"] and "limits.devices_per_token" in body["error"]
        assert "stop-device" in body["error"]
        other = boot(probe, BOB)  # another token is not affected
        call_as(probe, BOB, "stop-device", {"udid": other})
        call_as(probe, ALICE, "stop-device", {"udid": first})
        again = boot(probe, ALICE)  # a stopped device frees its slot
        call_as(probe, ALICE, "stop-device", {"udid": again})
        probe.assert_still_fine()
    finally:
        probe.server.stop()
    assert not [p for p in os.listdir(probe.tmp_dir) if p.startswith("argent-chromium-")]


#: Run in a page of the DevTools origin: speak raw CDP on the browser's own WebSocket, allow downloads into
#: a directory of the attacker's choice, and download a file there (a shell, written as ~/.bashrc).
RAW_CDP_WRITE = """
new Promise((done) => {
  let version;
  try { version = JSON.parse(document.body.innerText); } catch (e) { return done('no DevTools page: ' + location.href); }
  const ws = new WebSocket(version.webSocketDebuggerUrl);
  ws.onopen = () => ws.send(JSON.stringify({id: 1, method: 'Browser.setDownloadBehavior',
    params: {behavior: 'allow', downloadPath: %(target)s}}));
  ws.onmessage = () => {
    const a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob(['planted by a page']));
    a.download = 'planted';
    document.body.appendChild(a);
    a.click();
    setTimeout(() => done('raw CDP'), 1500);
  };
  ws.onerror = () => done('refused');
  setTimeout(() => done('timeout'), 5000);
})
"""


def test_a_page_never_reaches_its_browsers_devtools_port(hostile_server: Probe, tmp_path: Path) -> None:
    """A page of the DevTools origin may open the browser's DevTools WebSocket: a token holder who points a
    device there and evaluates a script gets raw CDP, past every rule of the call (a file written anywhere)."""
    target = tmp_path / "victim"
    target.mkdir()
    status, body = hostile_server.call("boot-device", {"platform": "chromium"})
    assert status == 200, body
    device, port = body["data"]["id"], body["data"]["port"]
    try:
        for host in ("127.0.0.1", "localhost"):
            status, body = hostile_server.call(
                "open-url", {"udid": device, "url": f"http://{host}:{port}/json/version"}
            )
            expression = RAW_CDP_WRITE % {"target": json.dumps(str(target))}
            status, body = hostile_server.call(
                "debugger-evaluate", {"device_id": device, "expression": expression}
            )
            assert status != 200 or body["data"]["result"] != "raw CDP", body
        status, body = hostile_server.call(
            "debugger-evaluate",
            {
                "device_id": device,
                "expression": f"fetch('http://127.0.0.1:{port}/json/version').then(r => 'read').catch(e => 'denied')",
            },
        )
        assert status == 200 and body["data"]["result"] == "denied", body
        assert planted(target) == []
    finally:
        hostile_server.call("stop-device", {"udid": device})
    hostile_server.assert_still_fine()


def test_a_page_never_reaches_another_tokens_browser(shared_server: Probe, tmp_path: Path) -> None:
    """Bob's page pointed at the DevTools port of alice's browser would drive it (and write files) with raw CDP."""
    target = tmp_path / "victim"
    target.mkdir()
    alices = boot(shared_server, ALICE, "data:text/html,<h1>alice's secret</h1>")
    bobs = boot(shared_server, BOB)
    port = int(alices.removeprefix("chromium-cdp-"))
    try:
        call_as(
            shared_server, BOB, "open-url", {"udid": bobs, "url": f"http://127.0.0.1:{port}/json/version"}
        )
        expression = RAW_CDP_WRITE % {"target": json.dumps(str(target))}
        status, body = call_as(
            shared_server, BOB, "debugger-evaluate", {"device_id": bobs, "expression": expression}
        )
        assert status != 200 or body["data"]["result"] != "raw CDP", body
        assert planted(target) == []
    finally:
        call_as(shared_server, BOB, "stop-device", {"udid": bobs})
        call_as(shared_server, ALICE, "stop-device", {"udid": alices})
