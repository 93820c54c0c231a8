"""OCR readings kept by their pixels: the same screen read again is not read anew (`ocr.read_text`).

A run reads the same pixels more than once: a retry on a screen that did not change, the final check on the
last step's screen, the studio asked twice about one screenshot. The last `MEMO_SIZE` readings are kept, keyed by
a digest of the pixels, the reading and the engine that read them (a new engine or recognizer forgets them all).
Benchmarks that time a reading turn this off (`remember_readings(False)`).
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from remote.kept import Kept

MEMO_SIZE = 16
Read = tuple[list[Any], list[np.ndarray]]   # the lines read, every quad the detector found

_memo: Kept[tuple[Any, ...], Read] = Kept(MEMO_SIZE)
_on = True


def remember_readings(on: bool) -> None:
    """Keep (the default) or not; either way what was kept is forgotten."""
    global _on
    _on = on
    _memo.clear()


def forget() -> None:
    _memo.clear()


def key(bgr: np.ndarray, *parts: Any) -> tuple[Any, ...] | None:
    """The key of a reading of ``bgr`` with ``parts`` (the reading, the engine's identity); None when readings
    are not kept."""
    if not _on:
        return None
    digest = hashlib.blake2b(np.ascontiguousarray(bgr).data, digest_size=16).digest()
    return (digest, bgr.shape, *parts)


def get(k: tuple[Any, ...] | None) -> Read | None:
    return _memo.get(k) if k is not None else None


def put(k: tuple[Any, ...] | None, boxes: list[Any], quads: list[np.ndarray]) -> None:
    if k is not None:
        _memo.put(k, (list(boxes), list(quads)))
