"""OCR tier: fuzzy text matching (pure), and the real RapidOCR on screens drawn with the bundled font."""

import importlib.metadata
import sys
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import numpy as np
import pytest

from remote.cli import main
from remote.core.locate import ocr
from remote.core.locate.hybrid_locator import HybridLocator
from remote.core.locate.screen import Screen
from remote.core.plan.checks import SuccessCheck
from remote.core.records import LocateFailure
from remote.runner.final_check import FinalChecker
from tests.support.images import text_screen


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


def test_icon_glyphs_in_a_target_are_not_read():
    # A label taken from a UI dump carries the icon font's private-use glyph; OCR reads the words only.
    assert ocr.match_text("找回密码 \ue000", [_box("找回密码")])[0].kind == "exact"
    assert ocr.match_text("\ue60a", [_box("找回密码")]) == []


def test_look_alikes_the_recognizer_confuses_compare_equal():
    # Misreads seen on the tuning part: the letter O read as the digit 0, an accent dropped.
    assert ocr.match_text("Tue, Oct 24", [_box("Tue, 0ct 24")])[0].kind == "exact"
    assert ocr.match_text("Loïc Teyssier", [_box("Loic Teyssier")])[0].kind == "exact"
    # A folded target inside a longer line still gets its own box, placed by the line's own characters.
    line = ocr.TextBox("Today Oct 24", (0, 0, 600, 40), 0.9)
    hit = ocr.match_text("0ct", [line])[0]
    assert hit.kind == "part" and 250 < hit.box.center[0] < 450
    # Other look-alikes stay apart: a 5 is not an S, a different word is not folded into the target.
    assert ocr.match_text("Settings", [_box("Setting5")])[0].kind == "similar"
    assert all(h.kind != "exact" for h in ocr.match_text("Loop", [_box("L00k")]))


def test_second_reading_only_after_a_near_miss():
    near = [ocr.TextHit(_box("Setting5"), "similar", 0.88)]
    sure = [ocr.TextHit(_box("Settings"), "exact", 1.0)]
    assert ocr.wants_second_reading(near)
    assert not ocr.wants_second_reading([])                  # nothing like it: absent after one reading
    assert not ocr.wants_second_reading(sure + near)         # found: nothing to read again
    assert ocr.wants_second_reading([ocr.TextHit(_box("设置中心"), "contains", 0.5)])


def test_a_plain_install_has_the_ocr_tier():
    requires = importlib.metadata.requires("remote") or []
    base = [r for r in requires if r.lower().startswith("rapidocr") and "extra ==" not in r]
    assert base, f"rapidocr is not a base dependency: {requires}"
    assert ocr.available(), ocr.unavailable_reason()


@pytest.fixture(scope="module")
def engine():
    assert ocr.available(), ocr.unavailable_reason()   # a base dependency: its absence is a failure, not a skip
    return ocr.get_engine()


def _screen(labels, size=(1080, 2400)):
    return text_screen(labels, size)


LABELS = [((80, 300), "通讯录", 48), ((80, 500), "Settings", 48), ((80, 700), "发现 朋友圈", 44),
          ((600, 900), "Contacts", 44), ((80, 1400), "我的收藏", 40), ((120, 2200), "Write a comment", 40)]


def test_read_text_boxes_in_device_pixels(engine):
    boxes = ocr.read_text(_screen([((600, 1800), "Settings", 64)]), engine=engine)
    hit = ocr.match_text("Settings", boxes)
    assert hit, boxes
    x, y = hit[0].box.center
    assert 600 <= x <= 900 and 1790 <= y <= 1890   # device pixels, not the detector's copy's


def test_the_first_readings_detector_is_the_same_model_with_its_arena_kept(engine):
    img = _screen(LABELS)
    assert engine.first_det.infer.session.get_session_options().enable_cpu_mem_arena
    plain = ocr.Engine(engine.rapid, engine.rapid.text_det)   # RapidOCR's own detector: no arena, lines one by one
    assert not engine.rapid.text_det.infer.session.get_session_options().enable_cpu_mem_arena
    timing: dict[str, float] = {}
    boxes = ocr.read_text(img, engine=engine, timing=timing)
    assert boxes == ocr.read_text(img, engine=plain)   # same lines, same boxes, same scores
    assert timing["lines"] == len(LABELS) == len(boxes) and timing["det_ms"] > 0 and timing["rec_ms"] > 0


