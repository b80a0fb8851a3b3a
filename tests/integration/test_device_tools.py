"""The device tools over HTTP: a real tool-server app (``create_app``) with its real provider."""

from __future__ import annotations

import base64
import io
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from PIL import Image

from argent import limits
from argent.devices.chromium import find_chromium
from argent.devices.chromium.launcher import processes_naming
from argent.server.app import create_app
from argent.server.config import ServerConfig
from argent.server.keys import DEVICES

TOKEN = "device-tools-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
DEVICE_TOOLS = (
    "list-devices",
    "boot-device",
    "stop-device",
    "open-url",
    "screenshot",
    "describe",
    "gesture-tap",
    "gesture-scroll",
    "keyboard",
    "await-ui-element",
    "screenshot-diff",
)
needs_chromium = pytest.mark.skipif(
    find_chromium() is None,
    reason="no Chromium binary (run scripts/install-system-deps or set ARGENT_CHROMIUM)",
)

PAGE = """<!doctype html><html><head><title>Tools page</title>
<style>body { margin: 0; font: 16px sans-serif } #btn { position: absolute; left: 100px; top: 100px;
width: 200px; height: 50px }</style></head><body>
<button id="btn" onclick="document.getElementById('out').textContent = 'tapped'">Tap here</button>
<p id="out" style="position:absolute; top: 200px">waiting</p>
<input id="field" placeholder="Type here" style="position:absolute; top: 300px; left: 0; width: 300px"
       onkeydown="if (event.key === 'Enter') document.getElementById('out').textContent = 'entered:' + this.value.length">
<script>setTimeout(() => { const p = document.createElement('p'); p.id = 'late'; p.textContent = 'Arrived late';
document.body.appendChild(p); }, 400);</script>
</body></html>"""

Client = TestClient[Any, Any]


@pytest.fixture
async def client(aiohttp_client: Callable[..., Any], tmp_path: Path) -> Client:
    return await aiohttp_client(create_app(ServerConfig(token=TOKEN, tmp_dir=str(tmp_path))))  # type: ignore[no-any-return]


async def call(client: Client, tool: str, args: dict[str, Any] | None = None, *, status: int = 200) -> Any:
    response = await client.post(f"/tools/{tool}", json=args or {}, headers=AUTH)
    body = await response.json()
    assert response.status == status, body
    return body.get("data") if status == 200 else body


def frame_of(description: str, pattern: str) -> tuple[float, float, float, float]:
    """The frame of the first describe line matching ``pattern``."""
    for line in description.splitlines():
        if re.search(pattern, line):
            found = re.search(r"\(([\d.]+), ([\d.]+), ([\d.]+), ([\d.]+)\)\s*$", line)
            assert found, line
            x, y, w, h = (float(v) for v in found.groups())
            return x, y, w, h
    raise AssertionError(f"no line matches {pattern!r} in:\n{description}")


def center(frame: tuple[float, float, float, float]) -> dict[str, float]:
    x, y, w, h = frame
    return {"x": x + w / 2, "y": y + h / 2}


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


