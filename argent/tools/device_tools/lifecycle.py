"""``list-devices``, ``boot-device``, ``stop-device``: which devices run, and starting and stopping one."""

from __future__ import annotations

from typing import Any, Literal

from attrs import frozen

from argent.devices.base import DeviceProvider
from argent.devices.chromium.device import ChromiumDevice
from argent.tools.args import arg
from argent.tools.device_tools.base import DeviceTool, NoArgs, UdidArgs, launch_url, page_readable
from argent.tools.registry import ToolContext


@frozen
class BootDeviceArgs:
    platform: Literal["chromium"] = arg("chromium", doc="Platform to boot; this tool-server boots chromium.")
    url: str | None = arg(
        None,
        doc="Page to open once booted: a URL (http(s)://, file://, data:) or an absolute path to an HTML file "
        "or to a directory with index.html.",
    )


async def list_devices(devices: DeviceProvider, args: NoArgs, ctx: ToolContext) -> Any:
    entries: list[dict[str, Any]] = []
    for device in await devices.list_booted():
        entry: dict[str, Any] = {"platform": device.platform, "id": device.id, "state": "Running"}
        if isinstance(device, ChromiumDevice):
            info = await device.page_info()
            entry.update(port=device.port, title=info["title"], url=info["url"], owned=device.owned)
            if device.pid is not None:
                entry["pid"] = device.pid
        entries.append(entry)
    return {"devices": entries}


async def boot_device(devices: DeviceProvider, args: BootDeviceArgs, ctx: ToolContext) -> Any:
    url = launch_url(args.url) if args.url is not None else None
    device = await devices.boot(args.platform, url)
    out: dict[str, Any] = {"platform": device.platform, "id": device.id, "booted": True}
    if isinstance(device, ChromiumDevice):
        out["port"] = device.port
        if device.pid is not None:
            out["pid"] = device.pid
    if url is not None:
        out["url"] = url
    return out


async def stop_device(devices: DeviceProvider, args: UdidArgs, ctx: ToolContext) -> Any:
    await devices.stop(args.udid)
    return {"stopped": True, "id": args.udid}


LIST_DEVICES = DeviceTool(
    "list-devices",
    "List the booted devices (chromium-cdp-<port>) with their page title and URL.",
    NoArgs,
    list_devices,
    needs_chromium=False,
)


BOOT_DEVICE = DeviceTool(
    "boot-device",
    "Boot a headless Chromium device (1000x800) and optionally open a page in it. Returns its id (udid).",
    BootDeviceArgs,
    boot_device,
    precheck=page_readable,
)


STOP_DEVICE = DeviceTool(
    "stop-device",
    "Stop a device this tool-server booted (its Chromium is killed), or detach from an attached one.",
    UdidArgs,
    stop_device,
    needs_chromium=False,
)
