"""Look-alikes are decided on evidence (issue 16): a key beside keys of the same shape with another
symbol is found and trusted; two truly identical icons are refused (both offered, neither trusted).

Not covered, and a known limit (docs/locator.md): a key that is absent from the screen can be taken
for a key of the same shape whose symbol overlaps its own ("+" found for "÷" at raw 0.79)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

from remote.core.locate.hybrid_locator import HybridLocator
from tests.support.images import icon as _icon

FONT = Path(__file__).resolve().parents[1] / "remote" / "assets" / "fonts" / "WenQuanYiMicroHeiSubset.ttf"
KEYS = ["7", "8", "9", "÷", "4", "5", "6", "×", "1", "2", "3", "-", "0", ".", "=", "+"]
KEY_W, KEY_H, GAP, TOP = 240, 200, 24, 900
SIZE = (1080, 1920)


def _key_box(i: int) -> tuple[int, int, int, int]:
    col, row = i % 4, i // 4
    x = GAP + col * (KEY_W + GAP)
    y = TOP + row * (KEY_H + GAP)
    return x, y, x + KEY_W, y + KEY_H


def _keypad(keys: list[str]) -> Image.Image:
    """A calculator screen: a display line, then a 4x4 grid of keys of one shape and colour,
    each with its own symbol."""
    img = Image.new("RGB", SIZE, (246, 246, 248))
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype(str(FONT), 96)
    draw.text((1000, 500), "1234", font=font, fill=(30, 30, 30), anchor="rs")
    for i, label in enumerate(keys):
        box = _key_box(i)
        draw.rounded_rectangle(box, radius=48, fill=(226, 228, 234), outline=(210, 212, 220), width=3)
        cx, cy = (box[0] + box[2]) // 2, (box[1] + box[3]) // 2
        draw.text((cx, cy), label, font=font, fill=(25, 25, 30), anchor="mm")
    return img


def _as_jpeg(img: Image.Image, quality: int = 75) -> Image.Image:
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=quality)
    return Image.open(io.BytesIO(buf.getvalue())).convert("RGB")


def _centre_in(box: tuple[int, int, int, int], outer: tuple[int, int, int, int]) -> bool:
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return outer[0] <= cx <= outer[2] and outer[1] <= cy <= outer[3]


@pytest.mark.parametrize("label", ["-", "÷", "7", "8", "×"])
@pytest.mark.parametrize("jpeg", [False, True], ids=["png", "jpeg"])
def test_a_key_beside_look_alike_keys_with_another_symbol_is_found_and_trusted(label, jpeg):
    screen = _keypad(KEYS)
    template = screen.crop(_key_box(KEYS.index(label)))
    shown = _as_jpeg(screen) if jpeg else screen
    res = HybridLocator().locate_image(template, shown, source_size=SIZE)
    assert res.success, res.error
    assert res.reliable, [c.bbox for c in res.candidates]
    assert _centre_in(res.element.bbox, _key_box(KEYS.index(label)))


def test_two_truly_identical_icons_are_refused_with_both_places_offered():
    screen = Image.new("RGB", SIZE, (246, 246, 248))
    icon = _icon(5, 120)
    places = [(120, 400), (700, 1400)]
    for xy in places:
        screen.paste(icon, xy)
    res = HybridLocator().locate_image(icon, screen, source_size=SIZE)
    assert res.success and not res.reliable
    assert {c.bbox for c in res.candidates} == {(x, y, x + 120, y + 120) for x, y in places}
    assert res.element.metadata.get("refused") == "look_alike"
