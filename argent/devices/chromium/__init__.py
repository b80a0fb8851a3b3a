"""The ``chromium`` backend: a headless Chromium the tool-server launches and drives over CDP.

- ``launcher``: find the binary, start it in its own process group with a fresh profile, kill it.
- ``cdp``: one DevTools session over one aiohttp websocket (requests, events, clean failures).
- ``walker``: the page-side DOM walker that reads the UI tree in one ``Runtime.evaluate``.
- ``device``: ``ChromiumDevice``, the ``Device`` protocol on top of those.
- ``provider``: ``ChromiumDeviceProvider``, which boots, attaches, lists and stops devices.
- ``targets``: what a flow's ``launch: { chromium: … }`` target means as a URL.
"""

from __future__ import annotations

from argent.devices.chromium.device import ChromiumDevice
from argent.devices.chromium.launcher import chromium_unavailable_reason, find_chromium
from argent.devices.chromium.provider import ChromiumDeviceProvider
from argent.devices.web.targets import LaunchTargetError, resolve_launch_target

__all__ = [
    "ChromiumDevice",
    "ChromiumDeviceProvider",
    "LaunchTargetError",
    "chromium_unavailable_reason",
    "find_chromium",
    "resolve_launch_target",
]
