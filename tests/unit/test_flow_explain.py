"""The YAML reader's problems, and the grammar's, said in plain words with the line to edit
(``argent.flows.explain``): what `argent flow check` and `argent flow run`'s check print. The parser's
own message (the upstream-shaped ``FLOW_FILE_INVALID`` text) is unchanged."""

from __future__ import annotations

import pytest

from argent.errors import FlowParseError, YamlSyntax
from argent.flows.explain import GENERAL_TODO, Explained, explain_parse_error
from argent.flows.parse import parse_flow

CASES = [
    (
        "steps:\n  - tap: a\n   - tap: b\n",
        3,
        "this list item (`- `) is indented by 3 spaces, which matches no list above it",
    ),
    (
        "steps:\n  - tap: a\n - tap: b\n",
        3,
        "this list item (`- `) is indented by 1 space, which matches no list above it",
    ),
    ("steps:\n  - echo: Note: this\n", 2, 'a value holds ": ", which YAML reads as the start of another key'),
    ('steps:\n  - echo: "hello\n  - tap: b\n', 2, "a quote opened on this line is never closed"),
    (
        "steps:\n  - tap: { id: save\n  - tap: b\n",
        2,
        "the `{` opened on this line is not closed where it should be (line 3 goes on without a `,` or `}`)",
    ),
    (
        "steps:\n  - upload: { into: x, files: [a, b }\n",
        2,
        "the `[` opened on this line is not closed where it should be",
    ),
    ("steps:\n\t- tap: a\n", 2, "a tab character indents this line"),
    (
        "steps:\n  - tap: *star\n",
        2,
        "a value begins with `*`, which YAML reads as a reference to an anchor `&star` that the file lacks",
    ),
    ("steps:\n  - tap: @home\n", 2, 'a value begins with "@", which YAML reserves'),
    ("steps:\n  - tap: a\n  tap b\n  - x\n", 3, "this line is neither `key: value` nor a list item"),
    (
        "steps:\n  - type:\n      into: a\n     text: b\n",
        4,
        "this key is indented differently from the keys above it",
    ),
    ('steps:\n  - echo: "a" b\n', 2, "text follows a closing quote on this line"),
    ("steps:\n  - tap: a\n  foo: b\n", 3, "a `key: value` line stands where the list of steps goes on"),
    (
        "steps:\n  - echo: |x\n",
        2,
        "a value begins with `|` or `>`, which starts a block of text that must end its line",
    ),
    ("steps:\n  - tap: { id: a }}\n", 2, "a closing `}` here has no opening `{` before it"),
    ("steps: ][\n", 1, "a closing `]` here has no opening `[` before it"),
    ("steps:\n  - tap: a\n---\nx: 1\n", 3, "a `---` line starts a second YAML document"),
    ("steps:\n  -tap: a\n", None, "the file is not a flow: a flow is a mapping with a `steps:` list"),
    ("steps:\n  - tap:a\n", 2, "step 1 is plain text, not `<directive>: <value>`"),
    (
        "steps:\n  - echo: ok\n  - snapshoot: home\n",
        3,
        "step 2: unrecognized step kind (did you mean `snapshot`?)",
    ),
    ("steps:\n  - tap: a\n  - tap: b\nsteps: []\n", 4, "the key `steps` is written twice in one mapping"),
]


@pytest.mark.parametrize(("text", "line", "what"), CASES)
def test_each_problem_in_plain_words_at_its_line(text: str, line: int | None, what: str) -> None:
    with pytest.raises(FlowParseError) as raised:
        parse_flow(text)
    said = explain_parse_error(raised.value, text)
    assert (said.line, said.what) == (line, what)
    assert said.todo and said.todo[0].isupper()
    for jargon in ("<block end>", "<block sequence start>", "while parsing", "while scanning"):
        assert jargon not in said.what + said.todo


def test_the_parsers_message_keeps_the_readers_words() -> None:
    """The wire's FLOW_FILE_INVALID text is what upstream clients match: only the plain words are new."""
    with pytest.raises(FlowParseError) as raised:
        parse_flow(CASES[0][0])
    assert str(raised.value) == (
        "Invalid flow file: while parsing a block collection, expected <block end>, but found "
        "'<block sequence start>' at line 3, column 4"
    )
    assert raised.value.syntax is not None and raised.value.syntax.context_line == 2


def test_a_problem_the_table_does_not_name_keeps_the_readers_words_and_a_general_hint() -> None:
    syntax = YamlSyntax("while reading a thing", "found something new", 7, 3, 5)
    exc = FlowParseError("Invalid flow file: ...", line=7, syntax=syntax)
    said = explain_parse_error(exc, "")
    assert said == Explained(
        7, "the YAML cannot be read here (while reading a thing, found something new)", GENERAL_TODO
    )
