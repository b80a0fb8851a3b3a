"""``WebKitDeviceProvider``: the webkit devices of one tool-server (``argent.devices.web.provider``
does the booking: boot, attach, list, stop, the caps and the owners).

Each device is a ``WebKitWebDriver`` of its own (one session, one MiniBrowser), drawing on the
tool-server's one X display: ``DISPLAY``, else the Xvfb the first boot starts
(``argent.devices.webkit.display``), held until ``close_all`` — the server's exit — stops it. An
unknown ``webkit-wd-<port>`` whose driver answers ``/status`` on 127.0.0.1 is attached: argent
opens a session of its own there (WebDriver has no joining another's).
"""

from __future__ import annotations

import asyncio

import aiohttp

from argent.devices.registry import WEBKIT
from argent.devices.web.provider import BrowserDeviceProvider
from argent.devices.webkit.device import WebKitDevice
from argent.devices.webkit.display import DISPLAY
from argent.devices.webkit.launcher import launch_driver

#: How long an unknown ``webkit-wd-<port>`` gets to answer ``/status``.
PROBE_TIMEOUT_SECONDS = 0.8


class WebKitDeviceProvider(BrowserDeviceProvider[WebKitDevice]):
    """Boots, attaches, lists and stops webkit devices; owns what it boots."""

    engine = WEBKIT
    #: The process's display while this provider holds it (released by ``close_all``).
    _held: str | None = None
    _holding: asyncio.Lock | None = None

    async def _display(self) -> str:
        if self._holding is None:
            self._holding = asyncio.Lock()
        async with self._holding:
            if self._held is None:
                self._held = await DISPLAY.acquire()
            return self._held

    async def _launch(self) -> WebKitDevice:
        process = await launch_driver(await self._display(), binary=self.binary)
        width, height = self.viewport
        return await WebKitDevice.open(process.port, process=process, viewport=(width, height))

    async def _attach(self, port: int) -> WebKitDevice:
        return await WebKitDevice.open(port)

    async def _answers(self, port: int) -> bool:
        try:
            async with (
                aiohttp.ClientSession() as http,
                asyncio.timeout(PROBE_TIMEOUT_SECONDS),
                http.get(f"http://127.0.0.1:{port}/status") as response,
            ):
                answer = await response.json(content_type=None)
        except (TimeoutError, aiohttp.ClientError, OSError, ValueError):
            return False
        value = answer.get("value") if isinstance(answer, dict) else None
        return isinstance(value, dict) and "ready" in value

    def _nothing_at(self, port: int) -> str:
        return f"no WebDriver answers /status on 127.0.0.1:{port}"

    async def close_all(self) -> None:
        """Stop every device, then the Xvfb this provider's boots started (if any)."""
        try:
            await super().close_all()
        finally:
            if self._held is not None:
                self._held = None
                DISPLAY.release()
