"""The pixel rules that need neither numpy nor Pillow: the differ's constants, JavaScript rounding,
PNG headers and crop boxes. ``argent.runner.pixels`` re-exports them beside the image work of
``argent.runner.pixel_compare``, which imports them from here (no import cycle)."""

from __future__ import annotations

import math
import struct
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

from argent import limits

#: Squared RGB distance above which a pixel counts as changed: 0.1² × 3 × 255².
DIFF_THRESHOLD_SQ = 0.1**2 * 3 * 255**2
#: The band at the top of a full-screen capture that is never compared (status bar).
TOP_BAND_FRACTION = 0.06
#: Aspect ratios within this relative difference count as one shape (resampled, not refused).
ASPECT_TOLERANCE = 0.01
LANCZOS_LOBES = 3
MIN_REGION_PIXELS = 2
REGION_MERGE_GAP = 8
MAX_REGIONS_MERGED = 5000
REGIONS_KEPT_UNMERGED = 64
CHANGED_BRIGHTER = (0, 200, 0)
CHANGED_DARKER = (255, 0, 0)
REGION_OUTLINE = (255, 220, 0)
#: The solid colour a snapshot `mask` paints over an element (opaque magenta: rare on real pages, plain
#: to a reviewer of the baseline).
MASK_COLOUR = (255, 0, 255)
REGION_OUTLINE_PX = 4
CONTEXT_SCALE = 0.3

#: The idle wait: squared distance 0.03² × 3 × 255², and its motion rules.
IDLE_THRESHOLD_SQ = 0.03**2 * 3 * 255**2
IDLE_SCALE = 0.25

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


# --------------------------------------------------------------------------------------------
# JavaScript rounding and formatting


def js_round(value: float) -> int:
    """``Math.round``: the nearest integer, halves toward +∞."""
    return math.floor(value + 0.5)


def js_to_fixed(value: float, digits: int = 2) -> str:
    """``Number.prototype.toFixed``: the exact binary value rounded half up (not half even)."""
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    quantum = Decimal(1).scaleb(-digits)
    text = str(Decimal(value).quantize(quantum, rounding=ROUND_HALF_UP))
    return "0" + text[2:] if text.startswith("-0") and Decimal(text) == 0 else text


# --------------------------------------------------------------------------------------------
# PNG headers


class PngError(ValueError):
    """Bytes that are not a PNG we can read."""


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from the IHDR chunk."""
    if len(data) < 24 or not data.startswith(_PNG_SIGNATURE) or data[12:16] != b"IHDR":
        raise PngError("not a PNG image (no IHDR header)")
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def check_canvas(data: bytes) -> None:
    """Refuse, from the header alone, a canvas larger than any screen (a few KB can claim gigapixels)."""
    width, height = png_size(data)
    if width * height > limits.MAX_PNG_PIXELS:
        raise PngError(
            f"the image is {width}x{height} pixels, more than the {limits.MAX_PNG_PIXELS} a screen capture may have"
        )


def same_shape(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Aspect ratios within 1% of each other (relative)."""
    (aw, ah), (bw, bh) = a, b
    if min(aw, ah, bw, bh) <= 0:
        return False
    ra, rb = aw / ah, bw / bh
    return abs(ra - rb) / max(ra, rb) <= ASPECT_TOLERANCE


def top_band_rows(height: int) -> int:
    return math.ceil(height * TOP_BAND_FRACTION)


# --------------------------------------------------------------------------------------------
# Cropping


def crop_rect(
    x: float, y: float, width: float, height: float, img_w: int, img_h: int
) -> tuple[int, int, int, int]:
    """The pixel rect (left, top, right, bottom) of a normalized frame, rounded like JavaScript."""
    left = max(0, js_round(x * img_w))
    top = max(0, js_round(y * img_h))
    right = min(img_w, js_round((x + width) * img_w))
    bottom = min(img_h, js_round((y + height) * img_h))
    return left, top, right, bottom


# --------------------------------------------------------------------------------------------
# Idle


IdleState = Literal["still", "moving", "localized"]
