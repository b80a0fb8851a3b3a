"""Grammar pieces the gesture directives share: the `{ on, <option> }` form of `tap` and
`long-press`, and the options map of the two-finger gestures `pinch` and `rotate`."""

from __future__ import annotations

import math
from typing import Any

from argent.flows.directives.base import Nodes
from argent.flows.grammar import SELECTOR_FIELDS, SELECTOR_KEYS, Reject
from argent.flows.js import is_integer, tidy
from argent.flows.values import Target


def gesture(nodes: Nodes, body: Any, kind: str, option: str) -> tuple[Target, Any]:
    """A bare target, or ``{ on: <target>, <option>: … }``: the target and the option's value."""
    mapping = nodes.mapping(body)
    if mapping is None or ("on" not in mapping and option not in mapping):
        return nodes.target(body, kind), None
    if kind == "tap":
        example_selector = 'tap: { on: { text: "Photo" }, times: 2 }'
        example_point = "tap: { on: { x: 0.5, y: 0.5 }, times: 2 }"
        missing = 'tap with times needs a target — e.g. tap: { on: "Photo", times: 2 }'
    else:
        example_selector = 'long-press: { on: { text: "Row" }, duration: 1200 }'
        example_point = "long-press: { on: { x: 0.5, y: 0.5 }, duration: 1200 }"
        missing = 'long-press needs a target — e.g. long-press: { on: "Row", duration: 1200 }'
    if any(key in mapping for key in SELECTOR_KEYS):
        raise Reject(f"the {kind} options form takes a nested selector — e.g. {example_selector}")
    if "x" in mapping or "y" in mapping:
        raise Reject(f"the {kind} options form takes a nested point — e.g. {example_point}")
    if any(key not in ("on", option) for key in mapping):
        raise Reject(f"the {kind} options form accepts only {{ on, {option} }}")
    if "on" not in mapping:
        raise Reject(missing)
    value: Any = None
    if option in mapping:
        number = nodes.number(mapping[option])
        if kind == "tap":
            if not is_integer(number) or not 1 <= number <= 10:
                raise Reject("tap.times must be an integer between 1 and 10 (2 = double-tap)")
            value = None if number == 1 else int(number)
        else:
            if number is None or not math.isfinite(number) or number <= 0:
                raise Reject(
                    "long-press.duration needs a positive number of milliseconds (e.g. `duration: 1200`)"
                )
            value = tidy(number)
    return nodes.target(mapping["on"], f"{kind}.on"), value


def options_map(nodes: Nodes, body: Any, kind: str, example: str, bare_hint: str) -> dict[str, Any]:
    """The options map of a two-finger gesture (a bare value or a selector's own keys are refused)."""
    mapping = nodes.mapping(body)
    if mapping is None:
        raise Reject(f"{kind} takes an options map — e.g. {kind}: {example} {bare_hint}")
    if any(key in mapping for key in SELECTOR_FIELDS):
        raise Reject(f"{kind} takes a nested selector — e.g. {kind}: {example}")
    return mapping
