"""Upstream argent's clients against our tool-server over HTTP (a real aiohttp app on a socket): the
arguments upstream declares are accepted with notes, typos stay 400s naming what the tool takes, tool
entries carry upstream's alwaysLoad / searchHint, list-devices has `avds`, flow runs are timed."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from PIL import Image

from argent.server.app import create_app
from argent.server.config import ServerConfig

TOKEN = "upstream-compat-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
UPSTREAM = json.loads((Path(__file__).parents[1] / "fixtures" / "upstream_device_tools.json").read_text())[
    "tools"
]

Client = TestClient[Any, Any]


@pytest.fixture
async def client(aiohttp_client: Callable[..., Any], tmp_path: Path) -> Client:
    return await aiohttp_client(create_app(ServerConfig(token=TOKEN, tmp_dir=str(tmp_path))))  # type: ignore[no-any-return]


async def post(client: Client, tool: str, args: dict[str, Any]) -> tuple[int, Any]:
    response = await client.post(f"/tools/{tool}", json=args, headers=AUTH)
    return response.status, await response.json()


async def test_entries_carry_upstreams_always_load_and_search_hint_on_the_same_tools(client: Client) -> None:
    response = await client.get("/tools", headers=AUTH)
    tools = {t["name"]: t for t in (await response.json())["tools"]}
    for name, upstream in UPSTREAM.items():
        entry = tools[name]
        assert entry.get("alwaysLoad", False) is upstream["alwaysLoad"], name
        assert entry.get("searchHint") == upstream["searchHint"], name
    assert "alwaysLoad" not in tools["open-url"] and "searchHint" not in tools["open-url"]
    assert "alwaysLoad" not in tools["flow-execute"]  # upstream sets neither on its flow tools
    # Upstream's honoured arguments are declared for its CLI's flags; a device-free tool lists no udid.
    assert "durationMs" in tools["gesture-scroll"]["inputSchema"]["properties"]
    assert "udid" not in tools["screenshot-diff"]["inputSchema"]["properties"]


async def test_list_devices_answers_avds_and_a_typo_is_a_400_naming_what_it_takes(client: Client) -> None:
    assert await post(client, "list-devices", {}) == (200, {"data": {"devices": [], "avds": []}})
    status, body = await post(client, "list-devices", {"udid": "chromium-cdp-9222"})
    assert status == 400
    assert (
        body["error"] == "Invalid arguments for list-devices: unknown argument udid (it takes no arguments)"
    )
    status, body = await post(client, "gesture-tap", {"udid": "d", "x": 0.5, "y": 0.5, "durationMs": 10})
    assert status == 400
    assert body["error"] == (
        "Invalid arguments for gesture-tap: unknown argument durationMs (it takes udid, x, y, clickCount)"
    )


def _png(path: Path) -> str:
    out = io.BytesIO()
    Image.new("RGB", (8, 4), (10, 20, 30)).save(out, format="PNG")
    path.write_bytes(out.getvalue())
    return str(path)


async def test_screenshot_diff_accepts_upstreams_live_capture_arguments_and_says_they_were_ignored(
    client: Client, tmp_path: Path
) -> None:
    a, b = _png(tmp_path / "a.png"), _png(tmp_path / "b.png")
    plain = {"baselinePath": a, "currentPath": b}
    assert await post(client, "screenshot-diff", plain) == (
        200,
        {"data": {"mismatchPercentage": 0.0, "width": 8, "height": 4}},
    )
    status, body = await post(
        client,
        "screenshot-diff",
        {
            **plain,
            "udid": "chromium-cdp-9222",
            "captureCurrent": False,
            "outputDir": str(tmp_path),
            "rotation": "Portrait",
        },
    )
    assert status == 200
    notes = body["data"].pop("notes")
    assert body["data"] == {"mismatchPercentage": 0.0, "width": 8, "height": 4}
    assert [note.split(" ", 1)[0] for note in notes] == ["udid", "captureCurrent", "rotation", "outputDir"]
    assert all(" was ignored: " in note for note in notes)


async def test_flow_execute_results_carry_started_at_and_duration_ms(client: Client, tmp_path: Path) -> None:
    flows = tmp_path / "proj" / ".argent" / "flows"
    flows.mkdir(parents=True)
    (flows / "timed.yaml").write_text("steps:\n  - wait: 30\n  - run: frag\n")
    (flows / "frag.yaml").write_text("steps:\n  - echo: inner\n")
    before = int(time.time() * 1000)
    status, body = await post(
        client, "flow-execute", {"name": "timed", "project_root": str(tmp_path / "proj")}
    )
    after = int(time.time() * 1000)
    assert status == 200
    result = body["data"]
    assert before <= result["startedAt"] <= after
    assert 30 <= result["durationMs"] <= after - before
    assert list(result)[-2:] == ["startedAt", "durationMs"]  # at the end, as upstream's summary has them
