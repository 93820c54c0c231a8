"""Text location through RapidOCR (a base dependency; its models ship in the wheel, nothing is downloaded).

A reading finds the text lines on a resized copy of the screenshot (the detector) and
reads each line from the full-resolution screenshot (the recognizer sees every glyph at
the size the phone drew it). The engine is slow to build (~1 s), so it is made lazily,
once per process (:func:`get_engine`), with onnxruntime on half the cores and
recognition one line at a time (a batch pads every line to the widest: 15 % slower).
On a 2-core machine that is one thread: onnxruntime's threads spin while they wait, so
two of them are 1.6x faster on an idle machine but 1.5x slower beside other work (load
3; measured interleaved, one process), where one thread is steady.

The first reading's detector keeps onnxruntime's memory arena (RapidOCR turns it off):
allocating its buffers afresh for every screen cost 15-20 % of a reading (interleaved, one
process, load 2-3), keeping them costs ~240 MB of resident memory. The second reading's
full-resolution detector, which runs rarely, allocates afresh as RapidOCR does (its arena
would keep twice that).

Two readings, both kept with the screen (``Screen.text_boxes``): the first with the
detector's input at ``DET_SHORT_SIDE`` on its shorter side, and a second one with the
detector at full resolution, only when the first reading has a near miss for the target
(:func:`wants_second_reading`). A text that is not on the screen costs one reading.
Figures and the tuning/checking protocol: ``bench/ocr_bench.py``.

When RapidOCR cannot be imported or built (a broken install), :func:`get_engine`
returns None, :func:`unavailable_reason` says why, and the locator's OCR tier reports it
as its result (``LocateFailure.UNAVAILABLE``).
"""

from __future__ import annotations

import copy
import difflib
import logging
import os
import threading
import time
import unicodedata
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from remote.core.coords import image_to_screen
from remote.core.locate.image_checks import as_bgr
from remote.core.locate.ui_tree import normalize_text

logger = logging.getLogger(__name__)

DET_SHORT_SIDE = 736    # first reading: the detector's input, shorter side (RapidOCR's own default, limit_type min)
TEXT_SCORE = 0.3        # lines the recognizer reads with less confidence are dropped
BOX_THRESH = 0.3        # detector boxes scoring less are dropped (RapidOCR's default 0.5 loses thin captions)
# The recognizer pads each line to at least this width (RapidOCR: 320). On the tuning part 28 % of its
# work was padding short lines (counters, names); 96 reads as many lines right and costs 20 % less.
REC_MIN_WIDTH = 96
MIN_SIMILARITY = 0.6
READINGS = ("first", "second")

_engine: Engine | None = None
_engine_error: str | None = None
_lock = threading.Lock()


@dataclass(frozen=True)
class TextBox:
    text: str
    bbox: tuple[int, int, int, int]   # device pixels
    score: float                      # the recognizer's own confidence, 0-1

    @property
    def center(self) -> tuple[int, int]:
        return (self.bbox[0] + self.bbox[2]) // 2, (self.bbox[1] + self.bbox[3]) // 2


@dataclass(frozen=True)
class TextHit:
    box: TextBox
    kind: str          # "exact" | "part" | "truncated" | "contains" | "similar"
    similarity: float  # 1.0 for exact, else difflib ratio / containment share


@dataclass(frozen=True)
class Engine:
    """RapidOCR, and the first reading's detector (the same model, its memory arena kept)."""

    rapid: Any
    first_det: Any


def _arena_detector(rapid: Any, threads: int) -> Any:
    """A copy of RapidOCR's detector whose onnxruntime session keeps its memory arena; RapidOCR's own
    detector when that cannot be built (a RapidOCR whose layout changed: slower, not broken)."""
    try:
        import onnxruntime as ort
        from rapidocr_onnxruntime.main import DEFAULT_CFG_PATH
        from rapidocr_onnxruntime.utils import read_yaml, update_model_path

        opts = ort.SessionOptions()
        opts.log_severity_level = 4
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.intra_op_num_threads, opts.inter_op_num_threads = threads, 1
        det = copy.copy(rapid.text_det)
        det.infer = copy.copy(rapid.text_det.infer)
        det.infer.session = ort.InferenceSession(update_model_path(read_yaml(DEFAULT_CFG_PATH))["Det"]["model_path"],
                                                 sess_options=opts, providers=["CPUExecutionProvider"])
        return det
    except (ImportError, AttributeError, KeyError, OSError, RuntimeError) as exc:
        logger.warning("[OCR] the detector keeps no memory arena (%s: %s): readings are ~20 %% slower",
                       type(exc).__name__, exc)
        return rapid.text_det


