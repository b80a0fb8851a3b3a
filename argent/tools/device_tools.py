"""Device tools: drive a booted device live (agents) and from `tool:` steps (flows).

``list-devices``, ``boot-device``, ``stop-device``, ``open-url``, ``screenshot``, ``describe``,
``gesture-tap``, ``gesture-scroll``, ``keyboard``, ``await-ui-element`` and ``screenshot-diff``.
Device arguments are called ``udid`` as upstream; coordinates are fractions of the screen.
"""

from __future__ import annotations

import asyncio
import base64
import math
import os
import re
import struct
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any, Literal, TypeVar

from attrs import frozen

from argent import limits
from argent.cpu import run_cpu
from argent.devices.base import Device, DeviceError, DeviceProvider, UiNode, UiTree
from argent.devices.chromium.device import ChromiumDevice
from argent.devices.chromium.keys import named_key, unknown_key_message
from argent.devices.chromium.launcher import chromium_unavailable_reason
from argent.devices.chromium.targets import LaunchTargetError, resolve_launch_target
from argent.devices.chromium.walker import DESCRIBE_MAX_DEPTH, DESCRIBE_MAX_NODES
from argent.errors import ArgentError, InvalidToolInputError, ToolExecutionError
from argent.link.models import FileInputSpec
from argent.link.png import is_png
from argent.tools.args import arg
from argent.tools.registry import ToolContext, ToolSpec
from argent.tools.verdicts import await_ui_element_verdict

DEVICE_FAILED = "DEVICE_FAILED"
UDID_DOC = "Device id, e.g. chromium-cdp-9222 (see list-devices)."
MAX_AWAIT_TIMEOUT_MS = 120_000
#: Squared RGB distance above which screenshot-diff counts a pixel as changed: 0.1² × 3 × 255².
DIFF_THRESHOLD_SQ = 0.1**2 * 3 * 255**2
SECRET_ENV_PREFIX = "ARGENT_SECRET_"
_SECRET = re.compile(r"\{\{secret:([A-Za-z_][A-Za-z0-9_]*)\}\}")

A = TypeVar("A")


# --------------------------------------------------------------------------------------------
# Arguments


@frozen
class NoArgs:
    pass


@frozen
class BootDeviceArgs:
    platform: Literal["chromium"] = arg("chromium", doc="Platform to boot; this tool-server boots chromium.")
    url: str | None = arg(
        None,
        doc="Page to open once booted: a URL (http(s)://, file://, data:) or an absolute path to an HTML file "
        "or to a directory with index.html.",
    )


@frozen
class UdidArgs:
    udid: str = arg(doc=UDID_DOC)


@frozen
class OpenUrlArgs:
    udid: str = arg(doc=UDID_DOC)
    url: str = arg(doc="URL to open (http(s)://, file://, data:), or an absolute path to an HTML file.")


@frozen
class TapArgs:
    udid: str = arg(doc=UDID_DOC)
    x: float = arg(doc="Horizontal position, a fraction 0–1 of the screen width.")
    y: float = arg(doc="Vertical position, a fraction 0–1 of the screen height.")
    click_count: int = arg(1, wire="clickCount", doc="Clicks in a row (2 = double click), 1–10.")


@frozen
class ScrollArgs:
    udid: str = arg(doc=UDID_DOC)
    x: float = arg(0.5, doc="Where the wheel turns: a fraction 0–1 of the screen width.")
    y: float = arg(0.5, doc="Where the wheel turns: a fraction 0–1 of the screen height.")
    delta_x: float = arg(
        0.0, wire="deltaX", doc="Horizontal scroll in screen widths; positive reveals content to the right."
    )
    delta_y: float = arg(
        0.0, wire="deltaY", doc="Vertical scroll in screen heights; positive reveals content below."
    )


