"""`select:` — choose options of a native `<select>` as a person's choice does:
`select: { in: <selector>, option: <label> }`, or `value: <value>`, or `options: [<label>, ...]` /
`values: [<value>, ...]` for a multiple select."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from attrs import frozen

from argent.flows.canonical import sel_json, selector_to_data
from argent.flows.directives.base import Directive, Nodes
from argent.flows.grammar import Reject, only_keys
from argent.flows.js import is_number, js_json, js_json_string, js_string
from argent.flows.labels import selector_label
from argent.flows.values import Selector, step_line

EXAMPLE = "select: { in: { id: language }, option: Julia }"
#: The keys that say what to choose: one label, one value, several labels, several values.
CHOICE_KEYS = ("option", "value", "options", "values")

By = Literal["label", "value"]


@frozen
class SelectStep:
    target: Selector
    #: What to choose, matched against each option's label (its text) or its value.
    choices: tuple[str, ...]
    by: By = "label"
    #: Spelled as a list (`options` / `values`): a multiple select may take several.
    many: bool = False
    line: int = step_line()
    kind: ClassVar[str] = "select"
    executor: ClassVar[str] = "select"
    on_device: ClassVar[bool] = True

    @property
    def key(self) -> str:
        """The YAML key of the choice: `option`, `value`, `options` or `values`."""
        return ("option" if self.by == "label" else "value") + ("s" if self.many else "")

    def _chosen(self) -> str:
        shown = ", ".join(js_json_string(choice) for choice in self.choices)
        return f"value {shown}" if self.by == "value" else shown

    def label(self) -> str | None:
        return f"{self._chosen()} in {selector_label(self.target)}"

    def to_data(self) -> dict[str, Any]:
        choice: Any = list(self.choices) if self.many else self.choices[0]
        return {"select": {"in": selector_to_data(self.target), self.key: choice}}

    def summary(self) -> str:
        chosen = js_json(list(self.choices)) if self.many else js_json_string(self.choices[0])
        by = "value " if self.by == "value" else ""
        return f"select: {sel_json(self.target)} ← {by}{chosen}"


def _choice(nodes: Nodes, node: Any, where: str) -> str:
    """A label or a value: text, or a number (`value: 3`) as its text."""
    text = nodes.string(node)
    if text is not None:
        return text
    scalar = nodes.scalar(node)
    if is_number(scalar):
        return js_string(scalar)
    raise Reject(f"{where} must be text — e.g. {EXAMPLE}")


def parse(nodes: Nodes, body: Any, line: int) -> SelectStep:
    mapping = nodes.mapping(body)
    if mapping is None:
        raise Reject(f"select needs {{ in, option }} — e.g. {EXAMPLE}")
    only_keys("select", mapping, ("in", *CHOICE_KEYS))
    given = [key for key in CHOICE_KEYS if key in mapping]
    if not given:
        raise Reject(f"select needs one of `option`, `value`, `options`, `values` — e.g. {EXAMPLE}")
    if len(given) > 1:
        found = ", ".join(f"`{key}`" for key in given)
        raise Reject(f"select takes one of `option`, `value`, `options`, `values`, found {found}")
    if "in" not in mapping:
        raise Reject(f"select needs `in`: the <select> to choose in — e.g. {EXAMPLE}")
    key = given[0]
    by: By = "label" if key.startswith("option") else "value"
    many = key.endswith("s")
    node = mapping[key]
    where = f"select.{key}"
    if many:
        items = nodes.string_list(node)
        if items is None:
            raise Reject(
                f"{where} must be a list of text — e.g. select: {{ in: {{ id: tags }}, {key}: [a, b] }}"
            )
        if not items:
            raise Reject(f"{where} needs at least one entry")
        choices = items
    else:
        choices = (_choice(nodes, node, where),)
    target = nodes.selector(mapping["in"], "select.in")
    return SelectStep(target=target, choices=choices, by=by, many=many, line=line)


SELECT = Directive(key="select", models=(SelectStep,), parse=parse)
