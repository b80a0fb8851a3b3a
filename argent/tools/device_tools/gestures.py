"""``gesture-tap``, ``gesture-scroll``, ``keyboard``: input at a point of the screen, or typed.

Positions and scroll distances are fractions of the screen; ``{{secret:NAME}}`` in typed text is
filled by ``argent.flows.secrets`` (as a flow's ``type:`` step does) and never echoed. ``keyboard``
presses a key or a chord (``Shift+Enter``) as a flow's ``press:`` does. A native dialog the call
opened was answered by the device (alert accepted, the others dismissed): the result names it
under ``dialogs``.
"""

from __future__ import annotations

import asyncio
import math
import os
from typing import Any

from attrs import frozen

from argent import limits
from argent.devices.base import Device, DeviceError, DeviceProvider, NativeDialogs, dialog_notes
from argent.errors import InvalidToolInputError
from argent.flows.directives.press import chord
from argent.flows.secrets import fill_secrets
from argent.link import issues
from argent.tools.args import arg
from argent.tools.device_tools.base import UDID_DOC, DeviceTool, device_failure, fraction, now_ms, on_device
from argent.tools.registry import ToolContext

#: Largest scroll of one gesture-scroll, in screens either way.
MAX_SCROLL_SCREENS = 100


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
    duration_ms: float | None = arg(
        None,
        wire="durationMs",
        doc="Spread the scroll over this many ms in wheel-event steps, so scroll handlers fire progressively "
        f"(default: one wheel event; at most {limits.MAX_SCROLL_DURATION_MS}).",
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
        None,
        doc="A key or a chord instead: W3C key names (any case) or one character, modifiers joined by + "
        "(Enter, Tab, Escape, ArrowUp, F2, Shift+Enter, Control+S, Control+Shift+ArrowLeft).",
    )
    delay_ms: float | None = arg(
        None,
        wire="delayMs",
        doc=f"Delay in ms between typed characters (default: none; at most {limits.MAX_KEY_DELAY_MS}).",
    )


async def gesture_tap(devices: DeviceProvider, args: TapArgs, ctx: ToolContext) -> Any:
    x, y = fraction("x", args.x), fraction("y", args.y)
    if not 1 <= args.click_count <= 10:
        raise InvalidToolInputError(f"clickCount must be between 1 and 10, got {args.click_count}.")
    device = await on_device(devices, args.udid)
    stamp = now_ms()
    mark = _dialog_mark(device)
    await device.tap(x, y, click_count=args.click_count)
    return _with_dialogs({"tapped": True, "timestampMs": stamp}, device, mark)


async def gesture_scroll(devices: DeviceProvider, args: ScrollArgs, ctx: ToolContext) -> Any:
    x, y = fraction("x", args.x), fraction("y", args.y)
    for name, delta in (("deltaX", args.delta_x), ("deltaY", args.delta_y)):
        if not math.isfinite(delta) or abs(delta) > MAX_SCROLL_SCREENS:
            raise InvalidToolInputError(
                f"{name} must be a number of screens between -{MAX_SCROLL_SCREENS} and {MAX_SCROLL_SCREENS}, "
                f"got {delta!r}."
            )
    if args.delta_x == 0 and args.delta_y == 0:
        raise InvalidToolInputError(
            "Pass a non-zero deltaX and/or deltaY — a scroll with no delta is a no-op."
        )
    duration = _bounded_ms("durationMs", args.duration_ms, limits.MAX_SCROLL_DURATION_MS)
    device = await on_device(devices, args.udid)
    stamp = now_ms()
    mark = _dialog_mark(device)
    if not duration:
        await device.scroll(x, y, args.delta_x, args.delta_y)
        return _with_dialogs({"scrolled": True, "timestampMs": stamp}, device, mark)
    steps = min(max(1, round(duration / limits.SCROLL_STEP_MS)), limits.MAX_SCROLL_STEPS)
    for index in range(steps):
        if index and await _paused(ctx, duration / steps):
            break
        await device.scroll(x, y, args.delta_x / steps, args.delta_y / steps)
    return _with_dialogs({"scrolled": True, "timestampMs": stamp}, device, mark)