@frozen
class KeyboardArgs:
    udid: str = arg(doc=UDID_DOC)
    text: str | None = arg(
        None,
        doc="Text to type into the focused element; {{secret:NAME}} is filled from ARGENT_SECRET_<NAME> on the "
        "tool-server and never echoed.",
    )
    key: str | None = arg(
        None, doc="A named key instead: enter, tab, escape, backspace, delete, space, arrowup, …, f1–f12."
    )


@frozen
class AwaitUiElementArgs:
    udid: str = arg(doc=UDID_DOC)
    selector: dict[str, Any] = arg(
        doc="{text?, identifier?, role?} (at least one; all must hold): text is a case-insensitive substring of "
        "the element's label and value, identifier matches its id exactly (case-insensitive), role is a "
        "case-insensitive substring of its role."
    )
    condition: Literal["exists", "visible", "hidden"] = arg(
        "visible", doc="exists: in the tree; visible: on screen; hidden: no match on screen."
    )
    timeout_ms: int = arg(5000, wire="timeoutMs", doc="How long to wait, in ms (at most 120000).")
    poll_interval_ms: int = arg(200, wire="pollIntervalMs", doc="Time between reads of the UI tree, in ms.")


@frozen
class ScreenshotDiffArgs:
    baseline_path: str = arg(wire="baselinePath", doc="The expected PNG.")
    current_path: str = arg(wire="currentPath", doc="The PNG to compare with it.")


# --------------------------------------------------------------------------------------------
# Helpers


def _device_failure(exc: DeviceError, secrets: list[str] | None = None) -> ToolExecutionError:
    return ToolExecutionError(redact(str(exc), secrets or []), error_code=DEVICE_FAILED, error_kind="device")


async def _on_device(devices: DeviceProvider, udid: str) -> Device:
    return await devices.get(udid)


def _fraction(name: str, value: float) -> float:
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise InvalidToolInputError(
            f"{name} must be a fraction of the screen between 0 and 1, got {value!r}. Read positions from describe."
        )
    return value


def _now_ms() -> int:
    return int(time.time() * 1000)


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    if len(data) < 24 or not is_png(data):
        raise ValueError("not a PNG")
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


# -- secrets --


def available_secrets(env: Mapping[str, str]) -> list[str]:
    return sorted(
        k[len(SECRET_ENV_PREFIX) :]
        for k in env
        if k.startswith(SECRET_ENV_PREFIX) and len(k) > len(SECRET_ENV_PREFIX)
    )


def fill_secrets(text: str, env: Mapping[str, str] | None = None) -> tuple[str, list[str]]:
    """``text`` with every ``{{secret:NAME}}`` replaced by ``ARGENT_SECRET_<NAME>``, and the values used.

    An unknown name raises ``InvalidToolInputError`` naming the name (never a value)."""
    source = os.environ if env is None else env
    values: list[str] = []

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        value = source.get(SECRET_ENV_PREFIX + name)
        if value is None and name.upper().startswith(SECRET_ENV_PREFIX):
            value = source.get(SECRET_ENV_PREFIX + name[len(SECRET_ENV_PREFIX) :])
        if value is None:
            names = ", ".join(available_secrets(source)) or "(none)"
            raise InvalidToolInputError(
                f'Unknown secret "{name}" — no source on the machine running the tool-server defines {name}. '
                f"Available secrets: {names}. Set {SECRET_ENV_PREFIX}{name} in the tool-server's environment."
            )
        if value:
            values.append(value)
        return value

    return _SECRET.sub(fill, text), values


def redact(message: str, secrets: list[str]) -> str:
    """``message`` with every secret value replaced by ``[secret]``."""
    for value in sorted(set(secrets), key=len, reverse=True):
        message = message.replace(value, "[secret]")
    return message


# -- the UI tree as text --


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")


def _frame_text(node: UiNode) -> str:
    f = node.frame
    return f"({f.x:.3f}, {f.y:.3f}, {f.width:.3f}, {f.height:.3f})"


