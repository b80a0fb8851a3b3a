"""Hostile flow files: every one is a single ``FlowParseError``, quickly — never a crash or a hang."""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable
from typing import Any

import pytest

from argent import limits
from argent.errors import FlowParseError
from argent.flows.model import EchoStep, ToolStep, WhenStep, walk_steps
from argent.flows.parse import parse_flow

TOO_DEEP = (
    "Invalid flow file: the YAML nests too deeply — a flow needs only a few levels of nesting; check for "
    "runaway brackets or an ever-growing indentation"
)


def parse_error(text: str) -> FlowParseError:
    with pytest.raises(FlowParseError) as info:
        parse_flow(text)
    return info.value


def timed_error(text: str, bound: float = 5.0) -> FlowParseError:
    started = time.monotonic()
    err = parse_error(text)
    assert time.monotonic() - started < bound
    return err


def billion(levels: int, width: int, leaf: str, ref: Callable[[int], str]) -> str:
    """A flow-style sequence defining anchors a0..a{levels}, each `width` copies of the previous one."""
    parts = [f"&a0 [{', '.join([leaf] * width)}]"]
    for level in range(1, levels + 1):
        parts.append(f"&a{level} [{', '.join([ref(level - 1)] * width)}]")
    return "[" + ", ".join(parts) + "]"


# --------------------------------------------------------------------------------------------
# deep nesting


@pytest.mark.parametrize(
    "text",
    [
        "[" * 10_000,
        "[" * 10_000 + "]" * 10_000,
        "steps: " + "[" * 10_000 + "]" * 10_000,
        "{a: " * 10_000,
        "steps:\n  - tool: t\n    args: " + "{a: " * 10_000 + "1" + "}" * 10_000,
        "- " * 10_000 + "x",
        "steps:\n  - " + "- " * 10_000 + "x",
        "".join("  " * depth + "a:\n" for depth in range(3_000)),
        "".join(" " * depth + "- \n" for depth in range(3_000)),
    ],
    ids=[
        "open-brackets",
        "balanced-brackets",
        "steps-brackets",
        "flow-maps",
        "tool-args",
        "compact-seq",
        "compact-seq-in-steps",
        "block-maps",
        "block-seqs",
    ],
)
def test_deep_nesting_is_one_quick_error(text: str) -> None:
    err = timed_error(text)
    assert err.error_code == "FLOW_FILE_INVALID"
    assert err.message == TOO_DEEP


def test_moderate_nesting_in_tool_args_is_fine() -> None:
    args = "{a: " * 50 + "1" + "}" * 50
    flow = parse_flow(f"steps:\n  - tool: t\n    args: {args}\n")
    step = flow.steps[0]
    assert isinstance(step, ToolStep)
    value: Any = step.args
    for _ in range(50):
        value = value["a"]
    assert value == 1


def test_brackets_inside_quotes_comments_and_block_scalars_do_not_count() -> None:
    many = "[" * 600
    text = (
        "steps:\n"
        f"  - echo: '{many}'\n"
        f'  - echo: "{many}"\n'
        f"  # {many}\n"
        "  - echo: |\n"
        f"      {many}\n"
        f"      {many}\n"
        "  - echo: done\n"
    )
    flow = parse_flow(text)
    assert [step.message for step in flow.steps] == [many, many, f"{many}\n{many}\n", "done"]  # type: ignore[union-attr]


# --------------------------------------------------------------------------------------------
# alias bombs


def test_billion_laughs_through_when_steps() -> None:
    lines = ["steps:", "  - when: { platform: ios }", "    steps: &l0"]
    lines += ["      - echo: lol"] * 10
    for level in range(1, 9):
        lines.append("  - when: { platform: ios }")
        lines.append(f"    steps: &l{level}")
        for _ in range(10):
            lines.append("      - when: { platform: ios }")
            lines.append(f"        steps: *l{level - 1}")
    err = timed_error("\n".join(lines) + "\n")
    assert err.error_code == "FLOW_ENTRY_UNRECOGNIZED"
    assert f"the flow expands to more than {limits.MAX_STEPS_PER_FILE} steps (counting `when:` children)" in (
        err.message
    )
    assert err.step is not None and err.line is not None
    assert err.message.endswith(f" (step {err.step}, line {err.line})")
    assert len(err.message) < 1000


