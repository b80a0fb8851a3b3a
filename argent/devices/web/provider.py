"""The devices of one browser engine on one tool-server: booted, attached, listed and stopped.

A provider boots (and owns) browsers of its engine, attaches to one that already listens on
127.0.0.1 when asked for it by id (``<prefix><port>``), lists and stops them, and ``close_all``
leaves nothing running — the server's ``cleanup_ctx`` calls it. Each engine subclasses it with how
its browser starts (``_launch``), how an outside one is probed and opened (``_answers``,
``_attach``) and what a new device of it needs once known (``_guard``).

On a shared tool-server (named tokens: ``DEVICE_CALLER`` has an owner) each device belongs to the
token that booted it: another token neither lists, drives nor stops it (it is "not found", the same
answer as for an id nothing has), and no token attaches to a browser the server did not boot (another
local user's). Booted browsers are capped per caller and in all, across the engines (``Room``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any, Generic, Protocol, TypeVar

from argent.devices.base import Device, DeviceError
from argent.devices.caller import DeviceCaller, current_caller
from argent.devices.registry import Engine
from argent.devices.web.file_access import FILE_ACCESS, FileAccess
from argent.devices.web.launching import VIEWPORT_HEIGHT, VIEWPORT_WIDTH
from argent.devices.web.targets import LaunchTargetError, resolve_launch_target
from argent.errors import DeviceResolutionError, TooManyDevicesError
from argent.limits import MAX_BROWSER_DEVICES


class BrowserDevice(Device, Protocol):
    """What a provider needs of its engine's devices."""

    @property
    def port(self) -> int: ...

    @property
    def alive(self) -> bool: ...

    async def use_file_access(self, rule: FileAccess | None) -> None: ...


D = TypeVar("D", bound=BrowserDevice)


class Room:
    """The browsers of one tool-server, across its engines: who holds how many, and how many boot."""

    def __init__(self) -> None:
        self.providers: list[BrowserDeviceProvider[Any]] = []
        #: Boots under way, by caller (they hold their slot while they boot).
        self.booting_for: dict[str | None, int] = {}

    async def check(self, caller: DeviceCaller, engine: Engine) -> None:
        """Refuse a boot over the caller's devices or the server's (dead ones first forgotten)."""
        held: list[str] = []
        running = 0
        for provider in self.providers:
            await provider.live_devices()
            held.extend(provider.owned_platforms(caller.owner))
            running += provider.running
        mine = len(held) + self.booting_for.get(caller.owner, 0)
        word = engine.label if all(p == engine.platform for p in held) else "browser"
        if mine >= caller.max_devices:
            whose = "your token holds" if caller.shared else "this tool-server holds"
            raise TooManyDevicesError(
                f"Cannot boot a {engine.platform} device: {whose} {mine} {word} device(s), the most it may hold "
                f"at once (limits.devices_per_token: {caller.max_devices}). Stop one with stop-device "
                "(list-devices lists them) or wait for a running flow to end, then boot again."
            )
        if running >= MAX_BROWSER_DEVICES:
            raise TooManyDevicesError(
                f"Cannot boot a {engine.platform} device: this tool-server runs {running} {word} devices, the most "
                f"it runs at once ({MAX_BROWSER_DEVICES}). Retry when a device has been stopped or a flow has ended."
            )