def _flags(node: UiNode) -> list[str]:
    flags: list[str] = []
    if node.clickable:
        flags.append("clickable")
    if node.scrollable:
        flags.append("scrollable")
    if node.checked is not None:
        flags.append("checked" if node.checked else "checkable")
    if node.focused:
        flags.append("focused")
    if node.disabled:
        flags.append("disabled")
    if node.password:
        flags.append("password")
    return flags


def node_line(node: UiNode) -> str:
    parts = [node.role or "node"]
    if node.label:
        parts.append(f'"{_escape(node.label)}"')
    if node.value and node.value != node.label:
        parts.append(f'value="{_escape(node.value)}"')
    if node.identifier:
        parts.append(f'id="{_escape(node.identifier)}"')
    flags = _flags(node)
    if flags:
        parts.append("[" + ", ".join(flags) + "]")
    return " ".join(parts) + "  " + _frame_text(node)


def _printed(node: UiNode) -> bool:
    return bool(node.label or node.value or node.identifier or _flags(node) or node.children)


def describe_text(tree: UiTree, *, source: str = "cdp-dom", max_nodes: int = DESCRIBE_MAX_NODES) -> str:
    """The UI tree as the indented text ``describe`` returns."""
    lines = [
        f"Source: {source}",
        "Mode: nested",
        "Coordinates are normalized [0,1] fractions of the screen (x, y, width, height), not pixels.",
        "Pass them straight to gesture-tap / gesture-scroll, which expect this same space.",
        "To tap an element, use its centre: tap_x = frame.x + frame.width / 2, tap_y = frame.y + frame.height / 2.",
        "",
        f"ROOT  {tree.root.role} {_frame_text(tree.root)}",
        "",
    ]

    def walk(node: UiNode, depth: int) -> Iterator[str]:
        if _printed(node):
            yield "  " * depth + node_line(node)
        for child in node.children:
            yield from walk(child, depth + 1)

    for child in tree.root.children:
        lines.extend(walk(child, 1))
    if tree.truncated:
        lines += [
            "",
            f"describe hit the node budget ({max_nodes} nodes) and returned a PARTIAL tree — some on-screen content "
            "is missing. Scroll or close panels to narrow the page, then describe again.",
        ]
    return "\n".join(lines)


# -- selectors (the small local matcher of await-ui-element) --


@frozen
class Selector:
    text: str | None = None
    identifier: str | None = None
    role: str | None = None

    def describe(self) -> str:
        parts = [
            f'{k}: "{v}"'
            for k, v in (("text", self.text), ("identifier", self.identifier), ("role", self.role))
            if v
        ]
        return "{" + ", ".join(parts) + "}"

    def matches(self, node: UiNode) -> bool:
        if self.text is not None and self.text.lower() not in f"{node.label} {node.value}".lower():
            return False
        if self.identifier is not None:
            ident = node.identifier.lower()
            want = self.identifier.lower()
            if ident != want and not ident.endswith(f":id/{want}"):
                return False
        return self.role is None or self.role.lower() in node.role.lower()


def parse_selector(raw: Mapping[str, Any]) -> Selector:
    allowed = ("text", "identifier", "role")
    unknown = sorted(k for k in raw if k not in allowed)
    if unknown:
        raise InvalidToolInputError(
            f"Invalid arguments for await-ui-element: selector: unknown key {', '.join(unknown)} — allowed keys: "
            + ", ".join(allowed)
        )
    values: dict[str, str] = {}
    for key in allowed:
        value = raw.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise InvalidToolInputError(
                f"Invalid arguments for await-ui-element: selector.{key} must be a string."
            )
        values[key] = value
    if not values:
        raise InvalidToolInputError(
            "Invalid arguments for await-ui-element: selector needs at least one of text, identifier, role."
        )
    if "text" in values and not values["text"].strip():
        raise InvalidToolInputError(
            "Invalid arguments for await-ui-element: selector.text must contain a visible character."
        )
    return Selector(**values)


