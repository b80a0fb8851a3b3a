"""Device tools: drive a booted device live (agents) and from `tool:` steps (flows).

Each tool is declared once, in the module of its family, as a ``DeviceTool`` (args class,
behaviour, the rest of its spec); ``DEVICE_TOOLS`` registers them, in this order. Device
arguments are called ``udid`` as upstream; coordinates are fractions of the screen.

  lifecycle.py      list-devices, boot-device, stop-device
  navigation.py     open-url
  inspection.py     screenshot, describe, screenshot-diff   (tree_text.py: describe's text)
  gestures.py       gesture-tap, gesture-scroll, keyboard
  await_element.py  await-ui-element
"""

from __future__ import annotations

from typing import Any

from argent.devices.base import DeviceProvider
from argent.tools.device_tools.await_element import AWAIT_UI_ELEMENT
from argent.tools.device_tools.base import DeviceTool
from argent.tools.device_tools.gestures import GESTURE_SCROLL, GESTURE_TAP, KEYBOARD
from argent.tools.device_tools.inspection import DESCRIBE, SCREENSHOT, SCREENSHOT_DIFF
from argent.tools.device_tools.lifecycle import BOOT_DEVICE, LIST_DEVICES, STOP_DEVICE
from argent.tools.device_tools.navigation import OPEN_URL
from argent.tools.registry import ToolSpec

DEVICE_TOOLS: tuple[DeviceTool[Any], ...] = (
    LIST_DEVICES,
    BOOT_DEVICE,
    STOP_DEVICE,
    OPEN_URL,
    SCREENSHOT,
    DESCRIBE,
    GESTURE_TAP,
    GESTURE_SCROLL,
    KEYBOARD,
    AWAIT_UI_ELEMENT,
    SCREENSHOT_DIFF,
)


def device_tools(devices: DeviceProvider) -> list[ToolSpec[Any]]:
    """The device tools, acting on the devices of ``devices``."""
    return [tool.spec(devices) for tool in DEVICE_TOOLS]
