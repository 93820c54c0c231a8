"""Every coordinate scenario of the coordinate rules (docs/architecture.md, remote/core/coords.py), table-style."""

from __future__ import annotations

import logging
import math

import pytest

from remote.core import coords
from remote.core.coords import (
    bbox_center,
    downscale_size,
    image_to_screen,
    iou,
    is_normalized,
    point_to_screen,
    scale_factor,
    screen_to_image,
    to_pixels,
    validate_bbox,
    visible_region,
)


@pytest.mark.parametrize("bbox,size,expected", [
    ([100, 200, 300, 400], (1920, 1080), True),    # 400 < 1080
    ([500, 600, 700, 800], (800, 600), False),     # values near the image size: pixels
    ([400, 300, 600, 450], (800, 600), False),     # small image: not mistaken for 0-1000
    ([0, 0, 999, 999], (1080, 2400), True),
    ([-50, 100, 200, 300], (1920, 1080), True),
    (["a", 1, 2, 3], (100, 100), False),
])
def test_is_normalized(bbox, size, expected):
    assert is_normalized(bbox, size) is expected


@pytest.mark.parametrize("bbox,size,expected", [
    ([500, 500, 600, 600], (1920, 1080), (960, 540, 1152, 648)),       # Full HD
    ([0, 0, 500, 1000], (2560, 1440), (0, 0, 1280, 1440)),             # 2K
    ([250, 250, 750, 750], (3840, 2160), (960, 540, 2880, 1620)),      # 4K
    ([900, 500, 1050, 600], (1920, 1080), (1728, 540, 1920, 648)),     # clipped on the right
    ([100, 200, 300, 400], (1920, 1080), (192, 216, 576, 432)),
    ([500, 600, 700, 800], (800, 600), (500, 599, 700, 600)),          # pixels, clipped at the bottom
])
def test_auto_mode_conversions(bbox, size, expected):
    assert to_pixels(bbox, size) == expected


def test_clipping_left_and_negative():
    assert to_pixels([-50, 100, 200, 300], (1920, 1080))[0] == 0
    assert to_pixels([-5, -5, 10, 10], (100, 100), mode="pixel") == (0, 0, 10, 10)


