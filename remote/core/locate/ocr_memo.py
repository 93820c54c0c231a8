"""OCR readings kept by their pixels: the same screen read again is not read anew (`ocr.read_text`).

A run reads the same pixels more than once: a retry on a screen that did not change, the final check on the
last step's screen, the studio asked twice about one screenshot. The last `MEMO_SIZE` readings are kept, keyed by
a digest of the pixels, the reading and the engine that read them (a new engine or recognizer forgets them all).
Benchmarks that time a reading turn this off (`remember_readings(False)`).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Any

import numpy as np

MEMO_SIZE = 16
Kept = tuple[list[Any], list[np.ndarray]]   # the lines read, every quad the detector found

_memo: OrderedDict[tuple[Any, ...], Kept] = OrderedDict()
_lock = threading.Lock()
_on = True


def remember_readings(on: bool) -> None:
    """Keep (the default) or not; either way what was kept is forgotten."""
    global _on
    with _lock:
        _on = on
        _memo.clear()


def forget() -> None:
    with _lock:
        _memo.clear()


def key(bgr: np.ndarray, *parts: Any) -> tuple[Any, ...] | None:
    """The key of a reading of ``bgr`` (C-contiguous) with ``parts`` (the reading, the engine's identity); None
    when readings are not kept."""
    if not _on:
        return None
    digest = hashlib.blake2b(np.ascontiguousarray(bgr).data, digest_size=16).digest()
    return (digest, bgr.shape, *parts)


def get(k: tuple[Any, ...] | None) -> Kept | None:
    if k is None:
        return None
    with _lock:
        kept = _memo.get(k)
        if kept is not None:
            _memo.move_to_end(k)
        return kept


def put(k: tuple[Any, ...] | None, boxes: list[Any], quads: list[np.ndarray]) -> None:
    if k is None:
        return
    with _lock:
        _memo[k] = (list(boxes), list(quads))
        while len(_memo) > MEMO_SIZE:
            _memo.popitem(last=False)
