"""Keys as WebDriver key actions (``input.performActions``): one key, typed text, or a chord.

The keys themselves (names, codes, chords) are ``argent.utils.keys``; this module spells them as
WebDriver's key values: a character is itself, a named key its code point in WebDriver's table of
normalized keys (``Enter`` is U+E007, the left ``Shift`` U+E008).
"""

from __future__ import annotations

from typing import Any

from argent.utils.keys import MODIFIERS, Chord, Key

#: WebDriver's code points of the named keys (W3C WebDriver, "keyboard actions"), by ``KeyboardEvent.key``.
_CODE_POINTS: dict[str, str] = {
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


def key_value(key: Key) -> str:
    """The WebDriver key value of ``key``: its character, else its code point."""
    if key.text:
        return key.text if key.text != "\r" else _CODE_POINTS["Enter"]
    if len(key.key) == 1:
        return key.key
    value = _CODE_POINTS.get(key.key)
    if value is None:
        raise ValueError(f'Firefox cannot press "{key.key}": WebDriver has no key value for it')
    return value


def press_actions(key: Key) -> list[dict[str, Any]]:
    """A key down and up, nothing held."""
    value = key_value(key)
    return [{"type": "keyDown", "value": value}, {"type": "keyUp", "value": value}]


def text_actions(text: str) -> list[dict[str, Any]]:
    """``text`` typed key by key (newline: Enter, tab: Tab), one grapheme a key."""
    actions: list[dict[str, Any]] = []
    for ch in text:
        value = _CODE_POINTS["Enter"] if ch in "\r\n" else _CODE_POINTS["Tab"] if ch == "\t" else ch
        actions.extend(({"type": "keyDown", "value": value}, {"type": "keyUp", "value": value}))
    return actions


def chord_actions(chord: Chord) -> list[dict[str, Any]]:
    """A chord as a person presses it: each modifier down in turn, the key down and up, then the
    modifiers up in reverse order."""
    held = [key_value(MODIFIERS[name]) for name in chord.modifiers]
    value = key_value(chord.key) if chord.key.key not in MODIFIERS else key_value(MODIFIERS[chord.key.key])
    return [
        *({"type": "keyDown", "value": v} for v in held),
        {"type": "keyDown", "value": value},
        {"type": "keyUp", "value": value},
        *({"type": "keyUp", "value": v} for v in reversed(held)),
    ]


def key_source(actions: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "key", "id": "argent-keyboard", "actions": actions}
