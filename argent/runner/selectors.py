"""The selector engine: which on-screen elements a flow selector or condition means.

Pure functions over one read of the UI tree. ``flatten`` turns a ``UiTree`` into a
``Screen``: the elements a selector can name (leaves under one synthetic root) with
their frames and the text hoisted from their subtrees. ``matches_for_condition`` and
``best_match`` resolve a selector the way conditions and actions need it, and
``evaluate`` answers a condition with the exact reason when it does not hold.

Matching rules (all given fields must hold):

* ``text`` — case-insensitive substring of the element's label or of its value; when no element's
  own text holds it (and no ``role`` is given), of an element's whole text (all the text inside it,
  as a person reads it: a highlighted code line's spans), the deepest such element;
* ``text: {matches}`` — the regular expression found (unanchored, case-sensitive) in
  the non-empty label or value (by the ``regex`` engine: it can stop a pattern that backtracks
  catastrophically, which ``re`` cannot, and releases the GIL while it matches);
* ``id`` — case-insensitive equality, or the unqualified Android resource id
  (``pkg:id/name`` matches ``name``);
* ``role`` — the element's ARIA role, case-insensitive, or a case-insensitive substring of what
  upstream called it (a web element's ``role`` attribute, else its tag name: ``role: input``);
  with a ``role`` that names the element's ARIA role, ``text`` also matches any text inside it;
* ``css`` — the element matches that CSS selector (the device marks the matches in its read);
* ``any: true`` — every element (the parser requires a scope beside it).

A *loose* selector (a bare YAML string) means "the element with this identifier, else
the element with this text": it expands into alternatives, identifier first, through
every loose scope too. Scopes narrow the candidates in the order within, after, next;
each is resolved on the same screen and a node is never its own anchor.

What one resolution may cost is bounded (``limits.MAX_SELECTOR_WORK`` element checks and scope
pairs, ``limits.PATTERN_MATCH_SECONDS`` of pattern matching, in wall time, stopped late rather than
early under load: see the limit): past it ``SelectorTooCostlyError`` names the selector or
pattern, so a few bytes of selector never hold a worker for minutes. The
runner calls the entry points on the CPU pool (``argent.cpu``), off the event loop.
"""

from __future__ import annotations

import functools
import hashlib
import re
import time
from collections.abc import Callable, Iterable, Sequence
from contextvars import ContextVar
from typing import ParamSpec, TypeVar

from attrs import define, evolve, field, frozen

from argent.devices.base import Frame, UiNode, UiTree
from argent.errors import SelectorTooCostlyError
from argent.flows.grammar import PatternProblem, compile_pattern
from argent.flows.model import Condition, Selector
from argent.flows.names import describe_selector
from argent.limits import MAX_SELECTOR_WORK, PATTERN_MATCH_SECONDS
from argent.runner.teach import listed, nearest, plural, quoted

#: Slack of the geometric scopes, as a fraction of the screen.
SCOPE_TOLERANCE = 0.005
#: Longest hoisted subtree text kept per element.
MAX_SUBTREE_TEXT = 2000
#: Roles of the elements that hold a frame: always kept, a ``within:`` scope for what the frame shows.
FRAME_ROLES = frozenset({"iframe", "frame"})
#: The label a password field carries instead of its content.
PASSWORD_LABEL = "[password]"

_SPACE = re.compile(r"\s+")


