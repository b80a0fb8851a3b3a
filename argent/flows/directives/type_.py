"""`type: { into, text, submit? }` — type text into a field (``{{secret:NAME}}`` filled at run time),
then submit it unless `submit: false`."""

from __future__ import annotations

from typing import Any, ClassVar

from attrs import frozen

from argent.flows.canonical import sel_json, selector_to_data
from argent.flows.directives.base import Directive, Nodes
from argent.flows.grammar import Reject, only_keys
from argent.flows.js import js_json_string
from argent.flows.labels import selector_label
from argent.flows.values import Selector, step_line


@frozen
class TypeStep:
    into: Selector
    text: str
    submit: bool = True
    line: int = step_line()
    kind: ClassVar[str] = "type"
    executor: ClassVar[str] = "type"
    on_device: ClassVar[bool] = True

    def label(self) -> str | None:
        return f"into {selector_label(self.into)}"

    def to_data(self) -> dict[str, Any]:
        body: dict[str, Any] = {"into": selector_to_data(self.into), "text": self.text}
        if not self.submit:
            body["submit"] = False
        return {"type": body}

    def summary(self) -> str:
        return f"type: {sel_json(self.into)} ← {js_json_string(self.text)}"


def parse(nodes: Nodes, body: Any, line: int) -> TypeStep:
    mapping = nodes.mapping(body)
    if mapping is None:
        raise Reject("type needs { into, text }")
    only_keys("type", mapping, ("into", "text", "submit"))
    text = nodes.string(mapping.get("text"))
    if not text:
        raise Reject("type needs a non-empty text")
    submit = True
    if "submit" in mapping:
        value = nodes.scalar(mapping["submit"])
        if value is not True and value is not False:
            raise Reject("type.submit must be a boolean")
        submit = value
    if "into" not in mapping:
        raise Reject("type needs { into, text }")
    into = nodes.selector(mapping["into"], "type.into")
    return TypeStep(into=into, text=text, submit=submit, line=line)


TYPE = Directive(key="type", models=(TypeStep,), parse=parse)