def test_aliased_steps_below_the_budget_are_expanded() -> None:
    text = "steps:\n  - when: { platform: ios }\n    steps: &s\n      - echo: a\n      - echo: b\n"
    text += "  - when: { platform: android }\n    steps: *s\n"
    flow = parse_flow(text)
    assert [step.kind for step in walk_steps(flow.steps)] == ["when", "echo", "echo", "when", "echo", "echo"]
    second = flow.steps[1]
    assert isinstance(second, WhenStep)
    assert second.steps == (EchoStep("a"), EchoStep("b"))


def test_billion_laughs_inside_tool_args() -> None:
    args = billion(8, 10, "lol", lambda level: f"*a{level}")
    err = timed_error(f"steps:\n  - echo: first\n  - tool: t\n    args: {args}\n")
    assert err.error_code == "FLOW_ENTRY_UNRECOGNIZED"
    assert err.message.startswith(
        f"Unrecognized flow entry (tool args expand to more than {limits.MAX_ARGS_NODES} values — check for a "
        "YAML alias that repeats a large block inside `args:`): "
    )
    assert err.message.endswith(" (step 2, line 3)")
    assert "…(+" in err.message
    assert len(err.message) < 1000


def test_many_tool_steps_sharing_a_large_alias_hit_the_file_budget() -> None:
    big = billion(3, 10, "x", lambda level: f"*a{level}")  # ~11k nodes per expansion
    text = f"steps:\n  - tool: t\n    args: &big {big}\n" + "  - tool: t\n    args: *big\n" * 200
    err = timed_error(text)
    assert err.error_code == "FLOW_ENTRY_UNRECOGNIZED"
    assert f"more than {limits.MAX_ARGS_NODES_PER_FILE} values in total" in err.message


def test_cyclic_alias_in_tool_args() -> None:
    err = timed_error("steps:\n  - tool: t\n    args: &a { self: *a }\n")
    assert err.message == (
        "Unrecognized flow entry (tool args contain a cyclic YAML alias (an anchor `&a` used as `*a` inside "
        "itself) — tool arguments must be plain JSON data): [cyclic entry] (step 1, line 2)"
    )
    err = timed_error("steps:\n  - tool: t\n    args: { list: &l [1, *l] }\n")
    assert "cyclic YAML alias" in err.message


def test_shared_non_cyclic_alias_in_tool_args_is_fine() -> None:
    flow = parse_flow("steps:\n  - tool: t\n    args: { a: &x { k: [1, 2] }, b: *x }\n")
    step = flow.steps[0]
    assert isinstance(step, ToolStep)
    assert step.args == {"a": {"k": [1, 2]}, "b": {"k": [1, 2]}}


def test_billion_laughs_in_an_echo() -> None:
    bomb = billion(8, 10, "lol", lambda level: f"*a{level}")
    err = timed_error(f"steps:\n  - echo: {bomb}\n")
    assert err.error_code == "FLOW_ENTRY_UNRECOGNIZED"
    assert f"joins to more than {limits.MAX_COERCED_TEXT_CHARS} characters" in err.message


def test_billion_laughs_in_a_rejected_entry_is_rendered_briefly() -> None:
    bomb = billion(8, 10, "lol", lambda level: f"*a{level}")
    err = timed_error(f"steps:\n  - bogus: {bomb}\n")
    assert err.message.startswith('Unrecognized flow entry (unrecognized step kind): {"bogus":[["lol",')
    assert err.message.endswith(" chars) (step 1, line 2)")
    assert len(err.message) < 400


def test_cyclic_alias_in_a_rejected_entry() -> None:
    err = timed_error("steps:\n  - &e { bogus: *e }\n")
    assert err.message == "Unrecognized flow entry (unrecognized step kind): [cyclic entry] (step 1, line 2)"


def test_cyclic_when_and_scope_aliases_are_quick() -> None:
    timed_error("steps: &s\n  - when: { visible: x }\n    steps: *s\n")
    err = timed_error("steps:\n  - tap: &s { text: x, within: *s, after: *s, next: *s }\n")
    assert "more than 6 scopes" in err.message


def test_cyclic_echo_array_joins_like_javascript() -> None:
    flow = parse_flow("steps:\n  - echo: &l [a, *l, b]\n")
    assert flow.steps == (EchoStep("a,,b"),)


