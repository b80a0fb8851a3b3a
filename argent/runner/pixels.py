"""Pixel comparison for snapshots and for the idle wait (numpy + Pillow, vectorised).

``diff_images`` is the snapshot differ: RGB distance per pixel against a fixed
threshold, alpha ignored, the top 6% band skipped on full-screen comparisons, a
Lanczos-3 resample when a full-screen capture has the same shape at another size, the
changed regions (8-connected, merged into boxes) and the diff image. ``idle_state``
judges two quarter-scale frames of the idle wait. Rounding follows JavaScript's
``Math.round`` (halves go up), not Python's banker's rounding.

This module re-exports what needs neither numpy nor Pillow (rounding, PNG headers, crop boxes,
the constants: ``argent.runner.pixel_basics``); the image work lives in
``argent.runner.pixel_compare`` and is imported the first time one of its names is read from here, so a run without a snapshot or an idle wait (and the
command line) never loads numpy or Pillow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from argent.runner.pixel_basics import (
    ASPECT_TOLERANCE,
    CHANGED_BRIGHTER,
    CHANGED_DARKER,
    CONTEXT_SCALE,
    DIFF_THRESHOLD_SQ,
    IDLE_SCALE,
    IDLE_THRESHOLD_SQ,
    LANCZOS_LOBES,
    MASK_COLOUR,
    MAX_REGIONS_MERGED,
    MIN_REGION_PIXELS,
    REGION_MERGE_GAP,
    REGION_OUTLINE,
    REGION_OUTLINE_PX,
    REGIONS_KEPT_UNMERGED,
    TOP_BAND_FRACTION,
    IdleState,
    PngError,
    check_canvas,
    crop_rect,
    js_round,
    js_to_fixed,
    png_size,
    same_shape,
    top_band_rows,
)

if TYPE_CHECKING:
    from argent.runner.pixel_compare import (
        Diff,
        Pixels,
        Region,
        changed_mask,
        components,
        context_image,
        decode_png,
        diff_image,
        diff_images,
        encode_png,
        idle_frame,
        idle_state,
        lanczos_resize,
        paint,
        regions,
    )

__all__ = [
    "ASPECT_TOLERANCE",
    "CHANGED_BRIGHTER",
    "CHANGED_DARKER",
    "CONTEXT_SCALE",
    "DIFF_THRESHOLD_SQ",
    "IDLE_SCALE",
    "IDLE_THRESHOLD_SQ",
    "LANCZOS_LOBES",
    "MASK_COLOUR",
    "MAX_REGIONS_MERGED",
    "MIN_REGION_PIXELS",
    "REGIONS_KEPT_UNMERGED",
    "REGION_MERGE_GAP",
    "REGION_OUTLINE",
    "REGION_OUTLINE_PX",
    "TOP_BAND_FRACTION",
    "Diff",
    "IdleState",
    "Pixels",
    "PngError",
    "Region",
    "changed_mask",
    "check_canvas",
    "components",
    "context_image",
    "crop_rect",
    "decode_png",
    "diff_image",
    "diff_images",
    "encode_png",
    "idle_frame",
    "idle_state",
    "js_round",
    "js_to_fixed",
    "lanczos_resize",
    "paint",
    "png_size",
    "regions",
    "same_shape",
    "top_band_rows",
]

#: The names ``argent.runner.pixel_compare`` provides through this module, loaded on first use.
_COMPARE_NAMES = frozenset(
    {
        "Pixels",
        "decode_png",
        "encode_png",
        "lanczos_resize",
        "paint",
        "Region",
        "Diff",
        "changed_mask",
        "diff_images",
        "components",
        "regions",
        "diff_image",
        "context_image",
        "idle_state",
        "idle_frame",
    }
)


def __getattr__(name: str) -> Any:
    if name in _COMPARE_NAMES:
        from argent.runner import pixel_compare

        return getattr(pixel_compare, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
