"""How selectors, targets and conditions read in step reports (``target``) and runtime reasons."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attrs import frozen

from argent.flows.js import js_json_string, js_number
from argent.flows.values import Condition, PlatformGuard, Point, Selector

__all__ = ["condition_label", "condition_text", "describe_selector", "selector_label", "target_label"]


@frozen
class _Spelling:
    """How one selector spelling writes each field (the report target and the runtime reason differ)."""

    text: Callable[[str], str]
    text_matches: Callable[[str], str]
    value: Callable[[str], str]


_TARGET = _Spelling(text=js_json_string, text_matches=lambda re: f"/{re}/", value=lambda v: v)
_REASON = _Spelling(
    text=lambda t: f"text={js_json_string(t)}", text_matches=lambda re: f"text=/{re}/", value=js_json_string
)


def _spell(sel: Selector, how: _Spelling) -> str:
    parts: list[str] = []
    if sel.any:
        parts.append("*")
    if sel.text is not None:
        parts.append(how.text(sel.text))
    if sel.text_matches is not None:
        parts.append(how.text_matches(sel.text_matches))
    if sel.identifier is not None:
        parts.append(f"id={how.value(sel.identifier)}")
    if sel.role is not None:
        parts.append(f"role={how.value(sel.role)}")
    if sel.css is not None:
        parts.append(f"css={how.value(sel.css)}")
    for relation, scope in (("within", sel.within), ("after", sel.after), ("next", sel.next)):
        if scope is not None:
            parts.append(f"{relation} ({_spell(scope, how)})")
    return " ".join(parts)


def selector_label(sel: Selector) -> str:
    """The report `target` spelling of a selector: `*`, `"text"`, `/re/`, `id=…`, `role=…`, `css=…`, scopes."""
    return _spell(sel, _TARGET)


def describe_selector(sel: Selector) -> str:
    """The runtime-reason spelling: `text="…"`, `id="…"`, `role="…"`, `css="…"`, `text=/…/`, `*`, scopes."""
    return _spell(sel, _REASON)


def condition_text(cond: Condition, describe: Any) -> str:
    sel = describe(cond.selector)
    if cond.kind != "text":
        return f"{cond.kind} {sel}"
    if cond.mode == "matches":
        return f"{sel} matches /{cond.expected}/"
    return f"{sel} {cond.mode} {js_json_string(cond.expected or '')}"


def condition_label(cond: Condition | PlatformGuard) -> str:
    """A guard or condition as runtime reasons spell it: `visible text="What's new"`, `platform ios`."""
    if isinstance(cond, PlatformGuard):
        return f"platform {cond.platform}"
    return condition_text(cond, describe_selector)


def target_label(target: Selector | Point) -> str:
    """A gesture target: a selector label or `(x, y)`."""
    if isinstance(target, Point):
        return f"({js_number(target.x)}, {js_number(target.y)})"
    return selector_label(target)
