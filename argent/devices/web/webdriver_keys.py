"""Keys as W3C WebDriver key actions: one key, typed text, or a chord, for any engine driven over
WebDriver (classic ``POST /session/<id>/actions`` on WebKit, BiDi ``input.performActions`` on Firefox:
both take the same key input source).

The keys themselves (names, codes, chords) are ``argent.utils.keys``; this module spells them as
WebDriver's key values: a character is itself, a named key its code point in WebDriver's table of
normalized keys (``Enter`` is U+E007, the left ``Shift`` U+E008).
"""

from __future__ import annotations

from typing import Any

from argent.devices.base import DeviceError
from argent.utils.keys import MODIFIERS, Chord, Key, KeyNameError, parse_chord

#: WebDriver's code points of the named keys (W3C WebDriver, "keyboard actions"), by ``KeyboardEvent.key``.
#: Space is not here: it types its character, `` ``.
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
    """A key WebDriver has no key value for (``F13`` … ``F24``, ``ContextMenu``): the device that
    was asked to press it says so in its own name (``message``)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key

    def message(self, engine: str) -> str:
        """What happened, for a person: ``engine`` is the device as it names itself (``WebKit (id)``)."""
        return f'{engine} cannot press "{self.key}": WebDriver has no key value for it.'


def key_value(key: Key) -> str:
    """The WebDriver key value of ``key``: its character (a carriage return is Enter), else its code point."""
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
    modifiers up in reverse order. Raises ``UnpressableKey``."""
    held = [key_value(MODIFIERS[name]) for name in chord.modifiers]
    pressed = MODIFIERS.get(chord.key.key, chord.key)
    return [
        *({"type": "keyDown", "value": v} for v in held),
        *_press(key_value(pressed)),
        *({"type": "keyUp", "value": v} for v in reversed(held)),
    ]


def press_actions(key: str, engine: str) -> list[dict[str, Any]]:
    """The actions of ``press_key(key)`` (a key or a chord, ``Shift+Enter``) on a WebDriver device;
    a ``DeviceError`` for a name that is no key, or a key WebDriver cannot press (``engine``: the
    device as it names itself, ``Firefox (id)``)."""
    try:
        return chord_actions(parse_chord(key))
    except KeyNameError as exc:
        raise DeviceError(str(exc)) from None
    except UnpressableKey as exc:
        raise DeviceError(exc.message(engine)) from None


def keyboard(actions: list[dict[str, Any]]) -> dict[str, Any]:
    """The one keyboard input source argent performs ``actions`` with."""
    return {"type": "key", "id": "argent-keyboard", "actions": actions}
