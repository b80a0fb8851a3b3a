"""The writer: canonical spellings, round trips, the recorder's append and the summary lines."""

from __future__ import annotations

from typing import Any

import pytest

from argent.errors import FlowError, FlowParseError
from argent.flows.model import (
    AssertStep,
    AwaitStep,
    ChromiumApp,
    Condition,
    EchoStep,
    Flow,
    IdleStep,
    LaunchStep,
    LongPressStep,
    PinchStep,
    PlatformGuard,
    Point,
    RotateStep,
    RunStep,
    ScriptStep,
    ScrollToStep,
    Selector,
    SnapshotStep,
    Step,
    TapStep,
    ToolStep,
    TypeStep,
    WaitStep,
    WhenStep,
)
from argent.flows.parse import parse_flow
from argent.flows.write import append_step, flow_to_yaml, step_to_data, summarize_step

LOOSE_SAVE = Selector(text="Save", loose=True)


@pytest.mark.parametrize(
    ("step", "data"),
    [
        (EchoStep("hi"), {"echo": "hi"}),
        (LaunchStep(app="com.acme"), {"launch": "com.acme"}),
        (
            LaunchStep(apps={"ios": "a", "android": "b"}, chromium=ChromiumApp(path="./app")),
            {"launch": {"ios": "a", "android": "b", "chromium": "./app"}},
        ),
        (
            LaunchStep(chromium=ChromiumApp(path="./app", args=("--x",))),
            {"launch": {"chromium": {"path": "./app", "args": ["--x"]}}},
        ),
        (RunStep(target="login.yaml"), {"run": "login.yaml"}),
        (TapStep(target=LOOSE_SAVE), {"tap": "Save"}),
        (TapStep(target=Selector(text="Save")), {"tap": {"text": "Save"}}),
        (TapStep(target=Selector(identifier="go")), {"tap": {"id": "go"}}),
        (TapStep(target=LOOSE_SAVE, times=2), {"tap": {"on": "Save", "times": 2}}),
        (TapStep(target=Point(0.5, 1.0)), {"tap": {"x": 0.5, "y": 1}}),
        (LongPressStep(target=LOOSE_SAVE), {"long-press": "Save"}),
        (
            LongPressStep(target=LOOSE_SAVE, duration_ms=1200.0),
            {"long-press": {"on": "Save", "duration": 1200}},
        ),
        (
            TypeStep(into=Selector(identifier="email"), text="x"),
            {"type": {"into": {"id": "email"}, "text": "x"}},
        ),
        (
            TypeStep(into=LOOSE_SAVE, text="x", submit=False),
            {"type": {"into": "Save", "text": "x", "submit": False}},
        ),
        (
            AwaitStep(condition=Condition(kind="visible", selector=LOOSE_SAVE), timeout_ms=5000),
            {"await": {"visible": "Save", "timeout": 5000}},
        ),
        (IdleStep(), {"await": {"idle": True}}),
        (
            IdleStep(stable_for_ms=300, timeout_ms=2000),
            {"await": {"idle": True, "stableFor": 300, "timeout": 2000}},
        ),
        (
            AssertStep(
                condition=Condition(
                    kind="text", selector=Selector(identifier="n"), mode="equals", expected="3"
                )
            ),
            {"assert": {"text": {"in": {"id": "n"}, "equals": "3"}}},
        ),
        (WaitStep(ms=750.0), {"wait": 750}),
        (WaitStep(ms=1.5), {"wait": 1.5}),
        (ScrollToStep(target=LOOSE_SAVE), {"scroll-to": "Save"}),
        (
            ScrollToStep(target=LOOSE_SAVE, direction="up"),
            {"scroll-to": {"target": "Save", "direction": "up"}},
        ),
        (
            ScrollToStep(target=Selector(identifier="row")),
            {"scroll-to": {"target": {"id": "row"}, "direction": "down"}},
        ),
        (
            ScrollToStep(target=LOOSE_SAVE, within=Selector(identifier="list")),
            {"scroll-to": {"target": "Save", "direction": "down", "within": {"id": "list"}}},
        ),
        (PinchStep(scale=2, on=LOOSE_SAVE), {"pinch": {"on": "Save", "scale": 2}}),
        (PinchStep(scale=0.5), {"pinch": {"scale": 0.5}}),
        (RotateStep(by=-90, on=LOOSE_SAVE), {"rotate": {"on": "Save", "by": -90}}),
        (SnapshotStep(name="home"), {"snapshot": "home"}),
        (
            SnapshotStep(name="home", max_mismatch=1.5, crop_on=Selector(identifier="hdr")),
            {"snapshot": {"name": "home", "maxMismatch": 1.5, "cropOn": {"id": "hdr"}}},
        ),
        (ToolStep(tool="screenshot"), {"tool": "screenshot"}),
        (
            ToolStep(tool="tap", args={"x": 0.5}, delay_ms=500),
            {"tool": "tap", "args": {"x": 0.5}, "delayMs": 500},
        ),
        (ScriptStep(path="seed.py"), {"script": "seed.py"}),
        (
            ScriptStep(path="seed.py", args=("--fast",), timeout_ms=3000, short=False),
            {"script": {"path": "seed.py", "args": ["--fast"], "timeout": 3000}},
        ),
        (ScriptStep(path="seed.py", short=False), {"script": {"path": "seed.py"}}),
        (
            WhenStep(guard=PlatformGuard(platform="ios"), steps=(EchoStep("x"),)),
            {"when": {"platform": "ios"}, "steps": [{"echo": "x"}]},
        ),
        (
            TapStep(
                target=Selector(text_matches="^a", role="button", within=Selector(text="List", loose=True))
            ),
            {"tap": {"text": {"matches": "^a"}, "role": "button", "within": "List"}},
        ),
        (
            TapStep(target=Selector(any=True, after=Selector(identifier="hdr"))),
            {"tap": {"any": True, "after": {"id": "hdr"}}},
        ),
    ],
)
def test_canonical_spelling(step: Step, data: dict[str, Any]) -> None:
    assert step_to_data(step) == data
    # the spelling is also what the parser reads back
    assert parse_flow(flow_to_yaml(Flow(steps=(step,)))).steps == (step,)