def _build_engine() -> Engine:
    from rapidocr_onnxruntime import RapidOCR

    threads = max(1, (os.cpu_count() or 2) // 2)
    # The detector is given inputs already sized (limit "max" far above any screen): no resize of its own.
    rapid = RapidOCR(use_cls=False, text_score=TEXT_SCORE, det_box_thresh=BOX_THRESH, det_limit_type="max",
                     det_limit_side_len=100_000, rec_batch_num=1, rec_img_shape=[3, 48, REC_MIN_WIDTH],
                     intra_op_num_threads=threads, inter_op_num_threads=1)
    return Engine(rapid, _arena_detector(rapid, threads))


def get_engine() -> Engine | None:
    """The shared RapidOCR engine, or None when it cannot be built (reason in :func:`unavailable_reason`)."""
    global _engine, _engine_error
    if _engine is not None or _engine_error is not None:
        return _engine
    with _lock:
        if _engine is None and _engine_error is None:
            try:
                _engine = _build_engine()
            except (ImportError, OSError, RuntimeError) as exc:   # onnxruntime's load errors are RuntimeErrors
                _engine_error = (f"OCR cannot run in this install ({type(exc).__name__}: {exc}); "
                                 "reinstall with: pip install -e .")
                logger.error("[OCR] %s", _engine_error)
    return _engine


def available() -> bool:
    return get_engine() is not None


def unavailable_reason() -> str:
    return _engine_error or ""


def reset_engine() -> None:
    """Forget the engine (and a failure to build it): the next use builds it again."""
    global _engine, _engine_error
    with _lock:
        _engine, _engine_error = None, None


def det_scale(size: tuple[int, int], reading: str = "first") -> float:
    """The factor from the screenshot to the detector's input of ``reading``."""
    if reading not in READINGS:
        raise ValueError(f"unknown OCR reading {reading!r}; use one of {READINGS}")
    return DET_SHORT_SIDE / min(size) if reading == "first" else 1.0


def read_text(screenshot: Any, *, reading: str = "first", engine: Engine | None = None,
              timing: dict[str, float] | None = None) -> list[TextBox]:
    """Every text line on the screen with its box in device pixels; [] when OCR is unavailable.

    ``reading``: "first" or "second", the detector's scale (:func:`det_scale`); either way the
    lines are recognized on crops of the full-resolution screenshot. ``timing``, when given, is
    filled with the detector's and the recognizer's wall ms and the number of lines detected
    ({"det_ms": 268.0, "rec_ms": 205.1, "lines": 19}: what a reading's time is made of)."""
    engine = engine or get_engine()
    if engine is None:
        return []
    t0 = time.perf_counter()
    bgr = np.ascontiguousarray(as_bgr(screenshot, "screenshot"))
    H, W = bgr.shape[:2]
    s = det_scale((W, H), reading)
    w, h = max(32, round(W * s)), max(32, round(H * s))
    small = bgr if (w, h) == (W, H) else cv2.resize(bgr, (w, h), interpolation=cv2.INTER_AREA if s < 1
                                                    else cv2.INTER_LINEAR)
    found, _ = (engine.first_det if reading == "first" else engine.rapid.text_det)(small)
    t1 = time.perf_counter()
    boxes = [] if found is None or len(found) == 0 else _recognize(engine.rapid, bgr, found, (W / w, H / h))
    if timing is not None:
        timing.update(det_ms=(t1 - t0) * 1000, rec_ms=(time.perf_counter() - t1) * 1000,
                      lines=0 if found is None else len(found))
    return boxes


def _recognize(rapid: Any, bgr: np.ndarray, found: Any, back_scale: tuple[float, float]) -> list[TextBox]:
    """The detected quads (detector pixels) read on crops of the full-resolution ``bgr``."""
    H, W = bgr.shape[:2]
    back = np.array(back_scale, dtype=np.float32)   # detector pixels -> screenshot pixels
    quads = [np.asarray(q, dtype=np.float32) * back for q in rapid.sorted_boxes(found)]
    lines, _ = rapid.text_rec(rapid.get_crop_img_list(bgr, quads))
    boxes = []
    for quad, line in zip(quads, lines, strict=True):
        text, score = str(line[0]), float(line[1])
        bbox = image_to_screen((float(quad[:, 0].min()), float(quad[:, 1].min()), float(quad[:, 0].max()),
                                float(quad[:, 1].max())), (W, H), (W, H))
        if bbox is not None and score >= TEXT_SCORE and text.strip():
            boxes.append(TextBox(text, bbox, score))
    return boxes


def _fold(c: str) -> str:
    """One case-folded character as OCR is compared: an accented Latin letter is its base letter
    (the recognizer reads "Loïc" as "Loic") and the letter o is the digit 0 (it reads "Oct" as
    "0ct"). Both seen on the tuning part; one character in, one out, so positions still line up."""
    if c == "o":
        return "0"
    d = unicodedata.normalize("NFD", c)
    return d[0] if len(d) > 1 and d[0].isascii() and d[0].isalpha() else c


def _norm(s: str) -> str:
    """Comparison form: full-width -> half-width (NFKC), no whitespace, case-folded, no icon-font
    glyphs (private use, U+E000-U+F8FF: drawn as icons, never read as characters; a target taken
    from a UI dump carries them, e.g. Weibo's "找回密码 \ue000"), look-alikes folded (:func:`_fold`)."""
    text = normalize_text(unicodedata.normalize("NFKC", "".join(c for c in s or "" if not "\ue000" <= c <= "\uf8ff")))
    return "".join(_fold(c) for c in text)


def _merged_lines(boxes: list[TextBox], max_lines: int = 6) -> list[TextBox]:
    """Runs of consecutive lines (reading order) merged into one box: a label wrapped over
    several lines is read as several boxes, one per line. A box on the same row or in another
    column (no horizontal overlap) is stepped over, not taken for the end of the label."""
    lines = sorted(boxes, key=lambda b: (b.bbox[1], b.bbox[0]))
    out = []
    for i, first in enumerate(lines):
        text, box, score = first.text, list(first.bbox), first.score
        line_h = first.bbox[3] - first.bbox[1]
        merged = 1
        for nxt in lines[i + 1:]:
            gap = nxt.bbox[1] - box[3]
            if gap > 1.2 * line_h:   # sorted by top: every later box starts lower still
                break
            overlap = min(box[2], nxt.bbox[2]) - max(box[0], nxt.bbox[0])
            h = min(line_h, nxt.bbox[3] - nxt.bbox[1])
            if gap > 1.2 * h or gap < -0.5 * h or overlap <= 0:
                continue
            text += " " + nxt.text
            box = [min(box[0], nxt.bbox[0]), box[1], max(box[2], nxt.bbox[2]), nxt.bbox[3]]
            score = min(score, nxt.score)
            out.append(TextBox(text, (box[0], box[1], box[2], box[3]), score))
            merged += 1
            if merged >= max_lines:
                break
    return out


def _joined_words(boxes: list[TextBox], max_boxes: int = 3) -> list[TextBox]:
    """Runs of boxes side by side on one line merged into one box: OCR splits a label at a wide
    word gap ("Create New" | "Account"). Neighbours overlap by half the smaller height and lie
    less than two line heights apart."""
    row = sorted(boxes, key=lambda b: (b.bbox[0], b.bbox[1]))
    out = []
    for i, first in enumerate(row):
        text, box, score = first.text, list(first.bbox), first.score
        joined = 1
        for nxt in row[i + 1:]:
            h = min(box[3] - box[1], nxt.bbox[3] - nxt.bbox[1])
            overlap = min(box[3], nxt.bbox[3]) - max(box[1], nxt.bbox[1])
            gap = nxt.bbox[0] - box[2]
            if gap > 2 * (box[3] - box[1]):   # sorted by x: every later box is farther still
                break
            if overlap < 0.5 * h or not -0.5 * h <= gap <= 2 * h:
                continue
            text += " " + nxt.text
            box = [box[0], min(box[1], nxt.bbox[1]), max(box[2], nxt.bbox[2]), max(box[3], nxt.bbox[3])]
            score = min(score, nxt.score)
            out.append(TextBox(text, (box[0], box[1], box[2], box[3]), score))
            joined += 1
            if joined >= max_boxes:
                break
    return out


PART_SIMILARITY = 0.8   # a label read as a word-bounded part of a longer line (its own sub-box)
SURE_KINDS = ("exact", "part", "truncated")   # hits that need no second reading
NEAR_KINDS = ("contains", "similar")          # a near miss: the text may be there, misread or cut differently


def wants_second_reading(hits: list[TextHit]) -> bool:
    """Whether the second reading (the detector at full resolution) is worth its cost after the first
    gave ``hits``: only for a near miss -- no sure hit, but a line containing the target, inside
    it, or reading like it. A text not on the screen rarely has one (1 % of absent texts on the
    tuning part), so it costs one reading; the targets the second reading finds nearly all had
    one (the rule and its figures, fitted on the tuning part: ``bench/ocr_bench.py``)."""
    return not any(h.kind in SURE_KINDS for h in hits) and any(h.kind in NEAR_KINDS for h in hits)


def _cls(ch: str) -> str:
    if ch.isspace():
        return "space"
    if ch.isdigit():
        return "digit"
    if ch.isalpha():
        return "cjk" if unicodedata.category(ch) == "Lo" else "latin"
    return "punct"


def _units(text: str) -> float:
    """Rough drawn width: a CJK glyph is square, Latin and digits about half as wide."""
    return sum(1.0 if _cls(c) == "cjk" else 0.3 if c.isspace() else 0.55 for c in text)


def _part(q: str, box: TextBox) -> TextBox | None:
    """``q`` inside a longer OCR line at a word boundary (OCR reads neighbouring labels such as
    "Save to album  Copy Link" or "10-20 11:43来自山东" as one line): the part's own box, placed by
    glyph widths; None inside a word ("发送" in "发送给朋友" is no boundary)."""
    orig = unicodedata.normalize("NFKC", box.text).casefold()
    pos = [i for i, c in enumerate(orig) if not c.isspace()]
    flat = "".join(_fold(orig[i]) for i in pos)
    start = flat.find(q)
    if start < 0 or len(q) < 2:
        return None
    a, b = pos[start], pos[start + len(q) - 1]
    left = orig[a - 1] if a > 0 else " "
    right = orig[b + 1] if b + 1 < len(orig) else " "
    for outside, inside in ((left, orig[a]), (right, orig[b])):
        if _cls(outside) not in ("space", "punct") and _cls(outside) == _cls(inside):
            return None
    x1, y1, x2, y2 = box.bbox
    total = _units(orig) or 1.0
    px1 = x1 + round((x2 - x1) * _units(orig[:a]) / total)
    px2 = x1 + round((x2 - x1) * _units(orig[:b + 1]) / total)
    return TextBox(orig[a:b + 1], (px1, y1, max(px2, px1 + 2), y2), box.score)


def _truncated_of(read: str, q: str) -> bool:
    """``read`` (normalized) is ``q`` cut short with an ellipsis: the screen draws "Recomme…" for a
    label too long for its view. The part before the dots must be at least 3 characters and 60 % of
    ``q`` ("Sett..." is not "Settings": it could as well be "Settlement")."""
    if not read.endswith(".."):
        return False
    stem = read.rstrip(".")
    return len(stem) >= max(3, 0.6 * len(q)) and q.startswith(stem) and len(stem) < len(q)


def match_text(target: str, boxes: list[TextBox], *, min_similarity: float = MIN_SIMILARITY) -> list[TextHit]:
    """Boxes whose text matches ``target``: exact, then contains, then similar (difflib), best first.

    Whitespace, case and full-/half-width forms are ignored; ``"张 三"`` matches ``"张三"``
    exactly. Containment counts both ways only when the box text is not much longer than
    the target, so ``"发送"`` does not match a whole paragraph that happens to contain it
    first. A target longer than every line is also compared with runs of consecutive
    lines merged (a wrapped label, words on a line joined first) and with neighbours on one
    line joined (a split label); other targets only when such a run reads exactly the target.
    A target found at a word boundary inside a longer line (two labels read as one line) is a
    ``part`` hit with its own sub-box (:func:`_part`); a reading that is the target cut short
    with an ellipsis ("Recomme...") is a ``truncated`` hit. Both count as sure as ``part``.
    """
    q = _norm(target)
    if not q:
        return []
    pool = list(boxes)
    joined = _joined_words(boxes)
    runs = _merged_lines(boxes + joined) + joined   # words joined into lines, lines into a wrapped label
    if len(q) > max((len(_norm(b.text)) for b in boxes), default=0):
        pool += runs
    else:   # a longer line elsewhere on the screen: a run still counts when it reads exactly the target
        pool += [b for b in runs if _norm(b.text) == q]
    hits: list[TextHit] = []
    for b in pool:
        t = _norm(b.text)
        if not t:
            continue
        if t == q:
            hits.append(TextHit(b, "exact", 1.0))
        elif q in t:
            part = _part(q, b) if b in boxes else None
            if part is not None:
                hits.append(TextHit(part, "part", PART_SIMILARITY))
            else:
                hits.append(TextHit(b, "contains", len(q) / len(t)))
        elif _truncated_of(t, q):
            hits.append(TextHit(b, "truncated", PART_SIMILARITY))
        elif t in q and len(t) >= 0.6 * len(q):
            hits.append(TextHit(b, "contains", len(t) / len(q)))
        else:
            r = difflib.SequenceMatcher(None, q, t).ratio()
            if r >= min_similarity:
                hits.append(TextHit(b, "similar", r))
    rank = {"exact": 0, "part": 1, "truncated": 1, "contains": 2, "similar": 3}
    hits.sort(key=lambda h: (rank[h.kind], -h.similarity, -h.box.score))
    return hits
