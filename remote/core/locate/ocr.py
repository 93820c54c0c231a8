"""Text location through RapidOCR (a base dependency; its models ship in the wheel, nothing is downloaded).

A reading finds the text lines on a resized copy of the screenshot (the detector) and
reads each line from the full-resolution screenshot (the recognizer sees every glyph at
the size the phone drew it). The engine is slow to build (~1 s), so it is made lazily,
once per process (:func:`get_engine`). The detectors run onnxruntime on every core the process
may use (:func:`cores`) with threads that sleep, not spin, while they wait
(:func:`session_options`: spinning threads were 1.5x slower beside other work); the recognizer
reads each line alone (a batch pads every line to the widest: 15 % slower), the lines split into
one group per core read side by side (:func:`_read_lines`), one onnxruntime thread each. The
detector's input is normalized by OpenCV in one float32 pass (:class:`_BlobPreprocess`), not
RapidOCR's float64 numpy. Each change reads the same lines; on 2 cores they make a reading faster
while a core is free or partly free, and 8-10 % slower when other work takes both (docs/locator.md,
"Speed (issue 37)"; ``bench/ocr_speed_ab.py``).

The first reading's detector keeps onnxruntime's memory arena (RapidOCR turns it off):
allocating its buffers afresh for every screen cost 15-20 % of a reading (interleaved, one
process, load 2-3), keeping them costs ~240 MB of resident memory. The second reading's
full-resolution detector, which runs rarely, allocates afresh as RapidOCR does (its arena
would keep twice that).

The first reading, kept with the screen (``Screen.text_boxes``), has the detector's input at
``DET_SHORT_SIDE`` on its shorter side, its long blank bands cut short (``ocr_bands``). When it leaves
the target unsure -- a near miss (a line that contains it or reads like it) or the text read with too
little confidence to tap -- the rows that matter are read again, enlarged (:func:`read_regions`,
``Screen.region_boxes``): not the whole frame. The recognizer's answer carries each character's
confidence and column (:func:`_char_info`), so a label inside a longer line is scored and placed by its
own characters. A text that is not on the screen costs one reading. The matching rules: ``ocr_text``.
Figures and the tuning/checking protocol: ``bench/ocr_bench.py``; a whole-frame second reading at full
resolution stays available (``reading="second"``) for callers that want every line again.

The recognizer is RapidOCR's own (PP-OCRv4, 6623 characters); :func:`known_glyphs` says which characters
it can name (the matching treats the others as unreadable: ``ocr_text._unnamed``; a target holding one
has the lines read again by a recognizer that names them: ``ocr_namer``), and :func:`use_recognizer`
puts another PP-OCR recognizer in its place (the bench's ``--rec-model``).

When RapidOCR cannot be imported or built (a broken install), :func:`get_engine`
returns None, :func:`unavailable_reason` says why, and the locator's OCR tier reports it
as its result (``LocateFailure.UNAVAILABLE``).
"""

from __future__ import annotations

import copy
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from remote.core.coords import image_to_screen
from remote.core.lazy import Lazy
from remote.core.locate import ocr_bands, ocr_memo
from remote.core.locate.image_checks import as_bgr
from remote.core.locate.ocr_sessions import cores, inference_session, session_options
from remote.core.locate.ocr_text import (
    NEAR_KINDS,
    SURE_KINDS,
    TextBox,
    TextHit,
    match_text,
    wants_second_reading,
)

logger = logging.getLogger(__name__)
__all__ = ["NEAR_KINDS", "SURE_KINDS", "TextBox", "TextHit", "match_text", "wants_second_reading",   # ocr_text's
           "cores", "inference_session", "session_options"]   # ocr_sessions'

