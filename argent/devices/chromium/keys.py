"""Key events for ``Input.dispatchKeyEvent``: one key, typed text, or a chord as a person presses it.

The keys themselves (names, codes, chords) are ``argent.utils.keys``; this module only spells them
as CDP key events.
"""

from __future__ import annotations

from argent.utils.keys import MODIFIERS, Chord, Key

#: ``Input.dispatchKeyEvent``'s ``modifiers`` bit of each modifier.
MODIFIER_BITS = {"Alt": 1, "Control": 2, "Meta": 4, "Shift": 8}


def key_event(key: Key, event_type: str, modifiers: int = 0) -> dict[str, object]:
    """One CDP key event: ``keyDown`` carries the key's text (a keypress and an input follow)."""
    out: dict[str, object] = {
        "type": event_type,
        "key": key.key,
        "code": key.code,
        "windowsVirtualKeyCode": key.key_code,
        "nativeVirtualKeyCode": key.key_code,
    }
    if modifiers:
        out["modifiers"] = modifiers
    if key.location:
        out["location"] = key.location
    if event_type == "keyDown" and key.text:
        out["text"] = key.text
        out["unmodifiedText"] = key.text
    return out


def down_type(key: Key) -> str:
    """``keyDown`` (with text: a character is typed) or ``rawKeyDown`` (a bare key)."""
    return "keyDown" if key.text else "rawKeyDown"


def press_events(key: Key) -> list[dict[str, object]]:
    """A key down and up, nothing held."""
    return [key_event(key, down_type(key)), key_event(key, "keyUp")]


def chord_events(chord: Chord) -> list[dict[str, object]]:
    """A chord as a person presses it: each modifier down in turn (each event with the flags of
    what is held, itself included), the key down and up with every flag, then the modifiers up in
    reverse order (each without its own flag). A modifier pressed alone carries its own flag down."""
    events: list[dict[str, object]] = []
    held = 0
    for name in chord.modifiers:
        held |= MODIFIER_BITS[name]
        events.append(key_event(MODIFIERS[name], "rawKeyDown", held))
    own = next((MODIFIER_BITS[name] for name, key in MODIFIERS.items() if key == chord.key), 0)
    events.append(key_event(chord.key, down_type(chord.key), held | own))
    events.append(key_event(chord.key, "keyUp", held))
    for name in reversed(chord.modifiers):
        held &= ~MODIFIER_BITS[name]
        events.append(key_event(MODIFIERS[name], "keyUp", held))
    return events
