"""The grammar of what a person presses and chooses: `press:` (keys and chords, checked when the flow
is read), `type` with `clear:`, `select:` and `dialogs:` — their forms, errors (with a "did you
mean"), canonical spelling, labels and recording summaries; the key vocabulary they share."""

from __future__ import annotations

from typing import Any

import pytest

from argent.flows.model import DialogsStep, Flow, PressStep, Selector, SelectStep, TypeStep
from argent.flows.names import step_target_label
from argent.flows.parse import parse_flow
from argent.flows.write import flow_to_yaml, summarize_step
from argent.limits import MAX_PRESS_TIMES
from argent.utils.keys import SUPPORTED_KEYS, Key, KeyNameError, char_key, named_key, parse_chord
from tests.unit.test_parse import one, step_detail

SUPPORTED = f". Supported: {SUPPORTED_KEYS}."


def written(step: Any) -> str:
    return flow_to_yaml(Flow(steps=(step,)))


# --------------------------------------------------------------------------------------------
# The key vocabulary


@pytest.mark.parametrize(
    ("spelled", "name", "modifiers", "key"),
    [
        ("Enter", "Enter", (), Key("Enter", "Enter", 13, "\r")),
        ("return", "Enter", (), Key("Enter", "Enter", 13, "\r")),
        ("shift+enter", "Shift+Enter", ("Shift",), Key("Enter", "Enter", 13, "\r")),
        ("Control+S", "Control+S", ("Control",), Key("s", "KeyS", 83)),
        ("ctrl+s", "Control+S", ("Control",), Key("s", "KeyS", 83)),
        ("Control+Shift+s", "Control+Shift+S", ("Control", "Shift"), Key("S", "KeyS", 83)),
        (
            "CONTROL+SHIFT+ARROWLEFT",
            "Control+Shift+ArrowLeft",
            ("Control", "Shift"),
            Key("ArrowLeft", "ArrowLeft", 37),
        ),
        ("Escape", "Escape", (), Key("Escape", "Escape", 27)),
        ("F2", "F2", (), Key("F2", "F2", 113)),
        ("f24", "F24", (), Key("F24", "F24", 135)),
        ("Meta+A", "Meta+A", ("Meta",), Key("a", "KeyA", 65)),
        ("cmd+a", "Meta+A", ("Meta",), Key("a", "KeyA", 65)),
        ("Alt+ArrowDown", "Alt+ArrowDown", ("Alt",), Key("ArrowDown", "ArrowDown", 40)),
        ("Shift+1", "Shift+1", ("Shift",), Key("!", "Digit1", 49, "!")),
        ("Shift+a", "Shift+A", ("Shift",), Key("A", "KeyA", 65, "A")),
        ("a", "a", (), Key("a", "KeyA", 65, "a")),
        ("A", "A", (), Key("A", "KeyA", 65, "A")),
        ("?", "?", (), Key("?", "Slash", 191, "?")),
        ("é", "é", (), Key("é", "", 0, "é")),
        ("+", "+", (), Key("+", "Equal", 187, "+")),
        ("Control++", "Control++", ("Control",), Key("+", "Equal", 187)),
        ("Space", "Space", (), Key(" ", "Space", 32, " ")),
        ("Control+Space", "Control+Space", ("Control",), Key(" ", "Space", 32)),
        ("arrow-up", "ArrowUp", (), Key("ArrowUp", "ArrowUp", 38)),
        ("Shift", "Shift", (), Key("Shift", "ShiftLeft", 16, location=1)),
        ("\n", "Enter", (), Key("Enter", "Enter", 13, "\r")),
        ("Shift+\t", "Shift+Tab", ("Shift",), Key("Tab", "Tab", 9)),
    ],
)
def test_chords_are_read_as_the_page_sees_them(
    spelled: str, name: str, modifiers: tuple[str, ...], key: Key
) -> None:
    chord = parse_chord(spelled)
    assert (chord.name, chord.modifiers, chord.key) == (name, modifiers, key)


@pytest.mark.parametrize(
    ("spelled", "message"),
    [
        ("hyper", 'Unknown key "hyper"'),
        ("Control+Foo", 'Unknown key "Foo" in "Control+Foo"'),
        (
            "A+Shift",
            '"A" in "A+Shift" is not a modifier — the modifiers (Shift, Control, Alt, Meta) come first, the key last',
        ),
        ("Shift+Shift+A", '"Shift" in "Shift+Shift+A" is held twice'),
        ("Shift+shift", '"shift" in "Shift+shift" is held twice'),
        ("Control+", '"Control+" has no key after its last +'),
        ("Control++a", '"Control++a" has an empty part — join keys with a single +'),
        ("", '"" is not a key'),
        ("\x01", 'Unknown key "\x01"'),
    ],
)
def test_a_key_that_cannot_be_pressed_is_named_with_the_keys_there_are(spelled: str, message: str) -> None:
    with pytest.raises(KeyNameError) as info:
        parse_chord(spelled)
    assert str(info.value) == message + SUPPORTED


