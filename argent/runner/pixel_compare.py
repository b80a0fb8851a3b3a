"""The image work of ``argent.runner.pixels`` (numpy + Pillow): decoding, resampling, the snapshot
differ, its regions and diff image, and the idle wait's frames. Imported on first use only."""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from attrs import frozen
from PIL import Image

from argent.runner.pixel_basics import (
    CHANGED_BRIGHTER,
    CHANGED_DARKER,
    CONTEXT_SCALE,
    DIFF_THRESHOLD_SQ,
    IDLE_SCALE,
    IDLE_THRESHOLD_SQ,
    MASK_COLOUR,
    MAX_REGIONS_MERGED,
    MIN_REGION_PIXELS,
    REGION_MERGE_GAP,
    REGION_OUTLINE,
    REGION_OUTLINE_PX,
    REGIONS_KEPT_UNMERGED,
    IdleState,
    PngError,
    check_canvas,
    js_round,
    same_shape,
    top_band_rows,
)

Pixels = npt.NDArray[np.uint8]


# --------------------------------------------------------------------------------------------
# PNG in and out


def decode_png(data: bytes) -> Pixels:
    """RGBA pixels, shape (H, W, 4)."""
    check_canvas(data)
    try:
        with Image.open(io.BytesIO(data)) as img:
            if img.format != "PNG":
                raise PngError(f"not a PNG image ({img.format})")
            return np.asarray(img.convert("RGBA"), dtype=np.uint8).copy()
    except PngError:
        raise
    except Exception as exc:
        raise PngError(f"not a readable PNG image ({exc})") from None


def encode_png(pixels: Pixels) -> bytes:
    out = io.BytesIO()
    mode = "RGBA" if pixels.ndim == 3 and pixels.shape[2] == 4 else "RGB"
    Image.fromarray(np.ascontiguousarray(pixels), mode).save(out, format="PNG", compress_level=6)
    return out.getvalue()


def paint(
    pixels: Pixels, rects: Sequence[tuple[int, int, int, int]], colour: tuple[int, int, int] = MASK_COLOUR
) -> None:
    """Paint each rect (left, top, right, bottom; clipped to the image) one opaque colour, in place."""
    height, width = pixels.shape[:2]
    value = np.array([*colour, 255][: pixels.shape[2]], dtype=np.uint8)
    for left, top, right, bottom in rects:
        x0, y0, x1, y1 = max(0, left), max(0, top), min(width, right), min(height, bottom)
        if x1 > x0 and y1 > y0:
            pixels[y0:y1, x0:x1] = value


# --------------------------------------------------------------------------------------------
# Lanczos-3 resampling


def lanczos_resize(pixels: Pixels, width: int, height: int) -> Pixels:
    """Separable Lanczos-3 resample to ``width`` x ``height`` (normalized weights, kernel widened
    when shrinking, output clamped and rounded). Colour and alpha are resampled independently
    (no premultiplication), so a transparent pixel's colour still counts like upstream's."""
    h, w = pixels.shape[:2]
    if (w, h) == (width, height):
        return pixels.copy()
    src = np.ascontiguousarray(pixels)
    out = np.empty((height, width, src.shape[2]), dtype=np.uint8)
    rgb = Image.fromarray(np.ascontiguousarray(src[..., :3]), "RGB")
    out[..., :3] = np.asarray(rgb.resize((width, height), Image.Resampling.LANCZOS), dtype=np.uint8)
    if src.shape[2] == 4:
        alpha = Image.fromarray(np.ascontiguousarray(src[..., 3]), "L")
        out[..., 3] = np.asarray(alpha.resize((width, height), Image.Resampling.LANCZOS), dtype=np.uint8)
    return out


# --------------------------------------------------------------------------------------------
# The snapshot differ


@frozen
class Region:
    """A box of changed pixels, inclusive pixel bounds."""

    x0: int
    y0: int
    x1: int
    y1: int
    pixels: int

    @property
    def width(self) -> int:
        return self.x1 - self.x0 + 1

    @property
    def height(self) -> int:
        return self.y1 - self.y0 + 1


@frozen
class Diff:
    """The outcome of comparing a baseline with a capture."""

    mismatch: float
    dimension_mismatch: bool
    baseline_size: tuple[int, int]
    current_size: tuple[int, int]
    changed: int = 0
    #: The compared images (the resampled one when sizes differed), for the diff image.
    baseline: Pixels | None = None
    current: Pixels | None = None
    mask: npt.NDArray[np.bool_] | None = None


