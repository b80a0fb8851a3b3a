"""Upstream argent's device-tool arguments on a real headless Chromium: the ones that mean something on
a page are carried out (keyboard delayMs, gesture-scroll durationMs, await-ui-element's text condition,
screenshot scale), the others are accepted and named in the result's notes."""

from __future__ import annotations

import base64
import io
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from PIL import Image

from argent.devices.chromium import find_chromium
from argent.devices.registry import engines_text
from argent.server.app import create_app
from argent.server.config import ServerConfig

pytestmark = pytest.mark.skipif(find_chromium() is None, reason="no Chromium binary (set ARGENT_CHROMIUM)")

TOKEN = "upstream-args-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
PAGE = """<!doctype html><html><head><title>Upstream args</title>
<style>body { margin: 0; font: 16px sans-serif } #pane { height: 300px; overflow: auto }
#field { position: absolute; left: 0; top: 400px; width: 300px }</style></head><body>
<div id="pane"><div style="height: 5000px">tall</div></div>
<p id="wheels">wheels:0</p><p id="gaps">gaps:none</p><p id="status">Loading</p>
<input id="field" placeholder="Type here">
<script>
let wheels = 0;
document.getElementById('pane').addEventListener('wheel', () => {
  document.getElementById('wheels').textContent = 'wheels:' + (++wheels);
});
const times = [];
document.getElementById('field').addEventListener('keydown', () => {
  times.push(performance.now());
  if (times.length > 1) {
    const gaps = times.slice(1).map((t, i) => t - times[i]);
    document.getElementById('gaps').textContent = 'gaps:' + Math.round(Math.min(...gaps));
  }
});
setTimeout(() => { document.getElementById('status').textContent = 'Ready now'; }, 300);
</script></body></html>"""

Client = TestClient[Any, Any]


@pytest.fixture
async def client(aiohttp_client: Callable[..., Any], tmp_path: Path) -> Client:
    return await aiohttp_client(create_app(ServerConfig(token=TOKEN, tmp_dir=str(tmp_path))))  # type: ignore[no-any-return]


async def call(client: Client, tool: str, args: dict[str, Any], *, status: int = 200) -> Any:
    response = await client.post(f"/tools/{tool}", json=args, headers=AUTH)
    body = await response.json()
    assert response.status == status, body
    return body.get("data") if status == 200 else body


@pytest.fixture
async def udid(client: Client, tmp_path: Path) -> AsyncIterator[str]:
    page = tmp_path / "page.html"
    page.write_text(PAGE)
    booted = await call(client, "boot-device", {"url": str(page), "avdName": "Pixel_7"})
    assert booted["notes"] == [
        "avdName was ignored: it names an Android AVD; this tool-server boots headless browsers "
        f"({engines_text()})."
    ]
    yield booted["id"]
    await call(client, "stop-device", {"udid": booted["id"]})


async def shown(client: Client, udid: str, pattern: str) -> str:
    description = (await call(client, "describe", {"udid": udid}))["description"]
    found = re.search(pattern, description)
    assert found, description
    return found.group(1)


async def test_keyboard_delay_ms_spaces_the_key_presses(client: Client, udid: str) -> None:
    await call(client, "gesture-tap", {"udid": udid, "x": 0.15, "y": 0.51})
    typed = await call(client, "keyboard", {"udid": udid, "text": "abcd", "delayMs": 150})
    assert typed == {"typed": "abcd", "keys": 4}
    assert int(await shown(client, udid, r"gaps:(\d+)")) >= 140
    assert "abcd" in await shown(client, udid, r'(value="abcd")')
    body = await call(client, "keyboard", {"udid": udid, "text": "x", "delayMs": -1}, status=400)
    assert body["error"] == "delayMs must be between 0 and 5000 ms, got -1."


async def test_gesture_scroll_duration_ms_spreads_the_scroll_over_wheel_steps(
    client: Client, udid: str
) -> None:
    assert (await call(client, "gesture-scroll", {"udid": udid, "x": 0.5, "y": 0.1, "deltaY": 0.2}))[
        "scrolled"
    ]
    assert await shown(client, udid, r"wheels:(\d+)") == "1"
    await call(client, "gesture-scroll", {"udid": udid, "x": 0.5, "y": 0.1, "deltaY": 0.3, "durationMs": 300})
    assert await shown(client, udid, r"wheels:(\d+)") == "7"  # one, then six steps of 50 ms


