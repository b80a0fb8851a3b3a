"""The time limit of a selector's text patterns is counted around the matching itself, in wall time,
so its error's "took more than <limit>s" is exact: the regex engine's own clock (the CPU time of the
whole process) does not end a match early when other threads are busy, and element checks do not
count as pattern time."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator

import pytest

from argent.devices.base import Frame, UiNode, UiTree
from argent.errors import SelectorTooCostlyError
from argent.flows.model import Condition, Selector
from argent.limits import PATTERN_MATCH_SECONDS
from argent.runner.selectors import Screen, evaluate, flatten

BACKTRACKS = "^(a|aa)+$"


def screen_of(*labels: str) -> Screen:
    children = tuple(
        UiNode(role="p", frame=Frame(0, i / (len(labels) + 1), 1, 0.5 / (len(labels) + 1)), label=label)
        for i, label in enumerate(labels)
    )
    return flatten(UiTree(root=UiNode(role="html", frame=Frame(0, 0, 1, 1), children=children)))


@pytest.fixture
def busy_thread() -> Iterator[None]:
    """Another thread of this process on a core (hashing releases the GIL): the regex engine's clock,
    the process's CPU time, runs up to twice as fast as the wall clock while it works."""
    stop = threading.Event()
    data = b"x" * (8 << 20)

    def burn() -> None:
        while not stop.is_set():
            hashlib.sha256(data).digest()

    thread = threading.Thread(target=burn, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def test_a_pattern_is_stopped_only_after_the_limit_in_wall_time(busy_thread: None) -> None:
    cond = Condition(kind="visible", selector=Selector(text_matches=BACKTRACKS))
    t0 = time.monotonic()
    with pytest.raises(SelectorTooCostlyError) as caught:
        evaluate(cond, screen_of("a" * 60 + "b"))
    took = time.monotonic() - t0
    assert caught.value.message.startswith(
        f"the text pattern /{BACKTRACKS}/ took more than {PATTERN_MATCH_SECONDS:g}s to match this screen: "
        "it backtracks catastrophically"
    ), caught.value.message
    assert took >= PATTERN_MATCH_SECONDS
    assert took < PATTERN_MATCH_SECONDS * 10


def test_the_time_of_one_pattern_over_many_elements_adds_up() -> None:
    """Each element's match is short (a few ms); together they pass the limit, and the message
    names the pattern: it alone took that time."""
    slow = "a" * 18 + "c"
    cond = Condition(kind="visible", selector=Selector(text_matches=BACKTRACKS))
    t0 = time.monotonic()
    with pytest.raises(SelectorTooCostlyError) as caught:
        evaluate(cond, screen_of(*[slow] * 5000))
    assert caught.value.message.startswith(
        f"the text pattern /{BACKTRACKS}/ took more than {PATTERN_MATCH_SECONDS:g}s to match this screen"
    ), caught.value.message
    assert PATTERN_MATCH_SECONDS <= time.monotonic() - t0 < PATTERN_MATCH_SECONDS * 10


def test_patterns_that_share_the_limit_are_named_together() -> None:
    """A selector's own pattern takes a little of the limit, its scope's pattern the rest: neither
    alone took more than the limit, and the message says so, naming both (the larger share first)."""
    other = "^(b|bb)+$"
    sel = Selector(text_matches=BACKTRACKS, within=Selector(text_matches=other))
    # The own pattern: a match ("aaaa") and 20 short slow ones; the scope's: 5,000 short slow ones.
    labels = ["aaaa"] + ["a" * 18 + "c"] * 20 + ["b" * 18 + "c"] * 5000
    t0 = time.monotonic()
    with pytest.raises(SelectorTooCostlyError) as caught:
        evaluate(Condition(kind="visible", selector=sel), screen_of(*labels))
    assert caught.value.message == (
        f"the text patterns /{other}/ and /{BACKTRACKS}/ took more than {PATTERN_MATCH_SECONDS:g}s together to "
        "match this screen: one of them backtracks catastrophically (a repetition inside a repetition, like "
        "(a+)+ or (a|aa)*) — write it without nested repetition"
    )
    assert PATTERN_MATCH_SECONDS <= time.monotonic() - t0 < PATTERN_MATCH_SECONDS * 10
