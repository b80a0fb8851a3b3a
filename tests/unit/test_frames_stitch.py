"""``Stitch``: a frame's walk under its iframe, in top-level coordinates, within the read's limits."""

from __future__ import annotations

import copy
from typing import Any

from argent.devices.web.stitch import Stitch
from argent.devices.web.walker import parse_walk

TOP = ("top",)
FRAME = ("oopif", "F1")
INNER = ("frame", "s", "F2")


def node(role: str, frame: list[float], *kids: dict[str, Any], **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"role": role, "frame": frame, **extra}
    if kids:
        out["children"] = list(kids)
    return out


def top_walk(sub: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A 1000x800 page with one iframe whose content box starts at (100, 200), 400x300 of it showing."""
    iframe = node("iframe", [0.1, 0.25, 0.4, 0.375], identifier="pay", ref=1, sub=sub)
    tree = node("html", [0, 0, 1, 1], node("h1", [0, 0, 1, 0.05], value="Top", ref=2), iframe, ref=0)
    return {"tree": tree, "truncated": False, "scroll": "0,0", "w": 1000, "h": 800, **extra}


def frame_walk(*kids: dict[str, Any], w: float = 400, h: float = 300, **extra: Any) -> dict[str, Any]:
    return {
        "tree": node("html", [0, 0, 1, 1], *kids, ref=0),
        "truncated": False,
        "scroll": "",
        "w": w,
        "h": h,
        **extra,
    }


SUB = {"at": [100, 200], "clip": [100, 200, 500, 500], "key": 0, "id": "F1"}


def start(payload: dict[str, Any], **limits: Any) -> tuple[Stitch, list[Any]]:
    options = {"max_depth": 96, "max_nodes": 12_000, "keep": True, **limits}
    return Stitch.start(payload, TOP, **options)


def test_a_frame_walk_lands_under_its_iframe_in_top_level_fractions() -> None:
    stitch, markers = start(top_walk(SUB))
    assert [(m.frame_id, m.origin, m.clip, m.depth, m.nesting) for m in markers] == [
        ("F1", (100.0, 200.0), (100.0, 200.0, 500.0, 500.0), 1, 1)
    ]
    # A button at (40, 30) px of the frame, 80x20: (140, 230) px of the page.
    button = node("button", [0.1, 0.1, 0.2, 0.06666], label="Pay", ref=3)
    assert stitch.attach(markers[0], frame_walk(button), FRAME) == []
    tree, _ = parse_walk(stitch.result(), "test")
    iframe = tree.root.children[1]
    assert iframe.identifier == "pay"
    inner = iframe.children[0]
    assert inner.frame.x == 0.1 and inner.frame.y == 0.25  # the frame's root covers what shows
    assert (inner.frame.width, inner.frame.height) == (0.4, 0.375)
    pay = inner.children[0]
    assert (pay.label, pay.frame.x, pay.frame.y, pay.frame.width) == ("Pay", 0.14, 0.2875, 0.08)
    assert round(pay.frame.height, 4) == 0.025


def test_what_the_iframe_clips_is_cut_to_what_shows_or_an_empty_box_where_it_lies() -> None:
    # Only the top 100 px of the frame's 300 show (the page scrolled it half out of view).
    stitch, markers = start(top_walk({**SUB, "clip": [100, 200, 500, 300]}))
    half = node("p", [0, 0.25, 1, 0.2], value="half")  # 75..135 px of the frame: 275..300 shows
    gone = node("p", [0, 0.6, 1, 0.1], value="gone")  # 180..210 px: none of it shows
    stitch.attach(markers[0], frame_walk(half, gone), FRAME)
    tree, _ = parse_walk(stitch.result(), "test")
    half_node, gone_node = tree.root.children[1].children[0].children
    assert (half_node.frame.y, half_node.frame.height) == (0.34375, 0.03125)
    assert half_node.frame.visible
    # As the walker places what its clip hides: no area, at its place (below what shows: scroll down).
    assert not gone_node.frame.visible and (gone_node.frame.x, gone_node.frame.y) == (0.1, 0.475)


def test_a_frame_in_a_frame_adds_its_offset_and_clip() -> None:
    stitch, markers = start(top_walk(SUB))
    # Inside the frame, another iframe at (50, 60) px of it, 200x100, of which 150x100 shows.
    middle = node(
        "iframe", [0.1, 0.2, 0.5, 0.3333], sub={"at": [50, 60], "clip": [50, 60, 200, 160], "id": "F2"}
    )
    nested = stitch.attach(markers[0], frame_walk(middle), FRAME)
    assert [(m.frame_id, m.origin, m.clip, m.depth, m.nesting, m.source) for m in nested] == [
        ("F2", (150.0, 260.0), (150.0, 260.0, 300.0, 360.0), 3, 2, FRAME)
    ]
    deep = node("button", [0.5, 0.5, 0.5, 0.5], label="Deep", ref=1)  # 100..200 x 50..100 of 200x100
    stitch.attach(nested[0], frame_walk(deep, w=200, h=100), INNER)
    tree, _ = parse_walk(stitch.result(), "test")
    button = tree.root.children[1].children[0].children[0].children[0].children[0]
    assert button.label == "Deep"
    # 250..350 px across, clipped at 300; 310..360 down.
    assert (button.frame.x, button.frame.width, button.frame.y, button.frame.height) == (
        0.25,
        0.05,
        0.3875,
        0.0625,
    )


def test_refs_are_numbered_across_the_frames_and_name_their_frame() -> None:
    stitch, markers = start(top_walk(SUB))
    stitch.attach(markers[0], frame_walk(node("button", [0, 0, 0.1, 0.1], label="Pay", ref=7)), FRAME)
    tree, _ = parse_walk(stitch.result(), "test")
    refs = [tree.root.ref, tree.root.children[0].ref, tree.root.children[1].ref]
    inner = tree.root.children[1].children[0]
    refs += [inner.ref, inner.children[0].ref]
    assert refs == [0, 1, 2, 3, 4]
    assert stitch.refs == [(TOP, 0), (TOP, 2), (TOP, 1), (FRAME, 0), (FRAME, 7)]


def test_without_keep_no_node_carries_a_ref() -> None:
    stitch, markers = start(top_walk(SUB), keep=False)
    stitch.attach(markers[0], frame_walk(node("button", [0, 0, 0.1, 0.1], label="Pay", ref=7)), FRAME)
    tree, _ = parse_walk(stitch.result(), "test")
    assert stitch.refs == []
    assert tree.root.ref == -1 and tree.root.children[1].children[0].children[0].ref == -1


def test_the_node_limit_holds_for_the_whole_tree() -> None:
    # The top walk has 3 nodes; a limit of 5 leaves room for the frame's root and one button.
    stitch, markers = start(top_walk(SUB), max_nodes=5)
    buttons = [node("button", [0, i / 10, 0.1, 0.05], label=f"B{i}") for i in range(4)]
    stitch.attach(markers[0], frame_walk(*buttons), FRAME)
    result = stitch.result()
    tree, _ = parse_walk(result, "test")
    assert [b.label for b in tree.root.children[1].children[0].children] == ["B0"]
    assert result["truncated"] is True and tree.truncated


def test_the_depth_limit_holds_for_the_whole_tree() -> None:
    # The iframe sits at depth 1; a limit of 3 leaves the frame's root (2) and its children (3).
    stitch, markers = start(top_walk(SUB), max_depth=3)
    chain = node("div", [0, 0, 1, 1], node("span", [0, 0, 1, 1], value="too deep"), value="kept")
    stitch.attach(markers[0], frame_walk(chain), FRAME)
    tree, _ = parse_walk(stitch.result(), "test")
    div = tree.root.children[1].children[0].children[0]
    assert div.value == "kept" and div.children == ()
    assert tree.truncated


def test_a_malformed_mark_or_walk_adds_nothing() -> None:
    for sub in ({"at": [1], "clip": [0, 0, 1, 1]}, {"at": [1, 2], "clip": "x"}, {"at": [1, float("nan")]}):
        stitch, markers = start(top_walk(sub))
        assert markers == []
        assert "sub" not in stitch.result()["tree"]["children"][1]
    stitch, markers = start(top_walk(SUB))
    for walk in (None, "text", {"tree": None, "error": "viewport is zero"}, frame_walk(w=0)):
        assert stitch.attach(markers[0], copy.deepcopy(walk), FRAME) == []
    assert "children" not in stitch.result()["tree"]["children"][1]


def test_scroll_offsets_of_the_frames_join_the_page_s() -> None:
    stitch, markers = start(top_walk(SUB))
    stitch.attach(markers[0], frame_walk(scroll="12,0"), FRAME)
    assert stitch.result()["scroll"] == "0,0|12,0"