def changed_mask(a: Pixels, b: Pixels, threshold_sq: float = DIFF_THRESHOLD_SQ) -> npt.NDArray[np.bool_]:
    """Pixels whose RGB distance exceeds the threshold (alpha ignored); same-shape RGBA inputs.

    Identical pixels are found with one 32-bit compare per pixel; only the pixels that differ
    at all get their distance computed (all of them when most differ). Squares and sums stay
    below 2^24, so float32 is exact."""
    h, w = a.shape[:2]
    a = np.ascontiguousarray(a)
    b = np.ascontiguousarray(b)
    differs: npt.NDArray[np.bool_] = a.view(np.uint32).reshape(h, w) != b.view(np.uint32).reshape(h, w)
    idx = np.flatnonzero(differs)
    if idx.size == 0:
        return differs
    if idx.size > differs.size // 4:
        d = np.subtract(a, b, dtype=np.float32)
        d *= d
        # Element-wise sums, never a matrix product: a product goes to OpenBLAS, whose threads a
        # fork in another thread (a Chromium launched beside this compare) can take away mid-call,
        # leaving the product spinning forever.
        full: npt.NDArray[np.bool_] = (d[..., 0] + d[..., 1] + d[..., 2]) > threshold_sq
        return full
    flat_a = a.reshape(-1, 4)[idx, :3]
    flat_b = b.reshape(-1, 4)[idx, :3]
    dd = np.subtract(flat_a, flat_b, dtype=np.float32)
    dd *= dd
    out = np.zeros(h * w, dtype=np.bool_)
    out[idx] = (dd[:, 0] + dd[:, 1] + dd[:, 2]) > threshold_sq
    return out.reshape(h, w)


def diff_images(baseline: Pixels, current: Pixels, *, full_screen: bool = True) -> Diff:
    """Compare two RGBA images as a snapshot does (see module doc)."""
    bsize = (int(baseline.shape[1]), int(baseline.shape[0]))
    csize = (int(current.shape[1]), int(current.shape[0]))
    if bsize != csize:
        if not full_screen or not same_shape(bsize, csize):
            return Diff(0.0, True, bsize, csize)
        if bsize[0] * bsize[1] > csize[0] * csize[1]:
            baseline = lanczos_resize(baseline, *csize)
        else:
            current = lanczos_resize(current, *bsize)
    h, w = current.shape[:2]
    mask = changed_mask(baseline, current)
    if full_screen:
        mask[: top_band_rows(h)] = False
    changed = int(np.count_nonzero(mask))
    total = w * h
    mismatch = changed / total * 100 if total else 0.0
    return Diff(mismatch, False, bsize, csize, changed, baseline, current, mask)


# --------------------------------------------------------------------------------------------
# Regions


def _find(parent: list[int], i: int) -> int:
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def components(mask: npt.NDArray[np.bool_]) -> list[Region]:
    """8-connected components of the mask, by runs of each row (union-find over runs)."""
    h = mask.shape[0]
    if h == 0 or not mask.any():
        return []
    padded = np.zeros((h, mask.shape[1] + 2), dtype=np.int8)
    padded[:, 1:-1] = mask
    edges = np.diff(padded, axis=1)
    starts_r, starts_c = np.nonzero(edges == 1)
    ends_r, ends_c = np.nonzero(edges == -1)
    # Runs in row-major order: [start, end) columns per row.
    rows = starts_r.tolist()
    starts = starts_c.tolist()
    ends = (ends_c - 1).tolist()  # inclusive
    del ends_r
    n = len(rows)
    parent = list(range(n))
    prev_lo = prev_hi = 0  # run index range of the previous row
    i = 0
    while i < n:
        row = rows[i]
        j = i
        while j < n and rows[j] == row:
            j += 1
        if prev_hi > prev_lo and rows[prev_lo] == row - 1:
            p = prev_lo
            for k in range(i, j):
                s, e = starts[k], ends[k]
                while p < prev_hi and ends[p] < s - 1:
                    p += 1
                q = p
                while q < prev_hi and starts[q] <= e + 1:
                    ra, rb = _find(parent, k), _find(parent, q)
                    if ra != rb:
                        parent[rb] = ra
                    q += 1
        prev_lo, prev_hi = i, j
        i = j
    boxes: dict[int, list[int]] = {}
    for k in range(n):
        r = _find(parent, k)
        box = boxes.get(r)
        size = ends[k] - starts[k] + 1
        if box is None:
            boxes[r] = [starts[k], rows[k], ends[k], rows[k], size]
        else:
            box[0] = min(box[0], starts[k])
            box[2] = max(box[2], ends[k])
            box[3] = rows[k]
            box[4] += size
    return [Region(b[0], b[1], b[2], b[3], b[4]) for b in boxes.values()]