DET_SHORT_SIDE = 736    # first reading: the detector's input, shorter side (RapidOCR's own default, limit_type min)
TEXT_SCORE = 0.3        # lines the recognizer reads with less confidence are dropped
BOX_THRESH = 0.3        # detector boxes scoring less are dropped (RapidOCR's default 0.5 loses thin captions)
# The recognizer pads each line to at least this width (RapidOCR: 320). On the tuning part 28 % of its
# work was padding short lines (counters, names); 96 reads as many lines right and costs 20 % less.
REC_MIN_WIDTH = 96
REC_HEIGHT = 48   # the recognizer's input height (PP-OCRv4's)
READINGS = ("first", "second")
# A closer look (:func:`read_regions`): the rows around a near miss or an unsure hit, read again with the
# crop enlarged so its lines are about this tall (at most 3x), detector and recognizer both.
REGION_LINE_PX = 64
REGION_MAX_SCALE = 3.0
REGION_ROWS = 3   # hits whose rows are read again (the best first)

# Another recognizer (an ONNX model and its character list) in place of the one RapidOCR ships; None: the
# shipped one (PP-OCRv4, whose 6623 characters lack common Traditional ones: 撥 週 儲 緊 階 尋). Set by
# :func:`use_recognizer` (the bench's ``--rec-model``, to measure a recognizer installed by hand).
_rec_model: tuple[str, str] | None = None


@dataclass(frozen=True)
class Engine:
    """RapidOCR, and the first reading's detector (the same model, its memory arena kept)."""

    rapid: Any
    first_det: Any
    glyphs: frozenset[str] = frozenset()   # the characters its recognizer can name (empty: not known)
    lines_pool: ThreadPoolExecutor | None = None   # recognizes lines side by side (None: one at a time)
    workers: int = 1                               # the pool's threads
    squeeze: bool = True   # the first reading's detector is given the screen without its long blank bands


class _BlobPreprocess:
    """RapidOCR's detector preprocessing -- its resize to a multiple of 32, then ``(x / 255 - mean) / std``
    per channel, channels first -- with the normalization done by OpenCV (``cv2.dnn.blobFromImage``) in
    one float32 pass: RapidOCR computes it in float64 through four numpy passes, ~60 ms of a 1080x2340
    reading (cProfile). The input differs by float rounding only (at most 1.2e-7)."""

    def __init__(self, rapid_pre: Any) -> None:
        mean, std = np.asarray(rapid_pre.mean, dtype=np.float64), np.asarray(rapid_pre.std, dtype=np.float64)
        if mean.shape != (3,) or std.shape != (3,) or not np.all(std == std[0]):
            raise ValueError(f"detector normalization mean {mean}, std {std}: not one scale for every channel")
        self.resize = rapid_pre.resize
        self.mean, self.scale = tuple(float(m) * 255 for m in mean), 1 / (255 * float(std[0]))

    def __call__(self, img: np.ndarray) -> np.ndarray | None:
        resized = self.resize(img)
        return None if resized is None else cv2.dnn.blobFromImage(resized, self.scale, mean=self.mean)


def _blob_preprocess(det: Any) -> None:
    """Give ``det`` (a RapidOCR detector) :class:`_BlobPreprocess`; checked once here, so a RapidOCR whose
    layout changed fails at build time (its own preprocessing kept), never in a reading."""
    own = det.get_preprocess
    _BlobPreprocess(own(736))
    det.get_preprocess = lambda max_wh: _BlobPreprocess(own(max_wh))


def _own_sessions(rapid: Any, threads: int) -> Any:
    """Put the tier's own onnxruntime sessions (:func:`session_options`) into RapidOCR's detector and
    recognizer, and return the first reading's detector: a copy of RapidOCR's whose session keeps its
    memory arena. The recognizer's session has one thread (:func:`_read_lines` reads lines side by
    side). RapidOCR's own sessions, and its detector, where they cannot be built (a RapidOCR whose
    layout changed: slower, not broken)."""
    try:
        rec_model = _rec_model[0] if _rec_model is not None else "Rec"
        first, plain = inference_session("Det", threads, arena=True), inference_session("Det", threads)
        rec = inference_session(rec_model, 1)
        det = copy.copy(rapid.text_det)
        det.infer = copy.copy(rapid.text_det.infer)
        det.infer.session = first
        rapid.text_det.infer.session, rapid.text_rec.session.session = plain, rec
    except (ImportError, AttributeError, KeyError, OSError, RuntimeError) as exc:
        logger.warning("[OCR] RapidOCR's own sessions kept (%s: %s): readings are slower",
                       type(exc).__name__, exc)
        return rapid.text_det
    for d in (det, rapid.text_det):
        try:
            _blob_preprocess(d)
        except (AttributeError, TypeError, ValueError) as exc:
            logger.warning("[OCR] RapidOCR's detector preprocessing kept (%s: %s)", type(exc).__name__, exc)
    return det


