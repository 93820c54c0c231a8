"""Frames that map back exactly: the size sent is the frame each family sees, and numbers come back to the
device pixel, at 720x1600, 1080x2400 and 1440x3200 and at every LLM_MAX_IMAGE_SIDE from 64 to 4000."""

from __future__ import annotations

import pytest

from remote.ai.answers import Box, Convention, Point, Scale
from remote.ai.families import ALL, UNKNOWN, family_for
from remote.ai.frames import Frame, FramePolicy, seen_size, send_size
from remote.sim.dialects import DIALECTS, seen_frame

SIZES = ((720, 1600), (1080, 2400), (1440, 3200))
SIDES = range(64, 4001, 37)       # every LLM_MAX_IMAGE_SIDE the config allows, in steps of 37 px
FAMILIES = (*ALL, UNKNOWN)


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_what_is_sent_is_the_frame_the_family_sees(family):
    for size in SIZES:
        for side in SIDES:
            sent = send_size(size, side, family.frame)
            assert seen_size(sent, family.frame) == sent, (size, side, sent)
            if family.name in DIALECTS:   # the server's own resize, written apart from the product's
                assert seen_frame(DIALECTS[family.name], sent, high_resolution=False) == sent, (size, side)
            block = family.frame.block
            assert sent[0] % block == 0 and sent[1] % block == 0
            assert not family.frame.max_pixels or sent[0] * sent[1] <= family.frame.max_pixels
            if block == 1 and not family.frame.min_pixels:
                assert max(sent) <= max(side, 1)


@pytest.mark.parametrize("scale", list(Scale))
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_point_comes_back_within_one_pixel_at_every_send_size(size, scale):
    policy = family_for("qwen2.5-vl-7b").frame if scale is Scale.PIXEL else FramePolicy()
    convention = Convention(scale)
    worst = 0.0
    for side in SIDES:
        frame = Frame(size, send_size(size, side, policy))
        for x, y in ((0, 0), (size[0] - 1, size[1] - 1), (size[0] // 3, size[1] // 7), (1, size[1] - 2),
                     (size[0] * 5 // 9, size[1] * 2 // 3)):
            fx, fy = frame.to_convention(x, y, scale)            # what an exactly right model answers
            back = frame.point(Point(fx, fy, convention))
            assert back is not None
            worst = max(worst, abs(back[0] - x), abs(back[1] - y))
    assert worst <= 1


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_rounded_answer_is_off_by_at_most_half_a_unit_of_its_convention(size):
    box = (size[0] // 4 + 3, size[1] // 2 + 7, size[0] // 2 + 11, size[1] // 2 + 151)
    for family in FAMILIES:
        for side in (512, 768, 1280, 2000):
            frame = Frame(size, send_size(size, side, family.frame))
            scale = family.convention.scale
            values = [frame.to_convention(*box[:2], scale), frame.to_convention(*box[2:], scale)]
            digits = 2 if scale is Scale.FRACTION else 0
            x1, y1 = (round(v, digits) for v in values[0])
            x2, y2 = (round(v, digits) for v in values[1])
            back = frame.box(Box(x1, y1, x2, y2, family.convention))
            unit = (max(size[0] / frame.seen[0], size[1] / frame.seen[1]) if scale is Scale.PIXEL
                    else max(size) / (100 if scale is Scale.FRACTION else scale.full or 1))
            assert back is not None
            assert all(abs(a - b) <= unit / 2 + 1 for a, b in zip(back, box, strict=True)), (family.name, side)


@pytest.mark.parametrize("values, scale, inside", [
    ((1001, 500), Scale.NORM1000, True), ((1010, 500), Scale.NORM1000, False), ((-20, 500), Scale.NORM1000, False),
    ((560, 1260), Scale.PIXEL, True), ((1080, 2400), Scale.PIXEL, False), ((1.2, 0.5), Scale.FRACTION, False),
    ((999, 999), Scale.NORM999, True), ((0.5, 0.5), Scale.FRACTION, True),
])
def test_points_outside_the_frame_are_refused(values, scale, inside):
    frame = Frame((1080, 2400), (560, 1260))
    assert (frame.point(Point(*values, Convention(scale))) is not None) is inside


def test_a_box_may_overhang_a_little_but_its_centre_must_be_inside():
    frame = Frame((1080, 2400), (560, 1260))
    n = Convention(Scale.NORM1000)
    assert frame.box(Box(900, 500, 1040, 600, n)) == (972, 1200, 1080, 1440)     # clipped
    assert frame.box(Box(990, 500, 1200, 600, n)) is None                        # reaches 20 % past the edge
    assert frame.box(Box(500, 500, 500, 500, n)) == (540, 1200, 541, 1201)       # a point is 1 px


def test_a_crop_maps_back_onto_the_screen():
    crop = Frame((320, 320), (320, 320), offset=(380, 1040))
    assert crop.box(Box(500, 500, 600, 600, Convention(Scale.NORM1000))) == (540, 1200, 572, 1232)


def test_dashscope_would_shrink_a_large_image_and_pixel_families_never_send_one():
    qwen = family_for("qwen2.5-vl-72b-instruct")
    big = send_size((1440, 3200), 4000, qwen.frame)
    assert seen_frame(DIALECTS["qwen2.5-vl"], (1440, 3200), high_resolution=False) != (1440, 3200)
    assert seen_frame(DIALECTS["qwen2.5-vl"], big, high_resolution=False) == big
    assert qwen.extra_body("https://dashscope.aliyuncs.com/compatible-mode/v1") == {"vl_high_resolution_images": True}
    assert qwen.extra_body("http://127.0.0.1:8000/v1") == {}
    assert qwen.extra_body("https://DashScope-Intl.aliyuncs.com/compatible-mode/v1") == {"vl_high_resolution_images": True}
    for elsewhere in ("https://gateway.example/dashscope/v1", "https://proxy.example/v1?host=dashscope.aliyuncs.com",
                      "https://dashscope.aliyuncs.com.evil.example/v1", "https://notdashscope.aliyuncs.com/v1", "http://[::1"):
        assert qwen.extra_body(elsewhere) == {}, elsewhere
    assert send_size((1080, 2400), 1280, family_for("qwen-vl-max").frame) == (448, 1120)   # 224: both snapshots