def png_bytes(
    size: tuple[int, int], color: tuple[int, int, int], square: tuple[int, int, int] | None = None
) -> bytes:
    image = Image.new("RGB", size, color)
    if square is not None:
        for x in range(size[0] // 2):
            for y in range(size[1] // 2):
                image.putpixel((x, y), square)
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


# --------------------------------------------------------------------------------------------
# The catalogue


async def test_device_tools_are_listed_with_their_declarations(client: Client) -> None:
    response = await client.get("/tools", headers=AUTH)
    tools = {t["name"]: t for t in (await response.json())["tools"]}
    for name in DEVICE_TOOLS:
        assert name in tools
    assert tools["screenshot"]["outputHint"] == "image"
    assert tools["gesture-tap"]["inputSchema"]["required"] == ["udid", "x", "y"]
    assert tools["screenshot-diff"]["fileInputs"] == [
        {"target": "baselinePath", "path": "${baselinePath}", "kind": "file"},
        {"target": "currentPath", "path": "${currentPath}", "kind": "file"},
    ]
    assert tools["await-ui-element"]["longRunning"] is True
    assert "udid" not in tools["screenshot-diff"]["inputSchema"]["properties"]  # device-free in flows


async def test_without_chromium_the_tools_that_need_it_are_disabled(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    from argent.devices.registry import ENGINES

    for engine in ENGINES:  # no browser engine at all (another engine's binary keeps the tools)
        monkeypatch.setenv(engine.binary_env, f"/nonexistent/{engine.platform}")
    response = await client.get("/tools", headers=AUTH)
    tools = {t["name"]: t for t in (await response.json())["tools"]}
    reason = tools["boot-device"]["disabled"]["reason"]
    assert "ARGENT_CHROMIUM" in reason and "apt-get install chromium" in reason
    for name in ("describe", "gesture-tap", "keyboard", "screenshot"):
        assert "disabled" in tools[name]
    for name in ("list-devices", "stop-device", "screenshot-diff"):
        assert "disabled" not in tools[name]
    body = await call(client, "boot-device", {}, status=500)
    assert "cannot run on this tool-server" in body["error"]


# --------------------------------------------------------------------------------------------
# Driving a page


@needs_chromium
async def test_drive_a_page_list_boot_describe_tap_type_screenshot_stop(
    client: Client, tmp_path: Path
) -> None:
    page = tmp_path / "page.html"
    page.write_text(PAGE)
    assert await call(client, "list-devices") == {"devices": [], "avds": []}

    booted = await call(client, "boot-device", {"url": str(page)})
    udid = booted["id"]
    assert re.fullmatch(r"chromium-cdp-\d+", udid) and booted["booted"] is True
    assert booted["url"] == page.resolve().as_uri()
    pid = booted["pid"]
    assert alive(pid)

    listed = (await call(client, "list-devices"))["devices"]
    assert [(d["id"], d["platform"], d["title"], d["state"]) for d in listed] == [
        (udid, "chromium", "Tools page", "Running")
    ]

    description = (await call(client, "describe", {"udid": udid}))["description"]
    assert description.startswith("Source: cdp-dom\nMode: nested\n")
    assert "\nROOT  html (0.000, 0.000, 1.000, 1.000)\n" in description
    assert '  button "Tap here" id="btn" [clickable]  (0.100, 0.125, 0.200, 0.062)' in description

    tapped = await call(client, "gesture-tap", {"udid": udid, **center(frame_of(description, 'id="btn"'))})
    assert tapped["tapped"] is True and isinstance(tapped["timestampMs"], int)
    assert re.search(
        r'paragraph value="tapped" id="out"', (await call(client, "describe", {"udid": udid}))["description"]
    )

    await call(client, "gesture-tap", {"udid": udid, **center(frame_of(description, 'id="field"'))})
    assert await call(client, "keyboard", {"udid": udid, "text": "hello"}) == {"typed": "hello", "keys": 5}
    assert await call(client, "keyboard", {"udid": udid, "key": "enter"}) == {"typed": "enter", "keys": 1}
    after = (await call(client, "describe", {"udid": udid}))["description"]
    assert 'textbox "Type here" value="hello" id="field" [clickable, focused]' in after
    assert 'value="entered:5"' in after

    shot = await call(client, "screenshot", {"udid": udid})
    assert (shot["mimeType"], shot["width"], shot["height"]) == ("image/png", 1000, 800)
    assert Image.open(io.BytesIO(base64.b64decode(shot["image"]))).size == (1000, 800)

    waited = await call(
        client, "await-ui-element", {"udid": udid, "selector": {"text": "arrived LATE"}, "timeoutMs": 5000}
    )
    assert waited["success"] is True
    missing = await call(
        client, "await-ui-element", {"udid": udid, "selector": {"identifier": "nope"}, "timeoutMs": 300}
    )
    assert missing["success"] is False and 'identifier: "nope"' in missing["note"]
    hidden = await call(
        client,
        "await-ui-element",
        {"udid": udid, "selector": {"role": "button", "text": "Tap"}, "condition": "hidden", "timeoutMs": 0},
    )
    assert hidden["success"] is False

    second = tmp_path / "second.html"
    second.write_text("<title>Second</title><p>Second page</p>")
    assert (await call(client, "open-url", {"udid": udid, "url": second.as_uri()}))["opened"] is True
    scrolled = await call(client, "gesture-scroll", {"udid": udid, "deltaY": 0.5})
    assert scrolled["scrolled"] is True and isinstance(scrolled["timestampMs"], int)

    assert await call(client, "stop-device", {"udid": udid}) == {"stopped": True, "id": udid}
    assert not alive(pid)
    assert await call(client, "list-devices") == {"devices": [], "avds": []}
    body = await call(client, "describe", {"udid": udid}, status=500)
    assert body["error"].startswith(f'No device "{udid}" found')


@needs_chromium
async def test_keyboard_fills_secrets_and_never_echoes_them(
    client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "s3cr3t-Value-42"
    monkeypatch.setenv("ARGENT_SECRET_PASSWORD", secret)
    page = tmp_path / "page.html"
    page.write_text(PAGE)
    udid = (await call(client, "boot-device", {"url": str(page)}))["id"]
    description = (await call(client, "describe", {"udid": udid}))["description"]
    await call(client, "gesture-tap", {"udid": udid, **center(frame_of(description, 'id="field"'))})

    response = await client.post(
        "/tools/keyboard", json={"udid": udid, "text": "pw={{secret:PASSWORD}}"}, headers=AUTH
    )
    raw = await response.text()
    assert response.status == 200 and secret not in raw
    assert json.loads(raw)["data"]["typed"] == "pw={{secret:PASSWORD}}"
    # The page got the value (the field shows it: it is not a password field).
    assert f'value="pw={secret}"' in (await call(client, "describe", {"udid": udid}))["description"]

    response = await client.post(
        "/tools/keyboard", json={"udid": udid, "text": "{{secret:NOPE}}"}, headers=AUTH
    )
    raw = await response.text()
    assert response.status == 400 and secret not in raw
    error = json.loads(raw)["error"]
    assert 'Unknown secret "NOPE"' in error and "ARGENT_SECRET_NOPE" in error and "PASSWORD" in error


@needs_chromium
async def test_invalid_device_arguments_are_400s(client: Client) -> None:
    udid = (await call(client, "boot-device"))["id"]
    assert (
        "x must be a fraction"
        in (await call(client, "gesture-tap", {"udid": udid, "x": 2, "y": 0.5}, status=400))["error"]
    )
    assert (
        "clickCount"
        in (
            await call(
                client, "gesture-tap", {"udid": udid, "x": 0.5, "y": 0.5, "clickCount": 11}, status=400
            )
        )["error"]
    )
    body = await call(client, "keyboard", {"udid": udid, "text": "a", "key": "tab"}, status=400)
    assert body["error"] == "Pass exactly one of text or key."
    assert (
        'Unknown key "hyper"'
        in (await call(client, "keyboard", {"udid": udid, "key": "hyper"}, status=400))["error"]
    )
    assert "non-zero deltaX" in (await call(client, "gesture-scroll", {"udid": udid}, status=400))["error"]
    body = await call(client, "await-ui-element", {"udid": udid, "selector": {}}, status=400)
    assert "at least one of text, identifier, role" in body["error"]
    body = await call(client, "await-ui-element", {"udid": udid, "selector": {"label": "x"}}, status=400)
    assert "unknown key label" in body["error"]
    assert (
        "only http"
        in (await call(client, "open-url", {"udid": udid, "url": "ftp://x/y"}, status=400))["error"]
    )
    body = await call(client, "screenshot", {"udid": "chromium-cdp-1"}, status=500)
    assert body["error"].startswith('No device "chromium-cdp-1" found') and udid in body["error"]
    assert body["error_code"] == "FLOW_DEVICE_RESOLUTION"


# --------------------------------------------------------------------------------------------
# screenshot-diff


async def test_screenshot_diff_identical_different_and_resized(client: Client, tmp_path: Path) -> None:
    white = tmp_path / "white.png"
    white.write_bytes(png_bytes((40, 20), (255, 255, 255)))
    same = tmp_path / "same.png"
    same.write_bytes(png_bytes((40, 20), (255, 255, 255)))
    marked = tmp_path / "marked.png"
    marked.write_bytes(png_bytes((40, 20), (255, 255, 255), square=(255, 0, 0)))
    faint = tmp_path / "faint.png"
    faint.write_bytes(png_bytes((40, 20), (250, 250, 250)))
    small = tmp_path / "small.png"
    small.write_bytes(png_bytes((20, 10), (255, 255, 255)))

    def args(a: Path, b: Path) -> dict[str, Any]:
        return {"baselinePath": str(a), "currentPath": str(b)}

    assert await call(client, "screenshot-diff", args(white, same)) == {
        "mismatchPercentage": 0.0,
        "width": 40,
        "height": 20,
    }
    assert (await call(client, "screenshot-diff", args(white, marked)))["mismatchPercentage"] == 25.0
    assert (await call(client, "screenshot-diff", args(white, faint)))[
        "mismatchPercentage"
    ] == 0.0  # under 0.1
    resized = await call(client, "screenshot-diff", args(white, small))
    assert resized["dimensionMismatch"] == {
        "baseline": {"width": 40, "height": 20},
        "current": {"width": 20, "height": 10},
    }
    not_png = tmp_path / "notes.txt"
    not_png.write_text("hello")
    body = await call(client, "screenshot-diff", args(white, not_png), status=400)
    assert "currentPath" in body["error"] and "not a readable PNG" in body["error"]


async def test_screenshot_diff_refuses_an_image_larger_than_any_screen_before_decoding_it(
    client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    white = tmp_path / "white.png"
    white.write_bytes(png_bytes((40, 20), (255, 255, 255)))
    monkeypatch.setattr(limits, "MAX_PNG_PIXELS", 40 * 20 - 1)
    body = await call(
        client, "screenshot-diff", {"baselinePath": str(white), "currentPath": str(white)}, status=400
    )
    assert body["error"] == (
        f'baselinePath "{white}" is 40x20 pixels, more than the 799 a screen capture may have.'
    )


async def test_screenshot_diff_reads_uploaded_file_inputs(client: Client, tmp_path: Path) -> None:
    """Over a link the PNGs arrive as file inputs with their content (they are not on this host)."""

    def wrapper(path: str, data: bytes) -> dict[str, Any]:
        return {
            "__argentFileInput": True,
            "path": path,
            "content": base64.b64encode(data).decode(),
            "size": len(data),
        }

    base = png_bytes((10, 10), (0, 0, 0))
    current = png_bytes((10, 10), (0, 0, 0), square=(255, 255, 255))
    result = await call(
        client,
        "screenshot-diff",
        {
            "baselinePath": wrapper("/client/only/base.png", base),
            "currentPath": wrapper("/client/only/current.png", current),
        },
    )
    assert result == {"mismatchPercentage": 25.0, "width": 10, "height": 10}


# --------------------------------------------------------------------------------------------
# Lifetime


@needs_chromium
async def test_app_shutdown_kills_every_chromium(aiohttp_client: Callable[..., Any], tmp_path: Path) -> None:
    app = create_app(ServerConfig(token=TOKEN, tmp_dir=str(tmp_path)))
    client: Client = await aiohttp_client(app)
    booted = [await call(client, "boot-device") for _ in range(2)]
    devices = await app[DEVICES].live_devices()
    homes = [os.path.dirname(d.profile_dir or "") for d in devices]
    assert len(homes) == 2 and all(os.path.isdir(h) for h in homes)
    await client.close()  # the app's cleanup_ctx runs
    for entry in booted:
        assert not alive(entry["pid"])
    for home in homes:
        assert processes_naming(home) == [] and not os.path.exists(home)
