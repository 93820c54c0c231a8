"""The detector's input without its long blank bands (ocr_bands): what is cut, what is kept, where the
lines go back; and the real reading on drawn and real screens, squeezed and not."""

import dataclasses

import numpy as np
import pytest
from PIL import Image

from remote.core.locate import ocr, ocr_bands
from remote.core.locate.ocr_bands import BAND_MARGIN, STRIDE
from tests.support.data import data_path, looked
from tests.support.images import text_screen

REAL_DEV = data_path("real-dev")


def _page() -> np.ndarray:
    """736 x 1000: white; drawn rows 100-119 and 600-639; an even band whose colour changes every row
    (700-899); a row at 950 whose pixels differ by 10 (a faint hint: not blank)."""
    img = np.full((1000, 736, 3), 255, np.uint8)
    img[100:120, 50:300] = 0
    img[600:640, 400:700] = 30
    img[700:900] = np.linspace(200, 250, 200, dtype=np.uint8)[:, None, None]
    img[950, :368] = 240
    img[950, 368:] = 250
    return img


def test_long_blank_runs_are_cut_to_their_margins_and_drawn_rows_kept_whole():
    img = _page()
    out, cut = ocr_bands.squeeze(img)
    assert cut is not None
    rows = cut.rows
    assert out.shape[0] == len(rows) and out.shape[0] % STRIDE == 0 and out.shape[1] == 736
    assert np.array_equal(out, img[rows])   # rows kept as they were, in order
    kept = set(rows.tolist())
    for first, last in ((100, 119), (600, 639), (950, 950)):   # drawn rows, and the faint row, with their margins
        assert set(range(first - BAND_MARGIN, last + BAND_MARGIN + 1)) <= kept, (first, last)
    # The runs longer than twice the margin lose their middles: above 100, 120-600, 640-950 (the even band
    # of changing colour is blank too), after 950.
    assert 350 not in kept and 800 not in kept and 975 not in kept
    assert out.shape[0] <= 1000 - (100 - 2 * BAND_MARGIN) - (480 - 2 * BAND_MARGIN) - (310 - 2 * BAND_MARGIN) + STRIDE
    assert ocr_bands.blank_rows(img)[[0, 300, 800, 999]].all() and not ocr_bands.blank_rows(img)[[110, 620, 950]].any()


def test_a_screen_without_a_long_run_is_given_as_it_is():
    img = np.full((200, 736, 3), 255, np.uint8)
    img[::2 * BAND_MARGIN, 10:20] = 0   # a drawn row every 2 * margin rows: no run is longer
    out, cut = ocr_bands.squeeze(img)
    assert out is img and cut is None
    assert ocr_bands.rows_back(None, cut) is None


def test_quads_go_back_to_the_rows_they_were_found_on():
    img = _page()
    out, cut = ocr_bands.squeeze(img)
    at = {int(r): i for i, r in enumerate(cut.rows)}
    found = np.array([[[50, at[100]], [300, at[100]], [300, at[119]], [50, at[119]]],
                      [[400, at[600]], [700, at[600]], [700, at[639] + 0.5], [400, at[639] + 0.5]],
                      [[400, at[600] - 20], [700, at[600] - 20], [700, at[639]], [400, at[639]]]], np.float32)
    back = ocr_bands.rows_back(found, cut)
    assert back[0, :, 1].tolist() == [100, 100, 119, 119] and back[0, :, 0].tolist() == [50, 300, 300, 50]
    assert back[1, :, 1].tolist() == [600, 600, 639.5, 639.5]
    assert len(back) == 3 and back[2, 0, 1] < 600 - BAND_MARGIN   # across the cut into blank rows only: kept
    assert found[0, 0, 1] == at[100]   # the detector's answer is not changed in place


def test_a_quad_across_a_cut_with_drawn_rows_on_both_sides_is_no_line():
    # No line of the whole screen holds a blank band taller than twice the margin: a quad from the drawn
    # rows at 100-119 to those at 600-639 joins what the cut brought together.
    img = _page()
    _, cut = ocr_bands.squeeze(img)
    at = {int(r): i for i, r in enumerate(cut.rows)}
    joined = [[50, at[100]], [700, at[100]], [700, at[639]], [50, at[639]]]
    line = [[400, at[600]], [700, at[600]], [700, at[639]], [400, at[639]]]
    back = ocr_bands.rows_back(np.array([joined, line], np.float32), cut)
    assert back.shape == (1, 4, 2) and back[0, :, 1].tolist() == [600, 600, 639, 639]
    assert ocr_bands.rows_back(np.array([joined], np.float32), cut).shape == (0, 4, 2)


@pytest.fixture(scope="module")
def engines():
    assert ocr.available(), ocr.unavailable_reason()
    now = ocr.get_engine()
    assert now.squeeze
    return now, dataclasses.replace(now, squeeze=False)


def test_drawn_labels_far_apart_are_read_at_their_places_squeezed(engines):
    # Labels with 300-700 px of white between them: the detector sees a copy less than half as tall, and
    # every label is read, at the device pixels it was drawn at, as the whole screen reads it.
    labels = [((80, 200), "通讯录", 48), ((600, 900), "Contacts", 44), ((80, 1300), "我的收藏", 40),
              ((120, 2200), "Write a comment", 40)]
    img = text_screen(labels, (1080, 2400))
    now, whole = engines
    small = np.asarray(img.resize((736, 1636)))
    assert ocr_bands.squeeze(small)[0].shape[0] < 1636 / 2
    squeezed, plain = ocr.read_text(img, engine=now), ocr.read_text(img, engine=whole)
    assert [b.text for b in squeezed] == [b.text for b in plain] == [t for _, t, _ in labels]
    for (x, y), _, px in labels:
        box = next(b for b in squeezed if abs(b.bbox[1] - y) < px)
        assert abs(box.bbox[0] - x) <= 12 and box.bbox[1] - 4 <= y + px * 0.3 and box.bbox[3] >= y + px * 0.7, box


def test_a_screen_of_plain_buttons_reads_no_text_squeezed(engines):
    # Six plain buttons on an even background (tests/support/dialect_cases): with most of its blank cut the
    # detector took three buttons for one line ('丰' at 0.44 over 500 px); no such line is kept. (The whole
    # 1080x1920 screen has the detector read 'EE' at 0.69 over all six.)
    from tests.support import dialect_cases as dc

    now, whole = engines
    for size in [(720, 1600), (1080, 1920), (1080, 2400), (1440, 3200)]:
        assert ocr.read_text(dc.image(size), engine=now) == [], size
    assert [b.text for b in ocr.read_text(dc.image((720, 1600)), engine=whole)] == []


def test_a_real_screen_reads_its_lines_at_the_same_places_squeezed(engines):
    path = REAL_DEV / "Kqramazov_fdroid_utg/output/weibo_bfs_greedy/states/screen_2023-10-24_173727.jpg"
    if not path.is_file():
        pytest.skip(f"real-dev screens not found at {looked('real-dev')}")
    img = Image.open(path).convert("RGB")
    now, whole = engines
    squeezed, plain = ocr.read_text(img, engine=now), ocr.read_text(img, engine=whole)
    same = {b.text: b.bbox for b in plain if [p.text for p in plain].count(b.text) == 1}
    both = [(b.bbox, same[b.text]) for b in squeezed if b.text in same]
    assert len(both) >= 0.8 * len(plain) > 10   # most lines read alike (the detector's global context changed)
    for ours, theirs in both:   # and put back where the whole screen had them
        assert max(abs(a - b) for a, b in zip(ours, theirs, strict=True)) <= 6, (ours, theirs)
