"""Keys and pointers as W3C WebDriver actions (``POST /session/<id>/actions``).

The keys themselves (names, chords) are ``argent.utils.keys``; this module spells them as
WebDriver's key values — a character is itself, a named key its code point in WebDriver's table
of normalized keys (``Enter`` is U+E007, the left ``Shift`` U+E008) — and builds the input sources
a device performs: one keyboard, one mouse, one wheel.
"""

from __future__ import annotations

from typing import Any

from argent.utils.keys import MODIFIERS, Chord, Key

#: WebDriver's code points of the named keys (W3C WebDriver, "keyboard actions"), by ``KeyboardEvent.key``.
CODE_POINTS: dict[str, str] = {
    "Cancel": "\ue001",
    "Help": "\ue002",
    "Backspace": "\ue003",
    "Tab": "\ue004",
    "Clear": "\ue005",
    "Enter": "\ue007",
    "Shift": "\ue008",
    "Control": "\ue009",
    "Alt": "\ue00a",
    "Pause": "\ue00b",
    "Escape": "\ue00c",
    " ": "\ue00d",
    "PageUp": "\ue00e",
    "PageDown": "\ue00f",
    "End": "\ue010",
    "Home": "\ue011",
    "ArrowLeft": "\ue012",
    "ArrowUp": "\ue013",
    "ArrowRight": "\ue014",
    "ArrowDown": "\ue015",
    "Insert": "\ue016",
    "Delete": "\ue017",
    **{f"F{n}": chr(0xE031 + n - 1) for n in range(1, 13)},
    "Meta": "\ue03d",
}


class UnpressableKey(ValueError):
    """A key WebDriver has no key value for (``F13`` … ``F24``, ``ContextMenu``)."""


def key_value(key: Key) -> str:
    """The WebDriver key value of ``key``: its character, else its code point."""
    if key.text == "\r":
        return CODE_POINTS["Enter"]
    if key.text:
        return key.text
    if len(key.key) == 1:
        return key.key
    value = CODE_POINTS.get(key.key)
    if value is None:
        raise UnpressableKey(key.key)
    return value


def _press(value: str) -> list[dict[str, Any]]:
    return [{"type": "keyDown", "value": value}, {"type": "keyUp", "value": value}]


def text_actions(text: str) -> list[dict[str, Any]]:
    """``text`` typed key by key (newline: Enter, tab: Tab), one code point a key."""
    actions: list[dict[str, Any]] = []
    for ch in text:
        if ch in "\r\n":
            actions.extend(_press(CODE_POINTS["Enter"]))
        elif ch == "\t":
            actions.extend(_press(CODE_POINTS["Tab"]))
        else:
            actions.extend(_press(ch))
    return actions


def chord_actions(chord: Chord) -> list[dict[str, Any]]:
    """A chord as a person presses it: each modifier down in turn, the key down and up, then the
    modifiers up in reverse order."""
    held = [key_value(MODIFIERS[name]) for name in chord.modifiers]
    pressed = MODIFIERS.get(chord.key.key, chord.key)
    return [
        *({"type": "keyDown", "value": v} for v in held),
        *_press(key_value(pressed)),
        *({"type": "keyUp", "value": v} for v in reversed(held)),
    ]


def keyboard(actions: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "key", "id": "argent-keyboard", "actions": actions}


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
