"""A flow's text patterns are validated by the engine that matches them (the ``regex`` package): a
pattern Python's ``re`` takes and ``regex`` refuses is refused when the flow is parsed (it used to parse,
then match nothing), one only ``regex`` takes parses and matches, and a pattern whose counted repetitions
would take gigabytes to compile is refused before it is compiled."""

from __future__ import annotations

import re
import time
import warnings

import pytest
import regex

from argent.devices.base import Frame, UiNode, UiTree
from argent.errors import FlowParseError
from argent.flows.grammar import PatternProblem, compile_pattern, regex_problem
from argent.flows.model import AssertStep, Condition, Selector
from argent.flows.parse import parse_flow
from argent.limits import MAX_PATTERN_REPEATS
from argent.runner.selectors import Screen, evaluate, flatten

#: ``re`` reads ``[[:bogus:]]`` as the set ``[:bogus`` then a ``]``; ``regex`` reads a POSIX class and
#: refuses the unknown name.
ONLY_RE = "[[:bogus:]]"
#: A Unicode property class: ``regex`` only (``re`` calls ``\p`` a bad escape).
ONLY_REGEX = r"^\p{Lu}\p{Ll}+$"


def re_accepts(pattern: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # re warns "Possible nested set" on [[
        try:
            re.compile(pattern)
        except re.error:
            return False
    return True


def regex_message(pattern: str) -> str:
    with pytest.raises(regex.error) as info:
        regex.compile(pattern)
    return str(info.value)


def parse_error(yaml: str) -> FlowParseError:
    with pytest.raises(FlowParseError) as info:
        parse_flow(yaml)
    return info.value


def screen_of(*labels: str) -> Screen:
    nodes = tuple(
        UiNode(role="button", frame=Frame(0.1 * i, 0.1, 0.05, 0.05), label=label)
        for i, label in enumerate(labels)
    )
    return flatten(UiTree(root=UiNode(role="html", frame=Frame(0, 0, 1, 1), children=nodes)))


def test_the_two_engines_really_disagree_on_the_examples() -> None:
    assert re_accepts(ONLY_RE)
    assert regex_message(ONLY_RE) == "unknown property at position 10"
    assert not re_accepts(ONLY_REGEX)
    assert regex.compile(ONLY_REGEX).search("Émile")


@pytest.mark.parametrize(
    ("yaml", "prefix"),
    [
        (
            f"steps:\n  - assert: {{ visible: {{ text: {{ matches: '{ONLY_RE}' }} }} }}\n",
            "assert.visible: text `matches` is not a valid regular expression: ",
        ),
        (
            f"steps:\n  - assert: {{ text: {{ in: {{ id: total }}, matches: '{ONLY_RE}' }} }}\n",
            "assert text `matches` is not a valid regular expression: ",
        ),
    ],
)
def test_a_pattern_only_re_accepts_is_refused_when_the_flow_is_parsed(yaml: str, prefix: str) -> None:
    err = parse_error(yaml)
    assert err.error_code == "FLOW_ENTRY_UNRECOGNIZED"
    assert f"({prefix}unknown property at position 10)" in err.message


def test_a_pattern_only_regex_accepts_parses_and_matches() -> None:
    flow = parse_flow(f"steps:\n  - assert: {{ visible: {{ text: {{ matches: '{ONLY_REGEX}' }} }} }}\n")
    step = flow.steps[0]
    assert isinstance(step, AssertStep)
    assert step.condition.selector is not None and step.condition.selector.text_matches == ONLY_REGEX
    assert evaluate(step.condition, screen_of("Émile")).ok
    assert not evaluate(step.condition, screen_of("émile", "EMILE")).ok


def test_matching_and_validation_share_one_compile() -> None:
    assert compile_pattern(ONLY_REGEX) is compile_pattern(ONLY_REGEX)
    assert regex_problem(ONLY_REGEX) is None
    assert regex_problem(ONLY_RE) == "unknown property at position 10"
    # A condition built in code (never parsed) with a refused pattern matches nothing; it does not raise.
    cond = Condition(kind="visible", selector=Selector(text_matches=ONLY_RE))
    assert not evaluate(cond, screen_of("[:bogus]", "b")).ok


@pytest.mark.parametrize(
    "pattern", ["a{10000000}", "(?:a{1000}){1000}", r"\\{2147483648}", "x{" + "9" * 5000 + "}"]
)
def test_a_pattern_whose_counted_repetitions_would_take_gigabytes_is_refused_before_compiling(
    pattern: str,
) -> None:
    t0 = time.monotonic()
    problem = regex_problem(pattern)
    assert time.monotonic() - t0 < 0.5
    assert problem == (
        f"its counted repetitions ({{n}}, {{n,m}}) repeat more than {MAX_PATTERN_REPEATS:,} times together "
        "(the engine unrolls them) — use an open repetition (+, *, {n,}) instead"
    )
    err = parse_error(f"steps:\n  - assert: {{ visible: {{ text: {{ matches: '{pattern}' }} }} }}\n")
    assert problem in err.message


@pytest.mark.parametrize(
    "pattern", [r"^\d{4}-\d{2}-\d{2}$", r"(\d{1,3}\.){3}\d{1,3}", "a{0,2147483647}", "a{99999}"]
)
def test_everyday_counted_repetitions_still_compile(pattern: str) -> None:
    try:
        compile_pattern(pattern)
    except PatternProblem as exc:  # pragma: no cover - the assertion below names it
        pytest.fail(str(exc))
