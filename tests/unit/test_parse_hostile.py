"""Hostile flow files: every one is a single ``FlowParseError``, quickly — never a crash or a hang.

"Quickly" is a bound on the work (``bounded_error``), not on the time: it holds on a loaded machine
and still fails when an input's cost grows faster than its size."""

from __future__ import annotations

import contextlib
import gc
import random
import time
from collections.abc import Callable
from typing import Any

import pytest

from argent import limits
from argent.errors import FlowParseError
from argent.flows.load import decode_flow
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


#: A benign flow: the kinds of step a real one has, repeated to the length ``benign_seconds`` reads.
BENIGN_STEPS = (
    "  - echo: hello world\n"
    "  - tool: t\n    args: { x: 1, y: [1, 2, 3], z: { a: b } }\n"
    "  - when: { platform: ios }\n    steps:\n      - tap: Save\n      - wait: 10\n"
)
#: What ends the benign flow: a quote left open, so it is read the costliest way a flow file is
#: (libyaml, then ruamel's pure-Python reader for the error's words), as a hostile input is.
BENIGN_END = "  - echo: 'open\n"
#: The length of the benign flow measured; shorter inputs are compared with it (a parse's fixed
#: cost), longer ones with it scaled up (a benign flow's cost grows with its length, no faster).
#: Its ~800 values stay under the 1,000 that ``test_a_file_of_too_many_values...`` allows a file.
BENIGN_CHARS = 4_000
#: How much more CPU time a hostile input may cost than a benign flow as long (plus its budget).
#: The inputs here cost at most 0.4 of it (most under 0.05); one whose cost grew with the square
#: of its length costs several times it (10k nested brackets scanned quadratically in Python: ~5x).
WORK_MARGIN = 3


def cpu_seconds(text: str) -> tuple[float, FlowParseError | None]:
    """The CPU time of this process parsing ``text`` (the garbage collector held off), and its
    parse error. CPU time, not wall time: a process waiting for a busy machine's cores does not
    count it."""
    enabled = gc.isenabled()
    gc.disable()
    started = time.process_time()
    try:
        parse_flow(text)
    except FlowParseError as exc:
        return time.process_time() - started, exc
    finally:
        if enabled:
            gc.enable()
    return time.process_time() - started, None


