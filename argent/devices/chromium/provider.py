"""``ChromiumDeviceProvider``: the chromium devices of one tool-server.

It boots (and owns) headless Chromium instances, attaches to an external
``chromium-cdp-<port>`` that already listens on 127.0.0.1 when asked for it by id, lists and
stops them, and ``close_all`` leaves nothing running — the server's ``cleanup_ctx`` calls it.

On a shared tool-server (named tokens: ``DEVICE_CALLER`` has an owner) each device belongs to the
token that booted it: another token neither lists, drives nor stops it (it is "not found", the same
answer as for an id nothing has), and no token attaches to a Chromium the server did not boot (another
local user's browser). Booted browsers are capped per caller and in all (``TooManyDevicesError``), and
none saves a page's download on the server's disk.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

import aiohttp

from argent.devices.base import Device, DeviceError
from argent.devices.caller import DeviceCaller, current_caller
from argent.devices.chromium.device import PLATFORM, ChromiumDevice, fetch_json, port_of
from argent.devices.chromium.file_access import FILE_ACCESS
from argent.devices.chromium.launcher import VIEWPORT_HEIGHT, VIEWPORT_WIDTH, launch_chromium
from argent.devices.web.targets import LaunchTargetError, resolve_launch_target
from argent.errors import DeviceResolutionError, TooManyDevicesError
from argent.limits import MAX_CHROMIUM_DEVICES

#: How long an unknown ``chromium-cdp-<port>`` gets to answer ``/json/version``.
PROBE_TIMEOUT_SECONDS = 0.8


class ChromiumDeviceProvider:
    """Boots, attaches, lists and stops chromium devices; owns what it boots."""

    def __init__(
        self,
        *,
        binary: str | None = None,
        viewport: tuple[int, int] = (VIEWPORT_WIDTH, VIEWPORT_HEIGHT),
        extra_args: Sequence[str] = (),
    ) -> None:
        self.binary = binary
        self.viewport = viewport
        self.extra_args = tuple(extra_args)
        self._owned: dict[str, ChromiumDevice] = {}
        self._attached: dict[str, ChromiumDevice] = {}
        #: The caller each device (booted or attached) belongs to, by id.
        self._owner: dict[str, str | None] = {}
        self._booting: set[asyncio.Task[ChromiumDevice]] = set()
        #: Boots under way, by caller (they hold their slot while they boot).
        self._booting_for: dict[str | None, int] = {}
        self._attach_lock = asyncio.Lock()
        self._closed = False

    # -- the DeviceProvider protocol --

    async def boot(self, platform: str = PLATFORM, target: str | None = None) -> ChromiumDevice:
        """A fresh headless Chromium (1000x800, DPR 1) on ``about:blank``, or on ``target``."""
        if platform != PLATFORM:
            raise DeviceResolutionError(
                f'Cannot boot a "{platform}" device: this tool-server boots only chromium devices.'
            )
        if self._closed:
            raise DeviceError("Cannot boot a chromium device: the tool-server is shutting down.")
        url = None
        if target is not None:
            try:
                url = resolve_launch_target(target, None)
            except LaunchTargetError as exc:
                raise DeviceError(str(exc)) from None
        caller = current_caller()
        await self._check_room(caller)
        task = asyncio.ensure_future(self._launch())
        self._booting.add(task)
        self._booting_for[caller.owner] = self._booting_for.get(caller.owner, 0) + 1
        try:
            device = await task
        finally:
            self._booting.discard(task)
            self._booting_for[caller.owner] -= 1
        if self._closed:  # shut down while it booted
            await device.close()
            raise DeviceError("Cannot boot a chromium device: the tool-server is shutting down.")
        self._owned[device.id] = device
        self._owner[device.id] = caller.owner
        try:
            await self._guard_devtools_ports()
            await device.use_file_access(FILE_ACCESS.get())
            if url is not None:
                await device.navigate(url)
        except BaseException:
            await self.stop(device.id)
            raise
        return device

    async def _guard_devtools_ports(self) -> None:
        """No page of a browser it launched reaches the DevTools port of any browser it knows (raw CDP to
        another token's browser, or to its own past the call's rules)."""
        ports = [device.port for device in await self.live_devices()]
        for device in list(self._owned.values()):
            with contextlib.suppress(DeviceError):
                await device.guard_ports(ports)

    async def _check_room(self, caller: DeviceCaller) -> None:
        """Refuse a boot over the caller's devices or the server's (dead ones first forgotten)."""
        await self.live_devices()
        mine = sum(1 for device_id in self._owned if self._owner.get(device_id) == caller.owner)
        mine += self._booting_for.get(caller.owner, 0)
        if mine >= caller.max_devices:
            whose = "your token holds" if caller.shared else "this tool-server holds"
            raise TooManyDevicesError(
                f"Cannot boot a chromium device: {whose} {mine} Chromium device(s), the most it may hold at "
                f"once (limits.devices_per_token: {caller.max_devices}). Stop one with stop-device (list-devices "
                "lists them) or wait for a running flow to end, then boot again."
            )
        running = len(self._owned) + len(self._booting)
        if running >= MAX_CHROMIUM_DEVICES:
            raise TooManyDevicesError(
                f"Cannot boot a chromium device: this tool-server runs {running} Chromium devices, the most it "
                f"runs at once ({MAX_CHROMIUM_DEVICES}). Retry when a device has been stopped or a flow has ended."
            )

    async def _launch(self) -> ChromiumDevice:
        width, height = self.viewport
        process = await launch_chromium(
            binary=self.binary, width=width, height=height, extra_args=self.extra_args
        )
        return await ChromiumDevice.open(process.port, process=process, viewport=self.viewport)

    async def get(self, device_id: str) -> ChromiumDevice:
        """An owned or attached device; an unknown ``chromium-cdp-<port>`` that answers is attached.
        It enforces the file rule of the current call (``FILE_ACCESS``) from now on."""
        device = await self._find(device_id)
        await device.use_file_access(FILE_ACCESS.get())
        return device

    async def _find(self, device_id: str) -> ChromiumDevice:
        caller = current_caller()
        known = self._owned.get(device_id) or self._attached.get(device_id)
        if known is not None and self._visible(device_id, caller):
            return known
        port = port_of(device_id)
        if caller.shared:
            # Another token's device and a browser this server did not boot answer alike: not found.
            raise self._not_found_shared(device_id, await self._listing())
        if port is None:
            raise DeviceResolutionError(
                f'No device "{device_id}" found — this tool-server drives chromium devices '
                f'(ids "chromium-cdp-<port>"). Pass a device id or platform explicitly. '
                f"Available devices: {await self._listing()}."
            )
        async with self._attach_lock:
            known = self._attached.get(device_id) or self._owned.get(device_id)
            if known is not None:
                return known
            if not await self._answers(port):
                raise DeviceResolutionError(
                    f'No device "{device_id}" found — nothing answers DevTools on 127.0.0.1:{port}. Pass a '
                    f"device id or platform explicitly. Available devices: {await self._listing()}."
                )
            try:
                device = await ChromiumDevice.open(port)
            except DeviceError as exc:
                raise DeviceResolutionError(f'Cannot attach to device "{device_id}": {exc}') from None
            self._attached[device.id] = device
            self._owner[device.id] = caller.owner
            await self._guard_devtools_ports()
            return device

    def _visible(self, device_id: str, caller: DeviceCaller) -> bool:
        return not caller.shared or (device_id in self._owner and self._owner[device_id] == caller.owner)

    @staticmethod
    def _not_found_shared(device_id: str, listing: str) -> DeviceResolutionError:
        return DeviceResolutionError(
            f'No device "{device_id}" found — a shared tool-server drives only the chromium devices it boots '
            f"for your token (boot-device, or a flow's launch:), and attaches to no other Chromium. "
            f"Available devices: {listing}."
        )

    async def list_booted(self) -> list[Device]:
        """Every live device of the current caller; dead ones are closed (profile removed) and forgotten."""
        caller = current_caller()
        return [device for device in await self.live_devices() if self._visible(device.id, caller)]

    async def live_devices(self) -> list[ChromiumDevice]:
        """Every live device of the server, whoever's."""
        for registry in (self._owned, self._attached):
            for key, device in list(registry.items()):
                if not device.alive:
                    registry.pop(key, None)
                    self._owner.pop(key, None)
                    with contextlib.suppress(Exception):
                        await device.close()
        return [*self._owned.values(), *self._attached.values()]

    async def stop(self, device_id: str) -> None:
        """Kill an owned device (or detach from an attached one); unknown ids (and, on a shared server,
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

    async def close_all(self) -> None:
        """Kill every owned Chromium (also ones still booting) and detach from the rest."""
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

    async def _answers(self, port: int) -> bool:
        try:
            async with aiohttp.ClientSession() as http:
                await fetch_json(http, f"http://127.0.0.1:{port}/json/version", PROBE_TIMEOUT_SECONDS)
        except DeviceError:
            return False
        return True

    async def _listing(self) -> str:
        devices = await self.list_booted()
        return ", ".join(f"{d.id} ({d.platform})" for d in devices) if devices else "none"
