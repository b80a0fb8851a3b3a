"""The pixel differ and the idle comparison, on generated images."""

from __future__ import annotations

import math

import numpy as np
import pytest

from argent import limits
from argent.runner import pixels as P


def solid(w: int, h: int, rgb: tuple[int, int, int] = (255, 255, 255), alpha: int = 255) -> P.Pixels:
    img = np.empty((h, w, 4), dtype=np.uint8)
    img[..., :3] = rgb
    img[..., 3] = alpha
    return img


# --------------------------------------------------------------------------------------------
# JavaScript rounding


def test_js_round_and_to_fixed_round_halves_up() -> None:
    assert [P.js_round(v) for v in (0.5, 1.5, 2.5, -0.5, -1.5, 2.4999)] == [1, 2, 3, 0, -1, 2]
    assert P.js_to_fixed(0.125) == "0.13"  # Python's format gives 0.12
    assert P.js_to_fixed(3.1) == "3.10"
    assert P.js_to_fixed(0) == "0.00"
    assert P.js_to_fixed(1.005) == "1.00"  # the binary value is below 1.005, as in JavaScript
    assert P.js_to_fixed(100) == "100.00"


# --------------------------------------------------------------------------------------------
# PNG


def test_png_round_trip_and_ihdr_size() -> None:
    img = solid(7, 3, (10, 20, 30))
    data = P.encode_png(img)
    assert P.png_size(data) == (7, 3)
    assert (P.decode_png(data) == img).all()
    with pytest.raises(P.PngError):
        P.png_size(b"GIF89a" + b"\0" * 30)
    with pytest.raises(P.PngError):
        P.decode_png(b"\x89PNG\r\n\x1a\n" + b"garbage" * 4)


def test_an_image_larger_than_any_screen_is_refused_before_it_is_decoded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = P.encode_png(solid(40, 30))
    monkeypatch.setattr(limits, "MAX_PNG_PIXELS", 40 * 30 - 1)
    message = f"the image is 40x30 pixels, more than the {40 * 30 - 1} a screen capture may have"
    for decode in (P.decode_png, P.idle_frame):
        with pytest.raises(P.PngError) as info:
            decode(data)
        assert str(info.value) == message
    monkeypatch.setattr(limits, "MAX_PNG_PIXELS", 40 * 30)
    assert P.decode_png(data).shape == (30, 40, 4)


# --------------------------------------------------------------------------------------------
# The threshold and the mismatch


def test_threshold_is_euclidean_rgb_distance_and_alpha_is_ignored() -> None:
    base = solid(10, 10, (100, 100, 100))
    assert math.isclose(P.DIFF_THRESHOLD_SQ, 1950.75)
    near = solid(10, 10, (125, 125, 125))  # 3·25² = 1875 ≤ 1950.75
    far = solid(10, 10, (126, 126, 126))  # 3·26² = 2028 > 1950.75
    assert not P.changed_mask(base, near).any()
    assert P.changed_mask(base, far).all()
    assert not P.changed_mask(base, solid(10, 10, (100, 100, 100), alpha=0)).any()
    one = base.copy()
    one[5, 5, 0] = 145  # one channel by 45: 2025 > 1950.75
    assert P.changed_mask(base, one).sum() == 1


def test_full_screen_skips_the_top_band_ceil_six_percent() -> None:
    h = 850  # 6% = 51 rows exactly; ceil keeps 51
    base = solid(10, h)
    cur = base.copy()
    cur[:51, :, :3] = 0
    d = P.diff_images(base, cur)
    assert d.changed == 0 and d.mismatch == 0
    cur[51, :, :3] = 0
    d = P.diff_images(base, cur)
    assert d.changed == 10
    assert d.mismatch == pytest.approx(10 / (10 * h) * 100)  # denominator includes the band
    assert P.top_band_rows(801) == 49  # 48.06 → 49
    # crops mask nothing
    cur2 = base.copy()
    cur2[0, 0, :3] = 0
    assert P.diff_images(base, cur2, full_screen=False).changed == 1


