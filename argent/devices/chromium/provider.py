"""``ChromiumDeviceProvider``: the chromium devices of one tool-server (``argent.devices.web.provider``
does the booking: boot, attach, list, stop, the caps and the owners).

It launches headless Chromium, attaches to an external ``chromium-cdp-<port>`` that answers
``/json/version`` on 127.0.0.1, and keeps every page of a browser it knows away from the DevTools
port of any other (raw CDP to another token's browser, or to its own past the call's rules); none
saves a page's download on the server's disk.
"""

from __future__ import annotations

import contextlib

import aiohttp

from argent.devices.base import DeviceError
from argent.devices.chromium.browser import fetch_json
from argent.devices.chromium.device import ChromiumDevice
from argent.devices.chromium.launcher import launch_chromium
from argent.devices.registry import CHROMIUM
from argent.devices.web.provider import BrowserDeviceProvider

#: How long an unknown ``chromium-cdp-<port>`` gets to answer ``/json/version``.
PROBE_TIMEOUT_SECONDS = 0.8


class ChromiumDeviceProvider(BrowserDeviceProvider[ChromiumDevice]):
    """Boots, attaches, lists and stops chromium devices; owns what it boots."""

    engine = CHROMIUM

    async def _launch(self) -> ChromiumDevice:
        width, height = self.viewport
        process = await launch_chromium(
            binary=self.binary, width=width, height=height, extra_args=self.extra_args
        )
        return await ChromiumDevice.open(process.port, process=process, viewport=self.viewport)

    async def _attach(self, port: int) -> ChromiumDevice:
        return await ChromiumDevice.open(port)

    async def _answers(self, port: int) -> bool:
        try:
            async with aiohttp.ClientSession() as http:
                await fetch_json(http, f"http://127.0.0.1:{port}/json/version", PROBE_TIMEOUT_SECONDS)
        except DeviceError:
            return False
        return True

    def _nothing_at(self, port: int) -> str:
        return f"nothing answers DevTools on 127.0.0.1:{port}"

    async def _guard(self) -> None:
        """No page of a browser it launched reaches the DevTools port of any browser it knows."""
        ports = [device.port for device in await self.live_devices()]
        for device in list(self._owned.values()):
            with contextlib.suppress(DeviceError):
                await device.guard_ports(ports)