# --------------------------------------------------------------------------------------------
# junk


@pytest.mark.parametrize(
    "text",
    [
        "steps:\n  - echo: a\x00b\n",
        "\x00\x01\x02",
        "steps:\n  - echo: \x1b[31mred\n",
        "steps:\n  - echo: \x7f\n",
        bytes(range(256)).decode("latin-1"),
        "\ufffe\uffff",
        "steps:\n  - echo: \ud800\n",
    ],
    ids=["nul", "controls", "escape", "del", "all-bytes", "non-characters", "lone-surrogate"],
)
def test_control_characters_and_binary_junk(text: str) -> None:
    err = parse_error(text)
    assert err.error_code == "FLOW_FILE_INVALID"
    assert err.message.startswith("Invalid flow file: ")
    assert err.line is not None


def test_random_binary_junk_is_always_a_parse_error() -> None:
    rng = random.Random(1234)
    for _ in range(200):
        text = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))).decode("latin-1")
        with contextlib.suppress(FlowParseError):
            parse_flow(text)


@pytest.mark.parametrize(
    "text",
    [
        "steps: [\n",
        "steps:\n  - echo: 'open\n",
        "steps:\n\t- echo: tab\n",
        "steps: &a\n  - *b\n",
        "%YAML 9.9\n---\nsteps: []\n",
        "? [a, b]\n: c\n",
        "steps: []\n...\n---\nsteps: []\n",
        "--- a\n--- b\n",
    ],
)
def test_broken_yaml_is_one_parse_error(text: str) -> None:
    err = parse_error(text)
    assert err.message.startswith("Invalid flow file: ")


def test_wrong_types_everywhere() -> None:
    bodies = ["~", "42", "true", "[]", "{}", "[1, 2]", "{ a: 1 }", "''", ".nan", "-1"]
    kinds = [
        "echo",
        "launch",
        "run",
        "tap",
        "long-press",
        "type",
        "await",
        "assert",
        "wait",
        "scroll-to",
        "pinch",
        "rotate",
        "snapshot",
        "script",
        "tool",
    ]
    for kind in kinds:
        for body in bodies:
            try:
                parse_flow(f"steps:\n  - {kind}: {body}\n")
            except FlowParseError as err:
                assert err.message.endswith(" (step 1, line 2)"), err.message
    for body in bodies:
        with pytest.raises(FlowParseError):
            parse_flow(f"steps:\n  - when: {body}\n    steps: {body}\n")


def test_not_text_at_all() -> None:
    with pytest.raises(FlowParseError):
        parse_flow(b"steps: []")  # type: ignore[arg-type]


SEED_FLOW = """executionPrerequisite: "on the home screen"
steps:
  - echo: start
  - when: { visible: "What's new" }
    steps:
      - tap: { on: Close, times: 2 }
      - await: { idle: true, stableFor: 300 }
  - tool: gesture-swipe
    args: { fromX: 0.5, toX: [1, 2], &k key: *k }
  - type: { into: { id: email, within: Form }, text: "a@b.c", submit: false }
  - assert: { text: { in: { id: total }, matches: '^\\d+$' } }
  - scroll-to: { target: Row, direction: up }
  - snapshot: { name: home, maxMismatch: 1.5, cropOn: Header }
  - script: { path: seed.py, args: [--fast] }
"""


def test_mutated_flows_only_ever_raise_flow_parse_errors() -> None:
    rng = random.Random(20240601)
    pieces = [*"[]{}:-,&*!|>'\"#?~ \n\t\\%@`", "&a ", "*a", "- ", ": ", "\x00", "<<: ", "---\n", "!!str "]
    for _ in range(400):
        chars = list(SEED_FLOW)
        for _ in range(rng.randint(1, 6)):
            position = rng.randrange(len(chars))
            roll = rng.random()
            if roll < 0.4:
                del chars[position]
            elif roll < 0.8:
                chars.insert(position, rng.choice(pieces))
            else:
                other = rng.randrange(len(chars))
                chars[position], chars[other] = chars[other], chars[position]
        with contextlib.suppress(FlowParseError):
            parse_flow("".join(chars))


def test_seed_flow_itself_parses() -> None:
    flow = parse_flow(SEED_FLOW)
    assert len(flow.steps) == 8
