"""The ``firefox`` engine: a headless Firefox the tool-server launches and drives over WebDriver BiDi.

- ``bidi``: one BiDi session over one aiohttp websocket (commands, events, clean failures).
- ``launcher``: find the binary, start it with a copy of a prepared profile (``argent.devices.web.launching``).
- ``world``, ``frames``: argent's sandbox in each browsing context (the shared page scripts of
  ``argent.devices.web``), the frames the walk cannot enter.
- ``device``: ``FirefoxDevice``, the ``Device`` protocol (and ``WebPage``) on top.
- ``provider``: ``FirefoxDeviceProvider``, which launches and attaches (``argent.devices.web.provider``).
- ``keys``, ``values``, ``recorders``: key actions, BiDi's serialized values, the network and console.
"""

from __future__ import annotations

from argent.devices.firefox.device import FirefoxDevice
from argent.devices.firefox.launcher import find_firefox, firefox_unavailable_reason
from argent.devices.firefox.provider import FirefoxDeviceProvider

__all__ = ["FirefoxDevice", "FirefoxDeviceProvider", "find_firefox", "firefox_unavailable_reason"]