def find_matches(tree: UiTree, selector: Selector) -> list[UiNode]:
    found: list[UiNode] = []
    stack = [tree.root]
    while stack:
        node = stack.pop()
        if selector.matches(node):
            found.append(node)
        stack.extend(reversed(node.children))
    return found


def condition_met(condition: str, matches: list[UiNode]) -> bool:
    visible = any(node.frame.visible for node in matches)
    if condition == "exists":
        return bool(matches)
    if condition == "hidden":
        return not visible
    return visible


# -- PNG comparison --


def compare_pngs(baseline: str, current: str) -> dict[str, Any]:
    """Share of pixels whose RGB distance exceeds the threshold, in percent (alpha ignored)."""
    import numpy as np
    from PIL import Image, UnidentifiedImageError

    def load(label: str, path: str) -> Any:
        try:
            with Image.open(path) as image:
                width, height = image.size
                if width * height > limits.MAX_PNG_PIXELS:  # the header alone: refused before decoding
                    raise InvalidToolInputError(
                        f'{label} "{path}" is {width}x{height} pixels, more than the {limits.MAX_PNG_PIXELS} a '
                        "screen capture may have."
                    )
                return np.asarray(image.convert("RGB"), dtype=np.int32)
        except FileNotFoundError:
            raise InvalidToolInputError(f'{label} "{path}" does not exist.') from None
        except (UnidentifiedImageError, OSError, Image.DecompressionBombError) as exc:
            raise InvalidToolInputError(f'{label} "{path}" is not a readable PNG: {exc}') from None

    a = load("baselinePath", baseline)
    b = load("currentPath", current)
    height, width = int(b.shape[0]), int(b.shape[1])
    if a.shape != b.shape:
        return {
            "mismatchPercentage": 100.0,
            "width": width,
            "height": height,
            "dimensionMismatch": {
                "baseline": {"width": int(a.shape[1]), "height": int(a.shape[0])},
                "current": {"width": width, "height": height},
            },
        }
    distance = ((a - b) ** 2).sum(axis=2)
    changed = int((distance > DIFF_THRESHOLD_SQ).sum())
    total = width * height
    percentage = round(changed * 100.0 / total, 4) if total else 0.0
    return {"mismatchPercentage": percentage, "width": width, "height": height}


# --------------------------------------------------------------------------------------------
# The tools