def _mergeable(a: npt.NDArray[np.int64], others: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    gap_x = np.maximum(0, np.maximum(others[:, 0] - a[2], a[0] - others[:, 2]) - 1)
    gap_y = np.maximum(0, np.maximum(others[:, 1] - a[3], a[1] - others[:, 3]) - 1)
    near = np.maximum(gap_x, gap_y) <= REGION_MERGE_GAP
    ha = a[3] - a[1] + 1
    ho = others[:, 3] - others[:, 1] + 1
    overlap = np.minimum(a[3], others[:, 3]) - np.maximum(a[1], others[:, 1]) + 1
    tall = np.maximum(ha, ho)
    row_gap = np.minimum(120, np.maximum(32, 3 * tall))
    text_row = (overlap >= 0.5 * np.minimum(ha, ho)) & (gap_x <= row_gap)
    result: npt.NDArray[np.bool_] = near | text_row
    return result


def regions(mask: npt.NDArray[np.bool_]) -> list[Region]:
    """Changed regions: components of ≥ 2 px, merged when close or on one text row."""
    found = [r for r in components(mask) if r.pixels >= MIN_REGION_PIXELS]
    if len(found) > MAX_REGIONS_MERGED:
        return sorted(found, key=lambda r: -r.pixels)[:REGIONS_KEPT_UNMERGED]
    boxes = np.array([[r.x0, r.y0, r.x1, r.y1, r.pixels] for r in found], dtype=np.int64).reshape(-1, 5)
    i = 0
    while i < len(boxes):
        hit = _mergeable(boxes[i], boxes)
        hit[i] = False
        if not hit.any():
            i += 1
            continue
        group = boxes[hit]
        merged = boxes[i].copy()
        merged[0] = min(merged[0], group[:, 0].min())
        merged[1] = min(merged[1], group[:, 1].min())
        merged[2] = max(merged[2], group[:, 2].max())
        merged[3] = max(merged[3], group[:, 3].max())
        merged[4] += group[:, 4].sum()
        boxes[i] = merged
        before = int(np.count_nonzero(~hit[:i]))
        boxes = boxes[~hit]
        i = before  # look again: the grown box may reach more
    return [Region(*(int(v) for v in row)) for row in boxes]


# --------------------------------------------------------------------------------------------
# The diff image


def _luminance(px: Pixels) -> npt.NDArray[np.float64]:
    rgb = px[..., :3].astype(np.float64)
    return 0.2126 * rgb[..., 0] + 0.7152 * rgb[..., 1] + 0.0722 * rgb[..., 2]


def diff_image(diff: Diff, found: list[Region] | None = None) -> Pixels:
    """Changed pixels green (brighter now) or red (darker now) over a lightened capture,
    yellow outlines around the changed regions."""
    assert diff.current is not None and diff.baseline is not None and diff.mask is not None
    cur, base, mask = diff.current, diff.baseline, diff.mask
    h, w = mask.shape
    out = np.empty((h, w, 4), dtype=np.uint8)
    light = np.floor(cur[..., :3].astype(np.float64) * 0.55 + 255 * 0.45 + 0.5)
    out[..., :3] = np.clip(light, 0, 255).astype(np.uint8)
    out[..., 3] = 255
    brighter = _luminance(cur) >= _luminance(base)
    out[mask & brighter, :3] = CHANGED_BRIGHTER
    out[mask & ~brighter, :3] = CHANGED_DARKER
    for r in found if found is not None else regions(mask):
        _outline(out, r)
    return out


def _outline(img: Pixels, r: Region) -> None:
    h, w = img.shape[:2]
    t = REGION_OUTLINE_PX
    x0, y0 = max(0, r.x0 - t), max(0, r.y0 - t)
    x1, y1 = min(w - 1, r.x1 + t), min(h - 1, r.y1 + t)
    color = REGION_OUTLINE
    img[y0 : min(h, y0 + t), x0 : x1 + 1, :3] = color
    img[max(0, y1 - t + 1) : y1 + 1, x0 : x1 + 1, :3] = color
    img[y0 : y1 + 1, x0 : min(w, x0 + t), :3] = color
    img[y0 : y1 + 1, max(0, x1 - t + 1) : x1 + 1, :3] = color


def context_image(full: Pixels, scale: float = CONTEXT_SCALE) -> Pixels:
    """The diff image downscaled (Lanczos-3) for a person to glance at."""
    h, w = full.shape[:2]
    return lanczos_resize(full, max(1, js_round(w * scale)), max(1, js_round(h * scale)))


# --------------------------------------------------------------------------------------------
# Idle


def idle_state(prev: Pixels, cur: Pixels, top_rows: int = 0) -> IdleState:
    """Whether the screen moved between two idle-wait frames."""
    if prev.shape[:2] != cur.shape[:2]:
        return "moving"
    h, w = cur.shape[:2]
    area = w * h
    if area == 0:
        return "still"
    mask = changed_mask(prev, cur, IDLE_THRESHOLD_SQ)
    if top_rows > 0:
        mask[:top_rows] = False
    changed = int(np.count_nonzero(mask))
    if changed > max(0.002 * area, min(100, 0.1 * area)):
        return "moving"
    if changed >= 10:
        return "localized"
    return "still"


def idle_frame(png: bytes) -> Pixels:
    """A quarter-scale RGBA frame of a capture, for the idle wait."""
    check_canvas(png)
    with Image.open(io.BytesIO(png)) as img:
        rgba = img.convert("RGBA")
        w, h = rgba.size
        small = rgba.resize(
            (max(1, js_round(w * IDLE_SCALE)), max(1, js_round(h * IDLE_SCALE))), Image.Resampling.BOX
        )
        return np.asarray(small, dtype=np.uint8).copy()
