"""The browser behind a Chromium device: its page targets and browser-level CDP commands.

The tab tools list, open and close pages through these; they live with the device backend because
they speak HTTP (the DevTools discovery endpoints) and the tool layer above does not.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp

from argent.devices.base import DeviceError
from argent.devices.chromium.cdp import connect_session

DISCOVERY_TIMEOUT_SECONDS = 5.0


async def fetch_json(http: aiohttp.ClientSession, url: str, timeout: float) -> Any:
    """GET a DevTools HTTP endpoint; ``DeviceError`` with the upstream-style reason on failure."""
    try:
        async with asyncio.timeout(timeout), http.get(url) as response:
            if response.status // 100 != 2:
                raise DeviceError(f"Chromium CDP discovery: GET {url} failed (HTTP {response.status})")
            text = await response.text()
    except (aiohttp.ClientError, OSError, TimeoutError):
        raise DeviceError(
            f"Chromium CDP discovery: GET {url} could not connect. Is Chromium running with "
            "--remote-debugging-port?"
        ) from None
    try:
        return json.loads(text)
    except ValueError:
        raise DeviceError(
            f"Chromium CDP discovery: GET {url} returned a body that is not valid JSON"
        ) from None


async def page_targets(port: int) -> list[dict[str, Any]]:
    """The page targets of the Chromium on ``port`` that a session can drive (devtools pages left out)."""
    async with aiohttp.ClientSession() as http:
        listed = await fetch_json(http, f"http://127.0.0.1:{port}/json/list", DISCOVERY_TIMEOUT_SECONDS)
    return [
        t
        for t in (listed if isinstance(listed, list) else [])
        if isinstance(t, dict)
        and t.get("type") == "page"
        and isinstance(t.get("id"), str)
        and isinstance(t.get("webSocketDebuggerUrl"), str)
        and not str(t.get("url", "")).startswith("devtools://")
    ]


async def browser_call(
    port: int, method: str, params: dict[str, Any], *, destroys: str | None = None
) -> dict[str, Any]:
    """One browser-level CDP command (Target.createTarget / closeTarget) on a short-lived session;
    with ``destroys``, it returns once Chromium reports that target gone (so a listing no longer shows it)."""
    async with aiohttp.ClientSession() as http:
        version = await fetch_json(http, f"http://127.0.0.1:{port}/json/version", DISCOVERY_TIMEOUT_SECONDS)
        ws_url = version.get("webSocketDebuggerUrl") if isinstance(version, dict) else None
        if not isinstance(ws_url, str):
            raise DeviceError(f"Chromium on port {port} names no browser endpoint in /json/version.")

        async def gone(cause: str) -> str:
            return f"The browser session of Chromium on port {port} closed: {cause}."

        session = await connect_session(http, ws_url, label=f"browser-{port}", describe_death=gone)
        try:
            if destroys is None:
                return await session.send(method, params)
            await session.send("Target.setDiscoverTargets", {"discover": True})
            destroyed = session.expect("Target.targetDestroyed", lambda p: p.get("targetId") == destroys)
            try:
                reply = await session.send(method, params)
                async with asyncio.timeout(DISCOVERY_TIMEOUT_SECONDS):
                    await destroyed
            finally:
                destroyed.cancel()
            return reply
        finally:
            await session.close()
