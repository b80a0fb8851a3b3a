"""``gesture-drag`` (a left-button mouse drag, as upstream's Chromium one) and ``await-screen-idle``
(wait until the UI tree holds still)."""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

from attrs import frozen

from argent import limits
from argent.devices.base import DeviceProvider, UiNode, UiTree
from argent.devices.registry import ID_PATTERNS
from argent.devices.web.page import WebPage
from argent.errors import InvalidToolInputError, ToolExecutionError
from argent.link import issues
from argent.tools.args import arg
from argent.tools.registry import ToolContext, ToolSpec
from argent.tools.web.common import page_device, web_spec

FRAME_MS = 16
MOMENTUM_FREE_MIN_STEPS = 8
MOMENTUM_FREE_EASE_EXPONENT = 3
SETTLE_RENAMED = (
    "gesture-drag's `settle` was renamed to `momentum`, with the opposite sense - write `momentum: false` for the "
    "momentum-free drag that `settle: true` used to mean (plain `settle: false` was the default, so just drop it)"
)
DRAG_ABORTED = "gesture-drag aborted - cancelled mid-drag (the button was released where the pointer was)."
IDLE_TIMEOUT_MS = 3000
IDLE_POLL_MS = 200
IDLE_MIN_STABLE_MS = 250
MAX_IDLE_TIMEOUT_MS = 120_000


@frozen
class DragArgs:
    udid: str = arg(doc=f"Target browser device id from `list-devices` ({ID_PATTERNS}).")
    from_x: float = arg(
        wire="fromX", doc="Press x: normalized 0.0–1.0 (fraction of window width, not pixels)."
    )
    from_y: float = arg(
        wire="fromY", doc="Press y: normalized 0.0–1.0 (fraction of window height, not pixels)."
    )
    to_x: float = arg(wire="toX", doc="Release x: normalized 0.0–1.0 (not pixels; same space as tap).")
    to_y: float = arg(wire="toY", doc="Release y: normalized 0.0–1.0 (not pixels; same space as tap).")
    duration_ms: float | None = arg(
        None,
        wire="durationMs",
        doc=f"Total drag duration in ms (default 300, at most {limits.MAX_DRAG_DURATION_MS} - the button stays "
        "down this long), interpolated at ~60fps.",
    )
    momentum: bool | None = arg(
        None,
        doc="Default true (constant speed). false decelerates into the release point (ease-out), so a page "
        "deriving a fling from the pointer's release velocity reads ~0.",
    )
    settle: Any = arg(None, doc="Retired: renamed to `momentum` with the opposite sense.")


@frozen
class ScreenIdleArgs:
    udid: str = arg(doc="Target device id from `list-devices` (a browser device id).")
    timeout_ms: int | None = arg(
        None,
        wire="timeoutMs",
        doc=f"Max time to wait for the screen to settle before giving up (default {IDLE_TIMEOUT_MS}, at most "
        f"{MAX_IDLE_TIMEOUT_MS}).",
    )
    poll_interval_ms: int | None = arg(
        None, wire="pollIntervalMs", doc=f"How often to re-read the tree, 50–5000 (default {IDLE_POLL_MS})."
    )
    min_stable_ms: int | None = arg(
        None,
        wire="minStableMs",
        doc="The screen must hold the same content for at least this long to count as settled, 0–10000 "
        f"(default {IDLE_MIN_STABLE_MS}).",
    )


def _pixel(fraction: float, size: float, name: str) -> float:
    if not math.isfinite(fraction):
        raise InvalidToolInputError(f"{name} must be a finite number, got {fraction!r}.")
    return min(max(fraction * size, 0.0), max(size - 1, 0.0))


async def drag(device: WebPage, args: DragArgs, abort: asyncio.Event) -> None:
    """Press at the start, move in ~60fps frames (eased when momentum is false), release at the end."""
    duration = args.duration_ms if args.duration_ms is not None else 300.0
    width, height = device.viewport
    start = (_pixel(args.from_x, width, "fromX"), _pixel(args.from_y, height, "fromY"))
    end = (_pixel(args.to_x, width, "toX"), _pixel(args.to_y, height, "toY"))
    eased = args.momentum is False
    steps = max(MOMENTUM_FREE_MIN_STEPS if eased else 2, round(max(duration, 0) / FRAME_MS))
    t0 = time.monotonic()
    await device.pointer("down", *start)
    at = start
    try:
        for i in range(1, steps):
            await _until(t0 + i * duration / steps / 1000.0, abort)
            t = i / steps
            progress = 1 - (1 - t) ** MOMENTUM_FREE_EASE_EXPONENT if eased else t
            at = (start[0] + (end[0] - start[0]) * progress, start[1] + (end[1] - start[1]) * progress)
            await device.pointer("move", *at)
        await _until(t0 + duration / 1000.0, abort)
        at = end
    finally:
        if device.alive:
            await device.pointer("up", *at)


async def _until(when: float, abort: asyncio.Event) -> None:
    """Wait until the monotonic time ``when``; an abort ends the wait at once (and the drag)."""
    delay = when - time.monotonic()
    if abort.is_set():
        raise ToolExecutionError(DRAG_ABORTED, error_code="ABORTED", error_kind="cancelled")
    if delay > 0:
        try:
            async with asyncio.timeout(delay):
                await abort.wait()
        except TimeoutError:
            return
        raise ToolExecutionError(DRAG_ABORTED, error_code="ABORTED", error_kind="cancelled")


