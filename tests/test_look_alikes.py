"""Look-alikes are decided on evidence (issue 16): a key beside keys of the same shape with another
symbol is found and trusted; two truly identical icons are refused (both offered, neither trusted).
The other classes the unseen screens showed follow: a checkbox in a photo grid, a large profile
picture, a tab among tabs of one style, a suggestion card among cards, a "More options" icon.

On these drawn screens most neighbours already fall more than ``RIVAL_MARGIN`` below the exact
match (edge and colour agreement tell them apart); "÷" beside "+" comes within it and is decided by
the comparison where the places differ (without ``visual_policy.settle`` its two tests fail).

Not covered, and a known limit (docs/locator.md): a key that is absent from the screen can be taken
for a key of the same shape whose symbol overlaps its own ("+" found for "÷" at raw 0.79)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
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


# --- the other refusal classes the unseen screens showed (issue 16): each exact match clearly
# better than its neighbours is found and trusted; only true copies are refused.

def _photo(seed: int, size: int) -> Image.Image:
    """A smooth random picture (low-resolution noise upscaled): a stand-in for a photo or avatar."""
    rng = np.random.default_rng(seed)
    small = Image.fromarray(rng.integers(0, 256, (6, 6, 3), dtype=np.uint8))
    return small.resize((size, size), Image.BICUBIC)


def _dots(draw: ImageDraw.ImageDraw, cx: int, cy: int, vertical: bool = True) -> None:
    for k in (-1, 0, 1):
        x, y = (cx, cy + 18 * k) if vertical else (cx + 18 * k, cy)
        draw.ellipse((x - 6, y - 6, x + 6, y + 6), fill=(60, 60, 66))


def _find(template: Image.Image, screen: Image.Image):
    return HybridLocator().locate_image(template, screen, source_size=screen.size)


def _assert_found_and_trusted(screen: Image.Image, box: tuple[int, int, int, int]) -> None:
    """The crop of ``box`` located on ``screen``: trusted, at ``box``."""
    res = _find(screen.crop(box), screen)
    assert res.success and res.reliable, (res.error, [c.bbox for c in res.candidates])
    assert _centre_in(res.element.bbox, box)


TILE, TILE_GAP = 340, 8


def _tile_box(i: int) -> tuple[int, int, int, int]:
    x, y = TILE_GAP + (i % 3) * (TILE + TILE_GAP), 300 + (i // 3) * (TILE + TILE_GAP)
    return x, y, x + TILE, y + TILE


def _photo_grid() -> tuple[Image.Image, list[tuple[int, int, int, int]]]:
    """A gallery: 3x3 photos, each with the same round checkbox in its top right corner."""
    screen = Image.new("RGB", SIZE, (250, 250, 250))
    draw = ImageDraw.Draw(screen)
    boxes = []
    for i in range(9):
        x0, y0, x1, _ = _tile_box(i)
        screen.paste(_photo(100 + i, TILE), (x0, y0))
        cx, cy = x1 - 44, y0 + 44
        draw.ellipse((cx - 26, cy - 26, cx + 26, cy + 26), outline=(255, 255, 255), width=5)
        boxes.append((cx - 34, cy - 34, cx + 34, cy + 34))
    return screen, boxes


@pytest.mark.parametrize("i", [0, 4, 8])
def test_a_checkbox_in_a_photo_grid_is_found_at_its_own_photo(i):
    screen, boxes = _photo_grid()
    _assert_found_and_trusted(screen, boxes[i])


def test_a_large_profile_picture_among_others_of_its_size_is_found():
    screen, _ = _photo_grid()
    _assert_found_and_trusted(screen, _tile_box(5))


TABS = ["Hot search", "Bookmarks", "History", "Following"]


def _tab_bar() -> tuple[Image.Image, list[tuple[int, int, int, int]]]:
    """Tabs of one style (the same pill, the same colour), each with its own word."""
    screen = Image.new("RGB", SIZE, (255, 255, 255))
    draw = ImageDraw.Draw(screen)
    font = ImageFont.truetype(str(FONT), 40)
    boxes = []
    for k, word in enumerate(TABS):
        box = (20 + k * 262, 220, 20 + k * 262 + 246, 300)
        draw.rounded_rectangle(box, radius=40, fill=(238, 240, 244))
        draw.text(((box[0] + box[2]) // 2, 260), word, font=font, fill=(40, 40, 48), anchor="mm")
        boxes.append(box)
    return screen, boxes


@pytest.mark.parametrize("word", ["Hot search", "Bookmarks"])
def test_a_tab_beside_tabs_of_the_same_style_is_found(word):
    screen, boxes = _tab_bar()
    _assert_found_and_trusted(screen, boxes[TABS.index(word)])


def _cards() -> tuple[Image.Image, list[tuple[int, int, int, int]]]:
    """Suggestion cards of one layout: a thumbnail and a title, each its own."""
    screen = Image.new("RGB", SIZE, (242, 242, 246))
    draw = ImageDraw.Draw(screen)
    font = ImageFont.truetype(str(FONT), 40)
    boxes = []
    for k, title in enumerate(["Weather today", "Nearby food", "Top news", "Music for you"]):
        box = (40, 300 + k * 260, 1040, 300 + k * 260 + 230)
        draw.rounded_rectangle(box, radius=24, fill=(255, 255, 255))
        screen.paste(_photo(200 + k, 180), (box[0] + 25, box[1] + 25))
        draw.text((box[0] + 240, box[1] + 90), title, font=font, fill=(30, 30, 36))
        boxes.append(box)
    return screen, boxes


@pytest.mark.parametrize("k", [0, 2])
def test_a_suggestion_card_among_cards_of_one_layout_is_found(k):
    screen, boxes = _cards()
    _assert_found_and_trusted(screen, boxes[k])


def test_a_more_options_icon_is_found_in_a_toolbar_and_refused_where_every_row_has_one():
    toolbar = Image.new("RGB", SIZE, (255, 255, 255))
    draw = ImageDraw.Draw(toolbar)
    draw.rectangle((0, 80, 1080, 240), fill=(250, 250, 252))
    _dots(draw, 1010, 160)                       # "More options"
    _dots(draw, 880, 160, vertical=False)        # a horizontal "..." beside it
    draw.ellipse((730, 128, 794, 192), outline=(60, 60, 66), width=8)   # a search lens
    _assert_found_and_trusted(toolbar, (980, 112, 1040, 208))

    rows = Image.new("RGB", SIZE, (255, 255, 255))
    draw = ImageDraw.Draw(rows)
    font = ImageFont.truetype(str(FONT), 44)
    for r, name in enumerate(["Alice", "Bob", "Carol"]):
        y = 400 + r * 200
        draw.text((60, y), name, font=font, fill=(30, 30, 30), anchor="lm")
        _dots(draw, 1010, y)
    res = _find(rows.crop((980, 552, 1040, 648)), rows)   # Bob's: the same icon on every row
    assert res.success and not res.reliable
    assert len(res.candidates) == 3 and res.element.metadata.get("refused") == "look_alike"
