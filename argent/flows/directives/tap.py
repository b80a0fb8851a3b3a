"""`tap:` — tap a selector or a point once, or `{ on, times }` for a multi-tap."""

from __future__ import annotations

from typing import Any, ClassVar

from attrs import frozen

from argent.flows.canonical import target_summary, target_to_data
from argent.flows.directives.base import Directive, Nodes
from argent.flows.directives.gestures import gesture
from argent.flows.labels import target_label
from argent.flows.values import Target, step_line


@frozen
class TapStep:
    target: Target
    times: int | None = None
    line: int = step_line()
    kind: ClassVar[str] = "tap"
    executor: ClassVar[str] = "tap"
    on_device: ClassVar[bool] = True

    def label(self) -> str | None:
        return target_label(self.target)

    def to_data(self) -> dict[str, Any]:
        target = target_to_data(self.target, "tap")
        if self.times is not None and self.times != 1:
            return {"tap": {"on": target, "times": self.times}}
        return {"tap": target}

    def summary(self) -> str:
        times = f" ×{self.times}" if self.times is not None and self.times > 1 else ""
        return f"tap: {target_summary(self.target)}{times}"


def parse(nodes: Nodes, body: Any, line: int) -> TapStep:
    target, times = gesture(nodes, body, "tap", "times")
    return TapStep(target=target, times=times, line=line)


TAP = Directive(key="tap", models=(TapStep,), parse=parse)