@frozen
class Leaf:
    """An element a selector can name: one node of the tree with its hoisted subtree text."""

    order: int
    role: str
    frame: Frame
    label: str = ""
    value: str = ""
    identifier: str = ""
    subtree_text: str = ""
    clickable: bool = False
    focused: bool = False
    scrollable: bool = False
    kind: str = ""
    #: A placeholder or title that is not the element's name (``text`` matches it too).
    description: str = ""
    css: frozenset[str] = frozenset()
    #: Kept for its ARIA role alone (a list, a row, a nameless dialog): ``any: true`` passes it by, as
    #: upstream's flows knew no such element.
    role_only: bool = False
    #: All its text as a person reads it (the device's reading order where it gave one, else as
    #: ``subtree_text``); "" when it is ``subtree_text``.
    whole_text: str = ""
    #: The order of the last element inside it (its subtree spans ``order``..``end``).
    end: int = field(default=-1, eq=False)
    #: The element's number in a kept read (``PageSignals.kept_tree``), else -1.
    ref: int = field(default=-1, eq=False)

    @property
    def visible(self) -> bool:
        return self.frame.visible

    @property
    def own_text(self) -> str:
        """Label and value as one string (the value left out when it repeats the label)."""
        if self.label and self.value and self.value != self.label:
            return f"{self.label} {self.value}"
        return self.label or self.value

    @property
    def area(self) -> float:
        return self.frame.width * self.frame.height

    @property
    def whole(self) -> str:
        """All the text inside it, in reading order where the device knows it."""
        return self.whole_text or self.subtree_text


@frozen
class Screen:
    """One read of the UI tree, flattened; ``fingerprint`` compares reads for stillness."""

    leaves: tuple[Leaf, ...]
    truncated: bool = False
    fingerprint: str = ""
    #: Why nothing on the screen is visible, as the device read it (``UiTree.blank``).
    blank: str = ""

    @property
    def empty(self) -> bool:
        return not self.leaves


# --------------------------------------------------------------------------------------------
# Flattening


