"""`rotate: { on?, by }` — a two-finger rotation by degrees (+CW, −CCW)."""

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

_MAX_ROTATE_DEGREES = 3000


@frozen
class RotateStep:
    by: float
    on: Selector | None = None
    line: int = step_line()
    kind: ClassVar[str] = "rotate"
    executor: ClassVar[str] = "rotate"
    on_device: ClassVar[bool] = True

    def label(self) -> str | None:
        by = f"by {js_number(self.by)}°"
        return f"{selector_label(self.on)} ({by})" if self.on is not None else by

    def to_data(self) -> dict[str, Any]:
        body: dict[str, Any] = {}
        if self.on is not None:
            body["on"] = selector_to_data(self.on)
        body["by"] = num(self.by)
        return {"rotate": body}

    def summary(self) -> str:
        on = f" on {sel_json(self.on)}" if self.on is not None else ""
        return f"rotate: by {js_number(self.by)}°{on}"


def parse(nodes: Nodes, body: Any, line: int) -> RotateStep:
    mapping = options_map(nodes, body, "rotate", '{ on: "Map", by: 90 }', "(an angle is required)")
    only_keys("rotate", mapping, ("on", "by"))
    by = nodes.number(mapping.get("by"))
    if by is None or not math.isfinite(by) or by == 0:
        raise Reject("rotate.by must be a finite non-zero number of degrees (+CW, −CCW)")
    if abs(by) > _MAX_ROTATE_DEGREES:
        raise Reject(
            f"rotate.by must be within ±{_MAX_ROTATE_DEGREES}° — one continuous gesture at ~300°/s (10 s max)"
        )
    on = nodes.selector(mapping["on"], "rotate.on") if "on" in mapping else None
    return RotateStep(by=tidy(by), on=on, line=line)


ROTATE = Directive(key="rotate", models=(RotateStep,), parse=parse)
