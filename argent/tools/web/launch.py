"""``launch-app`` on Chromium, as upstream's: the page is already running behind its CDP port, so the
call refreshes the device's viewport and acknowledges the bundleId tag (recordings that start with it
replay)."""

from __future__ import annotations

import re
from typing import Any

from attrs import frozen

from argent.devices.base import DeviceProvider
from argent.errors import InvalidToolInputError
from argent.link import issues
from argent.tools.args import arg
from argent.tools.registry import ToolContext, ToolSpec
from argent.tools.web.common import page_device, web_spec

BUNDLE_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")
BUNDLE_ID_MESSAGE = (
    "bundleId may only contain letters, digits, '.', '_' and '-', and may not start with '-' or '.'"
)
ACTIVITY = re.compile(r"[A-Za-z_.][A-Za-z0-9._/-]*")
ACTIVITY_MESSAGE = "activity may only contain letters, digits, '.', '_', '-' and '/'"


@frozen
class LaunchAppArgs:
    udid: str = arg(doc="Target device id from `list-devices` (a browser device id).")
    bundle_id: str = arg(
        wire="bundleId",
        doc="App identifier. Chromium: any tag of letters, digits, '.', '_' and '-'; the call is a no-op since the "
        "page is already running.",
    )
    activity: str | None = arg(None, doc="Android-only Activity name; accepted and ignored on Chromium.")


def launch_tools(devices: DeviceProvider) -> list[ToolSpec[Any]]:
    async def launch_app(args: LaunchAppArgs, ctx: ToolContext) -> Any:
        if not BUNDLE_ID.fullmatch(args.bundle_id):
            raise InvalidToolInputError(
                f"Invalid arguments for launch-app: bundleId: {BUNDLE_ID_MESSAGE}",
                issues=[issues.custom(["bundleId"], BUNDLE_ID_MESSAGE)],
            )
        if args.activity is not None and not ACTIVITY.fullmatch(args.activity):
            raise InvalidToolInputError(
                f"Invalid arguments for launch-app: activity: {ACTIVITY_MESSAGE}",
                issues=[issues.custom(["activity"], ACTIVITY_MESSAGE)],
            )
        device = await page_device(devices, args.udid, "launch-app")
        await device.refresh_viewport()
        return {"launched": True, "bundleId": args.bundle_id}

    return [
        web_spec(
            "launch-app",
            "Open an app by its id, or on Chromium confirm the running page: the page already runs behind its CDP "
            "port, so this refreshes the cached viewport and acknowledges the bundleId tag. To change the page, "
            "use open-url. Returns { launched, bundleId }.",
            LaunchAppArgs,
            launch_app,
            always_load=True,
            search_hint="open start app bundle id package simulator emulator chromium vega launch tvos apple tv fire tv",
        )
    ]