def _collapse(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def flatten(tree: UiTree) -> Screen:
    """The tree's elements under one synthetic root, in document order.

    An element is kept when it can be named or acted on: it has an identifier, a label,
    a value, an ARIA role (a read that tells the role from the ``kind`` of element), a CSS
    selector of the read it matches, or is clickable, focused or scrollable, or it holds a frame (an
    ``iframe``). The tree's own root is never kept. Each element carries the text of its whole subtree
    (its own first), whitespace-collapsed, and that text in reading order where the device gave it
    (``whole_text``: its own text and its children's interleave).
    """
    slots: list[Leaf | None] = []  # document order: a kept element's slot is taken before its children's

    def walk(node: UiNode) -> tuple[str, str]:
        """The subtree's text (own first, then the children's) and its whole text as read."""
        label = PASSWORD_LABEL if node.password and not node.label else _collapse(node.label)
        value = "" if node.password else _collapse(node.value)
        reading = "" if node.password else _collapse(node.text)
        slot = len(slots)
        named = bool(
            node.identifier or label or value or node.clickable or node.focused or node.scrollable or node.css
        )
        keep = named or bool(node.role and node.kind) or (node.kind or node.role) in FRAME_ROLES
        if keep:
            slots.append(None)  # filled below, once the subtree's text is known
        own = [label] if label else []
        if value and value != label:
            own.append(value)
        kids = [walk(child) for child in node.children]
        text = _bounded(" ".join([*own, *(t for t, _ in kids if t)]))
        if reading:
            whole = _bounded(f"{label} {reading}" if label and label not in reading else reading)
        elif any(w is not t for t, w in kids):
            whole = _bounded(" ".join([*own, *(w for _, w in kids if w)]))
        else:
            whole = text
        if keep:
            slots[slot] = Leaf(
                order=slot,
                role=node.role,
                frame=node.frame,
                label=label,
                value=value,
                identifier=node.identifier,
                subtree_text=text,
                clickable=node.clickable,
                focused=node.focused,
                scrollable=node.scrollable,
                kind=node.kind,
                description=_collapse(node.description),
                css=node.css,
                role_only=not named,
                whole_text="" if whole == text else whole,
                end=len(slots) - 1,
                ref=node.ref,
            )
        return text, whole

    for child in tree.root.children:
        walk(child)
    leaves = tuple(leaf for leaf in slots if leaf is not None)
    return Screen(
        leaves=leaves,
        truncated=tree.truncated,
        fingerprint=fingerprint(leaves, tree.scroll),
        blank=tree.blank,
    )


def _bounded(text: str) -> str:
    return text[:MAX_SUBTREE_TEXT] if len(text) > MAX_SUBTREE_TEXT else text


def fingerprint(leaves: Iterable[Leaf], scroll: str = "") -> str:
    """What must stay the same for two reads to count as one still screen."""
    h = hashlib.blake2b(digest_size=16)
    h.update(scroll.encode("utf-8", "surrogatepass") + b"\x1d")
    for leaf in leaves:
        f = leaf.frame
        h.update(
            (
                f"{leaf.role}\x1f{leaf.label}\x1f{leaf.value}\x1f{leaf.identifier}\x1f"
                f"{f.x:.3f},{f.y:.3f},{f.width:.3f},{f.height:.3f}\x1f{leaf.focused:d}\x1e"
            ).encode("utf-8", "surrogatepass")
        )
    return h.hexdigest()


# --------------------------------------------------------------------------------------------
# What one resolution may cost

P = ParamSpec("P")
R = TypeVar("R")


@define
class _Cost:
    """The work and pattern time left to the resolution under way."""

    work_left: int = MAX_SELECTOR_WORK
    #: Wall-clock seconds of pattern matching left (measured around each match), and each pattern's.
    pattern_seconds_left: float = PATTERN_MATCH_SECONDS
    pattern_seconds: dict[str, float] = field(factory=dict)


_COST: ContextVar[_Cost | None] = ContextVar("argent_selector_cost", default=None)


def bounded(fn: Callable[P, R]) -> Callable[P, R]:
    """An entry point: it (and every resolution it makes) shares one cost bound; nested calls join it."""

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        if _COST.get() is not None:
            return fn(*args, **kwargs)
        token = _COST.set(_Cost())
        try:
            return fn(*args, **kwargs)
        finally:
            _COST.reset(token)

    return run


def _spend(units: int, sel: Selector) -> None:
    cost = _COST.get()
    if cost is None:
        return
    cost.work_left -= units
    if cost.work_left < 0:
        raise SelectorTooCostlyError(
            f"selector {describe_selector(sel)} is too costly on this screen: resolving it takes more than "
            f"{MAX_SELECTOR_WORK:,} element checks (a scope over every element compares each with each) — "
            "narrow it and its scopes with text, id or role"
        )


# --------------------------------------------------------------------------------------------
# Matching one element


def _pattern_hit(pattern: str, text: str, *, whole: bool = False) -> bool:
    """Whether ``pattern`` is found in (or, ``whole``, matches all of) ``text``, within the time the
    resolution has left for patterns (``limits.PATTERN_MATCH_SECONDS``).

    The time is the wall clock's, around each match. The engine stops a match by its own clock,
    the CPU time of the whole process since the match began: busy threads beside it end a match
    early, and such a match runs again with what is left; a process waiting for a core ends it late."""
    try:
        rx = compile_pattern(pattern)
    except PatternProblem:  # refused when the flow was parsed; a condition built in code matches nothing
        return False
    cost = _COST.get() or _Cost()
    while cost.pattern_seconds_left > 0:
        t0 = time.monotonic()
        stopped = False
        try:
            left = cost.pattern_seconds_left
            found = rx.fullmatch(text, timeout=left) if whole else rx.search(text, timeout=left)
        except TimeoutError:
            stopped = True
        took = time.monotonic() - t0
        cost.pattern_seconds_left -= took
        cost.pattern_seconds[pattern] = cost.pattern_seconds.get(pattern, 0.0) + took
        if not stopped:
            return found is not None
    raise SelectorTooCostlyError(_too_slow(pattern, cost.pattern_seconds))


def _too_slow(pattern: str, seconds: dict[str, float]) -> str:
    """The error of patterns past their time (together ``seconds`` sum to at least the limit): the
    one that took it alone, else all that shared it, the largest share first."""
    fix = (
        "backtracks catastrophically (a repetition inside a repetition, like (a+)+ or (a|aa)*) — write it "
        "without nested repetition"
    )
    named = sorted(seconds, key=lambda p: -seconds[p]) or [pattern]
    if len(named) == 1 or seconds[named[0]] >= PATTERN_MATCH_SECONDS:
        return f"the text pattern /{named[0]}/ took more than {PATTERN_MATCH_SECONDS:g}s to match this screen: it {fix}"
    shown = ", ".join(f"/{p}/" for p in named[:-1]) + f" and /{named[-1]}/"
    return (
        f"the text patterns {shown} took more than {PATTERN_MATCH_SECONDS:g}s together to match this screen: "
        f"one of them {fix}"
    )


def regex_search(pattern: str, text: str) -> bool:
    return _pattern_hit(pattern, text)


def identifier_matches(actual: str, wanted: str) -> bool:
    a, w = actual.lower(), wanted.lower()
    return a == w or a.endswith(":id/" + w)


def role_matches(leaf: Leaf, role: str) -> bool:
    """The element's ARIA role is ``role``, or what upstream called it (its ``role`` attribute, else
    its tag name; off the web, its role) holds ``role``: case-insensitive."""
    wanted = role.lower()
    return wanted == leaf.role.lower() or wanted in (leaf.kind or leaf.role).lower()


def _texts(leaf: Leaf, sel: Selector, *, whole: bool = False) -> tuple[str, ...]:
    """The texts ``text`` is matched with: the name (label), the value and the description (a
    placeholder or title: upstream's label, kept matching); with a ``role`` that is the element's
    ARIA role, or ``whole`` (no element's own text matched), also all the text inside it."""
    if whole:
        return (leaf.label, leaf.value, leaf.description, leaf.whole)
    if sel.role is not None and leaf.kind and sel.role.lower() == leaf.role.lower():
        if leaf.whole_text:
            return (leaf.label, leaf.value, leaf.description, leaf.subtree_text, leaf.whole_text)
        return (leaf.label, leaf.value, leaf.description, leaf.subtree_text)
    if leaf.description:
        return (leaf.label, leaf.value, leaf.description)
    return (leaf.label, leaf.value)


def own_match(leaf: Leaf, sel: Selector, *, whole: bool = False) -> bool:
    """Whether the element satisfies the selector's own fields (scopes aside); ``whole``: its
    ``text`` by the whole text inside it too."""
    if sel.css is not None and sel.css not in leaf.css:
        return False
    if sel.role is not None and not role_matches(leaf, sel.role):
        return False
    if sel.identifier is not None and not identifier_matches(leaf.identifier, sel.identifier):
        return False
    if sel.text is not None:
        needle = sel.text.lower()
        if not any(needle in t.lower() for t in _texts(leaf, sel, whole=whole)):
            return False
    return sel.text_matches is None or any(
        t and regex_search(sel.text_matches, t) for t in _texts(leaf, sel, whole=whole)
    )


def exact_hits(leaf: Leaf, sel: Selector) -> int:
    """How many of the selector's fields the element matches exactly (ranks action targets)."""
    hits = 0
    if sel.text is not None:
        t = sel.text.lower()
        hits += any(s.lower() == t for s in _texts(leaf, sel))
    if sel.text_matches is not None:
        pattern = sel.text_matches
        hits += any(s and _pattern_hit(pattern, s, whole=True) for s in _texts(leaf, sel))
    if sel.identifier is not None:
        hits += leaf.identifier.lower() == sel.identifier.lower()
    if sel.role is not None:
        hits += sel.role.lower() in (leaf.role.lower(), leaf.kind.lower())
    if sel.css is not None:
        hits += 1
    return hits


# --------------------------------------------------------------------------------------------
# Geometry of the scopes


def inside(node: Frame, container: Frame, tol: float = SCOPE_TOLERANCE) -> bool:
    return (
        node.x >= container.x - tol
        and node.y >= container.y - tol
        and node.x + node.width <= container.x + container.width + tol
        and node.y + node.height <= container.y + container.height + tol
    )


def same_band(a: Frame, b: Frame, tol: float = SCOPE_TOLERANCE) -> bool:
    """The two frames share a row: their vertical extents overlap (beyond the tolerance)."""
    return a.y < b.y + b.height - tol and b.y < a.y + a.height - tol


def follows(node: Frame, anchor: Frame, tol: float = SCOPE_TOLERANCE) -> bool:
    """``node`` comes after ``anchor`` in reading order: strictly below it, or to its right in its row."""
    if anchor.y + anchor.height <= node.y + tol:
        return True
    return same_band(node, anchor, tol) and node.x >= anchor.x + anchor.width - tol


def beyond(frame: Frame, clip: Frame, direction: str) -> bool:
    """An off-screen element's (empty) frame sits on the edge of the area (``clip``) it lies beyond
    in ``direction`` (the way a scroll brings it)."""
    tol = SCOPE_TOLERANCE
    if direction == "down":
        return frame.y >= clip.y + clip.height - tol
    if direction == "up":
        return frame.y + frame.height <= clip.y + tol
    if direction == "right":
        return frame.x >= clip.x + clip.width - tol
    return frame.x + frame.width <= clip.x + tol


#: The ways a scroll goes, with the side of the area an element beyond it lies on.
SIDES = (("down", "below"), ("up", "above"), ("right", "to the right of"), ("left", "to the left of"))


def lies_beyond(frame: Frame, clip: Frame) -> tuple[str, str] | None:
    """(the direction that brings it, the side it lies on) for an element's frame beyond ``clip``
    (a clipped-away element's frame is the point where its box meets the area's edge); None for one
    in view or whose empty frame lies inside (hidden, or of no size)."""
    if frame.visible:
        return None
    for direction, side in SIDES:
        if beyond(frame, clip, direction):
            return direction, side
    return None


def reading_key(leaf: Leaf) -> tuple[float, float, int]:
    return (leaf.frame.y, leaf.frame.x, leaf.order)


def _nearest_follower(anchor: Leaf, candidates: Sequence[Leaf]) -> Leaf | None:
    followers = [c for c in candidates if c is not anchor and follows(c.frame, anchor.frame)]
    if not followers:
        return None
    band = [c for c in followers if same_band(c.frame, anchor.frame)]
    if band:
        return min(band, key=lambda c: (c.frame.x, c.area, c.order))
    return min(followers, key=lambda c: (c.frame.y, c.area, c.frame.x, c.order))


# --------------------------------------------------------------------------------------------
# Resolving selectors


@bounded
def resolve_strict(sel: Selector, leaves: Sequence[Leaf]) -> list[Leaf]:
    """Every element a strict selector (no loose expansion) names, in document order. When none does
    and it names a ``text`` (no ``role``: with an ARIA role, text inside matches already; with a tag,
    upstream's own text only), the deepest elements whose whole text holds it (``_deepest``), as a
    person reads a text drawn across several elements (Playwright's ``get_by_text`` alike)."""
    found = _resolve(sel, leaves, whole=False)
    if not found and sel.text is not None and sel.role is None and not sel.any:
        found = _resolve(sel, leaves, whole=True)
    return found


def _deepest(found: list[Leaf]) -> list[Leaf]:
    """The elements of ``found`` (in document order) that hold none of the others."""
    return [leaf for i, leaf in enumerate(found) if i + 1 == len(found) or found[i + 1].order > leaf.end]


def _resolve(sel: Selector, leaves: Sequence[Leaf], *, whole: bool) -> list[Leaf]:
    _spend(len(leaves), sel)
    if sel.any:
        found = [leaf for leaf in leaves if not leaf.role_only]
    else:
        found = [leaf for leaf in leaves if own_match(leaf, sel, whole=whole)]
        if whole:
            found = _deepest(found)
    if sel.within is not None and found:
        containers = [a for a in resolve_strict(sel.within, leaves) if a.visible]
        _spend(len(found) * len(containers), sel)
        found = [c for c in found if any(a is not c and inside(c.frame, a.frame) for a in containers)]
    if sel.after is not None and found:
        anchors = [a for a in resolve_strict(sel.after, leaves) if a.visible]
        _spend(len(found) * len(anchors), sel)
        found = [c for c in found if any(a is not c and follows(c.frame, a.frame) for a in anchors)]
    if sel.next is not None and found:
        anchors = [a for a in resolve_strict(sel.next, leaves) if a.visible]
        _spend(len(found) * len(anchors), sel)
        picked: dict[int, Leaf] = {}
        for anchor in anchors:
            nearest = _nearest_follower(anchor, found)
            if nearest is not None:
                picked[nearest.order] = nearest
        found = [picked[k] for k in sorted(picked)]
    return found


def alternatives(sel: Selector) -> list[Selector]:
    """The strict selectors a selector stands for: identifier first, then text, at every loose level."""
    if sel.loose and sel.text is not None:
        own = [
            Selector(identifier=sel.text, within=sel.within, after=sel.after, next=sel.next),
            evolve(sel, loose=False),
        ]
    else:
        own = [sel]

    def options(scope: Selector | None) -> list[Selector | None]:
        return list(alternatives(scope)) if scope is not None else [None]

    return [
        evolve(base, within=within, after=after, next=nxt)
        for base in own
        for within in options(sel.within)
        for after in options(sel.after)
        for nxt in options(sel.next)
    ]


@bounded
def matches_for_condition(sel: Selector, screen: Screen) -> tuple[Selector, list[Leaf]]:
    """The matches a condition judges: the first alternative with a visible match, else the
    first alternative with any match (with the alternative that produced them)."""
    fallback: tuple[Selector, list[Leaf]] | None = None
    for alt in alternatives(sel):
        found = resolve_strict(alt, screen.leaves)
        if any(leaf.visible for leaf in found):
            return alt, found
        if found and fallback is None:
            fallback = (alt, found)
    return fallback if fallback is not None else (sel, [])


@bounded
def best_match(sel: Selector, screen: Screen) -> Leaf | None:
    """The element an action acts on: from the first alternative that has a visible match, the
    one with the most exact field hits, then the smallest, then the top-most, left-most one
    (``any: true``: the first in reading order)."""
    for alt in alternatives(sel):
        visible = [leaf for leaf in resolve_strict(alt, screen.leaves) if leaf.visible]
        if not visible:
            continue
        if alt.any:
            return min(visible, key=reading_key)
        return min(visible, key=lambda leaf: (-exact_hits(leaf, alt), leaf.area, *reading_key(leaf)))
    return None


# --------------------------------------------------------------------------------------------
# Conditions


@frozen
class Verdict:
    ok: bool
    reason: str | None = None


def css_selectors(*sels: Selector | None) -> tuple[str, ...]:
    """The CSS selectors a read must mark for these selectors to resolve (their scopes' too), each
    once, in the order met."""
    found: dict[str, None] = {}
    stack = [sel for sel in reversed(sels) if sel is not None]
    while stack:
        sel = stack.pop()
        if sel.css is not None:
            found.setdefault(sel.css)
        stack.extend(scope for scope in (sel.next, sel.after, sel.within) if scope is not None)
    return tuple(found)


# --------------------------------------------------------------------------------------------
# Messages that teach


def off_screen_reason(sel: Selector) -> str:
    return (
        f"no visible element matched selector {describe_selector(sel)} — if it is off-screen, add a "
        "scroll-to step before this one"
    )


#: The whole screen, as frames measure it.
_SCREEN = Frame(0.0, 0.0, 1.0, 1.0)


def where_off_screen(found: Sequence[Leaf], screen: Screen) -> str | None:
    """Where the first of ``found`` that lies off-screen lies, and what brings it: `` — one lies
    below the screen: add a scroll-to step before this one`` (beyond a scroll area's view that holds
    it: a scroll-to ``within:`` it); None when none does (hidden, or of no size)."""
    for leaf in found:
        if leaf.visible:
            continue
        for area in screen.leaves:
            if area.scrollable and area.visible and area.order < leaf.order <= area.end:
                where = lies_beyond(leaf.frame, area.frame)
                if where is not None:
                    return (
                        f" — one lies {where[1]} the view of its scroll area ({_area(area)}): add a scroll-to "
                        "step with within: that area before this one"
                    )
        where = lies_beyond(leaf.frame, _SCREEN)
        if where is not None:
            way = "" if where[0] == "down" else f" (direction: {where[0]})"
            return f" — one lies {where[1]} the screen: add a scroll-to step{way} before this one"
    return None


def _area(leaf: Leaf) -> str:
    """A scroll area as a person would name it in a ``within:``: its id, else its role and label."""
    if leaf.identifier:
        return f"id {quoted(leaf.identifier)}"
    return f"{_what(leaf)} {quoted(leaf.label)}" if leaf.label else _what(leaf)


@bounded
def miss_reason(sel: Selector, screen: Screen) -> str:
    """Why an action found no visible element for ``sel``: where one that matches lies off-screen,
    the off-screen hint when one matches but none is visible, else what on the screen comes nearest
    (``no_match_reason``)."""
    try:
        found = [leaf for alt in alternatives(sel) for leaf in resolve_strict(alt, screen.leaves)]
        if found:
            where = where_off_screen(found, screen)
            if where is not None:
                return f"no visible element matched selector {describe_selector(sel)}{where}"
            return off_screen_reason(sel)
        return f"no visible element matched selector {describe_selector(sel)}{_nearby(sel, screen)}"
    except SelectorTooCostlyError:
        return off_screen_reason(sel)


@bounded
def no_match_reason(sel: Selector, screen: Screen | None = None) -> str:
    """``no element matched selector …``, followed (given the screen) by what comes nearest: the
    scope that matched nothing, the elements of the asked role with their names, the nearest texts,
    roles or ids (bounded: see ``argent.runner.teach``)."""
    head = f"no element matched selector {describe_selector(sel)}"
    if screen is None:
        return head
    try:
        return head + _nearby(sel, screen)
    except SelectorTooCostlyError:
        return head


def _shows(sel: Selector, screen: Screen) -> bool:
    return any(leaf.visible for alt in alternatives(sel) for leaf in resolve_strict(alt, screen.leaves))


def _what(leaf: Leaf) -> str:
    return leaf.role or leaf.kind or "element"


def _name(leaf: Leaf) -> str:
    return leaf.label or leaf.own_text or leaf.subtree_text


def _nearby(sel: Selector, screen: Screen) -> str:
    """The tail of a miss: `` — <what comes nearest>`` (or "" when nothing helps)."""
    visible = [leaf for leaf in screen.leaves if leaf.visible]
    if not visible:
        why = f": {screen.blank}" if screen.blank else ""
        return f" — nothing on the screen is visible{why}"
    scopes = [
        (rel, scope)
        for rel, scope in (("within", sel.within), ("after", sel.after), ("next", sel.next))
        if scope
    ]
    for relation, scope in scopes:
        if not _shows(scope, screen):
            return f" — nothing on the screen matches its {relation} scope ({describe_selector(scope)})"
    bare = evolve(sel, within=None, after=None, next=None)
    if scopes and not bare.any and _shows(bare, screen):
        where = " ".join(f"{relation} ({describe_selector(scope)})" for relation, scope in scopes)
        return f" — {describe_selector(bare)} is on the screen, but not {where}"
    wanted = sel.text if sel.text is not None else sel.text_matches
    if sel.role is not None and wanted is not None:
        kin = evolve(sel, text=None, text_matches=None, loose=False)
        names = ((_name(leaf), quoted(_name(leaf))) for leaf in resolve_strict(kin, visible))
        shown, total = nearest(wanted, names)
        if shown:
            return f" — {plural(sel.role.lower())} here: {listed(shown, total)}"
        return f" — no {sel.role.lower()} is on the screen; {_texts_near(wanted, visible)}"
    if wanted is not None:
        return f" — {_texts_near(wanted, visible)}"
    if sel.role is not None:
        shown, total = nearest(sel.role, ((_what(leaf), _what(leaf)) for leaf in visible))
        return f" — roles on the screen: {listed(shown, total)}"
    if sel.identifier is not None:
        ids = ((leaf.identifier, quoted(leaf.identifier)) for leaf in visible if leaf.identifier)
        shown, total = nearest(sel.identifier, ids)
        return (
            f" — ids on the screen: {listed(shown, total)}"
            if shown
            else " — no element on the screen has an id"
        )
    if sel.css is not None:
        return " — no visible element on the screen matches that CSS selector"
    return ""


def _texts_near(wanted: str, visible: Sequence[Leaf]) -> str:
    """``the nearest texts on the screen: button "Save", ...``, or that none comes close."""

    def texts() -> Iterable[tuple[str, str]]:
        for leaf in visible:
            for text in (leaf.label, leaf.value, leaf.description):
                if text:
                    yield text, f"{_what(leaf)} {quoted(text)}"

    shown, total = nearest(wanted, texts(), close_only=True)
    if not shown:
        return "no text on the screen comes close to it"
    return f"the nearest texts on the screen: {listed(shown, total)}"


def text_satisfies(mode: str, expected: str, text: str) -> bool:
    if mode == "contains":
        return expected.lower() in text.lower()
    if mode == "equals":
        return text.strip().lower() == expected.lower()
    return regex_search(expected, text)


@bounded
def evaluate(cond: Condition, screen: Screen) -> Verdict:
    """Whether ``cond`` holds on this screen, with the reason when it does not."""
    sel = cond.selector
    described = describe_selector(sel)
    _, found = matches_for_condition(sel, screen)
    visible = [leaf for leaf in found if leaf.visible]
    if cond.kind == "exists":
        return Verdict(True) if found else Verdict(False, no_match_reason(sel, screen))
    if cond.kind == "visible":
        if visible:
            return Verdict(True)
        if found:
            where = where_off_screen(found, screen) or " (zero-area frame)"
            return Verdict(False, f"element(s) matched {described} but none was visible{where}")
        return Verdict(False, no_match_reason(sel, screen))
    if cond.kind == "hidden":
        if visible:
            return Verdict(False, f"an element matching {described} was still visible")
        return Verdict(True)
    # text
    if not found:
        return Verdict(False, no_match_reason(sel, screen))
    leaf = min(visible, key=reading_key) if visible else found[0]
    mode = cond.mode or "contains"
    expected = cond.expected or ""
    shown = leaf.subtree_text
    own = leaf.own_text
    candidates = [t for t in dict.fromkeys((shown, own, leaf.label, leaf.value, leaf.whole))]
    if any(text_satisfies(mode, expected, t) for t in candidates):
        return Verdict(True)
    own_part = f' (own text "{own}")' if own and own != shown else ""
    if mode == "matches":
        wanted = f"match /{expected}/"
    elif mode == "equals":
        wanted = f'equal "{expected}"'
    else:
        wanted = f'contain "{expected}"'
    return Verdict(
        False, f'element matched {described} but its text was "{shown}"{own_part} (wanted to {wanted})'
    )