def benign_seconds(chars: int) -> float:
    """The CPU time of a benign flow of ``chars`` characters (at least ``BENIGN_CHARS``), measured
    now (the fastest of two reads of one of ``BENIGN_CHARS``, scaled up linearly)."""
    text = "steps:\n" + BENIGN_STEPS * (BENIGN_CHARS // len(BENIGN_STEPS)) + BENIGN_END
    runs = [cpu_seconds(text) for _ in range(2)]
    assert all(err is not None and err.line == text.count("\n") + 1 for _, err in runs)
    return min(seconds for seconds, _ in runs) * max(chars, len(text)) / len(text)


def bounded_error(text: str, *, budget: int = 0) -> FlowParseError:
    """The single parse error of ``text``, reached within ``WORK_MARGIN`` times the CPU time of a
    benign flow as long as ``text`` plus ``budget`` characters, measured in the same test.
    ``budget`` is the limit that stops an alias bomb (the values it may expand to before it is
    refused), each allowed a character's work. An input whose cost grows faster than its size —
    quadratic in its length, exponential in its aliases — fails here; a loaded machine slows both
    reads alike."""
    seconds, err = cpu_seconds(text)
    assert err is not None, "parsed without an error"
    benign = benign_seconds(len(text) + budget)
    assert seconds <= WORK_MARGIN * benign, (
        f"{seconds:.3f}s of CPU to refuse {len(text):,} characters; a benign flow as long takes {benign:.3f}s"
    )
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
    err = bounded_error(text)
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
    err = bounded_error("\n".join(lines) + "\n", budget=limits.MAX_STEPS_PER_FILE)
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
    err = bounded_error(
        f"steps:\n  - echo: first\n  - tool: t\n    args: {args}\n", budget=limits.MAX_ARGS_NODES
    )
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
    err = bounded_error(text, budget=limits.MAX_ARGS_NODES_PER_FILE)
    assert err.error_code == "FLOW_ENTRY_UNRECOGNIZED"
    assert f"more than {limits.MAX_ARGS_NODES_PER_FILE} values in total" in err.message


def test_cyclic_alias_in_tool_args() -> None:
    err = bounded_error("steps:\n  - tool: t\n    args: &a { self: *a }\n")
    assert err.message == (
        "Unrecognized flow entry (tool args contain a cyclic YAML alias (an anchor `&a` used as `*a` inside "
        "itself) — tool arguments must be plain JSON data): [cyclic entry] (step 1, line 2)"
    )
    err = bounded_error("steps:\n  - tool: t\n    args: { list: &l [1, *l] }\n")
    assert "cyclic YAML alias" in err.message


def test_shared_non_cyclic_alias_in_tool_args_is_fine() -> None:
    flow = parse_flow("steps:\n  - tool: t\n    args: { a: &x { k: [1, 2] }, b: *x }\n")
    step = flow.steps[0]
    assert isinstance(step, ToolStep)
    assert step.args == {"a": {"k": [1, 2]}, "b": {"k": [1, 2]}}


def test_billion_laughs_in_an_echo() -> None:
    bomb = billion(8, 10, "lol", lambda level: f"*a{level}")
    err = bounded_error(f"steps:\n  - echo: {bomb}\n")
    assert err.error_code == "FLOW_ENTRY_UNRECOGNIZED"
    assert f"joins to more than {limits.MAX_COERCED_TEXT_CHARS} characters" in err.message


def test_billion_laughs_in_a_rejected_entry_is_rendered_briefly() -> None:
    bomb = billion(8, 10, "lol", lambda level: f"*a{level}")
    err = bounded_error(f"steps:\n  - bogus: {bomb}\n")
    assert err.message.startswith('Unrecognized flow entry (unrecognized step kind): {"bogus":[["lol",')
    assert err.message.endswith(" chars) (step 1, line 2)")
    assert len(err.message) < 400


def test_cyclic_alias_in_a_rejected_entry() -> None:
    err = bounded_error("steps:\n  - &e { bogus: *e }\n")
    assert err.message == "Unrecognized flow entry (unrecognized step kind): [cyclic entry] (step 1, line 2)"


def test_cyclic_when_and_scope_aliases_are_quick() -> None:
    bounded_error("steps: &s\n  - when: { visible: x }\n    steps: *s\n")
    err = bounded_error("steps:\n  - tap: &s { text: x, within: *s, after: *s, next: *s }\n")
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


# --------------------------------------------------------------------------------------------
# collections far beyond any real flow are refused while the YAML is read (issue 10, item 2)


def test_a_mapping_of_100k_keys_is_refused_early() -> None:
    text = "steps: []\n" + "".join(f"k{i:07d}: {i:08d}\n" for i in range(100_000))
    assert len(text) > 1_900_000
    err = bounded_error(text)
    assert err.error_code == "FLOW_FILE_INVALID"
    assert err.message == (
        f"Invalid flow file: a mapping with more than {limits.MAX_YAML_MAPPING_KEYS} keys at line 1, column 1 — "
        "far more than any flow needs; check that this is the flow file you meant"
    )
    assert err.line == 1


def test_a_flow_style_mapping_of_100k_keys_is_refused_early() -> None:
    body = ", ".join(f"k{i}: {i}" for i in range(100_000))
    err = bounded_error(f"steps:\n  - tool: t\n    args: {{{body}}}\n")
    assert err.message == (
        f"Invalid flow file: a mapping with more than {limits.MAX_YAML_MAPPING_KEYS} keys at line 3, column 11 — "
        "far more than any flow needs; check that this is the flow file you meant"
    )
    assert err.line == 3


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [
        ("steps: [" + "1, " * 300_000 + "1]\n", 1, 8),
        ("steps:\n" + "  - 1\n" * 200_000, 2, 3),
        ("steps:\n  - echo: [" + "a, " * 300_000 + "a]\n", 2, 11),
    ],
    ids=["flow-sequence", "block-sequence", "echo-list"],
)
def test_a_list_far_beyond_any_flow_is_refused_early(text: str, line: int, column: int) -> None:
    err = bounded_error(text)
    assert err.error_code == "FLOW_FILE_INVALID"
    assert err.message == (
        f"Invalid flow file: a list with more than {limits.MAX_YAML_SEQUENCE_ITEMS} items at line {line}, column "
        f"{column} — far more than any flow needs; split a long flow into `run:` fragments"
    )
    assert err.line == line


def test_the_largest_collections_a_flow_may_have_still_parse() -> None:
    keys = ", ".join(f"k{i}: {i}" for i in range(limits.MAX_YAML_MAPPING_KEYS))
    items = ", ".join("1" for _ in range(limits.MAX_YAML_SEQUENCE_ITEMS))
    flow = parse_flow(f"steps:\n  - tool: t\n    args: {{ map: {{{keys}}}, list: [{items}] }}\n")
    step = flow.steps[0]
    assert isinstance(step, ToolStep)
    assert len(step.args["map"]) == limits.MAX_YAML_MAPPING_KEYS
    assert len(step.args["list"]) == limits.MAX_YAML_SEQUENCE_ITEMS


