"""The flow grammar: every parser scenario of upstream-flows.md §6.1, with exact messages."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import regex

from argent.errors import FlowParseError
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
    TextMode,
    ToolStep,
    TypeStep,
    WaitStep,
    WhenStep,
)
from argent.flows.parse import did_you_mean, edit_distance, parse_flow
from argent.flows.write import flow_to_yaml

SELECTOR_KEYS = "text, id, identifier, role, css, any, within, after, next"


def one(step: str) -> Step:
    """Parse a one-step flow written as `steps:\\n  - {step}`."""
    flow = parse_flow(f"steps:\n  - {step}\n")
    assert len(flow.steps) == 1
    return flow.steps[0]


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def reject(step: str, detail: str, entry: Any) -> FlowParseError:
    """A one-step flow that must fail with exactly this detail and rendered entry."""
    with pytest.raises(FlowParseError) as info:
        parse_flow(f"steps:\n  - {step}\n")
    err = info.value
    assert err.message == f"Unrecognized flow entry ({detail}): {compact(entry)} (step 1, line 2)"
    assert err.error_code == "FLOW_ENTRY_UNRECOGNIZED"
    assert err.error_kind == "validation"
    assert (err.line, err.step) == (2, "1")
    return err


def detail_of(text: str) -> str:
    """The `(…)` detail of an entry-level error."""
    with pytest.raises(FlowParseError) as info:
        parse_flow(text)
    err = info.value
    assert err.error_code == "FLOW_ENTRY_UNRECOGNIZED", err.message
    match = re.fullmatch(
        r"Unrecognized flow entry \((.*)\): .* \(step [0-9.]+, line \d+\)", err.message, re.S
    )
    assert match, err.message
    return match.group(1)


def step_detail(step: str) -> str:
    return detail_of(f"steps:\n  - {step}\n")


def file_error(text: str) -> FlowParseError:
    with pytest.raises(FlowParseError) as info:
        parse_flow(text)
    assert info.value.error_code == "FLOW_FILE_INVALID"
    assert info.value.error_kind == "validation"
    return info.value


def roundtrip(flow: Flow) -> Flow:
    return parse_flow(flow_to_yaml(flow))


# --------------------------------------------------------------------------------------------
# §1.1 the file


def test_one_echo_step() -> None:
    flow = parse_flow("steps:\n  - echo: Hello")
    assert flow.steps == (EchoStep(message="Hello"),)
    assert flow.execution_prerequisite == ""
    assert flow.steps[0].line == 2


@pytest.mark.parametrize("text", ["", "   ", "\n\n", " \t\n  \r\n", "\ufeff\n"])
def test_empty_or_whitespace_is_an_empty_flow(text: str) -> None:
    assert parse_flow(text) == Flow(steps=(), execution_prerequisite="")


@pytest.mark.parametrize(
    "text",
    [
        "- echo: Hello",
        "steps: 5",
        "steps: {echo: hi}",
        "steps:",
        "{}",
        "name: x",
        "just a string",
        "42",
        "# only a comment",
    ],
)
def test_not_an_object_with_a_steps_array(text: str) -> None:
    assert file_error(text).message == "Invalid flow file: expected an object with a steps array"


def test_yaml_syntax_error_names_the_line() -> None:
    err = file_error("steps: ][")
    assert err.message.startswith("Invalid flow file: ")
    assert "line 1" in err.message
    assert err.line == 1


def test_yaml_syntax_error_on_a_later_line() -> None:
    err = file_error('steps:\n  - echo: hi\n  - echo: "unterminated\n')
    assert err.message.startswith("Invalid flow file: ")
    assert err.line is not None and err.line >= 3


def test_duplicate_keys_are_a_yaml_error() -> None:
    err = file_error("steps:\n  - echo: a\n    echo: b\n")
    assert err.message == (
        "Invalid flow file: duplicate key `echo` at line 3, column 5 — a key may appear only once in a mapping"
    )
    assert err.line == 3


def test_duplicate_top_level_key() -> None:
    err = file_error("steps: []\nsteps: []\n")
    assert "duplicate key `steps` at line 2" in err.message


def test_multi_document_stream_is_refused() -> None:
    err = file_error("steps: []\n---\nsteps: []\n")
    assert err.message.startswith("Invalid flow file: ")
    assert "line 2" in err.message


def test_unknown_top_level_key_with_hint() -> None:
    err = file_error("executionPrerequisit: x\nsteps: []\n")
    assert err.message == (
        "Invalid flow file: unknown key `executionPrerequisit` (did you mean `executionPrerequisite`?) — "
        "allowed top-level keys: executionPrerequisite, steps"
    )
    assert err.line == 1


def test_unknown_top_level_keys_plural_without_hint() -> None:
    err = file_error("steps: []\nname: x\nversion: 2\n")
    assert err.message == (
        "Invalid flow file: unknown keys `name`, `version` — allowed top-level keys: executionPrerequisite, steps"
    )
    assert err.line == 2


def test_prerequisite_defaults_to_empty_and_is_kept() -> None:
    assert parse_flow("steps: []").execution_prerequisite == ""
    flow = parse_flow("executionPrerequisite: Logged in as admin\nsteps:\n  - echo: hi\n")
    assert flow.execution_prerequisite == "Logged in as admin"
    assert parse_flow("executionPrerequisite:\nsteps: []").execution_prerequisite == ""


def test_yaml_12_keeps_yes_no_on_off_as_strings() -> None:
    flow = parse_flow("steps:\n  - echo: yes\n  - echo: no\n  - echo: on\n  - echo: off\n  - echo: Y\n")
    assert [step.message for step in flow.steps] == ["yes", "no", "on", "off", "Y"]  # type: ignore[union-attr]


# --------------------------------------------------------------------------------------------
# §1.1.5 / §1.2 step-level rules


def test_unrecognized_step_kind_renders_the_entry() -> None:
    reject("bogus: line", "unrecognized step kind", {"bogus": "line"})


def test_long_entry_is_truncated_to_200_chars() -> None:
    value = "v" * 5000 + "TAIL"
    with pytest.raises(FlowParseError) as info:
        parse_flow(f"steps:\n  - bogus: {value}\n")
    message = info.value.message
    full = compact({"bogus": value})
    expected = f"{full[:200]}…(+{len(full) - 200} chars)"
    assert message == f"Unrecognized flow entry (unrecognized step kind): {expected} (step 1, line 2)"
    assert "…(+" in message
    assert len(message) < 400
    assert "TAIL" not in message


@pytest.mark.parametrize(("step", "entry"), [("tap", "tap"), ("42", 42), ("~", None), ("[a, b]", ["a", "b"])])
def test_step_must_be_an_object(step: str, entry: Any) -> None:
    reject(step, "step must be an object", entry)


def test_step_must_be_an_object_inside_a_when_block() -> None:
    text = "steps:\n  - echo: a\n  - when: { platform: ios }\n    steps: [42]\n"
    with pytest.raises(FlowParseError) as info:
        parse_flow(text)
    err = info.value
    assert err.message == "Unrecognized flow entry (step must be an object): 42 (step 2.1, line 4)"
    assert (err.step, err.line) == ("2.1", 4)


def test_optional_is_not_supported() -> None:
    reject(
        "{ tap: Save, optional: true }",
        "optional is not supported — guard the step with a when: block instead "
        "(`when: { visible: <target> }` + `steps:`)",
        {"tap": "Save", "optional": True},
    )


def test_optional_is_checked_before_anything_else() -> None:
    assert step_detail("{ optional: true }").startswith("optional is not supported")
    assert step_detail("{ echo: a, tap: b, optional: true }").startswith("optional is not supported")


def test_two_directive_keys() -> None:
    reject(
        "{ echo: hi, tap: Save }",
        "a step takes exactly one directive key, found `echo`, `tap`",
        {"echo": "hi", "tap": "Save"},
    )


def test_directive_keys_are_listed_in_registry_order() -> None:
    detail = step_detail("{ snapshot: s, tap: Save, echo: hi }")
    assert detail == "a step takes exactly one directive key, found `echo`, `tap`, `snapshot`"


def test_script_counts_as_a_directive_key() -> None:
    assert step_detail("{ script: a.py, tool: t }") == (
        "a step takes exactly one directive key, found `tool`, `script`"
    )


def test_misspelled_step_kind_gets_a_hint() -> None:
    reject("snapshoot: home", "unrecognized step kind (did you mean `snapshot`?)", {"snapshoot": "home"})


def test_misspelled_script_gets_a_hint() -> None:
    assert step_detail("scritp: a.py") == "unrecognized step kind (did you mean `script`?)"


def test_idle_is_not_a_step_kind() -> None:
    reject(
        "idle: true",
        "idle is a condition, not a step kind — write it as `await: { idle: true }`",
        {"idle": True},
    )


def test_sibling_key_beside_a_directive() -> None:
    text = "steps:\n  - await: { visible: Done }\n    timeout: 5000\n"
    assert detail_of(text) == (
        "a `await` step has unknown key `timeout` — step options go inside the `await:` value, not beside it"
    )


def test_sibling_keys_plural() -> None:
    assert step_detail("{ tap: Save, times: 2, why: x }") == (
        "a `tap` step has unknown keys `times`, `why` — step options go inside the `tap:` value, not beside it"
    )


def test_tool_step_sibling_keys() -> None:
    assert step_detail("{ tool: tap, args: {}, delay: 5 }") == (
        "a `tool` step has unknown key `delay` (did you mean `delayMs`?) — a tool step takes only "
        "`tool`, `args`, `delayMs`"
    )


# --------------------------------------------------------------------------------------------
# line numbers


def test_every_step_gets_its_line() -> None:
    text = (
        "# header comment\n"
        "steps:\n"
        "  - echo: one\n"
        "\n"
        "  - tap: Save\n"
        "  - when: { platform: ios }\n"
        "    steps:\n"
        "      - wait: 5\n"
        "      - tool: t\n"
        "        args: { a: 1 }\n"
        "  - { snapshot: home }\n"
    )
    flow = parse_flow(text)
    assert [step.line for step in flow.steps] == [3, 5, 6, 11]
    when = flow.steps[2]
    assert isinstance(when, WhenStep)
    assert [child.line for child in when.steps] == [8, 9]


def test_line_numbers_count_leading_blank_lines() -> None:
    flow = parse_flow("\n\n\nsteps:\n  - echo: a\n")
    assert flow.steps[0].line == 5


def test_error_names_step_number_and_line() -> None:
    text = "steps:\n  - echo: a\n  - echo: b\n  - tap: { roel: x }\n"
    with pytest.raises(FlowParseError) as info:
        parse_flow(text)
    assert info.value.message.endswith(" (step 3, line 4)")
    assert (info.value.step, info.value.line) == ("3", 4)


def test_error_in_a_nested_when_child_names_the_dotted_path() -> None:
    text = (
        "steps:\n"
        "  - echo: a\n"
        "  - echo: b\n"
        "  - when: { visible: Banner }\n"
        "    steps:\n"
        "      - tap: Close\n"
        "      - when: { platform: ios }\n"
        "        steps:\n"
        "          - echo: x\n"
        "          - wait: soon\n"
    )
    with pytest.raises(FlowParseError) as info:
        parse_flow(text)
    err = info.value
    assert err.message == (
        "Unrecognized flow entry (wait needs a non-negative number of milliseconds (e.g. `wait: 500`)): "
        '{"wait":"soon"} (step 3.2.2, line 10)'
    )
    assert (err.step, err.line) == ("3.2.2", 10)


# --------------------------------------------------------------------------------------------
# echo / wait coercions


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("42", "42"),
        ("~", "null"),
        ("", "null"),
        ("true", "true"),
        ("1.0", "1"),
        ("1.50", "1.5"),
        ("0x1F", "31"),
        ("1e21", "1e+21"),
        ("1e-7", "1e-7"),
        ("0.000001", "0.000001"),
        (".inf", "Infinity"),
        ("-.inf", "-Infinity"),
        (".nan", "NaN"),
        ("'quoted 42'", "quoted 42"),
        ('"42"', "42"),
        ("[1, [2, 3], ~]", "1,2,3,"),
        ("{a: 1}", "[object Object]"),
        ("1_000", "1_000"),
        ("2001-12-14", "2001-12-14"),
    ],
)
def test_echo_coerces_like_javascript_string(value: str, message: str) -> None:
    assert one(f"echo: {value}") == EchoStep(message=message)


def test_wait_number() -> None:
    assert one("wait: 750") == WaitStep(ms=750)


@pytest.mark.parametrize(
    ("value", "ms"),
    [("'500'", 500), ("true", 1), ("~", 0), ("1.5", 1.5), ("' 20 '", 20), ("0", 0), ("'0x10'", 16)],
)
def test_wait_coerces_like_javascript_number(value: str, ms: float) -> None:
    assert one(f"wait: {value}") == WaitStep(ms=ms)


@pytest.mark.parametrize("value", ["soon", "-5", ".inf", ".nan", "{ms: 5}", "'5ms'", "1e400"])
def test_wait_rejects_non_numbers(value: str) -> None:
    detail = step_detail(f"wait: {value}")
    assert detail == "wait needs a non-negative number of milliseconds (e.g. `wait: 500`)"


# --------------------------------------------------------------------------------------------
# §1.4 gesture targets


def test_tap_bare_string_is_loose() -> None:
    assert one("tap: Settings") == TapStep(target=Selector(text="Settings", loose=True))


def test_tap_map_is_strict() -> None:
    assert one("tap: { text: Settings }") == TapStep(target=Selector(text="Settings"))


@pytest.mark.parametrize("key", ["id", "identifier"])
def test_id_and_identifier_both_set_identifier(key: str) -> None:
    step = one(f"tap: {{ {key}: submit-btn }}")
    assert step == TapStep(target=Selector(identifier="submit-btn"))
    assert "identifier" not in flow_to_yaml(Flow(steps=(step,)))
    assert "id: submit-btn" in flow_to_yaml(Flow(steps=(step,)))


def test_id_and_identifier_together() -> None:
    reject(
        "tap: { id: a, identifier: b }",
        "tap: selector takes `id` or `identifier` (its alias), not both",
        {"tap": {"id": "a", "identifier": "b"}},
    )


def test_regex_text_with_id_and_role() -> None:
    step = one("tap: { text: { matches: '^Order #\\d+$' }, id: order-row, role: button }")
    assert step == TapStep(
        target=Selector(text_matches=r"^Order #\d+$", identifier="order-row", role="button")
    )


def _engine_message(pattern: str) -> str:
    """The message of the engine text patterns are matched with (the ``regex`` package)."""
    try:
        regex.compile(pattern)
    except regex.error as exc:
        return str(exc)
    raise AssertionError("pattern compiled")


def test_invalid_regex_in_a_selector() -> None:
    assert step_detail("assert: { visible: { text: { matches: '(' } } }") == (
        "assert.visible: text `matches` is not a valid regular expression: " + _engine_message("(")
    )


def test_invalid_regex_in_a_text_condition() -> None:
    assert step_detail("assert: { text: { in: { id: total }, matches: '(' } }") == (
        "assert text `matches` is not a valid regular expression: " + _engine_message("(")
    )


def test_tap_selector_and_point() -> None:
    reject(
        "tap: { id: box, x: 0.5, y: 0.5 }",
        "tap takes a selector or x/y coordinates, not both",
        {"tap": {"id": "box", "x": 0.5, "y": 0.5}},
    )


@pytest.mark.parametrize("body", ["{ x: 0.5 }", '{ x: "0.5", y: 0.5 }', "{ x: true, y: 0.5 }", "{ y: 0.1 }"])
def test_tap_point_needs_numbers(body: str) -> None:
    assert step_detail(f"tap: {body}") == "tap: a coordinate target needs numeric x and y"


def test_tap_point_takes_only_x_and_y() -> None:
    assert step_detail("tap: { x: 0.5, y: 0.5, why: 1 }") == "tap: a coordinate target takes only { x, y }"


@pytest.mark.parametrize(
    "body", ["{ x: 1.5, y: 0.5 }", "{ x: 0.5, y: -0.1 }", "{ x: 320, y: 640 }", "{ x: .nan, y: 0 }"]
)
def test_tap_point_is_normalized(body: str) -> None:
    assert (
        step_detail(f"tap: {body}")
        == "tap: coordinates are normalized 0–1 fractions of the screen, not pixels"
    )


def test_tap_point_parses() -> None:
    assert one("tap: { x: 0.5, y: 0.25 }") == TapStep(target=Point(0.5, 0.25))
    assert one("tap: { x: 0, y: 1 }") == TapStep(target=Point(0, 1))


def test_tap_options_form_round_trips() -> None:
    step = one("tap: { on: Photo, times: 2 }")
    assert step == TapStep(target=Selector(text="Photo", loose=True), times=2)
    assert roundtrip(Flow(steps=(step,))).steps == (step,)
    assert "times: 2" in flow_to_yaml(Flow(steps=(step,)))


def test_tap_times_one_is_dropped() -> None:
    step = one("tap: { on: Photo, times: 1 }")
    assert step == TapStep(target=Selector(text="Photo", loose=True))
    assert isinstance(step, TapStep) and step.times is None
    assert flow_to_yaml(Flow(steps=(step,))) == "steps:\n  - tap: Photo\n"


def test_tap_options_with_a_point() -> None:
    assert one("tap: { on: { x: 0.2, y: 0.3 }, times: 3 }") == TapStep(target=Point(0.2, 0.3), times=3)


@pytest.mark.parametrize("times", ["0", "11", "1.5", "'2'", "true"])
def test_tap_times_range(times: str) -> None:
    assert step_detail(f"tap: {{ on: Photo, times: {times} }}") == (
        "tap.times must be an integer between 1 and 10 (2 = double-tap)"
    )


def test_tap_options_form_errors() -> None:
    assert step_detail("tap: { on: Photo, text: Other }") == (
        'the tap options form takes a nested selector — e.g. tap: { on: { text: "Photo" }, times: 2 }'
    )
    assert step_detail("tap: { times: 2, x: 0.5, y: 0.5 }") == (
        "the tap options form takes a nested point — e.g. tap: { on: { x: 0.5, y: 0.5 }, times: 2 }"
    )
    assert step_detail("tap: { on: Photo, count: 2 }") == "the tap options form accepts only { on, times }"
    assert (
        step_detail("tap: { times: 2 }")
        == 'tap with times needs a target — e.g. tap: { on: "Photo", times: 2 }'
    )
    assert step_detail("tap: { on: { x: 2, y: 0 } }") == (
        "tap.on: coordinates are normalized 0–1 fractions of the screen, not pixels"
    )


def test_long_press_forms() -> None:
    assert one("long-press: Row") == LongPressStep(target=Selector(text="Row", loose=True))
    assert one("long-press: { on: { id: row }, duration: 1200 }") == LongPressStep(
        target=Selector(identifier="row"), duration_ms=1200
    )
    assert step_detail("long-press: { duration: 1200 }") == (
        'long-press needs a target — e.g. long-press: { on: "Row", duration: 1200 }'
    )
    assert step_detail("long-press: { on: Row, text: x }") == (
        "the long-press options form takes a nested selector — e.g. long-press: "
        '{ on: { text: "Row" }, duration: 1200 }'
    )
    assert step_detail("long-press: { on: Row, times: 2 }") == (
        "the long-press options form accepts only { on, duration }"
    )
    for bad in ("0", "-1", "'1200'", ".inf"):
        assert step_detail(f"long-press: {{ on: Row, duration: {bad} }}") == (
            "long-press.duration needs a positive number of milliseconds (e.g. `duration: 1200`)"
        )


# --------------------------------------------------------------------------------------------
# §1.5 selectors


def test_selector_unknown_key_with_hint() -> None:
    assert step_detail("tap: { roel: button }") == (
        f"tap: selector has unknown key `roel` (did you mean `role`?) — allowed keys: {SELECTOR_KEYS}"
    )


def test_selector_text_visible_characters() -> None:
    expected = (
        "tap: text must contain at least one visible character (icon-font/private-use and zero-width characters "
        "render as nothing) — select by identifier or role instead"
    )
    assert step_detail('tap: "\\u200b"') == expected
    assert step_detail('tap: { text: "\\ue001 " }') == expected
    assert step_detail('tap: { text: "" }') == expected


def test_selector_field_types() -> None:
    assert step_detail("tap: { id: 42 }").startswith("tap: ")
    assert step_detail("tap: { id: 42 }") == step_detail("tap: { text: { matches: x }, id: 42 }")
    assert step_detail("tap: { role: '' }").startswith("tap: ")


def test_selector_needs_a_field() -> None:
    assert step_detail("tap: { text: ~ }").startswith("tap: ")
    assert step_detail("assert: { visible: {} }") == (
        "assert.visible: selector needs at least one of text, identifier, role, or css"
    )


def test_text_matcher_shapes() -> None:
    assert step_detail("tap: { text: { match: x } }") == (
        "tap: text matcher has unknown key `match` (did you mean `matches`?) — allowed keys: matches"
    )
    assert step_detail("tap: { text: {} }") == (
        "tap: a text matcher takes exactly { matches: '<regex>' } — for a substring, use the plain-string "
        'form (text: "…")'
    )
    assert (
        step_detail("tap: { text: { matches: '' } }")
        == "tap: text matcher needs a non-empty `matches` pattern"
    )
    assert (
        step_detail("tap: { text: { matches: 5 } }")
        == "tap: text matcher needs a non-empty `matches` pattern"
    )


def test_within_on_tap() -> None:
    step = one("tap: { text: Save, within: { id: dialog } }")
    assert step == TapStep(target=Selector(text="Save", within=Selector(identifier="dialog")))


def test_bare_string_scope_stays_loose() -> None:
    step = one("tap: { id: row, after: Header }")
    assert step == TapStep(target=Selector(identifier="row", after=Selector(text="Header", loose=True)))


def test_chained_scopes_round_trip() -> None:
    step = one("tap: { text: Buy, within: { id: card, within: { id: list, next: Header } } }")
    assert isinstance(step, TapStep) and isinstance(step.target, Selector)
    assert step.target.within is not None and step.target.within.within is not None
    assert step.target.within.within.next == Selector(text="Header", loose=True)
    assert roundtrip(Flow(steps=(step,))).steps == (step,)


def test_scope_only_selector_is_rejected() -> None:
    assert step_detail("tap: { within: { id: list } }") == (
        "tap: a selector's `within` only scopes where to look — the selector still needs its own "
        "text/id/role/css naming what to find there (or `any: true` for any element)"
    )


def test_unknown_key_inside_a_scope_names_the_nested_slot() -> None:
    assert step_detail("tap: { text: Buy, within: { id: card, after: { txt: Header } } }") == (
        f"tap.within.after: selector has unknown key `txt` (did you mean `text`?) — allowed keys: {SELECTOR_KEYS}"
    )


def test_more_than_six_scopes() -> None:
    body = "{ text: a, within: " * 7 + "{ text: z }" + " }" * 7
    assert step_detail(f"tap: {body}") == (
        "tap: a selector carries more than 6 scopes (within/after/next) in total — check for a cyclic "
        "YAML alias (`&s { …, within: *s }`)"
    )


def test_six_scopes_are_fine() -> None:
    body = "{ text: a, within: " * 6 + "{ text: z }" + " }" * 6
    assert isinstance(one(f"tap: {body}"), TapStep)


def test_cyclic_scope_alias() -> None:
    with pytest.raises(FlowParseError) as info:
        parse_flow("steps:\n  - tap: &s { text: x, within: *s }\n")
    assert info.value.message == (
        "Unrecognized flow entry (tap: a selector carries more than 6 scopes (within/after/next) in total — "
        "check for a cyclic YAML alias (`&s { …, within: *s }`)): [cyclic entry] (step 1, line 2)"
    )


def test_any_with_scope_round_trips() -> None:
    step = one("tap: { any: true, within: { id: list } }")
    assert step == TapStep(target=Selector(any=True, within=Selector(identifier="list")))
    assert roundtrip(Flow(steps=(step,))).steps == (step,)


def test_any_with_text_is_rejected() -> None:
    assert step_detail("tap: { any: true, text: Buy, within: { id: list } }") == (
        "tap: `any: true` already matches every element — drop it, or drop the `text` it makes redundant"
    )


def test_bare_any_is_rejected() -> None:
    assert step_detail("tap: { any: true }") == (
        "tap: `any: true` matches every element on screen — pair it with a scope (within/after/next) so it "
        "selects something specific"
    )


@pytest.mark.parametrize("value", ['"yes"', "false", "1"])
def test_any_takes_only_true(value: str) -> None:
    assert step_detail(f"tap: {{ any: {value}, within: {{ id: list }} }}") == (
        "tap: `any` takes only `true` — it is the CSS `*` universal selector (drop the key to select by "
        "text/id/role instead)"
    )


# --------------------------------------------------------------------------------------------
# §1.7 conditions


def test_await_and_assert_conditions() -> None:
    assert one("await: { visible: Account }") == AwaitStep(
        condition=Condition(kind="visible", selector=Selector(text="Account", loose=True))
    )
    assert one("assert: { exists: { id: row } }") == AssertStep(
        condition=Condition(kind="exists", selector=Selector(identifier="row"))
    )
    assert one("await: { hidden: spinner }") == AwaitStep(
        condition=Condition(kind="hidden", selector=Selector(text="spinner", loose=True))
    )


@pytest.mark.parametrize("mode", ["contains", "equals"])
def test_text_condition(mode: TextMode) -> None:
    step = one(f'assert: {{ text: {{ in: {{ id: counter }}, {mode}: "Taps: 0" }} }}')
    assert step == AssertStep(
        condition=Condition(
            kind="text", selector=Selector(identifier="counter"), mode=mode, expected="Taps: 0"
        )
    )


def test_text_condition_matches() -> None:
    step = one("await: { text: { in: Total, matches: '^\\$\\d+' }, timeout: 3000 }")
    assert step == AwaitStep(
        condition=Condition(
            kind="text", selector=Selector(text="Total", loose=True), mode="matches", expected=r"^\$\d+"
        ),
        timeout_ms=3000,
    )


@pytest.mark.parametrize(
    "body",
    ["{ in: x, contains: a, equals: a }", "{ in: x }", "{ in: x, contains: a, matches: b, equals: c }"],
)
def test_text_condition_needs_exactly_one_comparator(body: str) -> None:
    assert step_detail(f"assert: {{ text: {body} }}") == (
        "assert text needs exactly one of `contains`, `equals`, or `matches`"
    )


def test_text_condition_other_errors() -> None:
    assert (
        step_detail("assert: { text: { in: x, contains: '' } }") == "assert text needs a non-empty `contains`"
    )
    assert step_detail("await: { text: { in: x, equals: 5 } }") == "await text needs a non-empty `equals`"
    assert step_detail("assert: { text: Total }") == (
        "assert text needs { in: <selector>, contains|equals|matches: <string> }"
    )
    assert step_detail("assert: { text: { in: x, contians: a } }") == (
        "assert.text has unknown key `contians` (did you mean `contains`?) — allowed keys: in, contains, "
        "equals, matches"
    )
    assert step_detail("assert: { text: { in: { txt: a }, contains: a } }") == (
        f"assert.text.in: selector has unknown key `txt` (did you mean `text`?) — allowed keys: {SELECTOR_KEYS}"
    )


@pytest.mark.parametrize(
    "body",
    [
        "{ condition: visible, selector: foo, expectedText: x }",
        "{ selector: foo }",
        "{}",
        "{ visible: a, exists: b }",
    ],
)
def test_condition_needs_exactly_one_key(body: str) -> None:
    assert (
        step_detail(f"assert: {body}")
        == "assert needs exactly one condition key (exists, visible, hidden, text)"
    )
    assert step_detail(f"await: {body}") == (
        "await needs exactly one condition key (exists, visible, hidden, text, idle)"
    )


def test_misspelled_condition_lists_the_legal_keys() -> None:
    assert step_detail("await: { visble: Account }") == (
        "await needs exactly one condition key (exists, visible, hidden, text, idle)"
    )


def test_condition_body_must_be_a_map() -> None:
    assert step_detail("await: visible") == "await needs a condition (exists, visible, hidden, text, idle)"
    assert step_detail("assert: visible") == "assert needs a condition (exists, visible, hidden, text)"


def test_await_timeout() -> None:
    assert one("await: { visible: Done, timeout: 10000 }") == AwaitStep(
        condition=Condition(kind="visible", selector=Selector(text="Done", loose=True)), timeout_ms=10000
    )
    assert one("await: { visible: Done, timeout: 2.5 }") == AwaitStep(
        condition=Condition(kind="visible", selector=Selector(text="Done", loose=True)), timeout_ms=2.5
    )


@pytest.mark.parametrize("timeout", ["soon", "0", "-5", ".inf", ".nan", "1e400", "'5000'"])
def test_await_timeout_rejects(timeout: str) -> None:
    assert step_detail(f"await: {{ visible: Done, timeout: {timeout} }}") == (
        "await.timeout needs a positive number of milliseconds (e.g. `timeout: 10000`)"
    )


def test_await_misspelled_timeout() -> None:
    assert step_detail("await: { visible: Done, timeut: 5 }") == (
        "await has unknown key `timeut` (did you mean `timeout`?) — allowed keys: exists, visible, hidden, text, "
        "timeout"
    )


def test_assert_has_no_timeout() -> None:
    reject(
        "assert: { visible: X, timeout: 9000 }",
        "assert has no timeout — it is an immediate check; use `await` for a timed wait",
        {"assert": {"visible": "X", "timeout": 9000}},
    )


def test_secrets_are_allowed_in_type_assert_and_await() -> None:
    assert isinstance(one("type: { into: { id: pw }, text: '{{secret:PW}}' }"), TypeStep)
    assert isinstance(one("assert: { visible: '{{secret:NAME}}' }"), AssertStep)
    assert isinstance(one("await: { text: { in: x, contains: '{{secret:NAME}}' } }"), AwaitStep)


# --------------------------------------------------------------------------------------------
# idle


def test_idle_parses_and_serializes_minimally() -> None:
    step = one("await: { idle: true }")
    assert step == IdleStep()
    assert step.kind == "await"
    assert flow_to_yaml(Flow(steps=(step,))) == "steps:\n  - await:\n      idle: true\n"


def test_idle_with_options_round_trips() -> None:
    step = one("await: { idle: true, stableFor: 500, timeout: 2000 }")
    assert step == IdleStep(stable_for_ms=500, timeout_ms=2000)
    assert roundtrip(Flow(steps=(step,))).steps == (step,)


def test_idle_has_no_assert_form() -> None:
    assert step_detail("assert: { idle: true }") == (
        "idle has no assert form — it waits for the screen to stop changing, which is an `await`"
    )


def test_idle_assert_mix_names_both_fixes() -> None:
    assert step_detail("assert: { idle: true, visible: Done }") == (
        "idle has no assert form — it waits for the screen to stop changing, which is an `await`. Give it its "
        "own step as `await: { idle: true }` and leave `visible` in the assert — a step checks exactly one "
        "condition"
    )


def test_idle_takes_only_true() -> None:
    assert step_detail("await: { idle: false }") == "idle takes only `true` (`await: { idle: true }`)"


@pytest.mark.parametrize("stable", ["-1", "1.5", "600001", "'500'"])
def test_idle_stable_for_range(stable: str) -> None:
    assert step_detail(f"await: {{ idle: true, stableFor: {stable} }}") == (
        "idle.stableFor needs an integer between 0 and 600000 (milliseconds)"
    )


def test_idle_longest_hold_is_legal() -> None:
    assert one("await: { idle: true, stableFor: 600000, timeout: 600600 }") == IdleStep(
        stable_for_ms=600000, timeout_ms=600600
    )


IDLE_TAIL = (
    "a settle is 3 reads spanning 2 200ms polls, and the hold is counted across those polls rather than after "
    "them — so the wait has to contain whichever of the two is longer, plus the 200ms of budget the closing "
    "round has to have left to be allowed to start. Raise `timeout`"
)


def test_idle_feasibility_default_stable_for() -> None:
    assert step_detail("await: { idle: true, timeout: 100 }") == (
        f"idle needs a timeout of at least 600ms to hold still for the default 250ms: {IDLE_TAIL}"
    )


def test_idle_feasibility_written_stable_for() -> None:
    assert step_detail("await: { idle: true, stableFor: 1000, timeout: 500 }") == (
        f"idle needs a timeout of at least 1200ms to hold still for 1000ms: {IDLE_TAIL} or lower `stableFor`"
    )


def test_idle_feasibility_default_timeout() -> None:
    assert step_detail("await: { idle: true, stableFor: 9000 }") == (
        f"idle needs a timeout of at least 9200ms to hold still for 9000ms: {IDLE_TAIL} or lower `stableFor`"
    )


def test_idle_feasibility_boundary() -> None:
    assert one("await: { idle: true, stableFor: 500, timeout: 700 }") == IdleStep(
        stable_for_ms=500, timeout_ms=700
    )
    assert step_detail("await: { idle: true, stableFor: 500, timeout: 699 }").startswith(
        "idle needs a timeout of at least 700ms to hold still for 500ms:"
    )


def test_idle_mixed_with_a_condition() -> None:
    assert step_detail("await: { idle: true, visible: Done }") == (
        "await mixes `idle` with `visible` — a step checks exactly one condition"
    )


def test_idle_stray_key() -> None:
    assert step_detail("await: { idle: true, settleMs: 300 }") == (
        "await has unknown key `settleMs` — allowed keys: idle, stableFor, timeout"
    )


def test_idle_timeout_rules() -> None:
    assert step_detail("await: { idle: true, timeout: 0 }") == (
        "await.timeout needs a positive number of milliseconds (e.g. `timeout: 10000`)"
    )


# --------------------------------------------------------------------------------------------
# type / scroll-to / pinch / rotate / snapshot


def test_type_step() -> None:
    assert one("type: { into: { id: email }, text: a@b.c }") == TypeStep(
        into=Selector(identifier="email"), text="a@b.c"
    )
    assert one("type: { into: Email, text: x, submit: false }") == TypeStep(
        into=Selector(text="Email", loose=True), text="x", submit=False
    )


def test_type_errors() -> None:
    assert step_detail("type: hello") == "type needs { into, text }"
    assert step_detail("type: { into: Email, text: '' }") == "type needs a non-empty text"
    assert step_detail("type: { into: Email, text: 5 }") == "type needs a non-empty text"
    assert step_detail("type: { into: Email, text: x, submit: 'no' }") == "type.submit must be a boolean"
    assert step_detail("type: { into: Email, text: x, sumbit: false }") == (
        "type has unknown key `sumbit` (did you mean `submit`?) — allowed keys: into, text, submit, clear"
    )
    assert step_detail("type: { into: { roel: x }, text: x }") == (
        f"type.into: selector has unknown key `roel` (did you mean `role`?) — allowed keys: {SELECTOR_KEYS}"
    )


def test_scroll_to_forms() -> None:
    assert one("scroll-to: Account") == ScrollToStep(
        target=Selector(text="Account", loose=True), direction="down"
    )
    assert one("scroll-to: { target: Row }") == ScrollToStep(target=Selector(text="Row", loose=True))
    assert one("scroll-to: { target: { id: row }, direction: up, within: { id: list } }") == ScrollToStep(
        target=Selector(identifier="row"), direction="up", within=Selector(identifier="list")
    )


def test_scroll_to_default_serializes_bare() -> None:
    step = one("scroll-to: { target: Account, direction: down }")
    assert flow_to_yaml(Flow(steps=(step,))) == "steps:\n  - scroll-to: Account\n"


def test_scroll_to_errors() -> None:
    assert step_detail("scroll-to: { target: Row, direction: sideways }") == (
        "scroll-to direction must be one of up, down, left, right"
    )
    assert step_detail("scroll-to: { target: Row, directon: up }") == (
        "scroll-to has unknown key `directon` (did you mean `direction`?) — allowed keys: target, direction, within"
    )
    reject(
        "scroll-to: { target: Row, sideways: true }",
        "scroll-to has unknown key `sideways` — allowed keys: target, direction, within",
        {"scroll-to": {"target": "Row", "sideways": True}},
    )
    assert (
        step_detail("scroll-to: 5") == "scroll-to needs a target selector or { target, direction?, within? }"
    )
    assert step_detail("scroll-to: { within: { id: list } }") == (
        "scroll-to needs a `target` — its own `within` only anchors the gesture to a scroll container, e.g. "
        "scroll-to: { target: <selector>, within: { id: list } }. A selector scope (within/after/next) goes "
        "inside `target`."
    )
    assert step_detail("scroll-to: { target: Row, within: { identfier: list } }") == (
        "scroll-to.within: selector has unknown key `identfier` (did you mean `identifier`?) — allowed keys: "
        f"{SELECTOR_KEYS}"
    )


def test_pinch() -> None:
    assert one('pinch: { on: "Map", scale: 3 }') == PinchStep(scale=3, on=Selector(text="Map", loose=True))
    assert one("pinch: { scale: 0.5 }") == PinchStep(scale=0.5)
    assert one("pinch: { scale: 1000 }") == PinchStep(scale=1000)
    assert step_detail("pinch: Map") == (
        'pinch takes an options map — e.g. pinch: { on: "Map", scale: 3 } (a bare "pinch: Map" is ambiguous: '
        "in or out?)"
    )
    assert step_detail("pinch: { text: Map, scale: 2 }") == (
        'pinch takes a nested selector — e.g. pinch: { on: "Map", scale: 3 }'
    )
    assert (
        step_detail("pinch: { scale: 2, speed: 1 }")
        == "pinch has unknown key `speed` — allowed keys: on, scale"
    )
    for bad in ("1", "0", "-2", ".inf", "'2'"):
        assert step_detail(f"pinch: {{ scale: {bad} }}") == (
            "pinch.scale must be a finite number > 0 and ≠ 1 (2 = zoom in 2×, 0.5 = zoom out to half)"
        )


def test_rotate() -> None:
    assert one("rotate: { on: Map, by: 90 }") == RotateStep(by=90, on=Selector(text="Map", loose=True))
    assert one("rotate: { by: -3000 }") == RotateStep(by=-3000)
    assert step_detail("rotate: 90") == (
        'rotate takes an options map — e.g. rotate: { on: "Map", by: 90 } (an angle is required)'
    )
    for key in ("text", "id", "identifier", "role"):
        assert step_detail(f"rotate: {{ {key}: Map, by: 90 }}") == (
            'rotate takes a nested selector — e.g. rotate: { on: "Map", by: 90 }'
        )
    assert (
        step_detail("rotate: { by: 0 }")
        == "rotate.by must be a finite non-zero number of degrees (+CW, −CCW)"
    )
    assert step_detail("rotate: {}") == "rotate.by must be a finite non-zero number of degrees (+CW, −CCW)"
    assert step_detail("rotate: { by: 3001 }") == (
        "rotate.by must be within ±3000° — one continuous gesture at ~300°/s (10 s max)"
    )


def test_snapshot_forms() -> None:
    assert one("snapshot: home") == SnapshotStep(name="home")
    assert one("snapshot: { name: home, maxMismatch: 2 }") == SnapshotStep(name="home", max_mismatch=2)
    assert flow_to_yaml(Flow(steps=(SnapshotStep(name="home"),))) == "steps:\n  - snapshot: home\n"
    assert flow_to_yaml(Flow(steps=(SnapshotStep(name="home", max_mismatch=2),))) == (
        "steps:\n  - snapshot:\n      name: home\n      maxMismatch: 2\n"
    )


def test_snapshot_name_pattern() -> None:
    assert step_detail("snapshot: ../evil") == (
        'snapshot name "../evil" must match /^[A-Za-z0-9_-]+$/ (letters, digits, underscore, hyphen)'
    )
    assert step_detail("snapshot: ''") == "snapshot needs a name (bare string or { name })"
    assert step_detail("snapshot: { maxMismatch: 1 }") == "snapshot needs a name (bare string or { name })"
    assert step_detail("snapshot: 5") == "snapshot needs a name (bare string or { name })"


def test_snapshot_max_mismatch_coerces() -> None:
    assert one('snapshot: { name: home, maxMismatch: "1.5" }') == SnapshotStep(name="home", max_mismatch=1.5)
    assert one("snapshot: { name: home, maxMismatch: 0 }") == SnapshotStep(name="home", max_mismatch=0)


@pytest.mark.parametrize("value", ['"5%"', "-1", "101", ".nan", "[1, 2]"])
def test_snapshot_max_mismatch_range(value: str) -> None:
    assert step_detail(f"snapshot: {{ name: home, maxMismatch: {value} }}") == (
        "snapshot maxMismatch must be a number between 0 and 100 (percent of pixels)"
    )


def test_snapshot_crop_on() -> None:
    assert one("snapshot: { name: home, cropOn: Header }") == SnapshotStep(
        name="home", crop_on=Selector(text="Header", loose=True)
    )
    assert one("snapshot: { name: home, cropOn: { id: cart-total } }") == SnapshotStep(
        name="home", crop_on=Selector(identifier="cart-total")
    )
    assert step_detail("snapshot: { name: home, cropOn: { x: 0.1, y: 0.2 } }") == (
        f"snapshot.cropOn: selector has unknown keys `x`, `y` — allowed keys: {SELECTOR_KEYS}"
    )


def test_snapshot_misspelled_keys() -> None:
    assert step_detail("snapshot: { name: home, maxMissmatch: 1 }") == (
        "snapshot has unknown key `maxMissmatch` (did you mean `maxMismatch`?) — allowed keys: name, "
        "maxMismatch, cropOn, mask"
    )
    assert step_detail("snapshot: { name: home, cropon: Header }") == (
        "snapshot has unknown key `cropon` (did you mean `cropOn`?) — allowed keys: name, maxMismatch, cropOn, mask"
    )


# --------------------------------------------------------------------------------------------
# launch / run / tool / script


def test_launch_forms() -> None:
    assert one("launch: com.acme.app") == LaunchStep(app="com.acme.app")
    assert one("launch: { native: com.acme.app }") == LaunchStep(apps={"native": "com.acme.app"})
    assert one("launch: { ios: com.a, android: com.b, chromium: ./app }") == LaunchStep(
        apps={"ios": "com.a", "android": "com.b"}, chromium=ChromiumApp(path="./app")
    )
    step = one("launch: { chromium: { path: ./app, args: [--kiosk] } }")
    assert step == LaunchStep(chromium=ChromiumApp(path="./app", args=("--kiosk",)))
    assert roundtrip(Flow(steps=(step,))).steps == (step,)


LAUNCH_GENERIC = (
    "launch needs an app id (bare string) or a per-platform map ({ native | ios | android | vega: <app id>, "
    "chromium: <app path> | { path, args } })"
)


@pytest.mark.parametrize(
    "body",
    [
        "''",
        "~",
        "42",
        "{}",
        "{ native: '' }",
        "{ ios: 5 }",
        "{ chromium: { args: [--x] } }",
        "{ chromium: { path: ./app, args: [1, 2] } }",
        "{ chromium: { path: ./app, args: --x } }",
        "{ chromium: '' }",
    ],
)
def test_launch_generic_error(body: str) -> None:
    assert step_detail(f"launch: {body}") == LAUNCH_GENERIC


def test_launch_unknown_keys() -> None:
    reject(
        "launch: { amdroid: com.a }",
        "launch has unknown key `amdroid` (did you mean `android`?) — allowed keys: native, ios, android, "
        "chromium, firefox, webkit, vega",
        {"launch": {"amdroid": "com.a"}},
    )
    assert step_detail("launch: { chromium: { path: ./app, arg: [--x] } }") == (
        "launch.chromium has unknown key `arg` (did you mean `args`?) — allowed keys: path, args"
    )


def test_launch_app_for_platform() -> None:
    step = one("launch: { native: com.acme, ios: com.acme.ios, chromium: ./web }")
    assert isinstance(step, LaunchStep)
    assert step.app_for("ios") == "com.acme.ios"
    assert step.app_for("android") == "com.acme"
    assert step.app_for("chromium") == "./web"
    native_only = one("launch: { native: com.acme }")
    assert isinstance(native_only, LaunchStep)
    assert native_only.app_for("chromium") is None


@pytest.mark.parametrize(
    ("written", "stored"),
    [
        ("login", "login.yaml"),
        ("sub/login", "sub/login.yaml"),
        ("login.yaml", "login.yaml"),
        ("../shared/login.yaml", "../shared/login.yaml"),
    ],
)
def test_run_targets(written: str, stored: str) -> None:
    step = one(f"run: {written}")
    assert step == RunStep(target=stored)
    assert roundtrip(Flow(steps=(step,))).steps == (step,)


@pytest.mark.parametrize(
    ("written", "detail"),
    [
        ("login.yml", "a `run` path must end in .yaml, or name a sibling flow (`run: login`)"),
        ("shared/", "a `run` path must end in .yaml, or name a sibling flow (`run: login`)"),
        ("Login.YAML", "a `run` path must use the lowercase .yaml extension"),
        ("/abs.yaml", "a `run` path must be relative to the flow file that references it"),
        ("'C:x.yaml'", "a `run` path must be relative to the flow file that references it"),
        (
            "",
            "`run` has no target — give it a YAML path relative to this flow's file, e.g. "
            "`run: fragments/login.yaml`",
        ),
        (
            "123",
            "a `run` target must be a YAML path string relative to this flow's file, e.g. "
            "`run: fragments/login.yaml`",
        ),
        ("'a\\b.yaml'", "a `run` path uses forward slashes, e.g. `run: fragments/login.yaml`"),
        (
            "my flow.yaml",
            "a `run` target's filename must match /^[A-Za-z0-9_-]+\\.yaml$/ — letters, digits, underscore, "
            "hyphen before the .yaml",
        ),
    ],
)
def test_run_target_errors(written: str, detail: str) -> None:
    assert step_detail(f"run: {written}") == detail


def test_tool_step_is_kept_as_written() -> None:
    text = (
        "steps:\n"
        "  - tool: gesture-swipe\n"
        "    args: { fromX: 0.5, path: [1, 2.5, null], nested: { ok: true, key: 0x10 } }\n"
        "    delayMs: '500'\n"
        "  - tool: screenshot\n"
        "  - tool: 42\n"
        "    args: [a, b]\n"
    )
    flow = parse_flow(text)
    assert flow.steps == (
        ToolStep(
            tool="gesture-swipe",
            args={"fromX": 0.5, "path": [1, 2.5, None], "nested": {"ok": True, "key": 16}},
            delay_ms="500",
        ),
        ToolStep(tool="screenshot", args={}),
        ToolStep(tool=42, args=["a", "b"]),
    )


def test_tool_args_are_plain_json_data() -> None:
    step = one("tool: t\n    args: { a: &x [1, 2], b: *x, 7: seven, c: .inf }")
    assert isinstance(step, ToolStep)
    assert step.args == {"7": "seven", "a": [1, 2], "b": [1, 2], "c": None}
    assert type(step.args) is dict
    assert step.args["a"] is not step.args["b"]  # aliases are expanded, not shared
    assert json.loads(json.dumps(step.args)) == step.args


def test_tool_null_args_become_empty() -> None:
    step = one("tool: t\n    args:")
    assert step == ToolStep(tool="t", args={})


def test_script_short_form() -> None:
    step = one("script: scripts/seed.py")
    assert step == ScriptStep(path="scripts/seed.py")
    assert isinstance(step, ScriptStep) and step.short


def test_script_map_form() -> None:
    step = one("script: { path: scripts/seed.py, args: [--fast, '3'], timeout: 30000 }")
    assert step == ScriptStep(path="scripts/seed.py", args=("--fast", "3"), timeout_ms=30000)
    assert isinstance(step, ScriptStep) and not step.short


SCRIPT_NEEDS_PATH = (
    "script needs a path to a script file — e.g. `script: scripts/seed.py` or "
    "`script: { path: scripts/seed.py, args: [--fast] }`"
)


@pytest.mark.parametrize("body", ["''", "~", "42", "[a.py]", "{ args: [x] }", "{ path: '' }", "{ path: 5 }"])
def test_script_needs_a_path(body: str) -> None:
    assert step_detail(f"script: {body}") == SCRIPT_NEEDS_PATH


def test_script_errors() -> None:
    reject(
        "script: { path: a.py, arg: [x] }",
        "script has unknown key `arg` (did you mean `args`?) — allowed keys: path, args, timeout",
        {"script": {"path": "a.py", "arg": ["x"]}},
    )
    for bad in ("--fast", "[1, 2]", "[a, [b]]", "{ a: 1 }"):
        assert (
            step_detail(f"script: {{ path: a.py, args: {bad} }}") == "script.args must be a list of strings"
        )
    for bad in ("0", "-1", "'30000'", ".inf", "soon"):
        assert step_detail(f"script: {{ path: a.py, timeout: {bad} }}") == (
            "script.timeout needs a positive number of milliseconds (e.g. `timeout: 30000`)"
        )


# --------------------------------------------------------------------------------------------
# §1.8 when


WHEN_EXACTLY_ONE = "when needs exactly one condition key (exists, visible, hidden, text, platform)"


def test_when_ui_guard() -> None:
    flow = parse_flow('steps:\n  - when: { visible: "What\'s new" }\n    steps:\n      - tap: Close\n')
    assert flow.steps == (
        WhenStep(
            guard=Condition(kind="visible", selector=Selector(text="What's new", loose=True)),
            steps=(TapStep(target=Selector(text="Close", loose=True)),),
        ),
    )
    assert roundtrip(flow) == flow


def test_when_platform_and_nested_round_trip() -> None:
    text = (
        "steps:\n"
        "  - when: { platform: ios }\n"
        "    steps:\n"
        "      - when: { text: { in: { id: banner }, contains: Sale } }\n"
        "        steps:\n"
        "          - echo: sale\n"
    )
    flow = parse_flow(text)
    outer = flow.steps[0]
    assert isinstance(outer, WhenStep) and outer.guard == PlatformGuard(platform="ios")
    inner = outer.steps[0]
    assert isinstance(inner, WhenStep)
    assert inner.guard == Condition(
        kind="text", selector=Selector(identifier="banner"), mode="contains", expected="Sale"
    )
    assert roundtrip(flow) == flow


def test_when_errors() -> None:
    def when(guard: str, extra: str = "") -> str:
        return f"steps:\n  - when: {guard}\n{extra}    steps:\n      - echo: x\n"

    assert detail_of(when("{ visible: A }", "    else: []\n")) == (
        "when has no else — paths may only reconverge, never diverge; two genuinely different paths are two flows"
    )
    assert detail_of(when("{ visible: A }", "    retries: 2\n")) == (
        "a when step takes exactly { when: <condition>, steps: [...] }"
    )
    assert detail_of(when("{}")) == WHEN_EXACTLY_ONE
    assert detail_of(when("{ visible: A, hidden: B }")) == WHEN_EXACTLY_ONE
    assert detail_of(when("visible")) == WHEN_EXACTLY_ONE
    assert detail_of(when("{ visible: A, timeout: 500 }")) == (
        "when takes no timeout — the guard is evaluated with the short assert grace so a skipped block never "
        "adds a full await wait"
    )
    assert (
        detail_of(when("{ platform: windows }"))
        == "when.platform must be one of ios, android, chromium, firefox, webkit, vega"
    )
    assert detail_of(when("{ platform: ios, foo: 1 }")) == "when.platform takes no other keys"
    assert detail_of(when("{ idle: true }")) == (
        "when has no idle form — stillness is a wait, and a guard asks what is on the screen now. Put "
        "`await: { idle: true }` before the block instead"
    )
    assert detail_of(when("{ visible: A, foo: 1 }")) == (
        "when has unknown key `foo` — allowed keys: exists, visible, hidden, text"
    )


def test_when_guard_error_renders_the_guard() -> None:
    with pytest.raises(FlowParseError) as info:
        parse_flow("steps:\n  - when: { platform: windows }\n    steps:\n      - echo: x\n")
    assert info.value.message == (
        "Unrecognized flow entry (when.platform must be one of ios, android, chromium, firefox, webkit, vega): "
        '{"when":{"platform":"windows"}} (step 1, line 2)'
    )


@pytest.mark.parametrize("steps", ["", "    steps: []\n", "    steps: ~\n", "    steps: { echo: x }\n"])
def test_when_needs_steps(steps: str) -> None:
    assert (
        detail_of(f"steps:\n  - when: {{ visible: A }}\n{steps}")
        == "when needs a non-empty steps list to guard"
    )


def _nested_when(levels: int, guard: str = "{ platform: ios }", extra: str = "") -> str:
    """`levels` nested when blocks; ``guard`` and ``extra`` apply to the innermost one only."""
    lines = ["steps:"]
    for depth in range(levels):
        pad = "    " * depth
        lines.append(f"{pad}  - when: {guard if depth == levels - 1 else '{ platform: ios }'}")
        if depth == levels - 1 and extra:
            lines.append(f"{pad}    {extra}")
        lines.append(f"{pad}    steps:")
    lines.append("    " * levels + "  - echo: deep")
    return "\n".join(lines) + "\n"


WHEN_TOO_DEEP = (
    "`when:` blocks nest deeper than 20 levels — check for a cyclic YAML alias (`steps: &s … steps: *s`)"
)


def test_twenty_nested_whens_parse() -> None:
    flow = parse_flow(_nested_when(20))
    depth = 0
    steps = flow.steps
    while isinstance(steps[0], WhenStep):
        depth += 1
        steps = steps[0].steps
    assert depth == 20


def test_twenty_one_nested_whens_fail() -> None:
    assert detail_of(_nested_when(21)) == WHEN_TOO_DEEP


@pytest.mark.parametrize(
    ("guard", "extra"),
    [("{ platform: ios }", "else: []"), ("{ platform: ios }", "retries: 1"), ("{ bad: 1 }", "")],
)
def test_depth_error_wins_at_the_cap(guard: str, extra: str) -> None:
    assert detail_of(_nested_when(21, guard=guard, extra=extra)) == WHEN_TOO_DEEP
    # One level shallower the same defect is what gets reported.
    assert detail_of(_nested_when(20, guard=guard, extra=extra)) != WHEN_TOO_DEEP


def test_cyclic_when_alias() -> None:
    text = "steps: &s\n  - when: { visible: Banner }\n    steps: *s\n"
    with pytest.raises(FlowParseError) as info:
        parse_flow(text)
    err = info.value
    assert err.error_code == "FLOW_ENTRY_UNRECOGNIZED"
    assert err.message.startswith(f"Unrecognized flow entry ({WHEN_TOO_DEEP}): [cyclic entry] (step 1.1.1")
    assert err.step == ".".join(["1"] * 21)


@pytest.mark.parametrize(
    "guard",
    [
        "{ text: { in: { id: total }, contains: '{{secret:PRICE}}' } }",
        "{ visible: { id: '{{secret:ID}}' } }",
        "{ visible: '{{secret:NAME}}' }",
        "{ hidden: { text: '{{secret:NAME}}' } }",
        "{ text: { in: '{{secret:X}}', equals: hi } }",
        "{ visible: { text: Buy, within: { id: card, after: { role: '{{secret:R}}' } } } }",
        "{ exists: { text: { matches: '{{secret:RE}}' } } }",
    ],
)
def test_when_rejects_secrets(guard: str) -> None:
    assert detail_of(f"steps:\n  - when: {guard}\n    steps:\n      - echo: x\n") == (
        "when takes no {{secret:…}} placeholder — secrets resolve only in text-entry steps (`type:`), never in "
        "condition evaluation, so the guard tests literal placeholder text that is never on screen: permanently "
        "false (for `hidden`, vacuously true); use the literal on-screen text instead"
    )


# --------------------------------------------------------------------------------------------
# §1.9 e2e vs prerequisite


def test_e2e_with_prerequisite() -> None:
    with pytest.raises(FlowParseError) as info:
        parse_flow("executionPrerequisite: logged in\nsteps:\n  - launch: com.acme\n")
    err = info.value
    assert err.error_code == "FLOW_E2E_HAS_PREREQUISITE"
    assert err.message == (
        "A flow that starts with a launch step must not declare executionPrerequisite — it launches its own app "
        "and controls its start state. Drop the leading launch to make it a fragment, or drop "
        "executionPrerequisite."
    )


def test_leading_echo_does_not_hide_the_launch() -> None:
    with pytest.raises(FlowParseError) as info:
        parse_flow("executionPrerequisite: x\nsteps:\n  - echo: hi\n  - launch: com.acme\n")
    assert info.value.error_code == "FLOW_E2E_HAS_PREREQUISITE"


def test_fragment_may_declare_a_prerequisite() -> None:
    flow = parse_flow("executionPrerequisite: x\nsteps:\n  - tap: Go\n  - launch: com.acme\n")
    assert flow.execution_prerequisite == "x"
    assert not flow.is_e2e
    assert parse_flow("steps:\n  - echo: a\n  - launch: com.acme\n").is_e2e


# --------------------------------------------------------------------------------------------
# §1.12 hints


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [("roel", "role", 1), ("abc", "abc", 0), ("", "abc", 3), ("kitten", "sitting", 3), ("ca", "abc", 3)],
)
def test_edit_distance_is_optimal_string_alignment(a: str, b: str, distance: int) -> None:
    assert edit_distance(a, b) == distance


@pytest.mark.parametrize(
    ("key", "hint"),
    [
        ("directon", "direction"),
        ("sumbit", "submit"),
        ("timeut", "timeout"),
        ("maxMissmatch", "maxMismatch"),
        ("cropon", "cropOn"),
        ("roel", "role"),
        ("txt", "text"),
        ("TEXT", "text"),
        ("identfier", "identifier"),
        ("sideways", None),
        ("tx", None),
        ("x", None),
    ],
)
def test_did_you_mean(key: str, hint: str | None) -> None:
    candidates = [
        "target",
        "direction",
        "within",
        "submit",
        "timeout",
        "maxMismatch",
        "cropOn",
        "role",
        "text",
    ]
    candidates += ["identifier", "id"]
    assert did_you_mean(key, candidates) == hint


# --------------------------------------------------------------------------------------------
# css: a selector key (strict, resolved by the browser)


def test_css_is_a_strict_selector_key_that_combines_with_fields_and_scopes() -> None:
    assert one('tap: { css: "form .save" }') == TapStep(target=Selector(css="form .save"))
    step = one(
        'tap: { css: "button.primary", text: Save, within: { role: dialog, css: "[aria-modal=true]" } }'
    )
    assert step == TapStep(
        target=Selector(
            css="button.primary", text="Save", within=Selector(role="dialog", css="[aria-modal=true]")
        )
    )
    assert roundtrip(Flow(steps=(step,))).steps == (step,)
    assert one('assert: { visible: { css: "#total" } }') == AssertStep(
        condition=Condition(kind="visible", selector=Selector(css="#total"))
    )


@pytest.mark.parametrize(
    ("css", "problem"),
    [
        ("a[", "a `[` is never closed"),
        ("li:nth-child(2", "a `(` is never closed"),
        ("a)", "a `)` closes nothing"),
        ("a[title='x]", "a `'` quote is never closed"),
        ("a,,b", "a selector in its comma-separated list is empty"),
        ("a,", "it ends with `,`, with no selector after it"),
        ("ul >", "it ends with the combinator `>`, with nothing after it"),
        ("   ", "it is empty"),
    ],
)
def test_a_plainly_broken_css_selector_is_refused_when_the_flow_is_read(css: str, problem: str) -> None:
    assert step_detail(f"tap: {{ css: {json.dumps(css)} }}") == (
        f"tap: css {json.dumps(css)} is not a valid CSS selector: {problem}"
    )


def test_css_selectors_the_parser_leaves_to_the_browser() -> None:
    for css in ('a[title="x]"]', ":is(a, b) > p", "a\\[", "li:nth-child(2n+1)", "*", ":has(> img)", "a\\,"):
        assert one(f"tap: {{ css: {json.dumps(css)} }}") == TapStep(target=Selector(css=css))


def test_css_value_and_any_checks() -> None:
    assert (
        step_detail("tap: { css: 42 }")
        == 'tap: `css` must be a string holding a CSS selector — e.g. css: "form .save"'
    )
    assert step_detail(f"tap: {{ css: {json.dumps('a' * 4097)} }}") == (
        f"tap: css {json.dumps('a' * 4097)} is not a valid CSS selector: it is longer than 4096 characters"
    )
    assert step_detail('tap: { any: true, css: "b", within: { id: l } }') == (
        "tap: `any: true` already matches every element — drop it, or drop the `css` it makes redundant"
    )
