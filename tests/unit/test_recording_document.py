"""The recording document (``FlowDocument``): appending a step costs that step — its lines are
spliced in and only they are parsed — and the text and every error are exactly what appending
through ruamel's round trip and parsing the whole file give (``append_step``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from argent import limits
from argent.errors import FlowParseError
from argent.flows import write
from argent.flows.model import (
    AwaitStep,
    Condition,
    EchoStep,
    Flow,
    LaunchStep,
    Point,
    ScriptStep,
    Selector,
    Step,
    TapStep,
    ToolStep,
    TypeStep,
    WhenStep,
)
from argent.flows.parse import parse_flow
from argent.flows.write import FlowDocument, append_step, flow_to_yaml


def mixed_steps(n: int) -> list[Step]:
    shapes: list[Any] = [
        lambda i: EchoStep(f"step {i}"),
        lambda i: TapStep(target=Selector(identifier=f"button-{i}", within=Selector(role="list"))),
        lambda i: ToolStep("gesture-scroll", {"x": 0.5, "y": 0.5, "deltaY": i, "note": None}, delay_ms=i),
        lambda i: AwaitStep(Condition("visible", Selector(text=f"Row {i}")), timeout_ms=5000),
        lambda i: TypeStep(into=Selector(identifier="q"), text=f"two\nlines {i}: 'quoted' #{i}"),
        lambda i: WhenStep(guard=Condition("exists", Selector(text="x")), steps=(EchoStep(f"in {i}"),)),
        lambda i: TapStep(target=Point(0.5, 0.25), times=2),
        lambda i: ScriptStep("scripts/seed.py", (f"--n={i}",), 3000, short=False),
    ]
    return [shapes[i % len(shapes)](i) for i in range(n)]


STARTS = [
    flow_to_yaml(Flow(execution_prerequisite="On the home screen")),
    "steps: []\n",
    "# Checkout — by hand\nsteps:   # the steps\n- echo: start  # first\n- tap: {id: cart}   # flow\n\n"
    "executionPrerequisite: 'logged in'  # who\n",
    "executionPrerequisite: x\nsteps:\n    -   echo: a\n# trailing comment\n",
    "steps: [{echo: a}, {echo: b}] # flow style\n",
    "steps:\r\n  - echo: a\r\n",
    "",
]


def by_round_trip(text: str, steps: list[Step]) -> Iterator[str]:
    """The old recorder: every append re-reads the whole text through the round trip and parses it."""
    for step in steps:
        text = append_step(text, step)
        yield text


@pytest.mark.parametrize("start", STARTS)
def test_the_document_writes_exactly_what_the_round_trip_writes(start: str) -> None:
    steps = mixed_steps(10)
    document = FlowDocument.parse(start)
    for step, expected in zip(steps, by_round_trip(start, steps), strict=True):
        document = document.append(step)
        assert document.text == expected
        assert document.steps == len(parse_flow(expected).steps)
    assert document.splice is not None  # it reached the splice: later appends cost one step


def test_appending_parses_only_the_new_step(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[int] = []
    real = write.parse_flow_counted

    def counting(text: str) -> Any:
        parsed.append(len(text))
        return real(text)

    monkeypatch.setattr(write, "parse_flow_counted", counting)
    document = FlowDocument.parse(flow_to_yaml(Flow(execution_prerequisite="p")))
    for step in mixed_steps(200):
        document = document.append(step)
    # The round trip reads the whole file twice (until the layout is ruamel's); then each append
    # parses its own lines: the total is linear in the file, not quadratic (the old recorder: ~100x).
    assert sum(parsed) < 3 * len(document.text)


def test_a_step_the_parser_refuses_gets_the_whole_file_s_error() -> None:
    document = FlowDocument.parse("steps: []\n")
    for step in mixed_steps(5):
        document = document.append(step)
    assert document.splice is not None
    bad = TapStep(target=Selector(identifier="x"), times=20)
    with pytest.raises(FlowParseError) as fast:
        document.append(bad)
    with pytest.raises(FlowParseError) as slow:
        append_step(document.text, bad)
    assert fast.value.message == slow.value.message
    assert "(step 6, line " in fast.value.message
    assert (fast.value.line, fast.value.step) == (slow.value.line, slow.value.step)


def test_a_leading_launch_under_a_prerequisite_is_refused_on_the_splice() -> None:
    document = FlowDocument.parse(flow_to_yaml(Flow(execution_prerequisite="p")))
    for i in range(3):
        document = document.append(EchoStep(f"e{i}"))
    assert document.splice is not None
    with pytest.raises(FlowParseError) as info:
        document.append(LaunchStep(app="com.acme"))
    assert info.value.error_code == "FLOW_E2E_HAS_PREREQUISITE"
    # Not the leading step: allowed.
    document = document.append(TapStep(target=Selector(identifier="a"))).append(LaunchStep(app="com.acme"))
    assert parse_flow(document.text).steps[-1] == LaunchStep(app="com.acme")


@pytest.mark.parametrize(
    ("limit", "value"),
    [
        ("MAX_YAML_SEQUENCE_ITEMS", 6),
        ("MAX_YAML_NODES", 40),
        ("MAX_STEPS_PER_FILE", 7),
        ("MAX_ARGS_NODES_PER_FILE", 9),
        ("MAX_FILE_BYTES", 400),
    ],
)
def test_a_file_level_limit_crossed_by_an_append_is_the_whole_file_s_error(
    monkeypatch: pytest.MonkeyPatch, limit: str, value: int
) -> None:
    monkeypatch.setattr(limits, limit, value)
    steps = [ToolStep("t", {"a": i, "b": [1, 2]}) if i % 2 else EchoStep(f"e{i}") for i in range(40)]
    document = FlowDocument.parse("steps: []\n")
    text = "steps: []\n"
    for step in steps:
        try:
            expected = append_step(text, step)
        except FlowParseError as exc:
            with pytest.raises(FlowParseError) as info:
                document.append(step)
            assert (info.value.message, info.value.line) == (exc.message, exc.line)
            return
        document = document.append(step)
        assert document.text == expected
        text = expected
    raise AssertionError(f"{limit}={value} was never reached")


def test_the_document_is_a_value() -> None:
    document = FlowDocument.parse("steps: []\n")
    after = document.append(EchoStep("a"))
    assert document.text == "steps: []\n" and after.text == "steps:\n  - echo: a\n"
