"""Selector capture for a recorded tap: which selector names what a ``gesture-tap`` hit.

The screen is read once, before the tap. The element hit is the smallest visible element
whose frame holds the point; its selector is the first stable thing it has — an identifier,
else its visible text (the label, else the value), else its role unless the role is generic.
The selector is kept only when the replay's own engine, on the same screen, resolves it to an
element whose frame holds the point; otherwise the tap keeps its coordinates, with the reason.
"""

from __future__ import annotations

from argent.devices.base import DeviceProvider, Frame
from argent.errors import FlowError
from argent.flows.model import Selector
from argent.flows.names import js_json
from argent.flows.write import selector_to_data
from argent.runner.selectors import Leaf, best_match, flatten

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
CAPTURE_FAILED = "selector capture failed ({error}); kept coordinates"


def _holds(frame: Frame, x: float, y: float) -> bool:
    return frame.x <= x <= frame.x + frame.width and frame.y <= y <= frame.y + frame.height


def selector_for(leaf: Leaf) -> Selector | None:
    """The most stable selector an element offers: identifier, visible text, specific role."""
    identifier = leaf.identifier.strip()
    if identifier:
        return Selector(identifier=identifier)
    for text in (leaf.label.strip(), leaf.value.strip()):
        if text:
            return Selector(text=text)
    role = leaf.role.strip()
    if role and role.lower() not in GENERIC_ROLES:
        return Selector(role=role)
    return None


async def capture_tap_selector(
    devices: DeviceProvider, device_id: str, x: float, y: float
) -> tuple[Selector | None, str | None]:
    """The selector to record for a tap at (x, y), or None and the warning that says why not."""
    try:
        device = await devices.get(device_id)
        tree = await device.ui_tree()
    except Exception as exc:  # capture is best effort: the tap itself still runs and is recorded
        return None, CAPTURE_FAILED.format(error=str(exc) or type(exc).__name__)
    screen = flatten(tree)
    hits = [leaf for leaf in screen.leaves if leaf.visible and _holds(leaf.frame, x, y)]
    if not hits:
        return None, NOTHING_UNDER_TAP
    tapped = min(hits, key=lambda leaf: (leaf.area, -leaf.order))
    selector = selector_for(tapped)
    if selector is None:
        return None, NO_STABLE_SELECTOR
    try:
        shown = js_json(selector_to_data(selector))
    except FlowError:  # text the flow language cannot carry (no visible character)
        return None, NO_STABLE_SELECTOR
    found = best_match(selector, screen)
    if found is None:
        return None, MATCHES_NOTHING.format(sel=shown)
    if not _holds(found.frame, x, y):
        return None, OTHER_ELEMENT.format(sel=shown)
    return selector, None
