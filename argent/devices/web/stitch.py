"""One tree of the page out of the walks of its frames.

The walker reads one frame's document (and the same-origin documents inside it). An iframe it
cannot enter — another origin, maybe another renderer process — it marks (``sub``: where the
frame's content box starts and which part of it shows, in that walk's viewport CSS px); the
device walks that frame on its own (``argent.devices.chromium.frames``) and a ``Stitch`` puts
that frame's tree under the iframe's node: every box moved to the top-level viewport and clipped
to what of the frame shows, refs numbered across the frames, the node and depth limits of the
read kept for the whole tree. The result has the walker's payload shape
(``argent.devices.web.walker.parse_walk`` reads it as it reads one walk).

Pure functions over JSON values: the walks are the page's output, every field is checked.
"""

from __future__ import annotations

import math
from typing import Any, TypeGuard

from attrs import define, field

#: left, top, right, bottom in top-level viewport CSS px.
Box = tuple[float, float, float, float]
#: A frame of the page as the device names it (its kind and ids).
FrameKey = tuple[str, ...]


@define
class Marker:
    """An iframe a walk could not enter: its node (the frame's tree goes under it) and where the
    frame's content shows, in top-level px."""

    node: dict[str, Any]
    #: The CDP frame id, when the walk knew it; else the iframe's index for the device to ask.
    frame_id: str | None
    key: int | None
    #: The frame's content origin, and the visible part of its content box.
    origin: tuple[float, float]
    clip: Box
    #: The iframe node's depth in the stitched tree, and how many frames deep it sits.
    depth: int
    nesting: int
    #: The frame whose walk holds the iframe (the device's handle).
    source: FrameKey


@define
class Stitch:
    """The stitched read under way: the top walk, then each frame's walk as it comes."""

    payload: dict[str, Any]
    width: float
    height: float
    max_depth: int
    max_nodes: int
    keep: bool
    #: (frame, local ref) of each global ref, when ``keep``.
    refs: list[tuple[FrameKey, int]] = field(factory=list)
    nodes: int = 0
    truncated: bool = False
    scrolls: list[str] = field(factory=list)

    @classmethod
    def start(
        cls, payload: dict[str, Any], top: FrameKey, *, max_depth: int, max_nodes: int, keep: bool
    ) -> tuple[Stitch, list[Marker]]:
        """The stitch of a top walk whose ``tree`` is a node, and the iframes it could not enter."""
        stitch = cls(
            payload=payload,
            width=_number(payload.get("w")),
            height=_number(payload.get("h")),
            max_depth=max_depth,
            max_nodes=max_nodes,
            keep=keep,
            truncated=payload.get("truncated") is True,
        )
        place = _Place(top, (0.0, 0.0), (0.0, 0.0, stitch.width, stitch.height), None, 0)
        markers: list[Marker] = []
        stitch._node(payload["tree"], 0, place, markers)
        return stitch, markers

    def attach(self, marker: Marker, walk: Any, frame: FrameKey) -> list[Marker]:
        """Put the frame's walk under its iframe's node; the iframes that walk could not enter.
        A walk that is no tree (an empty frame, a zero viewport) attaches nothing."""
        tree = walk.get("tree") if isinstance(walk, dict) else None
        if not isinstance(tree, dict):
            return []
        scale = (_number(walk.get("w")), _number(walk.get("h")))
        if not (scale[0] > 0 and scale[1] > 0):
            return []
        scroll = walk.get("scroll")
        if isinstance(scroll, str) and scroll:
            self.scrolls.append(scroll)
        if walk.get("truncated") is True:
            self.truncated = True
        markers: list[Marker] = []
        place = _Place(frame, marker.origin, marker.clip, scale, marker.nesting)
        if self._node(tree, marker.depth + 1, place, markers):
            marker.node["children"] = [tree]
        return markers

    def result(self) -> dict[str, Any]:
        """The stitched payload (the walker's shape)."""
        out = dict(self.payload)
        out["truncated"] = self.truncated
        if self.scrolls:
            top = out.get("scroll")
            out["scroll"] = "|".join([top if isinstance(top, str) else "", *self.scrolls])
        return out

    def _node(self, node: dict[str, Any], depth: int, place: _Place, markers: list[Marker]) -> bool:
        """Take ``node`` and its subtree into the stitched tree (a frame's: its boxes moved into the
        top-level viewport, its refs numbered across the frames), noting the iframes it could not
        enter; False when the read's limits leave no room for it."""
        if depth > self.max_depth or self.nodes >= self.max_nodes:
            self.truncated = True
            return False
        self.nodes += 1
        if place.scale is not None:
            _move(node, place, self.width, self.height)
        ref = node.get("ref")
        if self.keep and isinstance(ref, int) and not isinstance(ref, bool) and ref >= 0:
            node["ref"] = len(self.refs)
            self.refs.append((place.frame, ref))
        else:
            node.pop("ref", None)
        sub = node.pop("sub", None)
        if isinstance(sub, dict):
            marker = _marker(node, sub, depth, place)
            if marker is not None:
                markers.append(marker)
        kids = node.get("children")
        if isinstance(kids, list):
            node["children"] = [
                k for k in kids if isinstance(k, dict) and self._node(k, depth + 1, place, markers)
            ]
        return True