async def test_await_ui_element_text_condition_with_expected_text_and_text_match(
    client: Client, udid: str
) -> None:
    base = {"udid": udid, "selector": {"identifier": "status"}, "condition": "text"}
    assert (await call(client, "await-ui-element", {**base, "expectedText": "READY", "timeoutMs": 5000}))[
        "success"
    ] is True
    missed = await call(
        client, "await-ui-element", {**base, "expectedText": "ready", "textMatch": "equals", "timeoutMs": 200}
    )
    assert missed["success"] is False
    assert missed["note"] == (
        'After 200ms: element matched id="status" but its text was "Ready now" (wanted to equal "ready").'
    )
    equal = {**base, "expectedText": "ready now", "textMatch": "equals", "bundleId": "com.x"}
    waited = await call(client, "await-ui-element", equal)
    assert waited["success"] is True
    assert waited["notes"] == [
        "bundleId was ignored: it names an iOS app; a Chromium device has one page, no apps."
    ]
    body = await call(client, "await-ui-element", base, status=400)
    assert (
        body["error"]
        == "Invalid arguments for await-ui-element: condition text needs expectedText (a non-empty string)."
    )


async def test_screenshot_scale_is_honoured_and_the_other_upstream_arguments_are_noted(
    client: Client, udid: str
) -> None:
    shot = await call(
        client, "screenshot", {"udid": udid, "scale": 0.5, "rotation": "LandscapeLeft", "downscaler": "box"}
    )
    assert (shot["width"], shot["height"]) == (500, 400)
    assert Image.open(io.BytesIO(base64.b64decode(shot["image"]))).size == (500, 400)
    assert [note.split(" ", 1)[0] for note in shot["notes"]] == ["rotation", "downscaler"]
    full = await call(client, "screenshot", {"udid": udid})
    assert (full["width"], full["height"]) == (1000, 800) and "notes" not in full
    body = await call(client, "screenshot", {"udid": udid, "scale": 0}, status=400)
    assert body["error"] == "scale must be between 0.01 and 1, got 0."
    described = await call(client, "describe", {"udid": udid, "bundleId": "com.example"})
    assert described["notes"] == [
        "bundleId was ignored: it names an iOS app; a Chromium device has one page, no apps."
    ]
    opened = await call(
        client, "open-url", {"udid": udid, "url": "data:text/html,<p>hi</p>", "bundleId": "x"}
    )
    assert opened["opened"] is True and len(opened["notes"]) == 1


async def test_a_flow_recorded_with_upstreams_arguments_replays(
    client: Client, udid: str, tmp_path: Path
) -> None:
    """`tool:` steps as upstream records them (device id and upstream-only arguments included)."""
    flows = tmp_path / "proj" / ".argent" / "flows"
    flows.mkdir(parents=True)
    (flows / "upstream.yaml").write_text(
        "steps:\n"
        "  - tool: describe\n"
        "    args: { udid: recorded-sim, bundleId: com.example.app }\n"
        "  - tool: gesture-tap\n"
        "    args: { udid: recorded-sim, x: 0.15, y: 0.51 }\n"
        "  - tool: keyboard\n"
        "    args: { udid: recorded-sim, text: hi, delayMs: 60 }\n"
        "  - tool: gesture-scroll\n"
        "    args: { udid: recorded-sim, x: 0.5, y: 0.1, deltaY: 0.2, durationMs: 100 }\n"
        "  - tool: await-ui-element\n"
        "    args: { udid: recorded-sim, condition: text, selector: { identifier: status },\n"
        "            expectedText: ready now, textMatch: equals, timeoutMs: 5000, bundleId: com.example.app }\n"
    )
    report = await call(
        client, "flow-execute", {"name": "upstream", "project_root": str(tmp_path / "proj"), "device": udid}
    )
    assert [(s["tool"], s["status"]) for s in report["steps"]] == [
        ("describe", "pass"),
        ("gesture-tap", "pass"),
        ("keyboard", "pass"),
        ("gesture-scroll", "pass"),
        ("await-ui-element", "pass"),
    ]
    assert report["ok"] is True
    assert await shown(client, udid, r"wheels:(\d+)") == "2"
    assert "hi" in await shown(client, udid, r'(value="hi")')
