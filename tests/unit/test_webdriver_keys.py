"""The keys as W3C WebDriver key actions, the one table Firefox (BiDi) and WebKit (classic) share:
a named key is its code point, a chord the modifiers down in turn and up in reverse, typed text key
by key, and a key WebDriver has no value for refused in the asking engine's name."""

from __future__ import annotations

from typing import Any

import pytest

from argent.devices.web.webdriver_keys import (
    CODE_POINTS,
    UnpressableKey,
    chord_actions,
    key_value,
    keyboard,
    text_actions,
)
from argent.utils.keys import KEY_NAMES, Key, named_key, parse_chord

ENTER, SHIFT, CONTROL, TAB = "\ue007", "\ue008", "\ue009", "\ue004"


def named(name: str) -> Key:
    key = named_key(name)
    assert key is not None, name
    return key


def down(value: str) -> dict[str, Any]:
    return {"type": "keyDown", "value": value}


def up(value: str) -> dict[str, Any]:
    return {"type": "keyUp", "value": value}


def test_enter_is_its_code_point_down_and_up() -> None:
    assert chord_actions(parse_chord("Enter")) == [down(ENTER), up(ENTER)]


def test_shift_enter_holds_shift_around_enter() -> None:
    assert chord_actions(parse_chord("Shift+Enter")) == [down(SHIFT), down(ENTER), up(ENTER), up(SHIFT)]


def test_control_s_presses_the_character() -> None:
    assert chord_actions(parse_chord("Control+S")) == [down(CONTROL), down("s"), up("s"), up(CONTROL)]


def test_modifiers_go_down_in_order_and_up_in_reverse() -> None:
    actions = chord_actions(parse_chord("Control+Shift+ArrowLeft"))
    assert actions == [down(CONTROL), down(SHIFT), down("\ue012"), up("\ue012"), up(SHIFT), up(CONTROL)]


def test_a_modifier_alone_is_the_left_one() -> None:
    assert chord_actions(parse_chord("Meta")) == [down("\ue03d"), up("\ue03d")]


def test_space_types_its_character() -> None:
    assert key_value(named("Space")) == " "
    assert chord_actions(parse_chord("Space")) == [down(" "), up(" ")]


def test_typed_text_is_key_by_key_newline_enter_and_tab_tab() -> None:
    assert text_actions("a b\nc\td\r") == [
        *(down("a"), up("a")),
        *(down(" "), up(" ")),
        *(down("b"), up("b")),
        *(down(ENTER), up(ENTER)),
        *(down("c"), up("c")),
        *(down(TAB), up(TAB)),
        *(down("d"), up("d")),
        *(down(ENTER), up(ENTER)),
    ]
    assert text_actions("") == []


def test_typed_text_is_one_key_per_code_point() -> None:
    assert text_actions("é😀") == [down("é"), up("é"), down("😀"), up("😀")]


@pytest.mark.parametrize("chord", ["F13", "Control+F24", "ContextMenu"])
def test_a_key_webdriver_cannot_spell_is_refused_naming_the_engine(chord: str) -> None:
    with pytest.raises(UnpressableKey) as caught:
        chord_actions(parse_chord(chord))
    key = chord.rsplit("+", 1)[-1]
    assert caught.value.key == key
    assert caught.value.message("WebKit (webkit-1)") == (
        f'WebKit (webkit-1) cannot press "{key}": WebDriver has no key value for it.'
    )
    assert isinstance(caught.value, ValueError)


def test_every_other_key_name_has_a_value() -> None:
    unpressable = {"ContextMenu", *(f"F{n}" for n in range(13, 25))}
    for name in KEY_NAMES:
        if name not in unpressable:
            assert key_value(named(name)), name
    assert set(CODE_POINTS.values()) >= {ENTER, SHIFT, CONTROL, TAB}


def test_the_keyboard_source() -> None:
    assert keyboard([down("a")]) == {"type": "key", "id": "argent-keyboard", "actions": [down("a")]}