@define
class _Place:
    """Where one frame's walk sits: its frame, its content origin and visible part (top-level px),
    its viewport size (None: the top-level walk, already in place) and how many frames deep."""

    frame: FrameKey
    origin: tuple[float, float]
    clip: Box
    scale: tuple[float, float] | None
    nesting: int


def _marker(node: dict[str, Any], sub: dict[str, Any], depth: int, place: _Place) -> Marker | None:
    at, inner = sub.get("at"), sub.get("clip")
    if not (_numbers(at, 2) and _numbers(inner, 4)):
        return None
    ox, oy = place.origin
    frame_id = sub.get("id")
    key = sub.get("key")
    return Marker(
        node=node,
        frame_id=frame_id if isinstance(frame_id, str) and frame_id else None,
        key=key if isinstance(key, int) and not isinstance(key, bool) and key >= 0 else None,
        origin=(ox + at[0], oy + at[1]),
        clip=_intersect((ox + inner[0], oy + inner[1], ox + inner[2], oy + inner[3]), place.clip),
        depth=depth,
        nesting=place.nesting + 1,
        source=place.frame,
    )


def _move(node: dict[str, Any], place: _Place, width: float, height: float) -> None:
    """A node's ``frame`` (fractions of its frame's viewport) as fractions of the top-level
    viewport, clipped to what of the frame shows (a box outside it: no area, where it lies, as
    the walker places what a clip hides)."""
    f = node.get("frame")
    x, y, w, h = (float(v) for v in f) if _numbers(f, 4) else (0.0, 0.0, 0.0, 0.0)
    ox, oy = place.origin
    cw, ch = place.scale or (0.0, 0.0)
    left, top = ox + x * cw, oy + y * ch
    box = _intersect((left, top, left + w * cw, top + h * ch), place.clip)
    if not (box[2] > box[0] and box[3] > box[1]):
        box = (box[0], box[1], box[0], box[1])
    node["frame"] = _normalize(box, width, height)


def _intersect(a: Box, b: Box) -> Box:
    return (max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3]))


def _normalize(box: Box, width: float, height: float) -> list[float]:
    """[x, y, w, h] fractions of the viewport, clamped to [0, 1] and rounded as the walker does."""
    if not (width > 0 and height > 0):
        return [0.0, 0.0, 0.0, 0.0]
    x0, y0 = _clamp01(box[0] / width), _clamp01(box[1] / height)
    x1, y1 = _clamp01(box[2] / width), _clamp01(box[3] / height)
    return [_round(x0), _round(y0), _round(max(0.0, x1 - x0)), _round(max(0.0, y1 - y0))]


def _clamp01(v: float) -> float:
    return 0.0 if not v > 0 else 1.0 if v > 1 else v


def _round(v: float) -> float:
    """``Math.round(v * 100000) / 100000``."""
    return math.floor(v * 100000 + 0.5) / 100000


def _number(value: Any) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return 0.0


def _numbers(value: Any, n: int) -> TypeGuard[list[float]]:
    return (
        isinstance(value, list)
        and len(value) == n
        and all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in value)
    )


def unnamed_frames(tree: Any) -> list[dict[str, Any]]:
    """The ``sub`` of every iframe node of a walk that has a key and no frame id (for the device to name)."""
    found: list[dict[str, Any]] = []
    stack = [tree] if isinstance(tree, dict) else []
    while stack:
        node = stack.pop()
        sub = node.get("sub")
        if isinstance(sub, dict) and "key" in sub and not sub.get("id"):
            found.append(sub)
        kids = node.get("children")
        if isinstance(kids, list):
            stack.extend(k for k in kids if isinstance(k, dict))
    return found