def _build_engine() -> Engine:
    from rapidocr_onnxruntime import RapidOCR

    threads = cores()
    # The detector is given inputs already sized (limit "max" far above any screen): no resize of its own.
    other = {} if _rec_model is None else {"rec_model_path": _rec_model[0], "rec_keys_path": _rec_model[1]}
    rapid = RapidOCR(use_cls=False, text_score=TEXT_SCORE, det_box_thresh=BOX_THRESH, det_limit_type="max",
                     det_limit_side_len=100_000, rec_batch_num=1, rec_img_shape=[3, REC_HEIGHT, REC_MIN_WIDTH],
                     intra_op_num_threads=1, inter_op_num_threads=1, **other)
    try:
        glyphs = frozenset(c for c in rapid.text_rec.postprocess_op.character if len(c) == 1)
    except (AttributeError, TypeError):   # a RapidOCR whose layout changed: every glyph counts as named
        glyphs = frozenset()
    first_det = _own_sessions(rapid, threads)
    pool = ThreadPoolExecutor(threads, thread_name_prefix="ocr-rec") if threads > 1 else None
    return Engine(rapid, first_det, glyphs, pool, threads)


def known_glyphs() -> frozenset[str]:
    """The characters the recognizer can name (its CTC dictionary); empty when OCR is unavailable or the
    dictionary cannot be seen. A glyph outside it is read as something else or dropped (``ocr_text._unnamed``)."""
    engine = get_engine()
    return engine.glyphs if engine is not None else frozenset()


# onnxruntime's load errors are RuntimeErrors
_engine: Lazy[Engine] = Lazy(_build_engine, (ImportError, OSError, RuntimeError),
                             lambda exc: (f"OCR cannot run in this install ({type(exc).__name__}: {exc}); "
                                          "reinstall with: pip install -e ."),
                             lambda why: logger.error("[OCR] %s", why))


def get_engine() -> Engine | None:
    """The shared RapidOCR engine, or None when it cannot be built (reason in :func:`unavailable_reason`)."""
    return _engine.get()


def available() -> bool:
    return get_engine() is not None


def unavailable_reason() -> str:
    return _engine.error or ""


def reset_engine() -> None:
    """Forget the engine (and a failure to build it, and what it read): the next use builds it again."""
    _engine.reset()
    ocr_memo.forget()


def use_recognizer(model_path: str | None, keys_path: str | None = None) -> None:
    """Recognize with another PP-OCR recognizer (an ONNX file and its character list, one per line), or
    with RapidOCR's own again (None); the next use builds the engine anew."""
    global _rec_model
    if model_path is not None and keys_path is None:
        raise ValueError("a recognizer model needs its character list (keys_path)")
    _rec_model = None if model_path is None else (model_path, str(keys_path))
    reset_engine()


def det_scale(size: tuple[int, int], reading: str = "first") -> float:
    """The factor from the screenshot to the detector's input of ``reading``."""
    if reading not in READINGS:
        raise ValueError(f"unknown OCR reading {reading!r}; use one of {READINGS}")
    return DET_SHORT_SIDE / min(size) if reading == "first" else 1.0