def device_tools(devices: DeviceProvider) -> list[ToolSpec[Any]]:
    """The device tools, acting on the devices of ``devices``."""

    def needs_chromium() -> str | None:
        return chromium_unavailable_reason()

    async def list_devices(args: NoArgs, ctx: ToolContext) -> Any:
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

    async def boot_device(args: BootDeviceArgs, ctx: ToolContext) -> Any:
        url = None
        if args.url is not None:
            try:
                url = resolve_launch_target(args.url, None)
            except LaunchTargetError as exc:
                raise InvalidToolInputError(str(exc)) from None
        device = await devices.boot(args.platform, url)
        out: dict[str, Any] = {"platform": device.platform, "id": device.id, "booted": True}
        if isinstance(device, ChromiumDevice):
            out["port"] = device.port
            if device.pid is not None:
                out["pid"] = device.pid
        if url is not None:
            out["url"] = url
        return out

    async def stop_device(args: UdidArgs, ctx: ToolContext) -> Any:
        await devices.stop(args.udid)
        return {"stopped": True, "id": args.udid}

    async def open_url(args: OpenUrlArgs, ctx: ToolContext) -> Any:
        try:
            url = resolve_launch_target(args.url, None)
        except LaunchTargetError as exc:
            raise InvalidToolInputError(str(exc)) from None
        device = await _on_device(devices, args.udid)
        await device.navigate(url)
        return {"opened": True, "url": url}

    async def screenshot(args: UdidArgs, ctx: ToolContext) -> Any:
        device = await _on_device(devices, args.udid)
        png = await device.screenshot()
        width, height = png_size(png)
        return {
            "image": base64.b64encode(png).decode("ascii"),
            "mimeType": "image/png",
            "width": width,
            "height": height,
        }

    async def describe(args: UdidArgs, ctx: ToolContext) -> Any:
        device = await _on_device(devices, args.udid)
        try:
            if isinstance(device, ChromiumDevice):
                tree = await device.ui_tree(max_depth=DESCRIBE_MAX_DEPTH, max_nodes=DESCRIBE_MAX_NODES)
            else:
                tree = await device.ui_tree()
        except DeviceError as exc:
            raise _device_failure(exc) from None
        return {"description": describe_text(tree), "source": "cdp-dom"}

    async def gesture_tap(args: TapArgs, ctx: ToolContext) -> Any:
        x, y = _fraction("x", args.x), _fraction("y", args.y)
        if not 1 <= args.click_count <= 10:
            raise InvalidToolInputError(f"clickCount must be between 1 and 10, got {args.click_count}.")
        device = await _on_device(devices, args.udid)
        stamp = _now_ms()
        await device.tap(x, y, click_count=args.click_count)
        return {"tapped": True, "timestampMs": stamp}

    async def gesture_scroll(args: ScrollArgs, ctx: ToolContext) -> Any:
        x, y = _fraction("x", args.x), _fraction("y", args.y)
        for name, delta in (("deltaX", args.delta_x), ("deltaY", args.delta_y)):
            if not math.isfinite(delta) or abs(delta) > 100:
                raise InvalidToolInputError(
                    f"{name} must be a number of screens between -100 and 100, got {delta!r}."
                )
        if args.delta_x == 0 and args.delta_y == 0:
            raise InvalidToolInputError(
                "Pass a non-zero deltaX and/or deltaY — a scroll with no delta is a no-op."
            )
        device = await _on_device(devices, args.udid)
        stamp = _now_ms()
        await device.scroll(x, y, args.delta_x, args.delta_y)
        return {"scrolled": True, "timestampMs": stamp}

    async def keyboard(args: KeyboardArgs, ctx: ToolContext) -> Any:
        if (args.text is None) == (args.key is None):
            raise InvalidToolInputError("Pass exactly one of text or key.")
        if args.key is not None:
            if named_key(args.key) is None:
                raise InvalidToolInputError(unknown_key_message(args.key))
            device = await _on_device(devices, args.udid)
            await device.press_key(args.key)
            return {"typed": args.key, "keys": 1}
        text = args.text or ""
        filled, secrets = fill_secrets(text)
        device = await _on_device(devices, args.udid)
        try:
            await device.type_text(filled)
        except DeviceError as exc:
            raise _device_failure(exc, secrets) from None
        return {"typed": text, "keys": len(text)}

    async def await_ui_element(args: AwaitUiElementArgs, ctx: ToolContext) -> Any:
        selector = parse_selector(args.selector)
        if not 0 <= args.timeout_ms <= MAX_AWAIT_TIMEOUT_MS:
            raise InvalidToolInputError(
                f"timeoutMs must be between 0 and {MAX_AWAIT_TIMEOUT_MS}, got {args.timeout_ms}."
            )
        poll = min(max(args.poll_interval_ms, 50), 5000) / 1000.0
        device = await _on_device(devices, args.udid)
        started = time.monotonic()
        deadline = started + args.timeout_ms / 1000.0
        while True:
            tree = await device.ui_tree()
            elapsed = round((time.monotonic() - started) * 1000)
            if condition_met(args.condition, find_matches(tree, selector)):
                return {"success": True, "elapsed": elapsed}
            if time.monotonic() + poll > deadline or ctx.abort.is_set():
                within = f"{selector.describe()} within {args.timeout_ms}ms"
                note = {
                    "exists": f"No element matched {within}.",
                    "visible": f"No visible element matched {within}.",
                    "hidden": f"An element matching {selector.describe()} was still visible after {args.timeout_ms}ms.",
                }[args.condition]
                return {"success": False, "elapsed": elapsed, "note": note}
            try:
                async with asyncio.timeout(poll):
                    await ctx.abort.wait()
            except TimeoutError:
                pass

    async def page_readable(args: BootDeviceArgs | OpenUrlArgs, ctx: ToolContext) -> None:
        """A page the browser would read from this host's disk obeys the call's policy."""
        if ctx.policy is not None and args.url is not None:
            await ctx.policy.check_page(args.url)

    async def screenshot_diff(args: ScreenshotDiffArgs, ctx: ToolContext) -> Any:
        return await run_cpu(compare_pngs, args.baseline_path, args.current_path)

    def spec(
        name: str,
        description: str,
        args_type: type[A],
        execute: Callable[[A, ToolContext], Awaitable[Any]],
        *,
        chromium: bool = True,
        **extra: Any,
    ) -> ToolSpec[Any]:
        return ToolSpec(
            name=name,
            description=description,
            args_type=args_type,
            execute=_guarded(execute),
            availability=needs_chromium if chromium else None,
            **extra,
        )

    return [
        spec(
            "list-devices",
            "List the booted devices (chromium-cdp-<port>) with their page title and URL.",
            NoArgs,
            list_devices,
            chromium=False,
        ),
        spec(
            "boot-device",
            "Boot a headless Chromium device (1000x800) and optionally open a page in it. Returns its id (udid).",
            BootDeviceArgs,
            boot_device,
            precheck=page_readable,
        ),
        spec(
            "stop-device",
            "Stop a device this tool-server booted (its Chromium is killed), or detach from an attached one.",
            UdidArgs,
            stop_device,
            chromium=False,
        ),
        spec(
            "open-url",
            "Open a URL (or a local HTML file) on a device and wait for it to load.",
            OpenUrlArgs,
            open_url,
            precheck=page_readable,
        ),
        spec(
            "screenshot",
            "Capture the device's screen as a PNG (base64 in image).",
            UdidArgs,
            screenshot,
            output_hint="image",
        ),
        spec(
            "describe",
            "The device's UI tree as indented text: role, label, value, id, flags and the normalized frame of each "
            "element.",
            UdidArgs,
            describe,
        ),
        spec(
            "gesture-tap",
            "Tap (click) at a point given as fractions of the screen (x, y in 0–1).",
            TapArgs,
            gesture_tap,
        ),
        spec(
            "gesture-scroll",
            "Scroll with the mouse wheel at a point; deltas are fractions of the screen (positive deltaY reveals "
            "content below).",
            ScrollArgs,
            gesture_scroll,
        ),
        spec(
            "keyboard",
            "Type text into the focused element, or press a named key (enter, tab, escape, arrows, …).",
            KeyboardArgs,
            keyboard,
        ),
        spec(
            "await-ui-element",
            "Wait until an element matching a selector {text?, identifier?, role?} exists, is visible or is hidden. "
            "Returns {success, elapsed, note?} — success false when the wait times out.",
            AwaitUiElementArgs,
            await_ui_element,
            long_running=True,
            verdict=await_ui_element_verdict,
        ),
        spec(
            "screenshot-diff",
            "Compare two PNGs pixel by pixel: the percentage of pixels that differ, and whether the sizes differ.",
            ScreenshotDiffArgs,
            screenshot_diff,
            chromium=False,
            file_inputs=(
                FileInputSpec(target="baselinePath", path="${baselinePath}", kind="file"),
                FileInputSpec(target="currentPath", path="${currentPath}", kind="file"),
            ),
        ),
    ]


def _guarded(
    execute: Callable[[A, ToolContext], Awaitable[Any]],
) -> Callable[[A, ToolContext], Awaitable[Any]]:
    """Device failures that escape a tool become device-kind tool errors (never a traceback)."""

    async def run(args: A, ctx: ToolContext) -> Any:
        try:
            return await execute(args, ctx)
        except ArgentError:
            raise
        except DeviceError as exc:
            raise _device_failure(exc) from None

    return run