def test_tap_times_one_is_written_as_a_plain_tap() -> None:
    assert step_to_data(TapStep(target=LOOSE_SAVE, times=1)) == {"tap": "Save"}


def test_flow_to_yaml_layout() -> None:
    flow = Flow(
        steps=(
            EchoStep("Opening settings"),
            TapStep(target=Selector(identifier="settings")),
            IdleStep(),
            WhenStep(guard=PlatformGuard(platform="ios"), steps=(WaitStep(ms=250),)),
        ),
        execution_prerequisite="Logged in",
    )
    assert flow_to_yaml(flow) == (
        "steps:\n"
        "  - echo: Opening settings\n"
        "  - tap:\n"
        "      id: settings\n"
        "  - await:\n"
        "      idle: true\n"
        "  - when:\n"
        "      platform: ios\n"
        "    steps:\n"
        "      - wait: 250\n"
        "executionPrerequisite: Logged in\n"
    )


def test_empty_flow_text() -> None:
    assert flow_to_yaml(Flow()) == "steps: []\n"
    assert flow_to_yaml(Flow(execution_prerequisite="On the home screen")) == (
        "steps: []\nexecutionPrerequisite: On the home screen\n"
    )


FREE_TEXTS = [
    "line one\nline two",
    "trailing newline\n",
    "\nleading newline",
    "blank\n\nlines",
    "whitespace-only line\n   \nafter",
    "  leading and trailing spaces  ",
    "tabs\tinside\t",
    "quotes ' and \" both",
    "yes",
    "null",
    "~",
    "123",
    "1_000",
    "-.5e3",
    "0x1F",
    ".inf",
    "true",
    "- dash",
    "key: value",
    "# not a comment",
    "&anchor",
    "*alias",
    "{ not: a map }",
    "[not, a, list]",
    "@at `tick`",
    "% percent",
    "unicode é ✓ 😀",
    "line\u2028separator",
    "next\x85line",
    "crlf\r\nline",
    "x" * 500,
    "{{secret:PASSWORD}}",
]


