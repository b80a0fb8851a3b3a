"""The web tools upstream argent has for Chromium devices, on this tool-server's CDP sessions.

One module per family; ``web_tools`` is the one list a registry takes them from.
"""

from __future__ import annotations

from typing import Any

from argent.devices.base import DeviceProvider
from argent.tools.registry import ToolRegistry, ToolSpec


def web_tools(registry: ToolRegistry, devices: DeviceProvider) -> list[ToolSpec[Any]]:
    """Every web tool, on the devices of ``devices``; ``run-sequence`` calls its steps through ``registry``."""
    from argent.tools.web.debugger import debugger_tools
    from argent.tools.web.gestures import gesture_tools
    from argent.tools.web.launch import launch_tools
    from argent.tools.web.network import network_tools
    from argent.tools.web.sequence import sequence_tools
    from argent.tools.web.storage import storage_tools
    from argent.tools.web.tabs import tab_tools

    return [
        *launch_tools(devices),
        *gesture_tools(devices),
        *sequence_tools(registry),
        *tab_tools(devices),
        *storage_tools(devices),
        *network_tools(devices),
        *debugger_tools(devices),
    ]
