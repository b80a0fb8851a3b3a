"""``open-url``: load a page on a running device."""

from __future__ import annotations

from typing import Any

from attrs import frozen

from argent.devices.base import DeviceProvider
from argent.tools.args import arg
from argent.tools.device_tools.base import (
    UDID_DOC,
    DeviceTool,
    bundle_id_arg,
    launch_url,
    on_device,
    page_readable,
)
from argent.tools.registry import ToolContext


@frozen
class OpenUrlArgs:
    udid: str = arg(doc=UDID_DOC)
    url: str = arg(doc="URL to open (http(s)://, file://, data:), or an absolute path to an HTML file.")
    bundle_id: str | None = bundle_id_arg()


async def open_url(devices: DeviceProvider, args: OpenUrlArgs, ctx: ToolContext) -> Any:
    url = launch_url(args.url)
    device = await on_device(devices, args.udid)
    await device.navigate(url)
    return {"opened": True, "url": url}


OPEN_URL = DeviceTool(
    "open-url",
    "Open a URL (or a local HTML file) on a device and wait for it to load.",
    OpenUrlArgs,
    open_url,
    precheck=page_readable,
)