def test_the_names_of_the_keyboard_tool_stay_and_typing_maps_each_character() -> None:
    for old in (
        "enter",
        "tab",
        "escape",
        "esc",
        "backspace",
        "BackSpace",
        "delete",
        "space",
        "arrowup",
        "up",
        "home",
        "pageup",
        "f12",
    ):
        assert named_key(old) is not None, old
    assert named_key("hyper") is None
    assert char_key("\n") == named_key("enter")
    assert char_key("\t") == named_key("tab")
    assert char_key("ab") is None and char_key("\x00") is None
    assert char_key("!") == Key("!", "Digit1", 49, "!")


# --------------------------------------------------------------------------------------------
# press:


def test_press_forms() -> None:
    assert one("press: shift+enter") == PressStep(keys="Shift+Enter")
    assert one("press: { keys: Tab, times: 3 }") == PressStep(keys="Tab", times=3)
    assert one("press: { keys: Tab, times: 1 }") == PressStep(keys="Tab")
    assert one("press: '+'") == PressStep(keys="+")
    step = one("press: { keys: control+shift+arrowleft, times: 2 }")
    assert written(step) == "steps:\n  - press:\n      keys: Control+Shift+ArrowLeft\n      times: 2\n"
    assert step_target_label(step) == "Control+Shift+ArrowLeft ×2"
    assert summarize_step(3, step) == '3. press: "Control+Shift+ArrowLeft" ×2'
    assert written(PressStep(keys="Escape")) == "steps:\n  - press: Escape\n"
    assert parse_flow(written(PressStep(keys="Control++"))).steps == (PressStep(keys="Control++", line=2),)


def test_press_errors() -> None:
    assert step_detail("press: Entr") == 'press: Unknown key "Entr" (did you mean "Enter"?)' + SUPPORTED
    assert step_detail("press: Control+Escpae") == (
        'press: Unknown key "Escpae" in "Control+Escpae" (did you mean "Escape"?)' + SUPPORTED
    )
    assert step_detail("press: { keys: shift+tabb }") == (
        'press.keys: Unknown key "tabb" in "shift+tabb" (did you mean "Tab"?)' + SUPPORTED
    )
    assert step_detail("press: 1") == 'press takes a key name as text — quote a digit key: press: "1"'
    assert step_detail("press: [a]") == (
        "press needs a key or a chord — e.g. press: Shift+Enter, or press: { keys: Tab, times: 3 }"
    )
    assert step_detail("press: { key: Tab }") == (
        "press has unknown key `key` (did you mean `keys`?) — allowed keys: keys, times"
    )
    assert step_detail("press: { times: 2 }") == (
        "press needs `keys` — e.g. press: Shift+Enter, or press: { keys: Tab, times: 3 }"
    )
    for times in ("0", "1.5", "'3'", str(MAX_PRESS_TIMES + 1)):
        assert step_detail(f"press: {{ keys: Tab, times: {times} }}") == (
            f"press.times must be an integer between 1 and {MAX_PRESS_TIMES}"
        )


# --------------------------------------------------------------------------------------------
# type: clear


def test_type_clear_forms_and_the_submit_default() -> None:
    into = Selector(identifier="name")
    assert one("type: { into: { id: name }, text: x, clear: true }") == TypeStep(into, "x", clear=True)
    # A step that only clears submits nothing unless it says so.
    assert one("type: { into: { id: name }, clear: true }") == TypeStep(into, "", submit=False, clear=True)
    assert one("type: { into: { id: name }, clear: true, submit: true }") == TypeStep(into, "", clear=True)
    assert written(TypeStep(into, "", submit=False, clear=True)) == (
        "steps:\n  - type:\n      into:\n        id: name\n      clear: true\n"
    )
    assert written(TypeStep(into, "x", submit=False, clear=True)) == (
        "steps:\n  - type:\n      into:\n        id: name\n      text: x\n      clear: true\n      submit: false\n"
    )
    assert summarize_step(1, TypeStep(into, "x", clear=True)) == '1. type: {"id":"name"} ← (cleared) "x"'
    assert (
        summarize_step(1, TypeStep(into, "", submit=False, clear=True))
        == '1. type: {"id":"name"} ← (cleared)'
    )
    for step in (TypeStep(into, "", clear=True), TypeStep(into, "x", submit=False, clear=True)):
        assert parse_flow(written(step)).steps[0] == step


def test_type_clear_errors() -> None:
    assert step_detail("type: { into: Name, clear: 'yes' }") == "type.clear must be a boolean"
    assert step_detail("type: { into: Name, clear: false }") == "type needs a non-empty text"
    assert step_detail("type: { into: Name, text: x, claer: true }") == (
        "type has unknown key `claer` (did you mean `clear`?) — allowed keys: into, text, submit, clear"
    )


