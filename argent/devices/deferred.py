"""An explicit device id, used as given and connected at the first step that needs it.

A run pinned to ``--device <id>`` names its device before any step runs; a flow whose steps
never touch it (echo, a static ``when: { platform }`` guard) must run even when nothing answers
there. ``DeferredDevice`` carries the id and its platform (from the id's shape) and asks the
provider for the device on the first call that acts on it; the provider's error (the same
``DeviceResolutionError`` an eager lookup raises) then comes from that call, and so from the
step that made it. A lookup that fails is tried again by the next step; one that succeeds is kept.
"""

from __future__ import annotations

from collections.abc import Sequence

from argent.devices.base import Device, DeviceProvider, UiTree
from argent.devices.registry import platform_of_id


class DeferredDevice:
    """The ``Device`` an explicit id names, looked up through ``provider`` on first use."""

    def __init__(self, device_id: str, provider: DeviceProvider) -> None:
        self._id = device_id
        self._provider = provider
        self._device: Device | None = None

    @property
    def id(self) -> str:
        return self._id

    @property
    def platform(self) -> str:
        return self._device.platform if self._device is not None else platform_of_id(self._id)

    @property
    def endpoint(self) -> str | None:
        return self._device.endpoint if self._device is not None else None

    @property
    def connected(self) -> Device | None:
        """The device, once a lookup succeeded."""
        return self._device

    async def resolve(self) -> Device:
        """The device itself (looked up once; the provider's error while it cannot be found)."""
        if self._device is None:
            self._device = await self._provider.get(self._id)
        return self._device

    async def screenshot(self) -> bytes:
        return await (await self.resolve()).screenshot()

    async def ui_tree(self, *, css: Sequence[str] = ()) -> UiTree:
        device = await self.resolve()
        return await (device.ui_tree(css=css) if css else device.ui_tree())

    async def tap(self, x: float, y: float, *, click_count: int = 1) -> None:
        await (await self.resolve()).tap(x, y, click_count=click_count)

    async def long_press(self, x: float, y: float, duration_ms: float) -> None:
        await (await self.resolve()).long_press(x, y, duration_ms)

    async def type_text(self, text: str) -> None:
        await (await self.resolve()).type_text(text)

    async def press_key(self, key: str) -> None:
        await (await self.resolve()).press_key(key)

    async def scroll(self, x: float, y: float, dx: float, dy: float) -> None:
        await (await self.resolve()).scroll(x, y, dx, dy)

    async def navigate(self, url: str) -> None:
        await (await self.resolve()).navigate(url)

    async def close(self) -> None:
        if self._device is not None:
            await self._device.close()


async def resolved(device: Device) -> Device:
    """The device a call acts on: a deferred one is looked up now (raising the provider's error)."""
    return await device.resolve() if isinstance(device, DeferredDevice) else device