def test_every_session_runs_on_the_cores_available_with_threads_that_do_not_spin(engine):
    # The detectors use every core the process may run on; the recognizer one thread per line, the
    # lines read side by side (a pool of one thread per core), so no onnxruntime thread waits spinning.
    sessions = {"first det": (engine.first_det.infer.session, ocr.cores()),
                "det": (engine.rapid.text_det.infer.session, ocr.cores()),
                "rec": (engine.rapid.text_rec.session.session, 1)}
    for name, (session, threads) in sessions.items():
        opts = session.get_session_options()
        assert opts.intra_op_num_threads == threads and opts.inter_op_num_threads == 1, name
        assert opts.get_session_config_entry("session.intra_op.allow_spinning") == "0", name
    assert engine.workers == ocr.cores() and (engine.lines_pool is not None) == (ocr.cores() > 1)


def test_the_detectors_input_is_rapidocrs_own_normalized_in_one_float32_pass(engine):
    bgr = np.ascontiguousarray(np.asarray(_screen(LABELS).resize((736, 1636)))[:, :, ::-1])
    for det in (engine.first_det, engine.rapid.text_det):
        assert isinstance(det.get_preprocess(1636), ocr._BlobPreprocess)
    own = type(engine.rapid.text_det).get_preprocess(engine.rapid.text_det, 1636)   # RapidOCR's, float64
    ours, theirs = ocr._BlobPreprocess(own)(bgr), own(bgr)
    assert ours.shape == theirs.shape == (1, 3, 1632, 736) and ours.dtype == theirs.dtype == np.float32
    assert np.abs(ours - theirs).max() < 1e-6   # float rounding only
    with pytest.raises(ValueError, match="one scale"):   # a normalization it cannot do in one pass: RapidOCR's kept
        ocr._BlobPreprocess(SimpleNamespace(mean=[0.5, 0.5, 0.5], std=[0.2, 0.5, 0.5], resize=None))


def test_lines_read_side_by_side_are_split_by_their_width_and_answered_in_order():
    seen: list[list[int]] = []

    def rec(crops, word_boxes):   # answers each crop with its width, as RapidOCR's recognizer answers a line
        assert word_boxes
        seen.append([c.shape[1] for c in crops])
        return [(str(c.shape[1]), 1.0) for c in crops], 0.0

    widths = [900, 60, 400, 48, 500, 30]
    crops = [np.zeros((48, w, 3), np.uint8) for w in widths]
    with ThreadPoolExecutor(2) as pool:
        engine = ocr.Engine(SimpleNamespace(text_rec=rec), None, frozenset(), pool, 2)
        lines = ocr._read_lines(engine, crops)
    assert [line[0] for line in lines] == [str(w) for w in widths]   # each answer at its crop's place
    # Two groups of about equal work: a line costs its width at 48 px high, at least 96 (the padding).
    assert sorted(map(sorted, seen)) == [[30, 60, 900], [48, 400, 500]]   # 900+96+96 beside 500+400+96
    assert ocr._read_lines(ocr.Engine(SimpleNamespace(text_rec=rec), None), crops[:1])[0][0] == "900"


def test_a_rapidocr_of_another_layout_keeps_its_own_sessions(caplog):
    # A RapidOCR whose detector has no session where this one has it: slower, not unavailable.
    class Detector:
        pass

    class Rapid:
        text_det = Detector()

    assert ocr._own_sessions(Rapid(), 1) is Rapid.text_det
    assert "RapidOCR's own sessions kept" in caplog.text


