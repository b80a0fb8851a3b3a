"""Selector capture for a recorded tap: which selector names what a ``gesture-tap`` hit, and it alone.

The screen is read once, before the tap. The element hit is the smallest visible element whose
frame holds the point (and, when that one is not what a person presses, the smallest clickable one
that holds it). Its selectors are tried from the most stable: its identifier, its visible text (the
label, else the value), that text with its role (when the text alone names another element too: the
"Sign in" heading above the "Sign in" button), its role alone (a specific one, for an element with no
text). A selector is kept only when, on that same screen, it selects the tapped element alone —
exactly one visible element matches it, and its frame holds the point — so the replay acts on that
element or fails at this step when it is gone. Otherwise the tap keeps its coordinates, with the
reason.
"""

from __future__ import annotations

from argent.cpu import run_cpu
from argent.devices.base import DeviceProvider, Frame, UiTree
from argent.errors import FlowError, SelectorTooCostlyError
from argent.flows.model import Selector
from argent.flows.names import js_json
from argent.flows.write import selector_to_data
from argent.runner.selectors import Leaf, Screen, bounded, flatten, resolve_strict

#: Roles that say nothing about an element (upstream's list, plus the web's generic containers).
GENERIC_ROLES = frozenset(
    {
        "axgroup",
        "group",
        "view",
        "other",
        "axother",
        "none",
        "viewgroup",
        "android.view.view",
        "android.view.viewgroup",
        "generic",
        "div",
        "span",
    }
)

NOTHING_UNDER_TAP = "no element found under the tap; kept coordinates (brittle)"
NO_STABLE_SELECTOR = "tapped element has no stable text/id; kept coordinates (brittle)"
MATCHES_NOTHING = "selector {sel} matches no element on this screen; kept coordinates (brittle)"
OTHER_ELEMENT = "selector {sel} resolves to a different element on this screen; kept coordinates (brittle)"
NOT_ALONE = (
    "selector {sel} also matches {others} on this screen, so a replay could act on another element; kept "
    "coordinates (brittle) — give the element an id, or record a tap directive with a selector that names it "
    "alone (a within: scope)"
)
CAPTURE_FAILED = "selector capture failed ({error}); kept coordinates"


def _holds(frame: Frame, x: float, y: float) -> bool:
    return frame.x <= x <= frame.x + frame.width and frame.y <= y <= frame.y + frame.height


def selector_for(leaf: Leaf) -> Selector | None:
    """The most stable selector an element offers: identifier, visible text, specific role."""
    candidates = selector_candidates(leaf)
    return candidates[0] if candidates else None


def _role(leaf: Leaf) -> str | None:
    role = leaf.role.strip()
    return role if role and role.lower() not in GENERIC_ROLES else None


def selector_candidates(leaf: Leaf) -> list[Selector]:
    """The selectors an element offers, most stable first: its identifier, its text, its text with its
    (specific) role, and its role alone when it has no text."""
    out: list[Selector] = []
    identifier = leaf.identifier.strip()
    if identifier:
        out.append(Selector(identifier=identifier))
    text = next((t for t in (leaf.label.strip(), leaf.value.strip()) if t), None)
    role = _role(leaf)
    if text:
        out.append(Selector(text=text))
        if role:
            out.append(Selector(text=text, role=role))
    elif role:
        out.append(Selector(role=role))
    return out


def _shown(selector: Selector) -> str | None:
    try:
        return js_json(selector_to_data(selector))
    except FlowError:  # text the flow language cannot carry (no visible character)
        return None


def _other(leaf: Leaf) -> str:
    name = leaf.label.strip() or leaf.value.strip()
    return f'{leaf.role or "an element"} "{name}"' if name else (leaf.role or "an element")


@bounded
def _why_not(selector: Selector, shown: str, screen: Screen, x: float, y: float) -> str | None:
    """None when ``selector`` selects the tapped element alone on ``screen``; else why not."""
    visible = [leaf for leaf in resolve_strict(selector, screen.leaves) if leaf.visible]
    if not visible:
        return MATCHES_NOTHING.format(sel=shown)
    tapped = [leaf for leaf in visible if _holds(leaf.frame, x, y)]
    if not tapped:
        return OTHER_ELEMENT.format(sel=shown)
    if len(visible) > 1:
        others = [leaf for leaf in visible if leaf is not tapped[0]]
        named = ", ".join(_other(leaf) for leaf in others[:3]) + (", …" if len(others) > 3 else "")
        return NOT_ALONE.format(sel=shown, others=named)
    return None


def _targets(screen: Screen, x: float, y: float) -> list[Leaf]:
    """What the tap hit: the smallest visible element under the point, then the smallest clickable
    one under it when that is another (a label's text inside a button)."""
    hits = [leaf for leaf in screen.leaves if leaf.visible and _holds(leaf.frame, x, y)]
    if not hits:
        return []
    smallest = min(hits, key=lambda leaf: (leaf.area, -leaf.order))
    pressed = [leaf for leaf in hits if leaf.clickable]
    clickable = min(pressed, key=lambda leaf: (leaf.area, -leaf.order)) if pressed else smallest
    return [smallest] if clickable is smallest else [smallest, clickable]


def choose_selector(screen: Screen, x: float, y: float) -> tuple[Selector | None, str | None]:
    """The first selector of the tapped element that selects it alone on ``screen``, or None and the
    reason the last one tried did not."""
    targets = _targets(screen, x, y)
    if not targets:
        return None, NOTHING_UNDER_TAP
    reason: str | None = None
    for target in targets:
        for selector in selector_candidates(target):
            shown = _shown(selector)
            if shown is None:
                continue
            try:
                reason = _why_not(selector, shown, screen, x, y)
            except SelectorTooCostlyError:
                reason = OTHER_ELEMENT.format(sel=shown)
            if reason is None:
                return selector, None
    return None, reason or NO_STABLE_SELECTOR


async def capture_tap_selector(
    devices: DeviceProvider, device_id: str, x: float, y: float
) -> tuple[Selector | None, str | None]:
    """The selector to record for a tap at (x, y), or None and the warning that says why not."""
    try:
        device = await devices.get(device_id)
        tree = await device.ui_tree()
    except Exception as exc:  # capture is best effort: the tap itself still runs and is recorded
        return None, CAPTURE_FAILED.format(error=str(exc) or type(exc).__name__)
    return await run_cpu(_choose, tree, x, y)


def _choose(tree: UiTree, x: float, y: float) -> tuple[Selector | None, str | None]:
    return choose_selector(flatten(tree), x, y)
