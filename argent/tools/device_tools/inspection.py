"""``describe``, ``screenshot``, ``screenshot-diff``: what a device shows, as a tree or as pixels.

``screenshot-diff`` compares with the runner's pixel differ (``argent.runner.pixels``), so a tool
call and a flow's snapshot count a changed pixel by the same threshold.
"""

from __future__ import annotations

import base64
from typing import Any

from attrs import frozen

from argent import limits
from argent.cpu import run_cpu
from argent.devices.base import DeviceError, DeviceProvider
from argent.devices.chromium.device import ChromiumDevice
from argent.devices.chromium.walker import DESCRIBE_MAX_DEPTH, DESCRIBE_MAX_NODES
from argent.errors import InvalidToolInputError
from argent.link.models import FileInputSpec
from argent.runner import pixels
from argent.tools.args import arg
from argent.tools.device_tools.base import DeviceTool, UdidArgs, device_failure, on_device
from argent.tools.device_tools.tree_text import describe_text
from argent.tools.registry import ToolContext

#: Bytes of a PNG header that hold its size (signature + IHDR length, type, width, height).
_PNG_HEADER_BYTES = 24


@frozen
class ScreenshotDiffArgs:
    baseline_path: str = arg(wire="baselinePath", doc="The expected PNG.")
    current_path: str = arg(wire="currentPath", doc="The PNG to compare with it.")


async def screenshot(devices: DeviceProvider, args: UdidArgs, ctx: ToolContext) -> Any:
    device = await on_device(devices, args.udid)
    png = await device.screenshot()
    width, height = pixels.png_size(png)
    return {
        "image": base64.b64encode(png).decode("ascii"),
        "mimeType": "image/png",
        "width": width,
        "height": height,
    }


async def describe(devices: DeviceProvider, args: UdidArgs, ctx: ToolContext) -> Any:
    device = await on_device(devices, args.udid)
    try:
        if isinstance(device, ChromiumDevice):
            tree = await device.ui_tree(max_depth=DESCRIBE_MAX_DEPTH, max_nodes=DESCRIBE_MAX_NODES)
        else:
            tree = await device.ui_tree()
    except DeviceError as exc:
        raise device_failure(exc) from None
    return {"description": describe_text(tree), "source": "cdp-dom"}


def _read_png(label: str, path: str) -> pixels.Pixels:
    """The RGBA pixels of the PNG at ``path``; a canvas larger than any screen is refused from its
    header, before the rest is read."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(_PNG_HEADER_BYTES)
            try:
                width, height = pixels.png_size(head)
            except pixels.PngError as exc:
                raise InvalidToolInputError(f'{label} "{path}" is not a readable PNG: {exc}') from None
            if width * height > limits.MAX_PNG_PIXELS:
                raise InvalidToolInputError(
                    f'{label} "{path}" is {width}x{height} pixels, more than the {limits.MAX_PNG_PIXELS} a '
                    "screen capture may have."
                )
            data = head + fh.read()
    except FileNotFoundError:
        raise InvalidToolInputError(f'{label} "{path}" does not exist.') from None
    except OSError as exc:
        raise InvalidToolInputError(f'{label} "{path}" is not a readable PNG: {exc}') from None
    try:
        return pixels.decode_png(data)
    except pixels.PngError as exc:
        raise InvalidToolInputError(f'{label} "{path}" is not a readable PNG: {exc}') from None


def compare_pngs(baseline: str, current: str) -> dict[str, Any]:
    """The share of pixels that changed, in percent (the runner's threshold, alpha ignored)."""
    diff = pixels.diff_images(
        _read_png("baselinePath", baseline), _read_png("currentPath", current), full_screen=False
    )
    width, height = diff.current_size
    if diff.dimension_mismatch:
        bw, bh = diff.baseline_size
        return {
            "mismatchPercentage": 100.0,
            "width": width,
            "height": height,
            "dimensionMismatch": {
                "baseline": {"width": bw, "height": bh},
                "current": {"width": width, "height": height},
            },
        }
    return {"mismatchPercentage": round(diff.mismatch, 4), "width": width, "height": height}


async def screenshot_diff(devices: DeviceProvider, args: ScreenshotDiffArgs, ctx: ToolContext) -> Any:
    return await run_cpu(compare_pngs, args.baseline_path, args.current_path)


SCREENSHOT = DeviceTool(
    "screenshot",
    "Capture the device's screen as a PNG (base64 in image).",
    UdidArgs,
    screenshot,
    output_hint="image",
)


DESCRIBE = DeviceTool(
    "describe",
    "The device's UI tree as indented text: role, label, value, id, flags and the normalized frame of each "
    "element.",
    UdidArgs,
    describe,
)


SCREENSHOT_DIFF = DeviceTool(
    "screenshot-diff",
    "Compare two PNGs pixel by pixel: the percentage of pixels that differ, and whether the sizes differ.",
    ScreenshotDiffArgs,
    screenshot_diff,
    needs_chromium=False,
    file_inputs=(
        FileInputSpec(target="baselinePath", path="${baselinePath}", kind="file"),
        FileInputSpec(target="currentPath", path="${currentPath}", kind="file"),
    ),
)
