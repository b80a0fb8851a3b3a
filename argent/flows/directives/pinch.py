"""`pinch: { on?, scale }` — a two-finger zoom (2 = in 2×, 0.5 = out to half)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from attrs import frozen

from argent.flows.canonical import num, sel_json, selector_to_data
from argent.flows.directives.base import Directive, Nodes
from argent.flows.directives.gestures import options_map
from argent.flows.grammar import Reject, only_keys
from argent.flows.js import js_number, tidy
from argent.flows.labels import selector_label
from argent.flows.values import Selector, step_line


@frozen
class PinchStep:
    scale: float
    on: Selector | None = None
    line: int = step_line()
    kind: ClassVar[str] = "pinch"
    executor: ClassVar[str] = "pinch"
    on_device: ClassVar[bool] = True

    def label(self) -> str | None:
        scale = f"scale {js_number(self.scale)}"
        return f"{selector_label(self.on)} ({scale})" if self.on is not None else scale

    def to_data(self) -> dict[str, Any]:
        body: dict[str, Any] = {}
        if self.on is not None:
            body["on"] = selector_to_data(self.on)
        body["scale"] = num(self.scale)
        return {"pinch": body}

    def summary(self) -> str:
        on = f" on {sel_json(self.on)}" if self.on is not None else ""
        return f"pinch: scale {js_number(self.scale)}{on}"


def parse(nodes: Nodes, body: Any, line: int) -> PinchStep:
    mapping = options_map(
        nodes, body, "pinch", '{ on: "Map", scale: 3 }', '(a bare "pinch: Map" is ambiguous: in or out?)'
    )
    only_keys("pinch", mapping, ("on", "scale"))
    scale = nodes.number(mapping.get("scale"))
    if scale is None or not math.isfinite(scale) or scale <= 0 or scale == 1:
        raise Reject(
            "pinch.scale must be a finite number > 0 and ≠ 1 (2 = zoom in 2×, 0.5 = zoom out to half)"
        )
    on = nodes.selector(mapping["on"], "pinch.on") if "on" in mapping else None
    return PinchStep(scale=tidy(scale), on=on, line=line)


PINCH = Directive(key="pinch", models=(PinchStep,), parse=parse)
