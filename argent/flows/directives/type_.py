"""`type: { into, text, clear?, submit? }` — type text into a field (``{{secret:NAME}}`` filled at run
time): the field takes the focus without a click when it can (the caret and the selection the app
made stay), `clear: true` empties it first, and Enter submits it unless `submit: false`.

`submit` defaults to true when there is text to type; a step that only clears (`clear: true`, no
text) sends no Enter unless it says `submit: true`."""

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
    #: Empty the field first (its text selected and replaced, as a person's select-all + type).
    clear: bool = False
    line: int = step_line()
    kind: ClassVar[str] = "type"
    executor: ClassVar[str] = "type"
    on_device: ClassVar[bool] = True

    def label(self) -> str | None:
        return f"into {selector_label(self.into)}"

    def to_data(self) -> dict[str, Any]:
        body: dict[str, Any] = {"into": selector_to_data(self.into)}
        if self.text:
            body["text"] = self.text
        if self.clear:
            body["clear"] = True
        if self.submit != submit_default(self.text):
            body["submit"] = self.submit
        return {"type": body}

    def summary(self) -> str:
        typed = js_json_string(self.text) if self.text else ""
        cleared = ("(cleared) " if self.text else "(cleared)") if self.clear else ""
        return f"type: {sel_json(self.into)} ← {cleared}{typed}"


def submit_default(text: str) -> bool:
    """Enter after the text when there is text; a step that only clears submits nothing."""
    return bool(text)


def parse(nodes: Nodes, body: Any, line: int) -> TypeStep:
    mapping = nodes.mapping(body)
    if mapping is None:
        raise Reject("type needs { into, text }")
    only_keys("type", mapping, ("into", "text", "submit", "clear"))
    clear = _flag(nodes, mapping, "clear", False)
    text = nodes.string(mapping.get("text"))
    if (text is None and "text" in mapping) or (not text and not clear):
        raise Reject("type needs a non-empty text")  # upstream's words (`clear: true` alone empties a field)
    text = text or ""
    submit = _flag(nodes, mapping, "submit", submit_default(text))
    if "into" not in mapping:
        raise Reject("type needs { into, text }")
    into = nodes.selector(mapping["into"], "type.into")
    return TypeStep(into=into, text=text, submit=submit, clear=clear, line=line)


def _flag(nodes: Nodes, mapping: dict[str, Any], key: str, default: bool) -> bool:
    if key not in mapping:
        return default
    value = nodes.scalar(mapping[key])
    if value is not True and value is not False:
        raise Reject(f"type.{key} must be a boolean")
    return bool(value)


TYPE = Directive(key="type", models=(TypeStep,), parse=parse)
