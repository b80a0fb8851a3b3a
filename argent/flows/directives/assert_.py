"""`assert:` — check a UI condition now (a short grace, no timeout)."""

from __future__ import annotations

from typing import Any, ClassVar

from attrs import frozen

from argent.flows.canonical import condition_summary, condition_to_data
from argent.flows.directives.base import Directive, Nodes
from argent.flows.labels import condition_text, selector_label
from argent.flows.values import Condition, step_line


@frozen
class AssertStep:
    condition: Condition
    line: int = step_line()
    kind: ClassVar[str] = "assert"
    executor: ClassVar[str] = "assert"
    on_device: ClassVar[bool] = True

    def label(self) -> str | None:
        return condition_text(self.condition, selector_label)

    def to_data(self) -> dict[str, Any]:
        return {"assert": condition_to_data(self.condition)}

    def summary(self) -> str:
        return f"assert: {condition_summary(self.condition)}"


def parse(nodes: Nodes, body: Any, line: int) -> AssertStep:
    return AssertStep(condition=nodes.condition(body, "assert"), line=line)


ASSERT = Directive(key="assert", models=(AssertStep,), parse=parse)
