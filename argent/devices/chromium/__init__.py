"""The ``chromium`` engine: a headless Chromium the tool-server launches and drives over CDP.

- ``launcher``: find the binary, start it with a fresh profile (``argent.devices.web.launching``).
- ``cdp``: one DevTools session over one aiohttp websocket (requests, events, child sessions).
- ``world``, ``signals``, ``frames``: argent's isolated world in each frame (the shared page scripts
  of ``argent.devices.web``), the quiet and focus signals, the out-of-process frames.
- ``device``: ``ChromiumDevice``, the ``Device`` protocol (and ``WebPage``, ``DevToolsPage``) on top.
- ``provider``: ``ChromiumDeviceProvider``, which launches and attaches (``argent.devices.web.provider``).
- ``browser``, ``recorders``, ``dialogs``, ``file_access``, ``file_inputs``, ``keys``: the rest over CDP.
"""

from __future__ import annotations

from argent.devices.chromium.device import ChromiumDevice
from argent.devices.chromium.launcher import chromium_unavailable_reason, find_chromium
from argent.devices.chromium.provider import ChromiumDeviceProvider

__all__ = [
    "ChromiumDevice",
    "ChromiumDeviceProvider",
    "chromium_unavailable_reason",
    "find_chromium",
]
