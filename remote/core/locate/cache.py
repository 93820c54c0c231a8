"""The locator's result cache: per target, at most ``ttl`` seconds, and only while the
screen around the cached box is unchanged.

"Unchanged" is measured on a small gray patch (the box plus a margin, downscaled
to at most 48 px a side): the mean absolute difference to the patch stored with
the result must stay under ``max_diff`` (0-255 levels). A scrolled list, a popup
over the box or a new page all change that patch, so a stale box is never tapped.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from remote.core.records import LocateResult

PATCH_SIDE = 48


def _patch(gray: np.ndarray, bbox: tuple[int, int, int, int]) -> np.ndarray:
    H, W = gray.shape
    x1, y1, x2, y2 = bbox
    mx, my = max(8, (x2 - x1) // 4), max(8, (y2 - y1) // 4)
    x1, y1, x2, y2 = max(0, x1 - mx), max(0, y1 - my), min(W, x2 + mx), min(H, y2 + my)
    crop = gray[y1:y2, x1:x2]
    f = min(1.0, PATCH_SIDE / max(crop.shape))
    size = (max(1, round(crop.shape[1] * f)), max(1, round(crop.shape[0] * f)))
    return cv2.resize(crop, size, interpolation=cv2.INTER_AREA).astype(np.int16)


@dataclass
class _Entry:
    result: LocateResult
    screen_size: tuple[int, int]
    patch: np.ndarray
    stored_at: float


@dataclass
class LocateCache:
    ttl: float = 30.0
    max_diff: float = 6.0
    clock: Callable[[], float] = time.monotonic
    hits: int = 0
    misses: int = 0
    _entries: dict[tuple[Any, ...], _Entry] = field(default_factory=dict)

    def get(self, key: tuple[Any, ...], gray: np.ndarray) -> LocateResult | None:
        entry = self._entries.get(key)
        if entry is not None:
            fresh = self.clock() - entry.stored_at <= self.ttl
            same_size = entry.screen_size == (gray.shape[1], gray.shape[0])
            if fresh and same_size and entry.result.element is not None:
                patch = _patch(gray, entry.result.element.bbox)
                if patch.shape == entry.patch.shape and float(np.abs(patch - entry.patch).mean()) <= self.max_diff:
                    self.hits += 1
                    result = copy.deepcopy(entry.result)
                    if result.element is not None:
                        result.element.metadata["cached"] = True
                    return result
            del self._entries[key]
        self.misses += 1
        return None

    def put(self, key: tuple[Any, ...], gray: np.ndarray, result: LocateResult) -> None:
        if result.success and result.element is not None:
            self._entries[key] = _Entry(copy.deepcopy(result), (gray.shape[1], gray.shape[0]),
                                        _patch(gray, result.element.bbox), self.clock())

    def clear(self) -> None:
        self._entries.clear()

    @property
    def stats(self) -> dict[str, float]:
        total = self.hits + self.misses
        return {"hits": self.hits, "misses": self.misses, "entries": len(self._entries),
                "hit_rate": round(self.hits / total, 4) if total else 0.0}