def test_a_file_of_too_many_values_is_refused_where_the_limit_is_crossed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(limits, "MAX_YAML_NODES", 1_000)
    step = "  - tool: t\n    args: { a: 1, b: 2, c: 3, d: 4 }\n"  # 13 values: map, 2 + 1 + map + 8
    err = bounded_error("steps:\n" + step * 100)
    assert err.error_code == "FLOW_FILE_INVALID"
    # the root map, `steps` and its list are 3 values: 76 steps make 991, and the 1,001st is `c` of step 77
    assert err.message == (
        "Invalid flow file: more than 1000 YAML values in one file, the one past the limit at line 155, column 25 "
        "— far more than any flow needs; split a long flow into `run:` fragments"
    )
    assert err.line == 155
    assert len(parse_flow("steps:\n" + step * 76).steps) == 76


# --------------------------------------------------------------------------------------------
# integers Python cannot convert, unknown tags (issue 10, item 5)

HUGE = "1" * 5000


@pytest.mark.parametrize(
    ("text", "line", "column", "step"),
    [
        (f"steps:\n  - echo: a\n  - wait: {HUGE}\n", 3, 11, "2"),
        (
            f"steps:\n  - echo: a\n  - when: {{ platform: ios }}\n    steps:\n      - echo: -{HUGE}\n",
            5,
            15,
            "2.1",
        ),
        (f"steps:\n  - tool: t\n    args: {{ n: [1, {HUGE}] }}\n", 3, 20, "1"),
        (f"steps:\n  - tool: t\n    args:\n      ? {HUGE}\n      : 1\n", 4, 9, "1"),
        (f"steps:\n  - echo: !!int '{HUGE}'\n", 2, 11, "1"),
        (f"steps:\n  - echo: 0o{'7' * 5000}\n", 2, 11, "1"),
    ],
    ids=["wait", "when-child", "tool-args", "key", "tagged", "octal"],
)
def test_an_integer_of_more_than_4300_digits_names_its_step(
    text: str, line: int, column: int, step: str
) -> None:
    err = bounded_error(text)
    assert err.error_code == "FLOW_FILE_INVALID"
    assert err.message == (
        f"Invalid flow file: an integer of 5000 digits at line {line}, column {column} (step {step}) — a flow's "
        f"numbers have at most {limits.MAX_INTEGER_DIGITS} digits; quote the value to keep it as text"
    )
    assert (err.line, err.step) == (line, step)


def test_an_integer_of_more_than_4300_digits_outside_the_steps() -> None:
    err = bounded_error(f"executionPrerequisite: {HUGE}\nsteps: []\n")
    assert err.message == (
        f"Invalid flow file: an integer of 5000 digits at line 1, column 24 — a flow's numbers have at most "
        f"{limits.MAX_INTEGER_DIGITS} digits; quote the value to keep it as text"
    )
    assert err.step is None


def test_a_quoted_huge_integer_is_text() -> None:
    assert parse_flow(f"steps:\n  - echo: '{HUGE}'\n").steps == (EchoStep(HUGE),)


def test_an_integer_beyond_a_javascript_number_reads_as_infinity() -> None:
    beyond = "1" * 400  # Number("111…") is Infinity in JavaScript; Python's float() of it overflows
    assert (
        parse_error(f"steps:\n  - wait: {beyond}\n").message
        == parse_error("steps:\n  - wait: 1e400\n").message
    )
    assert parse_flow(f"steps:\n  - echo: -{beyond}\n").steps == (EchoStep("-Infinity"),)
    flow = parse_flow(
        f"steps:\n  - tool: t\n    args: {{ big: {beyond}, hex: 0x{'f' * 300}, fine: {2**64} }}\n"
    )
    step = flow.steps[0]
    assert isinstance(step, ToolStep)
    assert step.args == {"big": None, "hex": None, "fine": 2**64}  # JSON.stringify(Infinity) is null
    for kind in ("tap: { on: a, times: ", "pinch: { scale: ", "await: { idle: true, timeout: "):
        err = parse_error(f"steps:\n  - {kind}{beyond} }}\n")
        assert err.error_code == "FLOW_ENTRY_UNRECOGNIZED"


UNKNOWN_TAG = (
    "Invalid flow file: unsupported YAML tag `{tag}` on a {kind} at line {line}, column {column} — a flow takes "
    "only the YAML 1.2 core tags: !!str, !!int, !!float, !!bool and !!null on a scalar, !!seq on a list, "
    "!!map on a mapping; drop the tag"
)