@pytest.mark.parametrize("text", FREE_TEXTS)
def test_free_text_round_trips_byte_exactly(text: str) -> None:
    flow = Flow(steps=(EchoStep(text), TypeStep(into=LOOSE_SAVE, text=text)), execution_prerequisite=text)
    written = flow_to_yaml(flow)
    again = parse_flow(written)
    assert again == flow
    assert again.steps[0].message == text  # type: ignore[union-attr]
    assert again.execution_prerequisite == text


def test_multi_line_text_is_double_quoted_never_a_block_scalar() -> None:
    text = "first\n\n  \nlast "
    written = flow_to_yaml(Flow(steps=(EchoStep(text),), execution_prerequisite=text))
    assert '- echo: "first\\n\\n  \\nlast "\n' in written
    assert 'executionPrerequisite: "first\\n\\n  \\nlast "\n' in written
    assert "|" not in written and ">" not in written


RICH_FLOW = """executionPrerequisite: "On the home screen,\\nlogged in"
steps:
  - echo: start
  - run: login
  - when: { visible: "What's new" }
    steps:
      - tap: { on: Close, times: 2 }
      - when: { platform: android }
        steps:
          - await: { idle: true, stableFor: 300 }
  - tool: gesture-swipe
    args: { fromX: 0.5, path: [1, 2.5, null], nested: { ok: true } }
    delayMs: 100
  - type: { into: { id: email, within: Form }, text: "a@b.c", submit: false }
  - assert: { text: { in: { id: total }, matches: '^\\d+$' } }
  - await: { hidden: { role: progressbar }, timeout: 2500 }
  - scroll-to: { target: Row, direction: up, within: { id: list } }
  - snapshot: { name: home, maxMismatch: "1.5", cropOn: Header }
  - script: { path: seed.py, args: [--fast] }
  - long-press: { on: { x: 0.25, y: 0.75 }, duration: 900 }
  - pinch: { on: Map, scale: 0.5 }
  - rotate: { by: 45 }
  - wait: "250"
"""


def test_parse_write_parse_is_stable() -> None:
    flow = parse_flow(RICH_FLOW)
    written = flow_to_yaml(flow)
    again = parse_flow(written)
    assert again == flow
    assert flow_to_yaml(again) == written


# --------------------------------------------------------------------------------------------
# serializer guards


@pytest.mark.parametrize(
    ("selector", "start"),
    [
        (Selector(text="a", text_matches="b"), "Cannot serialize flow selector without losing constraints: "),
        (Selector(text="\u200b"), "Cannot serialize flow selector without losing constraints: "),
        (Selector(text="\u200b", loose=True), "Cannot serialize flow selector without losing constraints: "),
        (Selector(any=True), "Cannot serialize flow selector without losing constraints: "),
        (
            Selector(any=True, text="x", within=Selector(identifier="l")),
            "Cannot serialize flow selector without losing constraints: ",
        ),
        (Selector(), "Cannot serialize flow selector without losing constraints: "),
        (Selector(identifier=""), "Cannot serialize flow selector without losing constraints: "),
        (
            Selector(text="Save", identifier="save", loose=True),
            "Cannot serialize loose flow selector without changing its meaning: ",
        ),
        (
            Selector(text="Save", loose=True, within=Selector(identifier="l")),
            "Cannot serialize loose flow selector without changing its meaning: ",
        ),
        (
            Selector(identifier="x", loose=True),
            "Cannot serialize loose flow selector without changing its meaning: ",
        ),
    ],
)
def test_serializer_guards(selector: Selector, start: str) -> None:
    with pytest.raises(FlowError) as info:
        step_to_data(TapStep(target=selector))
    assert info.value.message.startswith(start)
    assert info.value.error_code == "FLOW_FILE_INVALID"


def test_point_out_of_range_is_not_serializable() -> None:
    with pytest.raises(FlowError) as info:
        flow_to_yaml(Flow(steps=(TapStep(target=Point(1.5, 0.5)),)))
    assert info.value.message == "tap: coordinates are normalized 0–1 fractions of the screen, not pixels"


def test_launch_without_an_app_is_not_serializable() -> None:
    with pytest.raises(FlowError):
        step_to_data(LaunchStep())


# --------------------------------------------------------------------------------------------
# append_step