# --------------------------------------------------------------------------------------------
# select:


def test_select_forms() -> None:
    lang = Selector(identifier="lang")
    assert one("select: { in: { id: lang }, option: Julia }") == SelectStep(lang, ("Julia",))
    assert one("select: { in: { id: lang }, value: 3 }") == SelectStep(lang, ("3",), by="value")
    assert one("select: { in: { id: lang }, options: [A, B] }") == SelectStep(lang, ("A", "B"), many=True)
    assert one("select: { in: { id: lang }, values: [a] }") == SelectStep(lang, ("a",), by="value", many=True)
    for step, label, summary in (
        (SelectStep(lang, ("Julia",)), '"Julia" in id=lang', 'select: {"id":"lang"} ← "Julia"'),
        (
            SelectStep(lang, ("jl",), by="value"),
            'value "jl" in id=lang',
            'select: {"id":"lang"} ← value "jl"',
        ),
        (SelectStep(lang, ("A", "B"), many=True), '"A", "B" in id=lang', 'select: {"id":"lang"} ← ["A","B"]'),
    ):
        assert step_target_label(step) == label
        assert summarize_step(1, step) == f"1. {summary}"
        assert parse_flow(written(step)).steps[0] == step
    assert written(SelectStep(Selector(text="Language", loose=True), ("a", "b"), by="value", many=True)) == (
        "steps:\n  - select:\n      in: Language\n      values:\n        - a\n        - b\n"
    )


def test_select_errors() -> None:
    example = "e.g. select: { in: { id: language }, option: Julia }"
    assert step_detail("select: Julia") == f"select needs {{ in, option }} — {example}"
    assert step_detail("select: { in: { id: lang } }") == (
        f"select needs one of `option`, `value`, `options`, `values` — {example}"
    )
    assert step_detail("select: { in: { id: lang }, option: a, value: b }") == (
        "select takes one of `option`, `value`, `options`, `values`, found `option`, `value`"
    )
    assert step_detail("select: { option: a }") == f"select needs `in`: the <select> to choose in — {example}"
    assert step_detail("select: { in: { id: lang }, optoin: a }") == (
        "select has unknown key `optoin` (did you mean `option`?) — allowed keys: in, option, value, options, values"
    )
    assert (
        step_detail("select: { in: { id: lang }, option: [a] }") == f"select.option must be text — {example}"
    )
    assert step_detail("select: { in: { id: lang }, options: a }") == (
        "select.options must be a list of text — e.g. select: { in: { id: tags }, options: [a, b] }"
    )
    assert step_detail("select: { in: { id: lang }, values: [] }") == "select.values needs at least one entry"
    assert step_detail("select: { in: { idd: lang }, option: a }").startswith(
        "select.in: selector has unknown key `idd` (did you mean `id`?)"
    )


# --------------------------------------------------------------------------------------------
# dialogs:


def test_dialogs_forms() -> None:
    assert one("dialogs: accept") == DialogsStep(accept=True)
    assert one("dialogs: dismiss") == DialogsStep(accept=False)
    assert one("dialogs: { accept: false }") == DialogsStep(accept=False)
    assert one('dialogs: { accept: true, text: "Bob" }') == DialogsStep(accept=True, text="Bob")
    for step, label in (
        (DialogsStep(accept=True), "accept"),
        (DialogsStep(accept=False), "dismiss"),
        (DialogsStep(accept=True, text=""), 'accept with ""'),
    ):
        assert step_target_label(step) == label
        assert summarize_step(2, step) == f"2. dialogs: {label}"
        assert parse_flow(written(step)).steps[0] == step
    assert written(DialogsStep(accept=False)) == "steps:\n  - dialogs: dismiss\n"


def test_dialogs_errors() -> None:
    example = 'e.g. dialogs: accept, dialogs: dismiss, or dialogs: { accept: true, text: "Bob" }'
    assert (
        step_detail("dialogs: acept")
        == f"dialogs must be accept or dismiss (did you mean `accept`?) — {example}"
    )
    assert step_detail("dialogs: never") == f"dialogs must be accept or dismiss — {example}"
    assert step_detail("dialogs: true") == f"dialogs needs an answer — {example}"
    assert step_detail("dialogs: { text: x }") == f"dialogs needs `accept` (true or false) — {example}"
    assert step_detail("dialogs: { accept: yes }") == "dialogs.accept must be a boolean"
    assert step_detail("dialogs: { accept: false, text: x }") == (
        "dialogs.text is what an accepted prompt gets — it needs accept: true"
    )
    assert step_detail("dialogs: { accept: true, text: 3 }") == (
        'dialogs.text must be text — the answer a prompt gets, e.g. text: "Bob"'
    )
    assert step_detail("dialogs: { accept: true, txet: x }") == (
        "dialogs has unknown key `txet` (did you mean `text`?) — allowed keys: accept, text"
    )
