"""``FirefoxDeviceProvider``: the firefox devices of one tool-server (``argent.devices.web.provider``
does the booking: boot, attach, list, stop, the caps and the owners).

It launches headless Firefox (one browser per device: Firefox allows one BiDi session per process),
and attaches to an outside ``firefox-bidi-<port>`` whose BiDi endpoint answers on 127.0.0.1 and has
no session yet.
"""

from __future__ import annotations

import asyncio

from argent.devices.firefox.device import FirefoxDevice
from argent.devices.firefox.launcher import launch_firefox
from argent.devices.registry import FIREFOX
from argent.devices.web.provider import BrowserDeviceProvider

#: How long an unknown ``firefox-bidi-<port>`` gets to accept a connection.
PROBE_TIMEOUT_SECONDS = 0.8


class FirefoxDeviceProvider(BrowserDeviceProvider[FirefoxDevice]):
    """Boots, attaches, lists and stops firefox devices; owns what it boots."""

    engine = FIREFOX

    async def _launch(self) -> FirefoxDevice:
        width, height = self.viewport
        process = await launch_firefox(
            binary=self.binary, width=width, height=height, extra_args=self.extra_args
        )
        return await FirefoxDevice.open(process.port, process=process, viewport=self.viewport)

    async def _attach(self, port: int) -> FirefoxDevice:
        return await FirefoxDevice.open(port)

    async def _answers(self, port: int) -> bool:
        try:
            async with asyncio.timeout(PROBE_TIMEOUT_SECONDS):
                _, writer = await asyncio.open_connection("127.0.0.1", port)
        except (OSError, TimeoutError):
            return False
        writer.close()
        return True
