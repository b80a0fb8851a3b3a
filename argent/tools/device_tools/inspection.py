"""``describe``, ``screenshot``, ``screenshot-diff``: what a device shows, as a tree or as pixels.

``screenshot-diff`` compares with the runner's pixel differ (``argent.runner.pixels``), so a tool
call and a flow's snapshot count a changed pixel by the same threshold.
"""

from __future__ import annotations

import base64
import math
from typing import Any, Literal

from attrs import frozen

from argent import limits
from argent.cpu import run_cpu
from argent.devices.base import DeviceError, DeviceProvider
from argent.devices.registry import engine_named
from argent.devices.web.page import WebPage
from argent.devices.web.walker import DESCRIBE_MAX_DEPTH, DESCRIBE_MAX_NODES
from argent.errors import InvalidToolInputError
from argent.link.codec import to_wire
from argent.link.models import FileInputSpec, ImageResult
from argent.runner import pixels
from argent.tools.args import arg
from argent.tools.device_tools.base import (
    UDID_DOC,
    DeviceTool,
    Rotation,
    bundle_id_arg,
    device_failure,
    on_device,
    rotation_arg,
)
from argent.tools.device_tools.tree_text import describe_text
from argent.tools.registry import ToolContext

#: Bytes of a PNG header that hold its size (signature + IHDR length, type, width, height).
_PNG_HEADER_BYTES = 24


@frozen
class ScreenshotArgs:
    udid: str = arg(doc=UDID_DOC)
    scale: float | None = arg(
        None,
        doc="Scale factor 0.01–1 (default 1: full resolution); the capture is downscaled with Lanczos-3.",
    )
    rotation: Rotation | None = rotation_arg()
    include_image_in_context: bool | None = arg(
        None,
        wire="includeImageInContext",
        doc="Upstream's switch to keep the image out of an agent's context; ignored here (the image is returned).",
        ignored="includeImageInContext was ignored: this tool-server always returns the image.",
    )
    downscaler: Literal["lanczos3", "box", "bilinear", "nearest"] | None = arg(
        None,
        doc="Upstream's downscaling algorithm; this tool-server always uses Lanczos-3.",
        ignored="downscaler was ignored: this tool-server downscales with Lanczos-3 only.",
    )


@frozen
class DescribeArgs:
    udid: str = arg(doc=UDID_DOC)
    bundle_id: str | None = bundle_id_arg()


def _no_live_capture(name: str) -> str:
    return f"{name} was ignored: screenshot-diff compares the two files given; capture them with screenshot first."


@frozen
class ScreenshotDiffArgs:
    baseline_path: str = arg(wire="baselinePath", doc="The expected PNG.")
    current_path: str = arg(wire="currentPath", doc="The PNG to compare with it.")
    # Upstream's live-capture arguments: accepted, and said to be ignored. udid stays unlisted, so a
    # flow's screenshot-diff step needs no device.
    udid: str | None = arg(None, listed=False, ignored=_no_live_capture("udid"))
    capture_baseline: bool | None = arg(
        None,
        wire="captureBaseline",
        doc="Upstream's live baseline capture; ignored here.",
        ignored=_no_live_capture("captureBaseline"),
    )
    capture_current: bool | None = arg(
        None,
        wire="captureCurrent",
        doc="Upstream's live current capture; ignored here.",
        ignored=_no_live_capture("captureCurrent"),
    )
    rotation: Rotation | None = rotation_arg()
    output_dir: str | None = arg(
        None,
        wire="outputDir",
        doc="Upstream's directory for diff images; ignored here (no diff image is written).",
        ignored="outputDir was ignored: screenshot-diff writes no diff image on this tool-server.",
    )


def _scaled(png: bytes, scale: float) -> bytes:
    """``png`` downscaled by ``scale`` (Lanczos-3), as upstream's Chromium screenshot does."""
    image = pixels.decode_png(png)
    height, width = image.shape[:2]
    small = pixels.lanczos_resize(
        image, max(1, pixels.js_round(width * scale)), max(1, pixels.js_round(height * scale))
    )
    return pixels.encode_png(small)


async def screenshot(devices: DeviceProvider, args: ScreenshotArgs, ctx: ToolContext) -> Any:
    if args.scale is not None and not (math.isfinite(args.scale) and 0.01 <= args.scale <= 1):
        raise InvalidToolInputError(f"scale must be between 0.01 and 1, got {args.scale!r}.")
    device = await on_device(devices, args.udid)
    png = await device.screenshot()
    if args.scale is not None and args.scale < 1:
        png = await run_cpu(_scaled, png, args.scale)
    width, height = pixels.png_size(png)
    return to_wire(ImageResult(base64.b64encode(png).decode("ascii"), "image/png", width, height))


async def describe(devices: DeviceProvider, args: DescribeArgs, ctx: ToolContext) -> Any:
    device = await on_device(devices, args.udid)
    try:
        if isinstance(device, WebPage):
            tree = await device.ui_tree(max_depth=DESCRIBE_MAX_DEPTH, max_nodes=DESCRIBE_MAX_NODES)
        else:
            tree = await device.ui_tree()
    except DeviceError as exc:
        raise device_failure(exc) from None
    engine = engine_named(device.platform)
    source = engine.describe_source if engine is not None else "dom"
    return {"description": describe_text(tree, source=source), "source": source}


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
    ScreenshotArgs,
    screenshot,
    output_hint="image",
    always_load=True,
    search_hint="device simulator emulator chromium screen image capture baseline tvos apple tv",
)


DESCRIBE = DeviceTool(
    "describe",
    "The device's UI tree as indented text: role (on the web the ARIA role, else the tag), name, value, id, "
    "flags and the normalized frame of each element; when nothing on the screen is visible, why.",
    DescribeArgs,
    describe,
    always_load=True,
    search_hint="accessibility element tree ui hierarchy tap coordinates ios android chromium vega dom tv tvos apple tv "
    "android tv fire tv focus focusable remote dpad",
)


SCREENSHOT_DIFF = DeviceTool(
    "screenshot-diff",
    "Compare two PNGs pixel by pixel: the percentage of pixels that differ, and whether the sizes differ.",
    ScreenshotDiffArgs,
    screenshot_diff,
    needs_browser=False,
    file_inputs=(
        FileInputSpec(target="baselinePath", path="${baselinePath}", kind="file"),
        FileInputSpec(target="currentPath", path="${currentPath}", kind="file"),
    ),
    search_hint="compare screenshots png diff visual UI changes UI regression visual regression screenshot diff "
    "changed regions text ocr live capture",
)
