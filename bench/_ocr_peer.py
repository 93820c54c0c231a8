"""The OCR bench's peer: RapidOCR with its own defaults, as a user of the engine alone would run it.

``RapidOCR()`` as shipped (detector input 736 px on the shorter side, text score 0.5, the angle
classifier on, recognition in batches of 6) but for its onnxruntime sessions' threads, set as the
product's detector's (``ocr.session_options``: every core, threads that sleep while they wait; the
shipped threads spin, and on a loaded 2-core machine measure the load, not the work), one reading
of the whole screenshot per screen, and
the plainest use of its lines: a ``text:LABEL`` is found where a line reads exactly the label
(compared without whitespace, case- and width-folded: NFKC), tapped at that line's centre. Several
such lines are judged as the product's rivals are: every one on a node showing the label is
``dup``, otherwise ``amb``. An absent text is claimed when a line reads it exactly.

The same judging (``_tally.judge``) applies to both sides: a tap point inside a node showing the
label (or its clickable target) is a hit, elsewhere wrong.
"""

from __future__ import annotations

import time
import unicodedata
from dataclasses import dataclass
from typing import Any

import numpy as np

from remote.core.locate import ocr
from remote.core.records import LocateResult, UIElement

_engine: Any = None


def engine() -> Any:
    global _engine
    if _engine is None:
        from rapidocr_onnxruntime import RapidOCR

        rapid = RapidOCR()   # as shipped, but for the threads of its three sessions (no arena, as RapidOCR's):
        for part, holder in (("Det", rapid.text_det.infer), ("Cls", rapid.text_cls.infer), ("Rec", rapid.text_rec.session)):
            holder.session = ocr.inference_session(part, ocr.cores())
        _engine = rapid
    return _engine


def fold(s: str) -> str:
    return "".join(unicodedata.normalize("NFKC", s or "").casefold().split())


@dataclass
class Reading:
    lines: list[tuple[str, tuple[int, int, int, int], float]]
    ms: float
    cpu: float


def read(image: Any) -> Reading:
    """One default reading of a PIL image: (text, box, score) per line, wall and CPU ms."""
    bgr = np.ascontiguousarray(np.asarray(image.convert("RGB"))[:, :, ::-1])
    t, c = time.perf_counter(), time.process_time()
    out, _ = engine()(bgr)
    ms, cpu = (time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000
    lines = []
    for quad, text, score in out or []:
        q = np.asarray(quad, dtype=np.float32)
        box = (int(q[:, 0].min()), int(q[:, 1].min()), int(q[:, 0].max()), int(q[:, 1].max()))
        lines.append((str(text), box, float(score)))
    return Reading(lines, ms, cpu)


def locate(reading: Reading, label: str) -> LocateResult:
    """The defaults' answer for ``text:label``: the line reading exactly it, or rivals, or nothing."""
    q = fold(label)
    same = [(t, b, s) for t, b, s in reading.lines if q and fold(t) == q]
    if not same:
        return LocateResult(False, method_used="rapidocr-defaults", error="no line reads it")
    els = [UIElement(element_type="text", description=t, bbox=b, confidence=s,
                     center=((b[0] + b[2]) // 2, (b[1] + b[3]) // 2)) for t, b, s in same]
    els.sort(key=lambda e: -e.confidence)
    return LocateResult(True, element=els[0], method_used="rapidocr-defaults",
                        candidates=els if len(els) > 1 else [], reliable=len(els) == 1)