def test_mismatch_percentage_and_empty_images() -> None:
    base = solid(100, 100)
    cur = base.copy()
    cur[50:60, 0:31, :3] = 0
    d = P.diff_images(base, cur)
    assert d.mismatch == pytest.approx(3.1)
    assert P.js_to_fixed(d.mismatch) == "3.10"
    assert P.diff_images(solid(0, 0), solid(0, 0)).mismatch == 0


def test_mostly_changed_images_take_the_full_path_with_same_answer() -> None:
    rng = np.random.default_rng(1)
    a = rng.integers(0, 256, (60, 80, 4), dtype=np.uint8)
    b = rng.integers(0, 256, (60, 80, 4), dtype=np.uint8)
    d = a[..., :3].astype(np.int64) - b[..., :3]
    expected = (d * d).sum(axis=2) > P.DIFF_THRESHOLD_SQ
    assert (P.changed_mask(a, b) == expected).all()
    c = a.copy()
    c[:5] = b[:5]
    d2 = a[..., :3].astype(np.int64) - c[..., :3]
    assert (P.changed_mask(a, c) == ((d2 * d2).sum(axis=2) > P.DIFF_THRESHOLD_SQ)).all()


# --------------------------------------------------------------------------------------------
# Sizes


def test_different_aspect_is_a_dimension_mismatch() -> None:
    d = P.diff_images(solid(390, 844), solid(844, 390))
    assert d.dimension_mismatch and d.mismatch == 0
    assert d.baseline_size == (390, 844) and d.current_size == (844, 390)


def test_crop_size_difference_is_a_dimension_mismatch_even_with_same_shape() -> None:
    d = P.diff_images(solid(100, 50), solid(200, 100), full_screen=False)
    assert d.dimension_mismatch


def test_same_shape_other_size_is_resampled_down_to_the_smaller() -> None:
    base = solid(200, 160, (0, 0, 255))
    cur = solid(100, 80, (0, 0, 255))
    d = P.diff_images(base, cur)
    assert not d.dimension_mismatch and d.changed == 0
    assert d.baseline is not None and d.baseline.shape == (80, 100, 4)
    # within 1% relative aspect: 1000x800 vs 499x400 (1.25 vs 1.2475)
    assert P.same_shape((1000, 800), (499, 400))
    assert not P.same_shape((1000, 800), (490, 400))


def test_lanczos_resize_keeps_flat_colour_and_is_clamped() -> None:
    img = solid(40, 40, (200, 10, 30))
    out = P.lanczos_resize(img, 13, 13)
    assert out.shape == (13, 13, 4)
    assert (out[..., :3] == (200, 10, 30)).all() and (out[..., 3] == 255).all()
    sharp = solid(40, 40, (0, 0, 0))
    sharp[:, 20:, :3] = 255
    up = P.lanczos_resize(sharp, 80, 80)  # ringing stays within 0..255
    assert up.dtype == np.uint8 and up[..., 0].min() == 0 and up[..., 0].max() == 255


# --------------------------------------------------------------------------------------------
# Regions and the diff image


def test_components_are_eight_connected() -> None:
    mask = np.zeros((10, 10), dtype=bool)
    mask[1, 1] = mask[2, 2] = mask[3, 3] = True  # diagonal chain
    mask[7, 7] = True  # a lone pixel
    comps = sorted(P.components(mask), key=lambda r: r.x0)
    assert [(r.x0, r.y0, r.x1, r.y1, r.pixels) for r in comps] == [(1, 1, 3, 3, 3), (7, 7, 7, 7, 1)]


def test_regions_drop_single_pixels_and_merge_close_boxes_and_text_rows() -> None:
    mask = np.zeros((200, 400), dtype=bool)
    mask[10:12, 10:20] = True
    mask[10:12, 25:35] = True  # gap 5 px → merged
    mask[100, 100] = True  # lone pixel → dropped
    mask[150:160, 100:110] = True
    mask[150:160, 140:150] = True  # same row, gap 29 ≤ max(32, 30) → one text row
    mask[150:160, 300:310] = True  # gap 149 > 120 → separate
    found = sorted(P.regions(mask), key=lambda r: (r.y0, r.x0))
    assert [(r.x0, r.y0, r.x1, r.y1) for r in found] == [
        (10, 10, 34, 11),
        (100, 150, 149, 159),
        (300, 150, 309, 159),
    ]