def test_a_text_not_on_the_screen_is_absent_after_one_reading(engine):
    img = _screen(LABELS)
    screen = Screen(img)
    res = HybridLocator().locate_with_fallback("text:完全不存在的文字", ["ocr"], screen)
    assert not res.success and res.failure is LocateFailure.NOT_FOUND
    assert screen.ocr_readings == ("first",)
    for _, text, _ in LABELS:   # the same reading finds every drawn label, none read again
        found = HybridLocator().locate_with_fallback("text:" + text, ["ocr"], screen)
        assert found.success and found.reliable and found.method_used == "ocr", (text, found.error)
    assert screen.ocr_readings == ("first",)


def test_a_near_miss_is_looked_at_closer_in_its_row_only(engine):
    screen = Screen(_screen(LABELS))
    res = HybridLocator().locate_with_fallback("text:Settings Menu", ["ocr"], screen)
    # "Settings" is drawn, "Settings Menu" is not: a near miss, its row read again, and still not tapped.
    assert ocr.match_text("Settings Menu", screen.text_boxes())[0].kind == "contains"
    assert len(screen.ocr_readings) == 2 and screen.ocr_readings[1].startswith("regions ")
    assert not res.success and res.failure is LocateFailure.NOT_FOUND
    assert "read nearby: 'Settings'" in res.error   # the miss says what was read there


def test_a_small_caption_is_read_by_the_first_reading(engine):
    # A counter 16 px tall on a 1080x2400 screen: the lines are recognized at full resolution.
    screen = Screen(_screen([((900, 1500), "972", 16), ((100, 1500), "评论", 16)]))
    res = HybridLocator().locate_with_fallback("text:972", ["ocr"], screen)
    assert res.success and res.reliable and 900 <= res.element.center[0] <= 940, res.error
    assert screen.ocr_readings == ("first",)


def test_ocr_tier_through_locator(engine):
    res = HybridLocator().locate_with_fallback("text:contacts", ["ocr"], _screen([((100, 400), "Contacts", 48)],
                                                                                   (720, 1600)))
    assert res.success and res.method_used == "ocr" and 100 <= res.element.center[0] <= 320


@pytest.fixture
def broken_install(monkeypatch):
    """RapidOCR's import fails (a broken install); the real engine is built again afterwards."""
    monkeypatch.setitem(sys.modules, "rapidocr_onnxruntime", None)
    ocr.reset_engine()
    yield
    monkeypatch.undo()
    ocr.reset_engine()


def test_a_broken_install_is_the_locate_result_not_a_skip(broken_install, tmp_path, capsys):
    img = _screen([((100, 400), "Contacts", 48)], (720, 1600))
    res = HybridLocator().locate_with_fallback("text:Contacts", ["tree", "ocr", "vision"], img)
    assert not res.success and res.failure is LocateFailure.UNAVAILABLE
    assert res.tiers_tried == ["tree", "ocr"] and "OCR cannot run" in res.error and "pip install" in res.error
    path = tmp_path / "shot.png"
    img.save(path)
    assert main(["locate", str(path), "text:Contacts"]) == 2   # the environment failed, not the screen
    assert "OCR cannot run in this install" in capsys.readouterr().err


def test_a_final_check_that_needs_ocr_in_a_broken_install_says_why_it_could_not_tell(broken_install):
    checker = FinalChecker(SimpleNamespace(checks=SimpleNamespace(has_model=False)))   # type: ignore[arg-type]
    result = checker.check(SuccessCheck(text=("Contacts",)), Screen(_screen([((100, 400), "Contacts", 48)],
                                                                             (720, 1600))))
    assert result.passed is None and "OCR cannot run in this install" in result.summary
    assert "pip install" in result.summary


def test_another_recognizer_needs_its_character_list_and_a_missing_one_is_unavailable(tmp_path):
    with pytest.raises(ValueError, match="character list"):
        ocr.use_recognizer(str(tmp_path / "rec.onnx"))
    try:
        ocr.use_recognizer(str(tmp_path / "rec.onnx"), str(tmp_path / "keys.txt"))   # neither file exists
        assert ocr.get_engine() is None and "OCR cannot run" in ocr.unavailable_reason()
        assert ocr.known_glyphs() == frozenset()
    finally:
        ocr.use_recognizer(None)
    assert ocr.get_engine() is not None and "週" not in ocr.known_glyphs() and "周" in ocr.known_glyphs()