@pytest.mark.parametrize(
    ("text", "tag", "kind", "line", "column"),
    [
        ("steps:\n  - echo: first\n  - echo: !foo bar\n", "!foo", "scalar", 3, 11),
        ("steps:\n  - tap: !point { x: 0.5, y: 0.5 }\n", "!point", "mapping", 2, 10),
        ("steps: !list\n  - echo: a\n", "!list", "list", 1, 8),
        ("steps:\n  - echo: !!binary aGVsbG8=\n", "!!binary", "scalar", 2, 11),
        ("steps:\n  - echo: !!timestamp 2001-12-14\n", "!!timestamp", "scalar", 2, 11),
        ("steps:\n  - echo: !!set { a, b }\n", "!!set", "mapping", 2, 11),
        ("steps:\n  - echo: !<tag:example.com,2000:x> a\n", "!<tag:example.com,2000:x>", "scalar", 2, 11),
        ("%TAG !e! tag:example.com,2000:\n---\nsteps:\n  - echo: !e!x a\n", "!e!x", "scalar", 4, 11),
        ("%TAG !! tag:example.com,2000:\n---\nsteps:\n  - echo: !!str a\n", "!!str", "scalar", 4, 11),
        ("steps:\n  - echo: !!map a\n", "!!map", "scalar", 2, 11),
        ("steps:\n  - echo: !!str [a]\n", "!!str", "list", 2, 11),
        ("steps:\n  - echo: !!seq { a: 1 }\n", "!!seq", "mapping", 2, 11),
        ("!foo\nsteps: []\n", "!foo", "mapping", 1, 1),
        ("steps:\n  - tool: t\n    args: { !foo a: 1 }\n", "!foo", "scalar", 3, 13),
    ],
)
def test_an_unknown_yaml_tag_is_refused_before_any_step(
    text: str, tag: str, kind: str, line: int, column: int
) -> None:
    err = parse_error(text)
    assert err.error_code == "FLOW_FILE_INVALID"
    assert err.message == UNKNOWN_TAG.format(tag=tag, kind=kind, line=line, column=column)
    assert err.line == line


def test_the_yaml_core_tags_keep_working() -> None:
    flow = parse_flow(
        "steps: !!seq\n"
        "  - echo: !!str 12\n"
        "  - wait: !!int '250'\n"
        "  - wait: !!float 2\n"
        "  - !!map { echo: !!null '' }\n"
        "  - echo: !!bool true\n"
        "  - echo: ! 7\n"
        "  - echo: !<tag:yaml.org,2002:str> verbatim\n"
        "  - tool: t\n"
        "    args: !!map { a: !!seq [1], b: !!str 2 }\n"
    )
    assert [getattr(step, "message", getattr(step, "ms", None)) for step in flow.steps[:4]] == [
        "12",
        250,
        2,
        "null",
    ]
    assert flow.steps[4] == EchoStep("true")
    assert flow.steps[6] == EchoStep("verbatim")
    step = flow.steps[7]
    assert isinstance(step, ToolStep)
    assert step.args == {"a": [1], "b": "2"}


# --------------------------------------------------------------------------------------------
# flow files are UTF-8 (issue 10, item 5)

NOT_UTF8 = (
    "Invalid flow file: /p/.argent/flows/x.yaml is not UTF-8 text ({what}) at line {line}, column {column} — a "
    "flow file is YAML text in UTF-8; save it as UTF-8"
)


@pytest.mark.parametrize(
    ("data", "what", "line", "column"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "invalid byte 0x89", 1, 1),
        (b"steps:\n  - echo: ok\n  - echo: caf\xe9\n", "invalid byte 0xe9", 3, 14),
        ("steps:\n  - echo: é\n".encode() + b"  - echo: \xc3\n", "invalid byte 0xc3", 3, 11),
        ("steps:\n  - echo: a\n".encode("utf-16"), "a UTF-16 byte order mark", 1, 1),
        (b"\xfe\xff" + "steps:\n  - echo: a\n".encode("utf-16-be"), "a UTF-16 byte order mark", 1, 1),
        (bytes(range(128, 256)), "invalid byte 0x80", 1, 1),
    ],
    ids=["png", "latin-1", "truncated", "utf-16-le", "utf-16-be", "binary"],
)
def test_a_flow_file_that_is_not_utf8_is_a_parse_error(
    data: bytes, what: str, line: int, column: int
) -> None:
    with pytest.raises(FlowParseError) as info:
        decode_flow(data, "/p/.argent/flows/x.yaml")
    err = info.value
    assert err.error_code == "FLOW_FILE_INVALID"
    assert err.message == NOT_UTF8.format(what=what, line=line, column=column)
    assert err.line == line


def test_utf8_with_or_without_a_byte_order_mark_reads() -> None:
    for data in ("steps:\n  - echo: é\n".encode(), "\ufeffsteps:\n  - echo: é\n".encode()):
        assert parse_flow(decode_flow(data, "x.yaml")).steps == (EchoStep("é"),)
