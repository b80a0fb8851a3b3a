"""`scroll-to:` — scroll until a selector is on screen: a selector, or `{ target, direction?, within? }`."""

from __future__ import annotations

from typing import Any, ClassVar

from attrs import frozen

from argent.flows.canonical import sel_json, selector_to_data
from argent.flows.directives.base import Directive, Nodes
from argent.flows.grammar import Reject, only_keys
from argent.flows.labels import selector_label
from argent.flows.values import DIRECTIONS, Selector, step_line


@frozen
class ScrollToStep:
    target: Selector
    direction: str = "down"
    within: Selector | None = None
    line: int = step_line()
    kind: ClassVar[str] = "scroll-to"
    executor: ClassVar[str] = "scroll-to"
    on_device: ClassVar[bool] = True

    def label(self) -> str | None:
        label = selector_label(self.target)
        return label if self.direction == "down" else f"{label} ({self.direction})"

    def to_data(self) -> dict[str, Any]:
        target_data = selector_to_data(self.target)
        if isinstance(target_data, str) and self.direction == "down" and self.within is None:
            return {"scroll-to": target_data}
        body: dict[str, Any] = {"target": target_data, "direction": self.direction}
        if self.within is not None:
            body["within"] = selector_to_data(self.within)
        return {"scroll-to": body}

    def summary(self) -> str:
        return f"scroll-to: {sel_json(self.target)} ({self.direction})"


def parse(nodes: Nodes, body: Any, line: int) -> ScrollToStep:
    if nodes.string(body) is not None:
        return ScrollToStep(target=nodes.selector(body, "scroll-to"), line=line)
    mapping = nodes.mapping(body)
    if mapping is None:
        raise Reject("scroll-to needs a target selector or { target, direction?, within? }")
    only_keys("scroll-to", mapping, ("target", "direction", "within"))
    direction = "down"
    if "direction" in mapping:
        value = nodes.string(mapping["direction"])
        if value not in DIRECTIONS:
            raise Reject(f"scroll-to direction must be one of {', '.join(DIRECTIONS)}")
        direction = value
    if "target" not in mapping:
        raise Reject(
            "scroll-to needs a `target` — its own `within` only anchors the gesture to a scroll "
            "container, e.g. scroll-to: { target: <selector>, within: { id: list } }. A selector scope "
            "(within/after/next) goes inside `target`."
        )
    target = nodes.selector(mapping["target"], "scroll-to.target")
    within = nodes.selector(mapping["within"], "scroll-to.within") if "within" in mapping else None
    return ScrollToStep(target=target, direction=direction, within=within, line=line)


SCROLL_TO = Directive(key="scroll-to", models=(ScrollToStep,), parse=parse)
