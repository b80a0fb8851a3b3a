"""The ``Device`` protocol that the runner and the device tools drive.

Backends (Chromium over CDP first) implement it; the runner never imports a backend.
"""

from __future__ import annotations

from typing import Protocol


class Device(Protocol):
    """A booted device the runner can act on."""

    @property
    def id(self) -> str: ...

    @property
    def platform(self) -> str: ...


class DeviceProvider(Protocol):
    """Finds or boots devices for a run (the tool-server owns their lifetimes)."""

    async def get(self, device_id: str) -> Device:
        """The device with this id; raises ``DeviceResolutionError`` when there is none."""
        ...

    async def list_booted(self) -> list[Device]: ...


def platform_of_id(device_id: str) -> str:
    """Classify a device by the shape of its id, as the upstream registry does."""
    import re

    if device_id.startswith("remote:"):
        return "ios"
    if device_id.startswith("amazon-"):
        return "vega"
    if device_id.startswith("chromium-cdp-"):
        return "chromium"
    if re.fullmatch(
        r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}", device_id
    ):
        return "ios"
    return "android"
