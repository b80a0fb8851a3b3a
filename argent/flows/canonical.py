"""The canonical spelling of the values steps share, for the YAML writer and the recording summaries.

A selector is written as a bare string when it is loose and text-only, else as a map with `id`
(never its alias `identifier`) and `text: { matches }` for a pattern; a value that cannot be
written without changing its meaning is refused with a ``FlowError`` that says why.
"""

from __future__ import annotations

from typing import Any

from argent import limits
from argent.errors import FlowError
from argent.flows.js import has_visible_text, js_json, js_json_string, js_number
from argent.flows.values import Condition, Point, Selector, Target

__all__ = [
    "condition_summary",
    "condition_to_data",
    "js_truthy",
    "num",
    "sel_json",
    "selector_to_data",
    "target_summary",
    "target_to_data",
]

_LOSING = "Cannot serialize flow selector without losing constraints: "
_LOOSE = "Cannot serialize loose flow selector without changing its meaning: "


def num(value: float | int) -> float | int:
    """A number as JavaScript would write it: integral floats lose their `.0`."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def _selector_debug(sel: Selector) -> str:
    fields: dict[str, Any] = {}
    for name, value in (
        ("text", sel.text),
        ("textMatches", sel.text_matches),
        ("identifier", sel.identifier),
        ("role", sel.role),
        ("css", sel.css),
    ):
        if value is not None:
            fields[name] = value
    if sel.any:
        fields["any"] = True
    if sel.loose:
        fields["loose"] = True
    for name, scope in (("within", sel.within), ("after", sel.after), ("next", sel.next)):
        if scope is not None:
            fields[name] = "…"
    return js_json(fields)


def selector_to_data(sel: Selector, _budget: list[int] | None = None) -> Any:
    """A selector's YAML spelling: a bare string when loose and text-only, else a map.

    The map writes `id` (never its alias `identifier`) and `text: { matches }` for a pattern.
    """
    budget = [0] if _budget is None else _budget
    debug = _selector_debug(sel)
    if sel.loose:
        extra = (
            sel.text_matches is not None
            or sel.identifier is not None
            or sel.role is not None
            or sel.css is not None
            or sel.any
            or sel.within is not None
            or sel.after is not None
            or sel.next is not None
        )
        if sel.text is None or extra:
            raise FlowError(f"{_LOOSE}{debug} — a loose selector is exactly one bare text")
        if not has_visible_text(sel.text):
            raise FlowError(f"{_LOSING}{debug} — its text has no visible character")
        return sel.text
    if sel.text is not None and sel.text_matches is not None:
        raise FlowError(f"{_LOSING}{debug} — it sets both text and textMatches")
    if sel.text is not None and not has_visible_text(sel.text):
        raise FlowError(f"{_LOSING}{debug} — its text has no visible character")
    for name, value in (
        ("identifier", sel.identifier),
        ("role", sel.role),
        ("textMatches", sel.text_matches),
        ("css", sel.css),
    ):
        if value is not None and not value:
            raise FlowError(f"{_LOSING}{debug} — its {name} is empty")
    has_field = (
        sel.text is not None
        or sel.text_matches is not None
        or sel.identifier is not None
        or sel.role
        or sel.css is not None
    )
    has_scope = sel.within is not None or sel.after is not None or sel.next is not None
    if sel.any and (has_field or not has_scope):
        raise FlowError(f"{_LOSING}{debug} — `any: true` takes no text/id/role/css and needs a scope")
    if not has_field and not sel.any:
        raise FlowError(f"{_LOSING}{debug} — it names no text, id, role or css")
    data: dict[str, Any] = {}
    if sel.text is not None:
        data["text"] = sel.text
    if sel.text_matches is not None:
        data["text"] = {"matches": sel.text_matches}
    if sel.identifier is not None:
        data["id"] = sel.identifier
    if sel.role is not None:
        data["role"] = sel.role
    if sel.css is not None:
        data["css"] = sel.css
    if sel.any:
        data["any"] = True
    for name, scope in (("within", sel.within), ("after", sel.after), ("next", sel.next)):
        if scope is not None:
            budget[0] += 1
            if budget[0] > limits.MAX_SELECTOR_SCOPES:
                raise FlowError(f"{_LOSING}{debug} — more than {limits.MAX_SELECTOR_SCOPES} scopes")
            data[name] = selector_to_data(scope, budget)
    return data


def target_to_data(target: Target, where: str) -> Any:
    if isinstance(target, Point):
        if not (0 <= target.x <= 1 and 0 <= target.y <= 1):
            raise FlowError(f"{where}: coordinates are normalized 0–1 fractions of the screen, not pixels")
        return {"x": num(target.x), "y": num(target.y)}
    return selector_to_data(target)


def condition_to_data(cond: Condition) -> dict[str, Any]:
    if cond.kind == "text":
        return {"text": {"in": selector_to_data(cond.selector), str(cond.mode): cond.expected}}
    return {cond.kind: selector_to_data(cond.selector)}


def sel_json(sel: Selector) -> str:
    return js_json(selector_to_data(sel))


def target_summary(target: Target) -> str:
    if isinstance(target, Point):
        return f"({js_number(target.x)}, {js_number(target.y)})"
    return sel_json(target)


def condition_summary(cond: Condition) -> str:
    sel = sel_json(cond.selector)
    if cond.kind != "text":
        return f"{cond.kind} {sel}"
    expected = cond.expected or ""
    if cond.mode == "matches":
        return f"text {sel} matches /{expected}/"
    if cond.mode == "equals":
        return f"text {sel} == {js_json_string(expected)}"
    return f"text {sel} contains {js_json_string(expected)}"


def js_truthy(value: Any) -> bool:
    if value is None or value is False or value == "":
        return False
    return not (isinstance(value, int | float) and (value == 0 or value != value))