def test_append_keeps_comments_and_formatting() -> None:
    text = (
        "# Checkout flow — recorded by hand\n"
        "steps:   # the steps\n"
        "- echo: start  # first step\n"
        "- tap: {id: cart}   # flow style kept\n"
        "\n"
        "executionPrerequisite: 'logged in'  # who\n"
    )
    out = append_step(text, TapStep(target=Selector(identifier="buy"), times=2))
    assert out.startswith(
        "# Checkout flow — recorded by hand\nsteps:   # the steps\n- echo: start  # first step\n"
    )
    assert "- tap: {id: cart}   # flow style kept\n" in out
    assert "executionPrerequisite: 'logged in'  # who\n" in out
    assert "- tap:\n    on:\n      id: buy\n    times: 2\n" in out
    flow = parse_flow(out)
    assert flow.steps[-1] == TapStep(target=Selector(identifier="buy"), times=2)
    assert len(flow.steps) == 3
    assert flow.execution_prerequisite == "logged in"


def test_append_follows_the_files_indentation() -> None:
    text = "steps:\n  - echo: a\n  - tap:\n      id: x\n"
    out = append_step(
        text, AwaitStep(condition=Condition(kind="visible", selector=LOOSE_SAVE), timeout_ms=3000)
    )
    assert out == (
        "steps:\n  - echo: a\n  - tap:\n      id: x\n  - await:\n      visible: Save\n      timeout: 3000\n"
    )


def test_append_to_a_fresh_recording() -> None:
    out = append_step("steps: []\nexecutionPrerequisite: On the home screen\n", EchoStep("Step 1"))
    assert out == "steps:\n  - echo: Step 1\nexecutionPrerequisite: On the home screen\n"
    out = append_step(out, EchoStep("two\nlines"))
    assert parse_flow(out).steps == (EchoStep("Step 1"), EchoStep("two\nlines"))
    assert '- echo: "two\\nlines"\n' in out


@pytest.mark.parametrize("text", ["", "  \n\n"])
def test_append_to_an_empty_file(text: str) -> None:
    assert (
        append_step(text, TapStep(target=Point(0.5, 0.52)))
        == "steps:\n  - tap:\n      x: 0.5\n      y: 0.52\n"
    )


def test_append_keeps_windows_line_endings() -> None:
    out = append_step("steps:\r\n  - echo: a\r\n", EchoStep("b"))
    assert out == "steps:\r\n  - echo: a\r\n  - echo: b\r\n"


def test_append_refuses_a_broken_file() -> None:
    with pytest.raises(FlowParseError) as info:
        append_step("steps:\n  - bogus: x\n", EchoStep("b"))
    assert info.value.error_code == "FLOW_ENTRY_UNRECOGNIZED"
    with pytest.raises(FlowParseError):
        append_step("steps: ][", EchoStep("b"))


def test_append_refuses_a_leading_launch_under_a_prerequisite() -> None:
    with pytest.raises(FlowParseError) as info:
        append_step("steps: []\nexecutionPrerequisite: p\n", LaunchStep(app="com.acme.app"))
    assert info.value.error_code == "FLOW_E2E_HAS_PREREQUISITE"


# --------------------------------------------------------------------------------------------
# summaries (§4.5)