class BrowserDeviceProvider(Generic[D]):
    """Boots, attaches, lists and stops the devices of one engine; owns what it boots."""

    engine: Engine

    def __init__(
        self,
        *,
        binary: str | None = None,
        viewport: tuple[int, int] = (VIEWPORT_WIDTH, VIEWPORT_HEIGHT),
        extra_args: Sequence[str] = (),
        room: Room | None = None,
    ) -> None:
        self.binary = binary
        self.viewport = viewport
        self.extra_args = tuple(extra_args)
        self._owned: dict[str, D] = {}
        self._attached: dict[str, D] = {}
        #: The caller each device (booted or attached) belongs to, by id.
        self._owner: dict[str, str | None] = {}
        self._booting: set[asyncio.Task[D]] = set()
        self._attach_lock = asyncio.Lock()
        self._closed = False
        self.room = room if room is not None else Room()
        self.room.providers.append(self)

    # -- what an engine supplies --

    async def _launch(self) -> D:
        """A fresh browser of the engine, owned (``close`` stops it), on ``about:blank``."""
        raise NotImplementedError

    async def _answers(self, port: int) -> bool:
        """Whether a browser of the engine listens on 127.0.0.1:``port``."""
        raise NotImplementedError

    async def _attach(self, port: int) -> D:
        """A device on the outside browser of the engine at ``port`` (raises ``DeviceError``)."""
        raise NotImplementedError

    async def _guard(self) -> None:
        """What the engine's devices need once the provider knows a new one (nothing by default)."""

    def _nothing_at(self, port: int) -> str:
        return f"nothing answers {self.engine.protocol} on 127.0.0.1:{port}"

    # -- the DeviceProvider protocol --

    async def boot(self, platform: str | None = None, target: str | None = None) -> D:
        """A fresh headless browser (1000x800, DPR 1) on ``about:blank``, or on ``target``."""
        engine = self.engine
        if platform is not None and platform != engine.platform:
            raise DeviceResolutionError(
                f'Cannot boot a "{platform}" device: this tool-server boots only {engine.platform} devices.'
            )
        if self._closed:
            raise DeviceError(f"Cannot boot a {engine.platform} device: the tool-server is shutting down.")
        url = None
        if target is not None:
            try:
                url = resolve_launch_target(target, None, engine.platform)
            except LaunchTargetError as exc:
                raise DeviceError(str(exc)) from None
        caller = current_caller()
        await self.room.check(caller, engine)
        task = asyncio.ensure_future(self._launch())
        self._booting.add(task)
        booting = self.room.booting_for
        booting[caller.owner] = booting.get(caller.owner, 0) + 1
        try:
            device = await task
        finally:
            self._booting.discard(task)
            booting[caller.owner] -= 1
        if self._closed:  # shut down while it booted
            await device.close()
            raise DeviceError(f"Cannot boot a {engine.platform} device: the tool-server is shutting down.")
        self._owned[device.id] = device
        self._owner[device.id] = caller.owner
        try:
            await self._guard()
            await device.use_file_access(FILE_ACCESS.get())
            if url is not None:
                await device.navigate(url)
        except BaseException:
            await self.stop(device.id)
            raise
        return device

    async def get(self, device_id: str) -> D:
        """An owned or attached device; an unknown ``<prefix><port>`` that answers is attached. It
        enforces the file rule of the current call (``FILE_ACCESS``) from now on."""
        device = await self._find(device_id)
        await device.use_file_access(FILE_ACCESS.get())
        return device

    async def _find(self, device_id: str) -> D:
        engine = self.engine
        caller = current_caller()
        known = self._owned.get(device_id) or self._attached.get(device_id)
        if known is not None and self._visible(device_id, caller):
            return known
        port = engine.port_of(device_id)
        if caller.shared:
            # Another token's device and a browser this server did not boot answer alike: not found.
            raise self._not_found_shared(device_id, await self._listing())
        if port is None:
            raise DeviceResolutionError(
                f'No device "{device_id}" found — this tool-server drives {engine.platform} devices '
                f'(ids "{engine.id_pattern}"). Pass a device id or platform explicitly. '
                f"Available devices: {await self._listing()}."
            )
        async with self._attach_lock:
            known = self._attached.get(device_id) or self._owned.get(device_id)
            if known is not None:
                return known
            if not await self._answers(port):
                raise DeviceResolutionError(
                    f'No device "{device_id}" found — {self._nothing_at(port)}. Pass a device id or platform '
                    f"explicitly. Available devices: {await self._listing()}."
                )
            try:
                device = await self._attach(port)
            except DeviceError as exc:
                raise DeviceResolutionError(f'Cannot attach to device "{device_id}": {exc}') from None
            self._attached[device.id] = device
            self._owner[device.id] = caller.owner
            await self._guard()
            return device

    def _visible(self, device_id: str, caller: DeviceCaller) -> bool:
        return not caller.shared or (device_id in self._owner and self._owner[device_id] == caller.owner)

    def _not_found_shared(self, device_id: str, listing: str) -> DeviceResolutionError:
        engine = self.engine
        return DeviceResolutionError(
            f'No device "{device_id}" found — a shared tool-server drives only the {engine.platform} devices it '
            f"boots for your token (boot-device, or a flow's launch:), and attaches to no other {engine.label}. "
            f"Available devices: {listing}."
        )

    async def list_booted(self) -> list[Device]:
        """Every live device of the current caller; dead ones are closed (profile removed) and forgotten."""
        caller = current_caller()
        return [device for device in await self.live_devices() if self._visible(device.id, caller)]

    async def live_devices(self) -> list[D]:
        """Every live device of the engine on this server, whoever's."""
        for registry in (self._owned, self._attached):
            for key, device in list(registry.items()):
                if not device.alive:
                    registry.pop(key, None)
                    self._owner.pop(key, None)
                    with contextlib.suppress(Exception):
                        await device.close()
        return [*self._owned.values(), *self._attached.values()]

    def owned_platforms(self, owner: str | None) -> list[str]:
        """The platform of each device ``owner`` booted here (as last pruned)."""
        return [self.engine.platform for device_id in self._owned if self._owner.get(device_id) == owner]

    @property
    def running(self) -> int:
        """Browsers of this provider running or booting."""
        return len(self._owned) + len(self._booting)

    async def stop(self, device_id: str) -> None:
        """Stop an owned device (or detach from an attached one); unknown ids (and, on a shared server,
        another token's) raise."""
        caller = current_caller()
        if not self._visible(device_id, caller):
            raise self._not_found_shared(device_id, await self._listing())
        device = self._owned.pop(device_id, None) or self._attached.pop(device_id, None)
        self._owner.pop(device_id, None)
        if device is None:
            raise DeviceResolutionError(
                f'No device "{device_id}" found — it is not booted or attached on this tool-server. '
                f"Available devices: {await self._listing()}."
            )
        await device.close()

    # -- more --

    def owns(self, device_id: str) -> bool:
        return device_id in self._owned

    def knows(self, device_id: str) -> bool:
        return device_id in self._owned or device_id in self._attached

    async def close_all(self) -> None:
        """Stop every owned browser (also ones still booting) and detach from the rest."""
        self._closed = True
        booting = list(self._booting)
        for task in booting:
            task.cancel()
        for task in booting:
            with contextlib.suppress(BaseException):
                device = await task
                await device.close()
        devices = [*self._owned.values(), *self._attached.values()]
        self._owned.clear()
        self._attached.clear()
        self._owner.clear()
        await asyncio.gather(*(device.close() for device in devices), return_exceptions=True)

    async def _listing(self) -> str:
        devices: list[Device] = []
        for provider in self.room.providers:
            devices.extend(await provider.list_booted())
        return ", ".join(f"{d.id} ({d.platform})" for d in devices) if devices else "none"
