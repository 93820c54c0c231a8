"""Text location through RapidOCR (the ``ocr`` extra; models ship in its wheel, nothing is downloaded).

The engine is slow to build (~1 s), so it is made lazily, once per process
(:func:`get_engine`). OCR runs on a copy whose longer side is at most
``MAX_SIDE`` px (measured on ../shared/data/real-dev: 1280 keeps the hit rate of
full resolution for phone text at about half the time) and the boxes come back
in device pixels through ``coords.image_to_screen``.

When ``rapidocr_onnxruntime`` is not installed, :func:`available` is False, the
locator logs that once and skips the tier.
"""

from __future__ import annotations

import difflib
import logging
import threading
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from remote.core.coords import downscale_size, image_to_screen
from remote.core.matching import as_bgr
from remote.core.ui_tree import normalize_text

logger = logging.getLogger(__name__)

MAX_SIDE = 1280
MIN_SIMILARITY = 0.6

_engine: Any = None
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
    kind: str          # "exact" | "contains" | "similar"
    similarity: float  # 1.0 for exact, else difflib ratio / containment share


def get_engine() -> Any:
    """The shared RapidOCR engine, or None when the extra is missing (reason in :func:`unavailable_reason`)."""
    global _engine, _engine_error
    if _engine is not None or _engine_error is not None:
        return _engine
    with _lock:
        if _engine is None and _engine_error is None:
            try:
                from rapidocr_onnxruntime import RapidOCR
            except ImportError as exc:
                _engine_error = f"OCR unavailable: install the 'ocr' extra (rapidocr-onnxruntime): {exc}"
                logger.warning("[OCR] %s; the OCR tier is skipped", _engine_error)
            else:
                _engine = RapidOCR()
    return _engine


def available() -> bool:
    return get_engine() is not None


def unavailable_reason() -> str:
    return _engine_error or ""


def read_text(screenshot: Any, *, max_side: int = MAX_SIDE, engine: Any = None) -> list[TextBox]:
    """Every text line on the screen with its box in device pixels; [] when OCR is unavailable."""
    engine = engine or get_engine()
    if engine is None:
        return []
    bgr = as_bgr(screenshot, "screenshot")
    H, W = bgr.shape[:2]
    w, h = downscale_size((W, H), max_side)
    small = cv2.resize(bgr, (w, h), interpolation=cv2.INTER_AREA) if (w, h) != (W, H) else bgr
    result, _ = engine(np.ascontiguousarray(small))
    boxes = []
    for pts, text, score in result or []:
        xs = [p[0] for p in pts]
        ys = [p[1] for p in pts]
        bbox = image_to_screen((min(xs), min(ys), max(xs), max(ys)), (w, h), (W, H))
        if bbox is not None and str(text).strip():
            boxes.append(TextBox(str(text), bbox, float(score)))
    return boxes


def match_text(target: str, boxes: list[TextBox], *, min_similarity: float = MIN_SIMILARITY) -> list[TextHit]:
    """Boxes whose text matches ``target``: exact, then contains, then similar (difflib), best first.

    Whitespace and case are ignored; ``"张 三"`` matches ``"张三"`` exactly. Containment
    counts both ways only when the box text is not much longer than the target, so
    ``"发送"`` does not match a whole paragraph that happens to contain it first.
    """
    q = normalize_text(target)
    if not q:
        return []
    hits: list[TextHit] = []
    for b in boxes:
        t = normalize_text(b.text)
        if not t:
            continue
        if t == q:
            hits.append(TextHit(b, "exact", 1.0))
        elif q in t:
            hits.append(TextHit(b, "contains", len(q) / len(t)))
        elif t in q and len(t) >= 0.6 * len(q):
            hits.append(TextHit(b, "contains", len(t) / len(q)))
        else:
            r = difflib.SequenceMatcher(None, q, t).ratio()
            if r >= min_similarity:
                hits.append(TextHit(b, "similar", r))
    rank = {"exact": 0, "contains": 1, "similar": 2}
    hits.sort(key=lambda h: (rank[h.kind], -h.similarity, -h.box.score))
    return hits
