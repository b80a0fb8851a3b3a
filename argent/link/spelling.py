"""``spelling`` on the wire: how a directory lists the basename of a path.

``{"state": "listed"}``, ``{"state": "case_folded", "actual": "<name>", "addressable": <bool>}``
or ``{"state": "absent"}``. The client computes it with ``spelling_of``; the tool-server reads it
back and refuses a value of any other shape.
"""

from __future__ import annotations

from typing import Any

from argent.runner.files import LISTED, Spelling, spelling_of

__all__ = ["LISTED", "Spelling", "spelling_from_wire", "spelling_of", "spelling_to_wire"]


def spelling_to_wire(spelling: Spelling) -> dict[str, Any]:
    if spelling.state == "case_folded":
        return {
            "state": "case_folded",
            "actual": spelling.actual or "",
            "addressable": bool(spelling.addressable),
        }
    return {"state": spelling.state}


def spelling_from_wire(value: Any) -> Spelling | None:
    """The spelling a wire value describes; None when the value has another shape."""
    if not isinstance(value, dict):
        return None
    state = value.get("state")
    if state == "listed":
        return LISTED
    if state == "absent":
        return Spelling("absent")
    if state == "case_folded":
        actual = value.get("actual")
        addressable = value.get("addressable")
        if not isinstance(actual, str) or not actual or "/" in actual or "\0" in actual:
            return None
        if not isinstance(addressable, bool):
            return None
        return Spelling("case_folded", actual=actual, addressable=addressable)
    return None
