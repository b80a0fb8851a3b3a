"""`snapshot` `mask`: its grammar and spelling, and where its rects land in the compared image."""

from __future__ import annotations

import numpy as np
import pytest

from argent.devices.base import Frame, UiNode, UiTree
from argent.flows.model import Flow, Selector, SnapshotStep
from argent.flows.parse import parse_flow
from argent.flows.write import flow_to_yaml
from argent.limits import MAX_SNAPSHOT_MASKS
from argent.runner import masks
from argent.runner import pixels as P
from argent.runner.selectors import flatten
from tests.unit.test_parse import one, step_detail

CLOCK = Selector(identifier="clock")


def test_mask_forms_and_their_spelling() -> None:
    step = one("snapshot: { name: home, mask: [{ id: clock }, Last updated] }")
    assert step == SnapshotStep(name="home", mask=(CLOCK, Selector(text="Last updated", loose=True)))
    assert step.label() == '"home" mask [id=clock, "Last updated"]'
    assert step.to_data() == {"snapshot": {"name": "home", "mask": [{"id": "clock"}, "Last updated"]}}
    assert flow_to_yaml(Flow(steps=(step,))) == (
        "steps:\n  - snapshot:\n      name: home\n      mask:\n        - id: clock\n        - Last updated\n"
    )
    both = one("snapshot: { name: card, cropOn: { id: card }, mask: [{ id: clock, within: { id: card } }] }")
    assert both.label() == '"card" cropOn id=card mask [id=clock within (id=card)]'
    assert parse_flow(flow_to_yaml(Flow(steps=(both,)))).steps == (both,)
    # Without a mask, the spelling of every other snapshot stays as it was.
    assert SnapshotStep(name="home").to_data() == {"snapshot": "home"}


@pytest.mark.parametrize("value", ["clock", "{ id: clock }", "[]", "5"])
def test_mask_is_a_non_empty_list(value: str) -> None:
    assert step_detail(f"snapshot: {{ name: home, mask: {value} }}") == (
        "snapshot mask must be a list of selectors — the elements painted over in both images before they "
        "are compared, e.g. mask: [{ id: clock }, Last updated]"
    )


def test_mask_items_are_selectors_named_by_their_place() -> None:
    detail = step_detail("snapshot: { name: home, mask: [{ id: clock }, { colour: red }] }")
    assert detail.startswith("snapshot.mask[1]: ") and "`colour`" in detail


def test_a_mask_lists_at_most_its_share_of_selectors() -> None:
    items = ", ".join(f"{{ id: e{i} }}" for i in range(MAX_SNAPSHOT_MASKS + 1))
    assert step_detail(f"snapshot: {{ name: home, mask: [{items}] }}") == (
        f"snapshot mask lists {MAX_SNAPSHOT_MASKS + 1} selectors; at most {MAX_SNAPSHOT_MASKS}"
    )


def screen(*nodes: UiNode) -> object:
    return flatten(UiTree(root=UiNode(role="html", frame=Frame(0, 0, 1, 1), children=nodes)))


def node(identifier: str, x: float, y: float, w: float, h: float, **extra: object) -> UiNode:
    return UiNode(role="div", frame=Frame(x, y, w, h), identifier=identifier, **extra)  # type: ignore[arg-type]


def test_rects_cover_the_element_rounded_outward() -> None:
    shown = screen(node("clock", 0.1001, 0.2, 0.1501, 0.0333))
    # 1000x600: x 100.1..250.2, y 120..139.98 -> every pixel it touches.
    assert masks.mask_rects((CLOCK,), shown, 1000, 600, None) == ((100, 120, 251, 140),)
    # An edge a rounding of the walker's fractions off a pixel boundary stays on it.
    shown = screen(node("clock", 0.10001, 0.2, 0.15, 0.05))
    assert masks.mask_rects((CLOCK,), shown, 1000, 600, None) == ((100, 120, 250, 150),)


def test_rects_move_into_the_crop_and_are_clipped_to_it() -> None:
    shown = screen(node("clock", 0.1, 0.1, 0.3, 0.1), node("stamp", 0.0, 0.0, 0.05, 0.05))
    crop = (150, 50, 550, 350)  # on a 1000x1000 screen
    sels = (CLOCK, Selector(identifier="stamp"))
    # The clock (100..400, 100..200) from x 150 on; the stamp (0..50) lies outside the crop: nothing.
    assert masks.mask_rects(sels, shown, 1000, 1000, crop) == ((0, 50, 250, 150),)


def test_every_visible_match_is_masked_and_a_hidden_one_is_not() -> None:
    shown = screen(
        node("a", 0.0, 0.0, 0.1, 0.1, label="stamp"),
        node("b", 0.5, 0.5, 0.1, 0.1, label="stamp"),
        node("c", 0.9, 0.9, 0.0, 0.0, label="stamp"),
    )
    assert masks.mask_rects((Selector(text="stamp"),), shown, 100, 100, None) == (
        (0, 0, 10, 10),
        (50, 50, 60, 60),
    )


def test_the_first_selector_that_matches_nothing_is_named() -> None:
    shown = screen(node("clock", 0.1, 0.1, 0.1, 0.1))
    missing = Selector(identifier="clokc")
    assert masks.mask_rects((CLOCK, missing, Selector(text="none")), shown, 100, 100, None) == missing


def test_prepare_crops_then_paints_and_leaves_a_plain_capture_alone() -> None:
    img = np.zeros((40, 60, 4), dtype=np.uint8)
    img[..., 3] = 255
    img[..., 2] = 200
    png = P.encode_png(img)
    assert masks.prepare(png, None, ()) is png
    out = P.decode_png(masks.prepare(png, (10, 5, 50, 35), ((0, 0, 4, 3), (38, 28, 99, 99))))
    assert out.shape == (30, 40, 4)
    assert (out[0:3, 0:4, :3] == P.MASK_COLOUR).all() and (out[28:, 38:, :3] == P.MASK_COLOUR).all()
    assert (out[3:28, 4:38, :3] == (0, 0, 200)).all()
    assert (out[..., 3] == 255).all()


def test_rects_scale_to_a_baseline_of_another_resolution() -> None:
    assert masks.scaled(((10, 10, 21, 20),), (100, 100), (200, 150)) == ((20, 15, 42, 30),)
    assert masks.scaled(((1, 2, 3, 4),), (100, 100), (100, 100)) == ((1, 2, 3, 4),)