def tree_signature(tree: UiTree) -> str:
    """The tree's roles, labels, values and frames (to 2 decimals): equal signatures, same screen."""
    parts: list[str] = []
    stack: list[UiNode] = list(reversed(tree.root.children))
    while stack:
        node = stack.pop()
        f = node.frame
        parts.append(
            f"{node.role}|{node.label}|{node.value}|{f.x:.2f},{f.y:.2f},{f.width:.2f},{f.height:.2f}"
        )
        stack.extend(reversed(node.children))
    return "\n".join(parts) + "\n" + tree.scroll


def _bounded(
    name: str, value: int | None, default: int, low: int, high: int, *, above: int | None = None
) -> int:
    """``value`` within [low, high] (upstream's zod bounds, reported as its issues; ``above``: upstream's
    lower bound is exclusive, ``> above``), else ``default``."""
    if value is None:
        return default
    if not low <= value <= high:
        if value > high:
            issue = issues.too_big([name], "number", high)
        elif above is not None:
            issue = issues.too_small([name], "number", above, inclusive=False)
        else:
            issue = issues.too_small([name], "number", low)
        raise InvalidToolInputError(f"{name} must be between {low} and {high}, got {value}.", issues=[issue])
    return value


async def screen_idle(device: WebPage, args: ScreenIdleArgs, abort: asyncio.Event) -> dict[str, Any]:
    timeout = (
        _bounded("timeoutMs", args.timeout_ms, IDLE_TIMEOUT_MS, 1, MAX_IDLE_TIMEOUT_MS, above=0) / 1000.0
    )
    poll = _bounded("pollIntervalMs", args.poll_interval_ms, IDLE_POLL_MS, 50, 5000) / 1000.0
    stable_for = _bounded("minStableMs", args.min_stable_ms, IDLE_MIN_STABLE_MS, 0, 10_000) / 1000.0
    started = time.monotonic()
    deadline = started + timeout
    polls, signature, since, settled = 0, None, 0.0, False
    while not abort.is_set():
        try:
            async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
                tree = await device.ui_tree()
        except TimeoutError:
            polls += 1
            break
        polls += 1
        now = time.monotonic()
        if not tree.root.children:
            signature = None
        elif (current := tree_signature(tree)) != signature:
            signature, since = current, now
            settled = stable_for == 0
        else:
            settled = now - since >= stable_for
        if settled or now >= deadline:
            break
        try:
            async with asyncio.timeout(min(poll, max(0.0, deadline - now))):
                await abort.wait()
        except TimeoutError:
            pass
    waited = round((time.monotonic() - started) * 1000)
    return {"settled": settled, "waitedMs": waited, "polls": polls}


def gesture_tools(devices: DeviceProvider) -> list[ToolSpec[Any]]:
    async def gesture_drag(args: DragArgs, ctx: ToolContext) -> Any:
        if args.settle is not None:
            raise InvalidToolInputError(f"Invalid arguments for gesture-drag: settle: {SETTLE_RENAMED}")
        if args.duration_ms is not None and (
            not math.isfinite(args.duration_ms) or args.duration_ms > limits.MAX_DRAG_DURATION_MS
        ):
            raise InvalidToolInputError(
                f"durationMs must be at most {limits.MAX_DRAG_DURATION_MS} (10s): the drag holds the left button "
                "down for exactly this long, one frame per ~16ms.",
                issues=[issues.too_big(["durationMs"], "number", limits.MAX_DRAG_DURATION_MS)],
            )
        device = await page_device(devices, args.udid, "gesture-drag")
        stamp = int(time.time() * 1000)
        await drag(device, args, ctx.abort)
        return {"dragged": True, "timestampMs": stamp}

    async def await_screen_idle(args: ScreenIdleArgs, ctx: ToolContext) -> Any:
        return await screen_idle(await page_device(devices, args.udid, "await-screen-idle"), args, ctx.abort)

    return [
        web_spec(
            "gesture-drag",
            "Press the left mouse button at a start point, move to an end point and release: a desktop mouse drag "
            "on a browser device. Positions are fractions 0–1 of the window, as gesture-tap and describe; "
            "mouse moves are interpolated at ~60fps over durationMs. For sliders, drag-and-drop and text "
            "selection (a drag never scrolls; use gesture-scroll). Returns { dragged: true, timestampMs }.",
            DragArgs,
            gesture_drag,
            always_load=True,
            search_hint="drag drop slider mouse press move release chromium select",
        ),
        web_spec(
            "await-screen-idle",
            "Block until the screen has content and stopped changing, or a timeout elapses: reads the same UI "
            "tree as describe every pollIntervalMs until it holds identical for minStableMs. Returns { settled, "
            "waitedMs, polls }; settled false means the screen never went still before the timeout.",
            ScreenIdleArgs,
            await_screen_idle,
            long_running=True,
            search_hint="wait until screen settles idle stable stops changing animation transition rendered ready "
            "before screenshot",
        ),
    ]
