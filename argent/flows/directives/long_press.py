"""`long-press:` — press a selector or a point and hold, or `{ on, duration }` to hold longer."""

from __future__ import annotations

from typing import Any, ClassVar

from attrs import frozen

from argent import limits
from argent.flows.canonical import num, target_summary, target_to_data
from argent.flows.directives.base import Directive, Nodes
from argent.flows.directives.gestures import gesture
from argent.flows.js import js_number
from argent.flows.labels import target_label
from argent.flows.values import Target, step_line


@frozen
class LongPressStep:
    target: Target
    duration_ms: float | None = None
    line: int = step_line()
    kind: ClassVar[str] = "long-press"
    executor: ClassVar[str] = "long-press"
    on_device: ClassVar[bool] = True

    def label(self) -> str | None:
        return target_label(self.target)

    def to_data(self) -> dict[str, Any]:
        target = target_to_data(self.target, "long-press")
        if self.duration_ms is not None:
            return {"long-press": {"on": target, "duration": num(self.duration_ms)}}
        return {"long-press": target}

    def summary(self) -> str:
        duration = limits.DEFAULT_LONG_PRESS_MS if self.duration_ms is None else self.duration_ms
        return f"long-press: {target_summary(self.target)} for {js_number(duration)}ms"


def parse(nodes: Nodes, body: Any, line: int) -> LongPressStep:
    target, duration = gesture(nodes, body, "long-press", "duration")
    return LongPressStep(target=target, duration_ms=duration, line=line)


LONG_PRESS = Directive(key="long-press", models=(LongPressStep,), parse=parse)
