"""`snapshot` masks: where the elements a `mask` names lie in the compared image, and the paint.

Each selector is resolved on a read of the screen as captured, as a condition resolves it (its
first alternative with a visible match; every element it matches is masked, so one selector can
cover every timestamp of a list). An element's box — as much of it as shows — becomes a pixel rect
rounded outward (its anti-aliased edge included), moved into the ``cropOn`` region when there is
one. The rects are painted one colour (``pixels.MASK_COLOUR``) in the capture before it is kept or
compared, and in the baseline before the compare (a baseline adopted before the mask, or with the
element a little elsewhere, compares as masked too). A selector that matches nothing fails the
step: a typo must not let the clock it meant to hide be compared.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from argent.flows.model import Selector
from argent.runner import pixels
from argent.runner.selectors import Screen, bounded, matches_for_condition

#: left, top, right, bottom in pixels of an image.
Rect = tuple[int, int, int, int]
#: How far a box edge may sit past a pixel boundary and still round to it (the walker's fractions
#: are rounded to 1e-5 of the screen: ~0.01 px).
_EDGE_SLACK = 0.02


@bounded
def mask_rects(
    mask: Sequence[Selector], screen: Screen, width: int, height: int, crop: Rect | None
) -> tuple[Rect, ...] | Selector:
    """The rects of what ``mask`` names on ``screen`` (a ``width`` x ``height`` capture), in the
    compared image (the ``crop`` region's own pixels when there is one); the first selector that
    matched nothing instead, when one did not."""
    rects: list[Rect] = []
    for sel in mask:
        _, found = matches_for_condition(sel, screen)
        if not found:
            return sel
        for leaf in found:
            if not leaf.visible:
                continue
            f = leaf.frame
            rect = (
                max(0, math.floor(f.x * width + _EDGE_SLACK)),
                max(0, math.floor(f.y * height + _EDGE_SLACK)),
                min(width, math.ceil((f.x + f.width) * width - _EDGE_SLACK)),
                min(height, math.ceil((f.y + f.height) * height - _EDGE_SLACK)),
            )
            if crop is not None:
                left, top, right, bottom = crop
                rect = (
                    max(rect[0], left) - left,
                    max(rect[1], top) - top,
                    min(rect[2], right) - left,
                    min(rect[3], bottom) - top,
                )
            if rect[2] > rect[0] and rect[3] > rect[1]:
                rects.append(rect)
    return tuple(rects)


def prepare(png: bytes, crop: Rect | None, rects: Sequence[Rect]) -> bytes:
    """The image a snapshot keeps: ``crop`` cut from the capture, ``rects`` painted over it."""
    if crop is None and not rects:
        return png
    img = pixels.decode_png(png)
    if crop is not None:
        left, top, right, bottom = crop
        img = img[top:bottom, left:right].copy()
    pixels.paint(img, rects)
    return pixels.encode_png(img)


def scaled(rects: Sequence[Rect], source: tuple[int, int], target: tuple[int, int]) -> tuple[Rect, ...]:
    """``rects`` of a ``source``-sized image on a ``target``-sized one of the same picture (a
    baseline of another resolution), rounded outward."""
    (sw, sh), (tw, th) = source, target
    if (sw, sh) == (tw, th) or sw <= 0 or sh <= 0:
        return tuple(rects)
    kx, ky = tw / sw, th / sh
    return tuple(
        (math.floor(left * kx), math.floor(top * ky), math.ceil(right * kx), math.ceil(bottom * ky))
        for left, top, right, bottom in rects
    )
