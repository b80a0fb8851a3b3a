"""libyaml's events (``ruamel.yaml.clib``) compose the graph the pure-Python path composes.

The parser reads a flow through libyaml when it is installed and falls back to the pure-Python
path on any error, so every refusal keeps its words; what must hold is that a text libyaml composes
gives the same nodes (kinds, values, plain or quoted, marks) and the same count as the pure path,
and that a text the pure path refuses is never accepted through libyaml.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml.nodes import MappingNode, ScalarNode

from argent.errors import FlowParseError
from argent.flows import parse as P

needs_libyaml = pytest.mark.skipif(P.CParser is None, reason="ruamel.yaml.clib is not installed")

ROOT = Path(__file__).resolve().parents[2]

SNIPPETS = [
    "steps:\n  - echo: hi\n",
    "steps:\r\n  - echo: crlf\r\n  - wait: 10\r\n",
    "\ufeffsteps:\n  - echo: bom\n",
    "%YAML 1.2\n---\nsteps:\n  - echo: directive\n...\n",
    "---\nsteps: [ {echo: flow}, {wait: 5}, {tap: {id: a, within: {role: list}}} ]\n",
    "steps:\n  - echo: |\n      literal\n        kept\n  - echo: >-\n      folded\n      text\n",
    "steps:\n  - echo: 'single ''quoted'''\n  - echo: \"double \\u00e9 \\t \\n \\x41\"\n",
    "steps:\n  - echo: yes\n  - echo: on\n  - echo: 0x1F\n  - echo: 1_000\n  - echo: .inf\n  - echo: ~\n",
    "steps:\n  - echo:\n  - echo: ''\n  - echo: \"\"\n",
    "# a comment\nsteps: # another\n  - echo: hi # trailing\n  # between\n  - echo: there\n",
    "base: &b {echo: anchored}\nsteps:\n  - *b\n  - *b\n",
    "a: &a [*a]\nsteps:\n  - echo: cyclic anchor above\n",
    "steps:\n  - echo: \u00e9\u4e2d\U0001f600 unicode\n  - echo: \u2028 separator\n",
    "steps:\n  - ? complex key\n    : value\n",
    "steps:\n  - tool: t\n    args: {a: [1, 2.5, -3, null, true], b: {c: d}}\n",
    "steps:\n  - when: { platform: chromium }\n    steps:\n      - echo: nested\n",
    "steps:\n- echo: indentless\n- wait: 1\n",
    "steps:\n  - echo: plain\n    multi line\n    scalar\n",
    "executionPrerequisite: x\nsteps:\n  - launch: { target: 'http://example.test/' }\n",
    # texts the pure path refuses: libyaml must not make them pass
    "steps:\n  - echo: [unclosed\n",
    "steps:\n\t- echo: tab\n",
    "a: 1\na: 2\n",
    "steps:\n  - echo: \x07bell\n",
    "key: value\n  bad indent: x\n",
    "steps: *undefined\n",
    "%YAML 2.0\n---\nsteps: []\n",
    "steps:\n  - echo: a\n---\nsteps:\n  - echo: b\n",
    "!!str steps",
    "steps: !custom x\n",
    "'unterminated\n",
    "{a: 1, b: [1, 2}\n",
]


def _same(a: Any, b: Any, seen: set[tuple[int, int]]) -> None:
    if (id(a), id(b)) in seen:
        return
    seen.add((id(a), id(b)))
    assert type(a) is type(b)
    for mark in ("start_mark", "end_mark"):
        ma, mb = getattr(a, mark), getattr(b, mark)
        assert (ma.line, ma.column, ma.index) == (mb.line, mb.column, mb.index), mark
    if isinstance(a, ScalarNode):
        assert (a.value, a.style) == (b.value, b.style)
        return
    assert len(a.value) == len(b.value)
    if isinstance(a, MappingNode):
        for (ka, va), (kb, vb) in zip(a.value, b.value, strict=True):
            _same(ka, kb, seen)
            _same(va, vb, seen)
    else:
        for ia, ib in zip(a.value, b.value, strict=True):
            _same(ia, ib, seen)


@needs_libyaml
@pytest.mark.parametrize("text", [*SNIPPETS, "corpus"])
def test_libyaml_composes_what_the_pure_path_composes(text: str) -> None:
    texts = _corpus() if text == "corpus" else [text]
    for one in texts:
        try:
            pure, pure_count = P._compose_pure(one)
        except FlowParseError:
            pure = None
        try:
            fast, fast_count = P._compose_c(one)
        except Exception:
            continue  # the parser reads it again through the pure path
        assert pure is not None, f"libyaml accepts what the pure path refuses: {one!r}"
        assert fast_count == pure_count
        _same(pure, fast, set())


@needs_libyaml
def test_what_libyaml_reads_otherwise_is_read_by_the_pure_path() -> None:
    for text in ("steps:\n  - echo: !!str 12\n", "steps:\n  - echo:\n", "\ufeffsteps: []\n"):
        with pytest.raises(P._PurePathOnly):
            P._compose_c(text)
    assert P.parse_flow("steps:\n  - echo: !!str 12\n").steps[0].message == "12"  # type: ignore[attr-defined]


def test_a_folded_scalar_reads_as_yaml_folds_it_on_either_path() -> None:
    text = "steps:\n  - echo: >-\n      folded\n      text\n  - echo: >\n      a\n      b\n\n      c\n        more\n"
    steps = P.parse_flow(text).steps
    assert [step.message for step in steps] == ["folded text", "a b\nc\n  more\n"]  # type: ignore[attr-defined]
    pure, _ = P._compose_pure(text)
    folded = [item.value[0][1].value for item in pure.value[0][1].value]
    assert folded == ["folded text", "a b\nc\n  more\n"]


@needs_libyaml
def test_a_refusal_met_through_libyaml_keeps_the_pure_paths_words() -> None:
    text = "steps:\n  - echo: [unclosed\n"
    with pytest.raises(FlowParseError) as via_parse:
        P.parse_flow(text)
    with pytest.raises(FlowParseError) as via_pure:
        P._compose_pure(text)
    assert str(via_parse.value) == str(via_pure.value)


def _corpus() -> list[str]:
    files = sorted(p for pattern in ("examples/**/*.yaml", "tests/**/*.yaml") for p in ROOT.glob(pattern))
    shapes = (
        "  - echo: step {i}\n",
        "  - tap: {{ id: button-{i}, within: {{ role: list }} }}\n",
        '  - await: {{ visible: "Row {i}", timeout: 5000 }}\n',
        "  - tool: gesture-scroll\n    args: {{ x: 0.5, y: 0.5, deltaY: {i} }}\n",
        "  - when: {{ platform: chromium }}\n    steps:\n      - wait: 10\n",
    )
    big = "steps:\n" + "".join(shapes[i % len(shapes)].format(i=i) for i in range(500))
    return [*(p.read_text(encoding="utf-8") for p in files), big]
