"""The ``webkit`` engine: WebKitGTK's ``MiniBrowser`` driven by ``WebKitWebDriver`` over classic W3C
WebDriver (HTTP), on the tool-server's X display (its own Xvfb when ``DISPLAY`` is unset).

- ``display``: the X display (``DISPLAY``, else one Xvfb per process, ``ARGENT_XVFB``).
- ``launcher``: find the driver and MiniBrowser, start the driver with a fresh home.
- ``webdriver``: one WebDriver session over aiohttp, every command bounded in time.
- ``world``: argent's page scripts through ``execute/sync``; ``keys``: input as WebDriver actions.
- ``device``: ``WebKitDevice``, the ``Device`` protocol (and ``WebPage``) on top.
- ``provider``: ``WebKitDeviceProvider``, which launches and attaches (``argent.devices.web.provider``).
"""

from __future__ import annotations

from argent.devices.webkit.device import WebKitDevice
from argent.devices.webkit.launcher import find_driver, webkit_unavailable_reason
from argent.devices.webkit.provider import WebKitDeviceProvider

__all__ = ["WebKitDevice", "WebKitDeviceProvider", "find_driver", "webkit_unavailable_reason"]
