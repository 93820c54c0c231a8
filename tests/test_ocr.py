"""OCR tier: fuzzy text matching (pure) and RapidOCR on a rendered screen (one shared engine)."""

import pytest
from PIL import Image, ImageDraw, ImageFont

from remote.core.locate import ocr
from remote.core.locate.hybrid_locator import HybridLocator
from remote.core.locate.screen import Screen


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


def test_label_split_at_a_word_gap_is_joined():
    boxes = [_box("Create New", (100, 500, 300, 540)), _box("Account", (330, 502, 450, 540)),
             _box("Sign in", (100, 600, 220, 640)), _box("Help", (900, 500, 980, 540))]
    hit = ocr.match_text("Create New Account", boxes)[0]
    assert hit.kind == "exact" and hit.box.bbox == (100, 500, 450, 540)
    # Far apart on the line, or on different lines: not one label.
    assert ocr.match_text("Account Help", boxes)[0].kind != "exact"
    assert ocr.match_text("Create New Sign in", boxes)[0].kind != "exact"
    # A longer line elsewhere on the screen does not stop a wrapped label from being read exactly.
    wrapped = [_box("Get first", (912, 1100, 1080, 1140)), _box("comment", (930, 1150, 1060, 1190)),
               _box("A much longer line of text somewhere else", (0, 300, 1000, 340))]
    hit = ocr.match_text("Get first comment", wrapped)[0]
    assert hit.kind == "exact" and hit.box.bbox == (912, 1100, 1080, 1190)


def test_wrapped_label_read_past_other_columns_and_split_words():
    # Another column's box on the same rows sorts between the two lines: it is stepped over.
    boxes = [_box("他今天发布了26条微博，获得了", (108, 1316, 757, 1369)), _box("12:30", (900, 1318, 1000, 1360)),
             _box("2287次互动", (124, 1384, 362, 1433)), _box("一条更长的别处的文字，比目标还要长得多的一行", (0, 200, 1000, 250))]
    hit = ocr.match_text("他今天发布了26条微博，获得了2287次互动", boxes)[0]
    assert hit.kind == "exact" and hit.box.bbox == (108, 1316, 757, 1433)
    # A title split at a word gap on its first line and wrapped: words joined, then lines merged.
    title = [_box("Create", (143, 105, 391, 161)), _box("New", (419, 101, 591, 164)),
             _box("Account", (209, 205, 515, 264))]
    hit = ocr.match_text("Create  New\nAccount", title)[0]
    assert hit.kind == "exact" and hit.box.bbox == (143, 101, 591, 264)


def test_label_cut_short_with_an_ellipsis():
    boxes = [_box("Recomme...", (788, 1718, 947, 1753)), _box("Also rep…", (108, 1537, 296, 1585))]
    assert [(h.kind, h.box.text) for h in ocr.match_text("Recommend", boxes)] == [("truncated", "Recomme...")]
    assert ocr.match_text("Also repost", boxes)[0].kind == "truncated"
    # Too little left before the dots, or a different word: not a truncation of the target.
    assert all(h.kind != "truncated" for h in ocr.match_text("Alpha", [_box("Al...")]))
    assert all(h.kind != "truncated" for h in ocr.match_text("Settings", [_box("Sett...")]))
    assert all(h.kind != "truncated" for h in ocr.match_text("Recording", boxes))


class _SizeDependentEngine:
    """Reads "972" only when the image is at full resolution (small text lost when downscaled)."""

    def __init__(self, full_width):
        self.full_width, self.calls = full_width, []

    def __call__(self, img, **kw):
        self.calls.append(img.shape[1])
        found = [[[[300, 1500], [340, 1500], [340, 1514], [300, 1514]], "972", 0.9]]
        return (found if img.shape[1] == self.full_width else []), None


def test_small_text_is_read_again_at_full_resolution(monkeypatch):
    fake = _SizeDependentEngine(1440)
    monkeypatch.setattr(ocr, "get_engine", lambda: fake)
    screen = Screen(Image.new("RGB", (1440, 3200), "white"))
    res = HybridLocator().locate_with_fallback("text:972", ["ocr"], screen)
    assert res.success and res.element.bbox == (300, 1500, 340, 1514)
    assert fake.calls == [576, 1440]           # the downscaled read first, then the full one
    HybridLocator().locate_with_fallback("text:972", ["ocr"], screen)
    assert fake.calls == [576, 1440]           # both readings are kept with the screen
    # Found on the downscaled copy: not read again; a screen within MAX_SIDE has no second reading.
    always = _SizeDependentEngine(576)
    monkeypatch.setattr(ocr, "get_engine", lambda: always)
    assert HybridLocator().locate_with_fallback("text:972", ["ocr"], Image.new("RGB", (1440, 3200))).success
    assert always.calls == [576]
    small = _SizeDependentEngine(0)
    monkeypatch.setattr(ocr, "get_engine", lambda: small)
    assert not HybridLocator().locate_with_fallback("text:972", ["ocr"], Image.new("RGB", (600, 1200))).success
    assert small.calls == [600]


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
