"""``DeviceHub``: the devices of every engine of one tool-server, behind one ``DeviceProvider``.

A boot goes to the provider of its platform, an id to the provider of its prefix (both read from
``argent.devices.registry``); listings span every engine. Each engine's provider is made on first
use (a server that never boots Firefox never imports its package), and all of them share one
``Room``: the caps on a token's devices and on the server's count every engine's.
"""

from __future__ import annotations

from typing import Any

from argent.devices.base import Device
from argent.devices.caller import current_caller
from argent.devices.registry import (
    DEFAULT_ENGINE,
    ENGINES,
    Engine,
    engine_named,
    engine_of_id,
    engines_text,
    provider_of,
)
from argent.devices.web.provider import BrowserDeviceProvider, Room
from argent.errors import DeviceResolutionError


class DeviceHub:
    """Boots, finds, lists and stops the devices of every engine; ``close_all`` stops them all."""

    def __init__(self) -> None:
        self.room = Room()
        self._providers: dict[str, BrowserDeviceProvider[Any]] = {}
        self._closed = False

    def provider(self, engine: Engine) -> BrowserDeviceProvider[Any]:
        """The provider of ``engine`` (made now when it is the first use)."""
        made = self._providers.get(engine.platform)
        if made is None:
            made = provider_of(engine, room=self.room)
            assert isinstance(made, BrowserDeviceProvider)
            self._providers[engine.platform] = made
        return made

    async def boot(self, platform: str | None = None, target: str | None = None) -> Device:
        """A fresh device of ``platform`` (the default engine when None), optionally on ``target``."""
        engine = engine_named(platform if platform is not None else DEFAULT_ENGINE.platform)
        if engine is None:
            raise DeviceResolutionError(
                f'Cannot boot a "{platform}" device: this tool-server boots only {engines_text()} devices.'
            )
        device: Device = await self.provider(engine).boot(engine.platform, target)
        return device

    async def get(self, device_id: str) -> Device:
        engine = engine_of_id(device_id)
        if engine is None:
            raise await self._unknown(device_id)
        device: Device = await self.provider(engine).get(device_id)
        return device

    async def list_booted(self) -> list[Device]:
        devices: list[Device] = []
        for engine in ENGINES:
            provider = self._providers.get(engine.platform)
            if provider is not None:
                devices.extend(await provider.list_booted())
        return devices

    async def live_devices(self) -> list[Device]:
        """Every live device of every engine on this server, whoever's."""
        devices: list[Device] = []
        for provider in list(self._providers.values()):
            devices.extend(await provider.live_devices())
        return devices

    async def stop(self, device_id: str) -> None:
        engine = engine_of_id(device_id)
        if engine is None:
            raise await self._unknown(device_id)
        await self.provider(engine).stop(device_id)

    def owns(self, device_id: str) -> bool:
        engine = engine_of_id(device_id)
        provider = self._providers.get(engine.platform) if engine is not None else None
        return provider is not None and provider.owns(device_id)

    async def close_all(self) -> None:
        """Stop every owned browser of every engine (also ones still booting) and detach from the rest."""
        self._closed = True
        for provider in list(self._providers.values()):
            await provider.close_all()

    async def _unknown(self, device_id: str) -> DeviceResolutionError:
        listing = await self.list_booted()
        shown = ", ".join(f"{d.id} ({d.platform})" for d in listing) if listing else "none"
        if current_caller().shared:
            return DeviceResolutionError(
                f'No device "{device_id}" found — a shared tool-server drives only the devices it boots for your '
                f"token (boot-device, or a flow's launch:). Available devices: {shown}."
            )
        kinds = " and ".join(f'{e.platform} devices (ids "{e.id_pattern}")' for e in ENGINES)
        return DeviceResolutionError(
            f'No device "{device_id}" found — this tool-server drives {kinds}. Pass a device id or platform '
            f"explicitly. Available devices: {shown}."
        )
