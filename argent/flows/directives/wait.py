"""`wait: <ms>` — sleep a fixed number of milliseconds (cut short by an abort)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from attrs import frozen

from argent.flows.canonical import num
from argent.flows.directives.base import Directive, Nodes
from argent.flows.grammar import Reject
from argent.flows.js import js_number, tidy
from argent.flows.values import step_line


@frozen
class WaitStep:
    ms: float
    line: int = step_line()
    kind: ClassVar[str] = "wait"
    executor: ClassVar[str] = "wait"
    on_device: ClassVar[bool] = False

    def label(self) -> str | None:
        return None

    def to_data(self) -> dict[str, Any]:
        return {"wait": num(self.ms)}

    def summary(self) -> str:
        return f"wait: {js_number(self.ms)}ms"


def parse(nodes: Nodes, body: Any, line: int) -> WaitStep:
    ms = nodes.to_number(body)
    if not math.isfinite(ms) or ms < 0:
        raise Reject("wait needs a non-negative number of milliseconds (e.g. `wait: 500`)")
    return WaitStep(ms=tidy(ms), line=line)


WAIT = Directive(key="wait", models=(WaitStep,), parse=parse)
