"""What the page-side form controls (``forms.js``) answer, read the same way on every engine."""

from __future__ import annotations

from typing import Any

from argent.devices.base import Choice, Focused


def choice_from(value: Any) -> Choice | None:
    """``__argentForms.choose``'s answer as a ``Choice``; None when the page gave none."""
    if not isinstance(value, dict):
        return None
    options = value.get("options")
    return Choice(
        problem=value["problem"] if isinstance(value.get("problem"), str) else None,
        changed=value.get("changed") is True,
        tag=str(value.get("tag") or ""),
        wanted=str(value.get("wanted") or ""),
        options=tuple(str(o) for o in options) if isinstance(options, list) else (),
        more=int(value["more"]) if isinstance(value.get("more"), int) else 0,
    )


def focused_from(state: str) -> Focused:
    """``__argentForms.focusAt``'s state as ``Focused`` (anything else: none)."""
    return "kept" if state == "kept" else "focused" if state == "focused" else "none"
