"""``await-ui-element``: wait until an element matching a selector exists, is visible or is hidden.

The selector is matched by the runner's selector engine (``argent.runner.selectors``), the one a
flow's ``await:`` uses, on each read of the UI tree.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any, Literal

from attrs import frozen

from argent.devices.base import DeviceProvider
from argent.errors import InvalidToolInputError
from argent.flows.model import Condition, Selector
from argent.runner.selectors import evaluate, flatten
from argent.tools.args import arg
from argent.tools.device_tools.base import UDID_DOC, DeviceTool, bundle_id_arg, on_device
from argent.tools.registry import ToolContext
from argent.tools.verdicts import await_ui_element_verdict

MAX_AWAIT_TIMEOUT_MS = 120_000
#: The poll interval is clamped to this range, in ms.
MIN_POLL_MS, MAX_POLL_MS = 50, 5000
SELECTOR_KEYS = ("text", "identifier", "role")


@frozen
class AwaitUiElementArgs:
    udid: str = arg(doc=UDID_DOC)
    selector: dict[str, Any] = arg(
        doc="{text?, identifier?, role?} (at least one; all must hold): text is a case-insensitive substring of "
        "the element's label and value, identifier matches its id exactly (case-insensitive), role is a "
        "case-insensitive substring of its role."
    )
    condition: Literal["exists", "visible", "hidden", "text"] = arg(
        "visible",
        doc="exists: in the tree; visible: on screen; hidden: no match on screen; text: the first visible match "
        "(topmost; the first match when none is visible) contains or equals expectedText.",
    )
    timeout_ms: int = arg(5000, wire="timeoutMs", doc="How long to wait, in ms (at most 120000).")
    poll_interval_ms: int = arg(200, wire="pollIntervalMs", doc="Time between reads of the UI tree, in ms.")
    expected_text: str | None = arg(
        None,
        wire="expectedText",
        doc="For condition text: the text the element must contain (or equal). Case-insensitive.",
    )
    text_match: Literal["contains", "equals"] | None = arg(
        None,
        wire="textMatch",
        doc="For condition text: contains (default, a substring) or equals (the whole text).",
    )
    bundle_id: str | None = bundle_id_arg()


def _invalid(problem: str) -> InvalidToolInputError:
    return InvalidToolInputError(f"Invalid arguments for await-ui-element: {problem}")


def parse_selector(raw: Mapping[str, Any]) -> Selector:
    """The tool's ``{text?, identifier?, role?}`` as a strict flow selector."""
    unknown = sorted(k for k in raw if k not in SELECTOR_KEYS)
    if unknown:
        raise _invalid(
            f"selector: unknown key {', '.join(unknown)} — allowed keys: " + ", ".join(SELECTOR_KEYS)
        )
    values: dict[str, str] = {}
    for key in SELECTOR_KEYS:
        value = raw.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise _invalid(f"selector.{key} must be a string.")
        values[key] = value
    if not values:
        raise _invalid("selector needs at least one of text, identifier, role.")
    if "text" in values and not values["text"].strip():
        raise _invalid("selector.text must contain a visible character.")
    return Selector(text=values.get("text"), identifier=values.get("identifier"), role=values.get("role"))


def describe(sel: Selector) -> str:
    """The selector as the tool's notes spell it: ``{text: "…", identifier: "…"}``."""
    fields = (("text", sel.text), ("identifier", sel.identifier), ("role", sel.role))
    return "{" + ", ".join(f'{k}: "{v}"' for k, v in fields if v) + "}"


def _condition(args: AwaitUiElementArgs, sel: Selector) -> Condition:
    if args.condition != "text":
        return Condition(kind=args.condition, selector=sel)
    if not args.expected_text:
        raise _invalid("condition text needs expectedText (a non-empty string).")
    return Condition(
        kind="text", selector=sel, mode=args.text_match or "contains", expected=args.expected_text
    )


def _timeout_note(condition: str, sel: Selector, timeout_ms: int, reason: str | None) -> str:
    if condition == "text":
        return f"After {timeout_ms}ms: {reason}."
    within = f"{describe(sel)} within {timeout_ms}ms"
    if condition == "exists":
        return f"No element matched {within}."
    if condition == "visible":
        return f"No visible element matched {within}."
    return f"An element matching {describe(sel)} was still visible after {timeout_ms}ms."


async def await_ui_element(devices: DeviceProvider, args: AwaitUiElementArgs, ctx: ToolContext) -> Any:
    sel = parse_selector(args.selector)
    if not 0 <= args.timeout_ms <= MAX_AWAIT_TIMEOUT_MS:
        raise InvalidToolInputError(
            f"timeoutMs must be between 0 and {MAX_AWAIT_TIMEOUT_MS}, got {args.timeout_ms}."
        )
    condition = _condition(args, sel)
    poll = min(max(args.poll_interval_ms, MIN_POLL_MS), MAX_POLL_MS) / 1000.0
    device = await on_device(devices, args.udid)
    started = time.monotonic()
    deadline = started + args.timeout_ms / 1000.0
    while True:
        screen = flatten(await device.ui_tree())
        elapsed = round((time.monotonic() - started) * 1000)
        verdict = evaluate(condition, screen)
        if verdict.ok:
            return {"success": True, "elapsed": elapsed}
        if time.monotonic() + poll > deadline or ctx.abort.is_set():
            note = _timeout_note(args.condition, sel, args.timeout_ms, verdict.reason)
            return {"success": False, "elapsed": elapsed, "note": note}
        try:
            async with asyncio.timeout(poll):
                await ctx.abort.wait()
        except TimeoutError:
            pass


AWAIT_UI_ELEMENT = DeviceTool(
    "await-ui-element",
    "Wait until an element matching a selector {text?, identifier?, role?} exists, is visible, is hidden or shows "
    "a text. "
    "Returns {success, elapsed, note?} — success false when the wait times out.",
    AwaitUiElementArgs,
    await_ui_element,
    long_running=True,
    verdict=await_ui_element_verdict,
    always_load=True,
    search_hint="wait await poll until visible hidden exists text appears disappears timeout element condition settle",
)