@pytest.mark.parametrize(
    ("step", "line"),
    [
        (EchoStep("Step 1"), "1. echo: Step 1"),
        (LaunchStep(app="com.acme.app"), "1. launch: com.acme.app"),
        (LaunchStep(apps={"ios": "a", "android": "b"}), '1. launch: {"ios":"a","android":"b"}'),
        (RunStep(target="login.yaml"), "1. run: login.yaml"),
        (TapStep(target=Selector(identifier="add-to-cart")), '1. tap: {"id":"add-to-cart"}'),
        (TapStep(target=Point(0.5, 0.52)), "1. tap: (0.5, 0.52)"),
        (TapStep(target=LOOSE_SAVE, times=2), '1. tap: "Save" ×2'),
        (
            LongPressStep(target=Selector(identifier="row"), duration_ms=1200),
            '1. long-press: {"id":"row"} for 1200ms',
        ),
        (LongPressStep(target=LOOSE_SAVE), '1. long-press: "Save" for 800ms'),
        (TypeStep(into=Selector(identifier="email"), text="a@b.c"), '1. type: {"id":"email"} ← "a@b.c"'),
        (AwaitStep(condition=Condition(kind="visible", selector=LOOSE_SAVE)), '1. await: visible "Save"'),
        (
            AssertStep(
                condition=Condition(
                    kind="text", selector=Selector(identifier="status"), mode="contains", expected="ok"
                )
            ),
            '1. assert: text {"id":"status"} contains "ok"',
        ),
        (
            AssertStep(
                condition=Condition(
                    kind="text", selector=Selector(identifier="status"), mode="equals", expected="Ready"
                )
            ),
            '1. assert: text {"id":"status"} == "Ready"',
        ),
        (
            AwaitStep(
                condition=Condition(
                    kind="text", selector=Selector(identifier="n"), mode="matches", expected="^\\d+$"
                )
            ),
            '1. await: text {"id":"n"} matches /^\\d+$/',
        ),
        (IdleStep(stable_for_ms=300), "1. await: screen idle"),
        (WaitStep(ms=500), "1. wait: 500ms"),
        (
            WhenStep(guard=PlatformGuard(platform="ios"), steps=(EchoStep("x"),)),
            "1. when: platform ios (1 step)",
        ),
        (
            WhenStep(
                guard=Condition(kind="visible", selector=LOOSE_SAVE), steps=(EchoStep("x"), EchoStep("y"))
            ),
            '1. when: visible "Save" (2 steps)',
        ),
        (ScrollToStep(target=LOOSE_SAVE), '1. scroll-to: "Save" (down)'),
        (PinchStep(scale=2, on=Selector(identifier="map")), '1. pinch: scale 2 on {"id":"map"}'),
        (PinchStep(scale=0.5), "1. pinch: scale 0.5"),
        (RotateStep(by=90), "1. rotate: by 90°"),
        (RotateStep(by=-45, on=LOOSE_SAVE), '1. rotate: by -45° on "Save"'),
        (SnapshotStep(name="home", max_mismatch=2), "1. snapshot: home"),
        (ScriptStep(path="seed.py"), "1. script: seed.py"),
        (
            ScriptStep(path="seed.py", args=("--fast",), timeout_ms=3000, short=False),
            '1. script: seed.py ["--fast"] (timeout 3000ms)',
        ),
        (
            ToolStep(tool="tap", args={"x": 0.5, "y": 0.3}, delay_ms=500),
            '1. tool: tap {"x":0.5,"y":0.3} (after 500ms)',
        ),
        (ToolStep(tool="screenshot"), "1. tool: screenshot {}"),
        (ToolStep(tool="t", args={}, delay_ms=0), "1. tool: t {}"),
        (ToolStep(tool="t", args={}, delay_ms=0.5), "1. tool: t {}"),
        (ToolStep(tool="t", args={}, delay_ms="soon"), "1. tool: t {}"),
        (ToolStep(tool="t", args={}, delay_ms="250"), "1. tool: t {} (after 250ms)"),
    ],
)
def test_summary_lines(step: Step, line: str) -> None:
    assert summarize_step(1, step) == line


def test_summary_numbers_steps() -> None:
    flow = parse_flow("steps:\n  - echo: a\n  - tap: Go\n  - wait: 5\n")
    assert [summarize_step(n, step) for n, step in enumerate(flow.steps, 1)] == [
        "1. echo: a",
        '2. tap: "Go"',
        "3. wait: 5ms",
    ]


def test_css_is_written_and_labelled_as_it_reads() -> None:
    step = TapStep(target=Selector(css="form .save", within=Selector(role="dialog")))
    assert step_to_data(step) == {"tap": {"css": "form .save", "within": {"role": "dialog"}}}
    assert summarize_step(1, step) == '1. tap: {"css":"form .save","within":{"role":"dialog"}}'
    assert parse_flow(flow_to_yaml(Flow(steps=(step,)))).steps == (step,)
    with pytest.raises(FlowError) as info:
        step_to_data(TapStep(target=Selector(css="")))
    assert info.value.message.endswith("— its css is empty")
    with pytest.raises(FlowError) as info:
        step_to_data(TapStep(target=Selector(any=True, css="b", within=Selector(identifier="l"))))
    assert info.value.message.endswith("— `any: true` takes no text/id/role/css and needs a scope")