def _bounded_ms(name: str, value: float | None, most: int) -> float:
    """A pacing argument in ms, checked (None: 0)."""
    if value is None:
        return 0.0
    if not math.isfinite(value) or not 0 <= value <= most:
        raise InvalidToolInputError(f"{name} must be between 0 and {most} ms, got {value!r}.")
    return value


async def _paused(ctx: ToolContext, ms: float) -> bool:
    """Wait ``ms``; True when the call was aborted meanwhile."""
    try:
        async with asyncio.timeout(ms / 1000):
            await ctx.abort.wait()
    except TimeoutError:
        return False
    return True


async def keyboard(devices: DeviceProvider, args: KeyboardArgs, ctx: ToolContext) -> Any:
    if (args.text is None) == (args.key is None):
        raise InvalidToolInputError("Pass exactly one of text or key.")
    if args.key is not None:
        try:
            chord(args.key)
        except ValueError as exc:
            raise InvalidToolInputError(str(exc)) from None
        device = await on_device(devices, args.udid)
        mark = _dialog_mark(device)
        await device.press_key(args.key)
        return _with_dialogs({"typed": args.key, "keys": 1}, device, mark)
    delay = _bounded_ms("delayMs", args.delay_ms, limits.MAX_KEY_DELAY_MS)
    text = args.text or ""
    filled, secrets = fill_secrets(text, os.environ)
    if len(filled) > limits.MAX_TYPED_CHARS:
        raise InvalidToolInputError(
            f"text is longer than one keyboard call types (MAX_TYPED_CHARS = {limits.MAX_TYPED_CHARS} "
            "characters); type it in parts, or use paste for long text.",
            issues=[issues.too_big(["text"], "string", limits.MAX_TYPED_CHARS)],
        )
    if delay * (len(filled) - 1) > limits.MAX_PACED_TYPING_MS:
        raise InvalidToolInputError(
            f"Typing this text {delay:g} ms apart would take more than {limits.MAX_PACED_TYPING_MS} ms; "
            "lower delayMs or type the text in parts."
        )
    device = await on_device(devices, args.udid)
    mark = _dialog_mark(device)
    try:
        if not delay:
            await device.type_text(filled)
        else:
            for index, char in enumerate(filled):
                if index and await _paused(ctx, delay):
                    break
                await device.type_text(char)
    except DeviceError as exc:
        raise device_failure(exc, secrets) from None
    return _with_dialogs({"typed": text, "keys": len(text)}, device, mark)


def _dialog_mark(device: Device) -> int | None:
    return device.dialog_mark() if isinstance(device, NativeDialogs) else None


def _with_dialogs(result: dict[str, Any], device: Device, mark: int | None) -> dict[str, Any]:
    """``result`` with the native dialogs the call opened (each answered by the device)."""
    if mark is None or not isinstance(device, NativeDialogs):
        return result
    seen = device.dialogs_since(mark)
    return {**result, "dialogs": dialog_notes(seen)} if seen else result


GESTURE_TAP = DeviceTool(
    "gesture-tap",
    "Tap (click) at a point given as fractions of the screen (x, y in 0–1).",
    TapArgs,
    gesture_tap,
    always_load=True,
    search_hint="tap press button element device simulator emulator chromium touch down up click",
)


GESTURE_SCROLL = DeviceTool(
    "gesture-scroll",
    "Scroll with the mouse wheel at a point; deltas are fractions of the screen (positive deltaY reveals "
    "content below).",
    ScrollArgs,
    gesture_scroll,
    always_load=True,
    search_hint="scroll wheel list page chromium mouse down up content fold",
)


KEYBOARD = DeviceTool(
    "keyboard",
    "Type text into the focused element, or press a key or a chord (Enter, Escape, Shift+Enter, Control+S, …).",
    KeyboardArgs,
    keyboard,
    search_hint="type text keyboard input named key enter escape arrow tv vega fire tv search field hid leanback",
)
