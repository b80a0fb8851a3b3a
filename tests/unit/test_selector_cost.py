"""What resolving one selector on one screen may cost: bounded work and pattern time, a clear error past them."""

from __future__ import annotations

import time

import pytest

from argent.devices.base import Frame, UiNode, UiTree
from argent.errors import SelectorTooCostlyError
from argent.flows.model import Condition, Selector
from argent.limits import MAX_SELECTOR_WORK, PATTERN_MATCH_SECONDS
from argent.runner.selectors import Screen, best_match, evaluate, flatten, matches_for_condition


def grid(count: int) -> Screen:
    """``count`` small disjoint buttons: none inside, after-less or next to any in a cheap way."""
    side = int(count**0.5) + 1
    nodes = tuple(
        UiNode(
            role="button",
            frame=Frame((i % side) / side, (i // side) / side, 0.5 / side, 0.5 / side),
            label=f"b{i}",
        )
        for i in range(count)
    )
    return flatten(UiTree(root=UiNode(role="html", frame=Frame(0, 0, 1, 1), children=nodes)))


@pytest.mark.parametrize("scope", ["within", "after", "next"])
def test_a_scope_over_every_element_is_refused_past_the_work_bound(scope: str) -> None:
    screen = grid(3000)  # 9M pairs: over the bound
    assert MAX_SELECTOR_WORK < 3000 * 3000
    sel = Selector(role="button", **{scope: Selector(role="button")})
    t0 = time.monotonic()
    with pytest.raises(SelectorTooCostlyError, match="too costly on this screen"):
        matches_for_condition(sel, screen)
    assert time.monotonic() - t0 < 5


def test_a_backtracking_pattern_is_stopped_with_an_error_naming_it() -> None:
    screen = flatten(
        UiTree(
            root=UiNode(
                role="html",
                frame=Frame(0, 0, 1, 1),
                children=(UiNode(role="p", frame=Frame(0, 0, 1, 0.1), label="a" * 60 + "b"),),
            )
        )
    )
    cond = Condition(kind="visible", selector=Selector(text_matches="^(a|aa)+$"))
    t0 = time.monotonic()
    with pytest.raises(SelectorTooCostlyError, match=r"/\^\(a\|aa\)\+\$/ took more than .* backtracks"):
        evaluate(cond, screen)
    assert time.monotonic() - t0 < PATTERN_MATCH_SECONDS * 10


def test_each_resolution_gets_its_own_bound() -> None:
    """A cheap selector resolved many times never adds up to a refusal."""
    screen = grid(500)
    sel = Selector(text="b499", within=Selector(role="button", after=Selector(text="b0")))
    for _ in range(20):
        best_match(sel, screen)
