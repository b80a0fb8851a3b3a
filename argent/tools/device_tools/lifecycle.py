"""``list-devices``, ``boot-device``, ``stop-device``: which devices run, and starting and stopping one."""

from __future__ import annotations

from typing import Any

from attrs import frozen

from argent.devices.base import DeviceProvider
from argent.devices.registry import DEFAULT_ENGINE, ID_PATTERNS, EnginePlatform, engines_text
from argent.devices.web.page import WebPage
from argent.tools.args import arg
from argent.tools.device_tools.base import DeviceTool, NoArgs, UdidArgs, launch_url, page_readable
from argent.tools.registry import ToolContext


def _not_here(name: str, what: str) -> str:
    return f"{name} was ignored: {what}; this tool-server boots headless browsers ({engines_text()})."


@frozen
class BootDeviceArgs:
    platform: EnginePlatform = arg(
        DEFAULT_ENGINE.platform, doc=f"Platform to boot: the browser engine ({engines_text()})."
    )
    url: str | None = arg(
        None,
        doc="Page to open once booted: a URL (http(s)://, file://, data:) or an absolute path to an HTML file "
        "or to a directory with index.html.",
    )
    # Upstream's arguments (iOS, Android, Vega, Electron): accepted, and said to be ignored.
    udid: str | None = arg(None, listed=False, ignored=_not_here("udid", "it names an iOS simulator"))
    avd_name: str | None = arg(
        None,
        wire="avdName",
        doc="Upstream's Android AVD; ignored here.",
        ignored=_not_here("avdName", "it names an Android AVD"),
    )
    vvd_image: str | None = arg(
        None,
        wire="vvdImage",
        doc="Upstream's Vega image; ignored here.",
        ignored=_not_here("vvdImage", "it names a Vega VVD"),
    )
    boot_timeout_ms: int | None = arg(
        None,
        wire="bootTimeoutMs",
        doc="Upstream's Android/Vega boot budget; ignored here.",
        ignored=_not_here("bootTimeoutMs", "it bounds an Android/Vega boot"),
    )
    force: bool | None = arg(
        None,
        doc="Upstream's re-boot of a running device; ignored here.",
        ignored=_not_here("force", "each boot-device starts a new Chromium"),
    )
    sound: bool | None = arg(
        None,
        doc="Upstream's Android emulator audio; ignored here.",
        ignored=_not_here("sound", "it is an Android emulator's audio"),
    )
    headless: bool | None = arg(
        None,
        doc="Upstream's iOS simulator window; ignored here.",
        ignored=_not_here("headless", "it is an iOS simulator's window"),
    )
    electron_app_path: str | None = arg(
        None,
        wire="electronAppPath",
        doc="Upstream's Electron app; ignored here.",
        ignored=_not_here("electronAppPath", "this tool-server does not launch Electron apps"),
    )
    electron_port: int | None = arg(
        None,
        wire="electronPort",
        doc="Upstream's Electron CDP port; ignored here.",
        ignored=_not_here("electronPort", "this tool-server does not launch Electron apps"),
    )
    electron_args: list[str] | None = arg(
        None,
        wire="electronArgs",
        doc="Upstream's Electron arguments; ignored here.",
        ignored=_not_here("electronArgs", "this tool-server does not launch Electron apps"),
    )


async def list_devices(devices: DeviceProvider, args: NoArgs, ctx: ToolContext) -> Any:
    entries: list[dict[str, Any]] = []
    for device in await devices.list_booted():
        entry: dict[str, Any] = {"platform": device.platform, "id": device.id, "state": "Running"}
        if isinstance(device, WebPage):
            info = await device.page_info()
            entry.update(port=device.port, title=info["title"], url=info["url"], owned=device.owned)
            if device.pid is not None:
                entry["pid"] = device.pid
        entries.append(entry)
    return {"devices": entries, "avds": []}  # upstream's Android AVDs: none on this tool-server


async def boot_device(devices: DeviceProvider, args: BootDeviceArgs, ctx: ToolContext) -> Any:
    url = launch_url(args.url) if args.url is not None else None
    device = await devices.boot(args.platform, url)
    out: dict[str, Any] = {"platform": device.platform, "id": device.id, "booted": True}
    if isinstance(device, WebPage):
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
    f"List the booted devices of every browser engine ({ID_PATTERNS}), each with its platform, page title and URL.",
    NoArgs,
    list_devices,
    needs_browser=False,
    always_load=True,
    search_hint="list devices simulators emulators avd serial udid ios android chromium vega app fire tv session start",
)


BOOT_DEVICE = DeviceTool(
    "boot-device",
    "Boot a headless browser device (1000x800) of the platform given (chromium, the default, or firefox) and "
    "optionally open a page in it. Returns its id (udid).",
    BootDeviceArgs,
    boot_device,
    precheck=page_readable,
    always_load=True,
    search_hint="boot start launch simulator emulator avd device session ios android vega vvd firetv cold hot",
)


STOP_DEVICE = DeviceTool(
    "stop-device",
    "Stop a device this tool-server booted (its browser is stopped with its whole process tree), or detach "
    "from an attached one.",
    UdidArgs,
    stop_device,
    needs_browser=False,
)