def read_text(screenshot: Any, *, reading: str = "first", engine: Engine | None = None,
              timing: dict[str, float] | None = None, quads: list[np.ndarray] | None = None) -> list[TextBox]:
    """Every text line on the screen with its box in device pixels; [] when OCR is unavailable.

    ``reading``: "first" or "second", the detector's scale (:func:`det_scale`); either way the
    lines are recognized on crops of the full-resolution screenshot. ``timing``, when given, is
    filled with the detector's and the recognizer's wall ms and the number of lines detected
    ({"det_ms": 268.0, "rec_ms": 205.1, "lines": 19}: what a reading's time is made of). ``quads``, when
    given, is filled with every line the detector found (screenshot pixels, in reading order), also
    those the recognizer read too unsure to keep: ``ocr_namer.read_named`` reads them again."""
    engine = engine or get_engine()
    if engine is None:
        return []
    t0 = time.perf_counter()
    bgr = np.ascontiguousarray(as_bgr(screenshot, "screenshot"))
    # the same pixels give the same lines: a screen read again is answered from the last readings (ocr_memo)
    key = ocr_memo.key(bgr, reading, id(engine), engine.squeeze, id(engine.rapid.text_rec))
    kept = ocr_memo.get(key)
    if kept is not None:
        if timing is not None:
            timing.update(det_ms=0.0, rec_ms=0.0, lines=len(kept[1]), remembered=1)
        if quads is not None:
            quads.extend(kept[1])
        return list(kept[0])
    boxes, lines = _read(engine, bgr, reading, timing, t0)
    if quads is not None:
        quads.extend(lines)
    ocr_memo.put(key, boxes, lines)
    return boxes


def _read(engine: Engine, bgr: np.ndarray, reading: str, timing: dict[str, float] | None,
          t0: float) -> tuple[list[TextBox], list[np.ndarray]]:
    """One reading of ``bgr`` (`read_text`): its lines and every quad the detector found."""
    H, W = bgr.shape[:2]
    s = det_scale((W, H), reading)
    w, h = max(32, round(W * s)), max(32, round(H * s))
    small = bgr if (w, h) == (W, H) else cv2.resize(bgr, (w, h), interpolation=cv2.INTER_AREA if s < 1
                                                    else cv2.INTER_LINEAR)
    det = engine.first_det if reading == "first" else engine.rapid.text_det
    work, rows = ocr_bands.squeeze(small) if reading == "first" and engine.squeeze else (small, None)
    found = ocr_bands.rows_back(det(work)[0], rows)
    t1 = time.perf_counter()
    lines = _quads(engine, found, (W / w, H / h))
    boxes = recognize(engine, bgr, lines)
    if timing is not None:
        timing.update(det_ms=(t1 - t0) * 1000, rec_ms=(time.perf_counter() - t1) * 1000, lines=len(lines))
    return boxes, lines