def test_too_many_regions_keeps_the_largest_unmerged() -> None:
    mask = np.zeros((300, 300), dtype=bool)
    mask[::3, ::3] = True
    mask[::3, 1::3] = True  # 2-px components, 3 px apart: 10,000 regions
    found = P.regions(mask)
    assert len(found) == P.REGIONS_KEPT_UNMERGED


def test_diff_image_colours() -> None:
    base = solid(50, 50, (100, 100, 100))
    cur = base.copy()
    cur[20:25, 10:15, :3] = 250  # brighter → green
    cur[20:25, 30:35, :3] = 0  # darker → red
    d = P.diff_images(base, cur)
    img = P.diff_image(d)
    assert img.shape == (50, 50, 4) and (img[..., 3] == 255).all()
    assert tuple(img[22, 12, :3]) == P.CHANGED_BRIGHTER
    assert tuple(img[22, 32, :3]) == P.CHANGED_DARKER
    lightened = P.js_round(100 * 0.55 + 255 * 0.45)
    assert tuple(img[45, 45, :3]) == (lightened,) * 3
    # a 4-px yellow outline just outside the region
    assert tuple(img[22, 6, :3]) == P.REGION_OUTLINE
    assert tuple(img[22, 9, :3]) == P.REGION_OUTLINE
    assert tuple(img[22, 5, :3]) == (lightened,) * 3
    ctx = P.context_image(img)
    assert ctx.shape == (15, 15, 4)


def test_crop_rect_rounds_half_up_and_clamps() -> None:
    assert P.crop_rect(0.25, 0.125, 0.5, 0.25, 10, 4) == (3, 1, 8, 2)  # 2.5→3, 0.5→1, 7.5→8, 1.5→2
    assert P.crop_rect(-0.1, 0.9, 1.5, 0.5, 100, 100) == (0, 90, 100, 100)


# --------------------------------------------------------------------------------------------
# Idle


def test_idle_states() -> None:
    still = solid(40, 40, (50, 50, 50))
    assert P.idle_state(still, still.copy()) == "still"
    assert P.idle_state(still, solid(40, 40, (200, 200, 200))) == "moving"
    assert P.idle_state(still, solid(40, 40, (50, 50, 50), alpha=0)) == "still"
    assert P.idle_state(still, solid(40, 41)) == "moving"
    assert P.idle_state(solid(0, 0), solid(0, 0)) == "still"
    assert math.isclose(P.IDLE_THRESHOLD_SQ, 175.5675)
    drift = solid(40, 40, (58, 58, 58))  # 3·8² = 192 > 175.57 → changed everywhere
    assert P.idle_state(still, drift) == "moving"
    tiny = solid(40, 40, (57, 57, 57))  # 3·7² = 147 → sub-threshold
    assert P.idle_state(still, tiny) == "still"
    spinner = still.copy()
    spinner[0:4, 0:4, :3] = 255  # 16 px: ≥ 10, ≤ max(3.2, min(100, 160))
    assert P.idle_state(still, spinner) == "localized"
    assert P.idle_state(still, spinner, top_rows=4) == "still"


def test_idle_frame_is_quarter_scale() -> None:
    frame = P.idle_frame(P.encode_png(solid(100, 80)))
    assert frame.shape == (20, 25, 4)


# --------------------------------------------------------------------------------------------
# Edges the mutation run of issue 24 found untested


