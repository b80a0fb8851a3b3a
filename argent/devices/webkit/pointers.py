"""The mouse and the wheel as W3C WebDriver input sources (``POST /session/<id>/actions``): a move,
clicks, a held press, a scroll. The keyboard is ``argent.devices.web.webdriver_keys``, which Firefox shares.
"""

from __future__ import annotations

from typing import Any


def mouse(actions: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "type": "pointer",
        "id": "argent-mouse",
        "parameters": {"pointerType": "mouse"},
        "actions": actions,
    }


def wheel(actions: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "wheel", "id": "argent-wheel", "actions": actions}


def move_to(x: int, y: int) -> dict[str, Any]:
    """The pointer to (x, y) CSS px of the viewport (WebDriver wants whole pixels)."""
    return {"type": "pointerMove", "x": x, "y": y, "origin": "viewport", "duration": 0}


def clicks(x: int, y: int, count: int) -> list[dict[str, Any]]:
    """Move, then ``count`` presses and releases (the second one a double click, as a person's)."""
    actions = [move_to(x, y)]
    for _ in range(max(1, count)):
        actions.extend(({"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}))
    return actions


def hold(x: int, y: int, duration_ms: float) -> list[dict[str, Any]]:
    """Move, press, hold ``duration_ms``, release: one actions call, timed by WebKit."""
    return [
        move_to(x, y),
        {"type": "pointerDown", "button": 0},
        {"type": "pause", "duration": max(0, round(duration_ms))},
        {"type": "pointerUp", "button": 0},
    ]


def scroll_by(x: int, y: int, dx: int, dy: int) -> list[dict[str, Any]]:
    return [
        {"type": "scroll", "x": x, "y": y, "deltaX": dx, "deltaY": dy, "origin": "viewport", "duration": 0}
    ]