def _char_info(line: Any, text: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Each character's own confidence and the middle of its column in the line (0-1 of its width), from
    the recognizer's CTC decoding (RapidOCR's word boxes: columns per character, the line's columns
    without padding, a score per character); ((), ()) where the answer has another shape."""
    try:
        width, cols = float(line[2][0]), [c for word in line[2][2] for c in word]
        chars = tuple(float(c) for c in line[2][4])
    except (IndexError, TypeError, ValueError):
        return (), ()
    if len(chars) != len(text) or len(cols) != len(text) or width <= 0:
        return (), ()
    return chars, tuple(min(1.0, (c + 0.5) / width) for c in cols)


def _read_lines(engine: Engine, crops: list[np.ndarray], rec: Any = None) -> list[Any]:
    """The recognizer's answer for each crop, in order, with each character's confidence and column (CTC
    decoding: word boxes); ``rec``: another recognizer than RapidOCR's (``ocr_namer.read_named``). With a pool
    the lines are split into one group per worker, of about equal work (a line costs its width at the
    recognizer's height, at least ``REC_MIN_WIDTH``), and the groups read side by side, one onnxruntime
    thread each: every line is still read alone, as it would be one after another, so the answer is the
    same."""
    rec = rec or engine.rapid.text_rec
    pool = engine.lines_pool
    if pool is None or len(crops) < 2:
        return list(rec(crops, True)[0])
    groups: list[list[int]] = [[] for _ in range(min(engine.workers, len(crops)))]
    work = [0.0] * len(groups)
    cost = [max(REC_MIN_WIDTH, REC_HEIGHT * c.shape[1] / max(1, c.shape[0])) for c in crops]
    for i in sorted(range(len(crops)), key=lambda i: -cost[i]):   # the widest first, to the least busy
        g = work.index(min(work))
        groups[g].append(i)
        work[g] += cost[i]
    lines: list[Any] = [None] * len(crops)
    for group, answer in zip(groups, pool.map(lambda g: rec([crops[i] for i in g], True)[0], groups), strict=True):
        for i, line in zip(group, answer, strict=True):
            lines[i] = line
    return lines


def _quads(engine: Engine, found: Any, back_scale: tuple[float, float]) -> list[np.ndarray]:
    """The detected quads (detector pixels), in reading order, in screenshot pixels."""
    if found is None or len(found) == 0:
        return []
    back = np.array(back_scale, dtype=np.float32)   # detector pixels -> screenshot pixels
    return [np.asarray(q, dtype=np.float32) * back for q in engine.rapid.sorted_boxes(found)]


def recognize(engine: Engine, bgr: np.ndarray, quads: list[np.ndarray], rec: Any = None) -> list[TextBox]:
    """The lines at ``quads`` (screenshot pixels) read on crops of the full-resolution ``bgr``."""
    if not quads:
        return []
    H, W = bgr.shape[:2]
    lines = _read_lines(engine, engine.rapid.get_crop_img_list(bgr, quads), rec)
    boxes = []
    for quad, line in zip(quads, lines, strict=True):
        text, score = str(line[0]), float(line[1])
        chars, cols = _char_info(line, text)
        bbox = image_to_screen((float(quad[:, 0].min()), float(quad[:, 1].min()), float(quad[:, 0].max()),
                                float(quad[:, 1].max())), (W, H), (W, H))
        if bbox is not None and score >= TEXT_SCORE and text.strip():
            boxes.append(TextBox(text, bbox, score, chars, cols))
    return boxes


def regions_of(hits: list[TextHit], size: tuple[int, int]) -> tuple[tuple[int, int, int, int], ...]:
    """The bands to read again for ``hits``: the row of each of the best :data:`REGION_ROWS` hits, across
    the screen (its neighbours on the row: a split label, a separator), one line height above and below
    (a line the first reading missed next to it, a label wrapped onto the next line). Overlapping
    bands are one band."""
    bands: list[list[int]] = []
    for h in hits[:REGION_ROWS]:
        y1, y2 = h.box.bbox[1], h.box.bbox[3]
        line = max(8, y2 - y1)
        band = [max(0, y1 - line), min(size[1], y2 + line)]
        for b in bands:
            if band[0] < b[1] and b[0] < band[1]:
                b[0], b[1] = min(b[0], band[0]), max(b[1], band[1])
                break
        else:
            bands.append(band)
    return tuple((0, y1, size[0], y2) for y1, y2 in sorted(bands))


def read_regions(screenshot: Any, regions: tuple[tuple[int, int, int, int], ...], *,
                 engine: Engine | None = None) -> list[TextBox]:
    """The lines inside ``regions`` (device pixels), read on enlarged crops: a band three lines high is
    enlarged so its lines are :data:`REGION_LINE_PX` tall, detected at that size (a dense row the
    first reading took for one line comes apart) and recognized there. Boxes in device pixels."""
    engine = engine or get_engine()
    if engine is None:
        return []
    bgr = np.ascontiguousarray(as_bgr(screenshot, "screenshot"))
    out: list[TextBox] = []
    for x1, y1, x2, y2 in regions:
        crop = bgr[y1:y2, x1:x2]
        if crop.shape[0] < 8 or crop.shape[1] < 8:
            continue
        f = min(REGION_MAX_SCALE, max(1.0, REGION_LINE_PX * 3 / crop.shape[0]))
        up = crop if f == 1.0 else cv2.resize(crop, None, fx=f, fy=f, interpolation=cv2.INTER_CUBIC)
        found, _ = engine.rapid.text_det(up)
        for b in recognize(engine, up, _quads(engine, found, (1.0, 1.0))):
            bx = b.bbox
            box = (x1 + round(bx[0] / f), y1 + round(bx[1] / f), x1 + round(bx[2] / f), y1 + round(bx[3] / f))
            out.append(TextBox(b.text, box, b.score, b.chars, b.cols))
    return out


def outside(box: TextBox, regions: tuple[tuple[int, int, int, int], ...]) -> bool:
    """``box``'s centre lies in none of ``regions``."""
    cx, cy = box.center
    return not any(r[0] <= cx < r[2] and r[1] <= cy < r[3] for r in regions)
