"""OCR tier: fuzzy text matching (pure) and RapidOCR on a rendered screen (one shared engine)."""

import pytest
from PIL import Image, ImageDraw, ImageFont

from remote.core import ocr
from remote.core.hybrid_locator import HybridLocator


def _box(text, bbox=(0, 0, 10, 10), score=0.9):
    return ocr.TextBox(text, bbox, score)


def test_match_text_order_exact_contains_similar():
    boxes = [_box("发送消息"), _box("发 送"), _box("Settings"), _box("Setting5")]
    hits = ocr.match_text("发送", boxes)
    assert [h.kind for h in hits] == ["exact", "contains"] and hits[0].box.text == "发 送"
    sim = ocr.match_text("settings", boxes)
    assert sim[0].kind == "exact" and sim[1].kind == "similar" and sim[1].box.text == "Setting5"
    assert ocr.match_text("", boxes) == [] and ocr.match_text("完全不同", boxes) == []


def test_label_inside_a_longer_line_gets_its_own_box_at_a_word_boundary():
    line = ocr.TextBox("Save to album Copy Link", (674, 1460, 1067, 1504), 0.95)
    hit = ocr.match_text("Copy Link", [line])[0]
    assert hit.kind == "part" and 923 <= hit.box.center[0] < 1067
    assert hit.box.bbox[1] == 1460 and hit.box.bbox[3] == 1504 and hit.box.bbox[2] == 1067
    dated = ocr.TextBox("10-2011:43来自山东", (186, 890, 533, 939), 0.9)
    assert ocr.match_text("来自山东", [dated])[0].box.center[0] >= 389
    # Inside a word (same script on both sides) it stays a weak "contains" on the whole line.
    inner = ocr.match_text("发送", [ocr.TextBox("发送给朋友", (0, 0, 100, 40), 0.9)])[0]
    assert inner.kind == "contains" and inner.box.bbox == (0, 0, 100, 40)


@pytest.fixture(scope="module")
def engine():
    if not ocr.available():
        pytest.skip(f"OCR extra not installed: {ocr.unavailable_reason()}")
    return ocr.get_engine()


def _font(size):
    for path in ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",):
        try:
            return ImageFont.truetype(path, size)
        except OSError:
            continue
    return ImageFont.load_default(size)


def test_read_text_boxes_in_device_pixels(engine):
    img = Image.new("RGB", (1080, 2400), "white")
    d = ImageDraw.Draw(img)
    d.text((600, 1800), "Settings", fill="black", font=_font(64))
    boxes = ocr.read_text(img, engine=engine)
    hit = ocr.match_text("Settings", boxes)
    assert hit, boxes
    x, y = hit[0].box.center
    assert 600 <= x <= 900 and 1790 <= y <= 1890   # device pixels, not the downscaled copy's


def test_ocr_tier_through_locator(engine):
    img = Image.new("RGB", (720, 1600), "white")
    ImageDraw.Draw(img).text((100, 400), "Contacts", fill="black", font=_font(48))
    res = HybridLocator().locate_with_fallback("text:contacts", ["ocr"], img)
    assert res.success and res.method_used == "ocr" and 100 <= res.element.center[0] <= 320