@pytest.mark.parametrize("size", [(720, 1600), (1080, 2400), (1440, 3200)])
def test_phone_resolutions_norm1000(size):
    w, h = size
    box = to_pixels([100, 50, 300, 150], size, mode="norm1000")
    assert box == (round(w * 0.1), round(h * 0.05), round(w * 0.3), round(h * 0.15))
    assert bbox_center(box) == ((box[0] + box[2]) // 2, (box[1] + box[3]) // 2)
    # a pixel box on the same screen is left alone in pixel mode
    assert to_pixels([100, 50, 300, 150], size, mode="pixel") == (100, 50, 300, 150)


@pytest.mark.parametrize("bbox,size,expected", [
    ([500, 500, 500, 600], (1920, 1080), (960, 540, 961, 648)),    # zero width -> 1 px
    ([500, 500, 600, 500], (1920, 1080), (960, 540, 1152, 541)),   # zero height -> 1 px
    ([1000, 1000, 1000, 1000], (1920, 1080), (1919, 1079, 1920, 1080)),  # right/bottom edge
    ([1920, 5, 1920, 9], (1920, 1080), (1919, 5, 1920, 9)),  # pixel mode at the edge (auto: >= min side)
    ([300, 400, 100, 200], (1000, 1000), (100, 200, 300, 400)),    # swapped corners ordered
])
def test_minimum_size_and_edges(bbox, size, expected):
    out = to_pixels(bbox, size, mode="pixel" if bbox[0] == 1920 else "auto")
    assert out == expected
    x1, y1, x2, y2 = out
    assert 0 <= x1 < x2 <= size[0] and 0 <= y1 < y2 <= size[1]


def test_norm1000_always_scales_and_pixel_never_does():
    assert to_pixels([500, 500, 600, 600], (800, 600), mode="norm1000") == (400, 300, 480, 360)
    assert to_pixels([10, 10, 20, 20], (1920, 1080), mode="pixel") == (10, 10, 20, 20)


@pytest.mark.parametrize("bad", [[], [100, 200], ["abc", 100, 200, 300], None, [float("nan"), 1, 2, 3],
                                 [1, 2, 3, float("inf")], [1, 2, 3, 4, 5], "1234", [None, 1, 2, 3]])
def test_bad_bboxes_return_none_and_warn(bad, caplog):
    with caplog.at_level(logging.WARNING, logger="remote.core.coords"):
        assert to_pixels(bad, (1920, 1080)) is None
    assert "无效坐标" in caplog.text and "1920" in caplog.text


def test_bad_sizes_and_modes_return_none(caplog):
    assert to_pixels([1, 2, 3, 4], (0, 100)) is None
    assert to_pixels([1, 2, 3, 4], None) is None
    assert to_pixels([1, 2, 3, 4], (100, 100), mode="weird") is None
    assert "weird" in caplog.text


def test_conversion_log_line(caplog):
    with caplog.at_level(logging.INFO, logger="remote.core.coords"):
        to_pixels([100, 200, 300, 400], (1920, 1080))
        to_pixels([10.5, 20, 30, 40], (1920, 1080))
    assert ("[坐标] 检测到归一化坐标 (100, 200, 300, 400), 已转换为实际坐标 (192, 216, 576, 432), "
            "图像尺寸: (1920, 1080)") in caplog.messages
    assert any("(10.5, 20, 30, 40)" in m for m in caplog.messages)


def test_no_conversion_log_for_pixels(caplog):
    with caplog.at_level(logging.INFO, logger="remote.core.coords"):
        assert to_pixels([500, 600, 700, 800], (800, 600)) is not None
    assert not caplog.messages


@pytest.mark.parametrize("bbox,expected", [
    ((0, 0, 100, 100), {"valid": True}),
    ((-10, -10, 5, 5), {"valid": False, "error": "坐标超出屏幕范围"}),
    ((-50, 200, 300, 250), {"valid": False, "error": "坐标超出屏幕范围"}),   # the seed's own scenario
    ((0, 0, 1080, 2400), {"valid": True}),
    ((1000, 2300, 1081, 2400), {"valid": False, "error": "坐标超出屏幕范围"}),
    ((2000, 10, 2100, 50), {"valid": False, "error": "坐标超出屏幕范围"}),
    ((10, 3000, 20, 3100), {"valid": False, "error": "坐标超出屏幕范围"}),
    ((-100, 0, -1, 10), {"valid": False, "error": "坐标超出屏幕范围"}),
    ((10, 10, 10, 20), {"valid": False, "error": "坐标区域为空"}),
    ((1, 2, 3), {"valid": False, "error": "坐标格式无效"}),
    (None, {"valid": False, "error": "坐标格式无效"}),
    ((1, 2, "x", 4), {"valid": False, "error": "坐标格式无效"}),
    ((1, 2, math.nan, 4), {"valid": False, "error": "坐标格式无效"}),
    ((True, 2, 3, 4), {"valid": False, "error": "坐标格式无效"}),
])
def test_validate_bbox(bbox, expected):
    assert validate_bbox(bbox, (1080, 2400)) == expected


def test_visible_region():
    screen = (1080, 2400)
    full = visible_region((100, 100, 300, 200), screen)
    assert full == {"can_interact": True, "safe_region": (100, 100, 300, 200), "visible_fraction": 1.0}
    half = visible_region((980, 100, 1180, 200), screen)   # exactly half on screen
    assert half["can_interact"] is True and half["safe_region"] == (980, 100, 1080, 200)
    sliver = visible_region((1000, 100, 1300, 200), screen)  # 80 of 300 px visible
    assert sliver["can_interact"] is False and sliver["safe_region"] == (1000, 100, 1080, 200)
    thin = visible_region((100, 2395, 300, 2405), screen)    # 5 px high visible
    assert thin["can_interact"] is False
    gone = visible_region((2000, 0, 2100, 10), screen)
    assert gone == {"can_interact": False, "safe_region": None, "visible_fraction": 0.0}
    small = visible_region((0, 0, 8, 8), screen)             # fully visible but under 10 px
    assert small["can_interact"] is False


def test_scaling_between_downscaled_image_and_screen():
    screen, image = (1080, 2400), (540, 1200)
    assert scale_factor(image, screen) == (2.0, 2.0)
    assert image_to_screen((10, 20, 30, 40), image, screen) == (20, 40, 60, 80)
    assert screen_to_image((20, 40, 60, 80), screen, image) == (10, 20, 30, 40)
    assert point_to_screen((539.6, 1199.9), image, screen) == (1079, 2399)
    assert image_to_screen((1, 2), image, screen) is None
    assert image_to_screen((1, 2, 3, 4), (0, 10), screen) is None
    assert downscale_size((1080, 2400), 1280) == (576, 1280)
    assert downscale_size((1080, 2400), 4000) == (1080, 2400)
    assert downscale_size((1080, 2400), 0) == (1080, 2400)


def test_iou_and_center():
    assert iou((0, 0, 10, 10), (0, 0, 10, 10)) == 1.0
    assert iou((0, 0, 10, 10), (5, 0, 15, 10)) == pytest.approx(50 / 150)
    assert iou((0, 0, 10, 10), (20, 20, 30, 30)) == 0.0
    assert iou((0, 0, 0, 0), (0, 0, 0, 0)) == 0.0
    assert bbox_center((0, 0, 11, 21)) == (5, 10)


def test_module_constants():
    assert coords.MIN_VISIBLE_FRACTION == 0.5 and coords.MIN_VISIBLE_SIDE == 10
    assert set(coords.MODES) == {"auto", "norm1000", "pixel"}


def test_image_to_screen_orders_swapped_corners():
    assert image_to_screen((30, 40, 10, 20), (540, 1200), (1080, 2400)) == (20, 40, 60, 80)
