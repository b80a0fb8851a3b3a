"""The runner's side of `press:`, `type` (focus first, `clear:`), `select:` and `dialogs:`, against
in-test devices: one without the optional capabilities (every backend has the ``Device`` verbs),
and one with them whose page is scripted — what the runner asks, in which order, and how the
answers become a step's line. Timings scaled down as in ``test_directives``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from attrs import define, field

from argent.devices.base import (
    Choice,
    DialogAnswer,
    DialogSeen,
    Focused,
    FormControls,
    NativeDialogs,
)
from argent.flows.model import PressStep, Selector, SelectStep, TypeStep
from argent.flows.parse import parse_flow
from argent.runner.directives import DeviceDirectives
from argent.runner.engine import run_flow
from argent.runner.files import DiskFlowFiles
from tests.unit.test_directives import EMAIL, FAST, FakeDevice, NoTools, make_ctx, node, page


@define(slots=False)
class FormDevice(FakeDevice):
    """A device with form controls and native dialogs: ``focus`` is what ``focus_at`` answers,
    ``choice`` what ``choose`` answers; ``dialogs`` the dialogs the next input opens."""

    focus: Focused = "focused"
    selectable: bool = True
    choice: Choice = field(factory=Choice)
    opens: list[tuple[str, str]] = field(factory=list)
    answers: list[DialogAnswer | None] = field(factory=lambda: [None])
    seen: list[DialogSeen] = field(factory=list)

    def _record(self, *call: Any) -> None:
        super()._record(*call)
        for kind, message in self.opens:
            answer = self.answers[-1]
            accept = kind == "alert" if answer is None else answer.accept
            text = answer.text if answer is not None and accept and kind == "prompt" else None
            self.seen.append(DialogSeen(len(self.seen) + 1, kind, message, accept, text))
        self.opens = []

    async def focus_at(self, x: float, y: float) -> Focused:
        self._record("focus", round(x, 4), round(y, 4))
        return self.focus

    async def select_all(self) -> bool:
        self._record("select-all")
        return self.selectable

    async def choose(self, x: float, y: float, choices: tuple[str, ...], by_value: bool) -> Choice:
        self._record("choose", choices, by_value)
        return self.choice

    def dialog_mark(self) -> int:
        return len(self.seen)

    def dialogs_since(self, mark: int) -> list[DialogSeen]:
        return self.seen[mark:]

    def answer_dialogs(self, answer: DialogAnswer | None) -> Callable[[], None]:
        self.answers.append(answer)

        def undo() -> None:
            self.answers.remove(answer)

        return undo


def test_the_double_has_the_optional_capabilities_and_the_plain_one_none() -> None:
    assert isinstance(FormDevice(), FormControls) and isinstance(FormDevice(), NativeDialogs)
    assert not isinstance(FakeDevice(), FormControls) and not isinstance(FakeDevice(), NativeDialogs)


def dd() -> DeviceDirectives:
    return DeviceDirectives(timings=FAST)


# --------------------------------------------------------------------------------------------
# press


async def test_press_sends_the_chord_times_over_to_a_settled_screen(tmp_path: Path) -> None:
    dev = FakeDevice(view=lambda: page(EMAIL))
    out = await dd().execute(PressStep(keys="Tab", times=3), dev, make_ctx(tmp_path, dev))
    assert out.status == "pass" and out.warning is None
    assert dev.calls == [("key", "Tab")] * 3
    assert dev.reads >= 1  # settled (read) before the first key


# --------------------------------------------------------------------------------------------
# type


async def test_type_focuses_without_a_tap_when_a_field_takes_the_focus(tmp_path: Path) -> None:
    for focus in ("focused", "kept"):
        dev = FormDevice(view=lambda: page(EMAIL), focus=focus)
        out = await dd().execute(TypeStep(Selector(identifier="email"), "bob"), dev, make_ctx(tmp_path, dev))
        assert out.status == "pass"
        assert dev.calls == [("focus", 0.3, 0.15), ("type", "bob"), ("key", "enter")]


async def test_type_taps_what_takes_no_focus(tmp_path: Path) -> None:
    dev = FormDevice(view=lambda: page(EMAIL), focus="none")
    out = await dd().execute(
        TypeStep(Selector(identifier="email"), "bob", submit=False), dev, make_ctx(tmp_path, dev)
    )
    assert out.status == "pass"
    assert dev.calls == [("focus", 0.3, 0.15), ("tap", 0.3, 0.15, 1), ("type", "bob")]


async def test_clear_selects_the_text_then_types_over_it_or_deletes_it(tmp_path: Path) -> None:
    dev = FormDevice(view=lambda: page(EMAIL))
    step = TypeStep(Selector(identifier="email"), "new", submit=False, clear=True)
    assert (await dd().execute(step, dev, make_ctx(tmp_path, dev))).status == "pass"
    assert [c[0] for c in dev.calls] == ["focus", "select-all", "type"]
    dev = FormDevice(view=lambda: page(EMAIL))
    step = TypeStep(Selector(identifier="email"), "", submit=False, clear=True)
    assert (await dd().execute(step, dev, make_ctx(tmp_path, dev))).status == "pass"
    assert dev.calls[1:] == [("select-all",), ("key", "Backspace")]


async def test_clear_without_a_field_fails_before_anything_is_typed(tmp_path: Path) -> None:
    dev = FormDevice(view=lambda: page(EMAIL), selectable=False)
    step = TypeStep(Selector(identifier="email"), "new", clear=True)
    out = await dd().execute(step, dev, make_ctx(tmp_path, dev))
    assert (out.status, out.reason) == (
        "fail",
        'clear: the focus is on no text field after focusing id="email" — there is nothing to clear; name the '
        "field itself in `into`",
    )
    assert [c[0] for c in dev.calls] == ["focus", "select-all"]


async def test_clear_on_a_device_without_form_controls_is_a_select_all_chord(tmp_path: Path) -> None:
    dev = FakeDevice(view=lambda: page(EMAIL))
    step = TypeStep(Selector(identifier="email"), "", submit=False, clear=True)
    assert (await dd().execute(step, dev, make_ctx(tmp_path, dev))).status == "pass"
    assert [c for c in dev.calls if c[0] != "tap"] == [("key", "Control+A"), ("key", "Backspace")]


# --------------------------------------------------------------------------------------------
# select


LANG = node("select", 0.1, 0.5, 0.4, 0.1, identifier="lang", clickable=True)


async def test_select_asks_the_device_and_reports_what_stood_in_the_way(tmp_path: Path) -> None:
    dev = FormDevice(view=lambda: page(LANG))
    step = SelectStep(Selector(identifier="lang"), ("a", "b"), by="value", many=True)
    assert (await dd().execute(step, dev, make_ctx(tmp_path, dev))).status == "pass"
    assert dev.calls == [("choose", ("a", "b"), True)]
    for choice, reason in (
        (Choice("missing", wanted="Rust"), 'no option "Rust" in the select id="lang" — it has no options'),
        (
            Choice("missing", wanted="Rust", options=("A", "B"), more=3),
            'no option "Rust" in the select id="lang" — its options: "A", "B" (+3 more)',
        ),
        (Choice("disabled"), 'the select id="lang" is disabled — a person cannot choose in it'),
        (
            Choice("not-select"),
            'select chooses in a native <select>, and id="lang" is no element — for a list '
            "the page draws itself, tap it open and tap the option",
        ),
    ):
        dev = FormDevice(view=lambda: page(LANG), choice=choice)
        out = await dd().execute(
            SelectStep(Selector(identifier="lang"), ("Rust",)), dev, make_ctx(tmp_path, dev)
        )
        assert (out.status, out.reason) == ("fail", reason)


async def test_select_on_a_device_without_form_controls_fails_saying_so(tmp_path: Path) -> None:
    dev = FakeDevice(view=lambda: page(LANG))
    out = await dd().execute(SelectStep(Selector(identifier="lang"), ("R",)), dev, make_ctx(tmp_path, dev))
    assert (out.status, out.reason) == (
        "fail",
        "select is unsupported on chromium — this device has no native <select>",
    )
    assert dev.calls == []


# --------------------------------------------------------------------------------------------
# dialogs


async def test_a_dialog_is_named_in_the_line_of_the_step_that_opened_it(tmp_path: Path) -> None:
    save = node("button", 0.1, 0.2, 0.2, 0.1, label="Save", clickable=True)
    dev = FormDevice(view=lambda: page(save), opens=[("confirm", "Sure?"), ("alert", "")])
    out = await dd().execute(parse_flow("steps:\n  - tap: Save\n").steps[0], dev, make_ctx(tmp_path, dev))
    assert (out.status, out.reason) == ("pass", 'dialog confirm "Sure?" dismissed; dialog alert accepted')


async def test_dialogs_holds_from_its_step_to_the_end_of_the_run_fragments_included(tmp_path: Path) -> None:
    save = node("button", 0.1, 0.2, 0.2, 0.1, label="Save", clickable=True)
    dev = FormDevice(view=lambda: page(save))
    flows = tmp_path / ".argent" / "flows"
    flows.mkdir(parents=True)
    (flows / "frag.yaml").write_text("steps:\n  - dialogs: dismiss\n  - tap: Save\n")
    text = 'steps:\n  - tap: Save\n  - dialogs: { accept: true, text: "Bob" }\n  - tap: Save\n  - run: frag\n  - tap: Save\n'
    (flows / "main.yaml").write_text(text)
    files = DiskFlowFiles()
    seen: list[list[DialogAnswer | None]] = []
    dev.on_input = lambda call: seen.append(list(dev.answers))
    res = await run_flow(
        parse_flow(text),
        await files.locate(str(flows / "main.yaml")),
        "main",
        files=files,
        tools=NoTools(),
        directives=dd(),
        device=dev,
        platform="chromium",
    )
    assert [(s.kind, s.status) for s in res.steps] == [
        ("tap", "pass"),
        ("dialogs", "pass"),
        ("tap", "pass"),
        ("run", "pass"),
        ("dialogs", "pass"),
        ("tap", "pass"),
        ("tap", "pass"),
    ]
    bob, dismiss = DialogAnswer(True, "Bob"), DialogAnswer(False)
    # The answer each tap found set on the device: none before `dialogs:`, then each in turn (the
    # fragment's holds on after it, in the same run).
    assert seen == [[None], [None, bob], [None, bob, dismiss], [None, bob, dismiss]]
    # The run is over: every answer it set is undone.
    assert dev.answers == [None]