def test_to_fixed_spells_non_finite_values_and_negative_zero_as_javascript_does() -> None:
    assert P.js_to_fixed(math.nan) == "NaN"
    assert P.js_to_fixed(math.inf) == "Infinity"
    assert P.js_to_fixed(-math.inf) == "-Infinity"
    assert P.js_to_fixed(-0.0) == "0.00"  # (-0).toFixed(2) is "0.00"
    assert P.js_to_fixed(-1.5) == "-1.50"


def test_same_shape_holds_at_exactly_the_aspect_tolerance_and_refuses_an_empty_side() -> None:
    assert P.ASPECT_TOLERANCE == 0.01
    assert P.same_shape((100, 1), (99, 1))  # ratios 100 and 99: exactly 1 % apart
    assert not P.same_shape((100, 1), (98, 1))
    assert not P.same_shape((0, 10), (0, 10))
    assert not P.same_shape((10, 0), (10, 10))


def test_idle_counts_ten_changed_pixels_as_localized_and_nine_as_still() -> None:
    prev = solid(100, 100, (0, 0, 0))
    for changed, state in ((9, "still"), (10, "localized")):
        cur = prev.copy()
        cur[50, :changed, :3] = 255
        assert P.idle_state(prev, cur) == state


def test_over_max_regions_merged_the_largest_regions_are_kept_largest_first() -> None:
    mask = np.zeros((200, 600), dtype=bool)
    mask[::2, ::3] = True  # 100 x 200 separate pieces ...
    mask[::2, 1::3] = True  # ... of 2 px each: more than MAX_REGIONS_MERGED
    mask[0, 0:3] = mask[2, 0:3] = mask[1, 0] = True  # two pieces grown into one of 11 px, another of 5
    mask[4, 0:3] = True
    sizes = sorted((c.pixels for c in P.components(mask)), reverse=True)
    assert len(sizes) > P.MAX_REGIONS_MERGED and sizes[:3] == [11, 5, 2]
    kept = P.regions(mask)
    assert [r.pixels for r in kept] == sizes[: P.REGIONS_KEPT_UNMERGED]


def test_an_rgb_array_is_encoded_as_an_rgb_png() -> None:
    rgb = solid(3, 2, (10, 20, 30))[..., :3].copy()
    png = P.encode_png(rgb)
    assert png[25] == 2  # IHDR colour type 2: truecolour without alpha
    assert P.decode_png(png)[1, 2].tolist() == [10, 20, 30, 255]


def test_the_idle_frame_is_a_quarter_scale_at_least_one_pixel_each_way() -> None:
    assert P.idle_frame(P.encode_png(solid(8, 2))).shape == (1, 2, 4)  # 2 x 0.25 rounds up to 1
    assert P.idle_frame(P.encode_png(solid(2, 1))).shape == (1, 1, 4)  # 0.25 rounds down to 0: kept at 1
    assert P.idle_frame(P.encode_png(solid(40, 20))).shape == (5, 10, 4)


def test_a_small_frame_moves_past_a_tenth_of_its_area() -> None:
    prev = solid(10, 10, (0, 0, 0))  # area 100: moving past 10 changed pixels, localized from 10
    for changed, state in ((10, "localized"), (11, "moving")):
        cur = prev.copy()
        cur.reshape(-1, 4)[:changed, :3] = 255
        assert P.idle_state(prev, cur) == state


def test_same_shape_refuses_a_zero_height_on_either_side() -> None:
    assert not P.same_shape((10, 10), (10, 0))
    assert not P.same_shape((10, 0), (10, 10))


def test_png_size_reads_a_header_of_exactly_24_bytes_and_names_what_is_not_one() -> None:
    png = P.encode_png(solid(7, 3))
    assert P.png_size(png[:24]) == (7, 3)
    for bad in (png[:23], b"GIF89a" + png[6:]):
        with pytest.raises(P.PngError, match=r"^not a PNG image \(no IHDR header\)$"):
            P.png_size(bad)


def test_an_unknown_name_of_the_pixels_module_is_an_attribute_error_naming_it() -> None:
    with pytest.raises(AttributeError, match=r"^module 'argent\.runner\.pixels' has no attribute 'nope'$"):
        P.nope  # noqa: B018
