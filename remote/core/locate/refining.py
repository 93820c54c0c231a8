"""Refining a coarse template peak to a full-resolution match (`remote.core.locate.matching` finds the peaks).

A peak found on a coarse pyramid level is checked on the finer levels before the full-resolution pass that
gives its box and score; each stage drops a peak too weak to be the template's (the thresholds below, fitted
on the bench's tuning part: docs/locator.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

import cv2
import numpy as np

from remote.core.locate.image_checks import MIN_TEMPLATE_SIDE, resize_image
from remote.core.locate.pyramid import Pyramid

_T = TypeVar("_T")
BBox = tuple[int, int, int, int]

HALF_MIN = 0.7             # multiscale: a peak under this NCC on the half level is not refined further
HALF_FIRST = 0.5           # ... checked first at its coarse scale alone: under this, the other scales are not tried
HALF_GOOD = 0.9            # ... at or over this, the coarse scale is kept (+-1.5 % at full resolution only)
FULL_GOOD = 0.95           # ... and matched at full resolution at that scale alone when it fits this well
QUARTER_MIN = 0.45         # a peak from a level coarser than 1/4 under this NCC on the 1/4 level is dropped


def _refine_at(sg: np.ndarray, tg: np.ndarray, x: int, y: int, scales: list[float],
               margin: int, sized: dict[tuple[int, int], np.ndarray] | None = None) -> tuple[float, BBox, float] | None:
    """Best NCC in a window around (x, y) of ``sg`` for each template scale; (score, box, scale).
    ``sized``: the template resized, per size, kept across the peaks of one search."""
    best: tuple[float, BBox, float] | None = None
    H, W = sg.shape
    for s in scales:
        tw, th = round(tg.shape[1] * s), round(tg.shape[0] * s)
        if tw < 3 or th < 3 or tw > W or th > H:
            continue
        # Coarse positions are rounded: keep the window inside the screen at the edges.
        cx, cy = min(max(0, x), W - tw), min(max(0, y), H - th)
        x0, y0 = max(0, cx - margin), max(0, cy - margin)
        x1, y1 = min(W, cx + tw + margin), min(H, cy + th + margin)
        tpl = remembered(sized, (tw, th), partial(resize_image, tg, (tw, th)))
        res = cv2.matchTemplate(sg[y0:y1, x0:x1], tpl, cv2.TM_CCOEFF_NORMED)
        _, val, _, loc = cv2.minMaxLoc(res)
        if math.isfinite(val) and (best is None or val > best[0]):
            best = (float(val), (x0 + loc[0], y0 + loc[1], x0 + loc[0] + tw, y0 + loc[1] + th), s)
    return best


def refine(pyr: Pyramid, tg: np.ndarray, x: int, y: int, scale: float, d: int,
            multiscale: bool, memo: dict[Any, Any] | None = None, tkey: Any = None,
            sized: dict[tuple[int, int], np.ndarray] | None = None,
            expected: bool = False) -> tuple[float, BBox, float] | None:
    """Best full-resolution NCC near the coarse peak (x, y) found on the pyramid's 1/``d`` level.

    A peak from a level coarser than 1/4 is checked on the 1/4 level first (``QUARTER_MIN``: on
    the bench it drops 36-40 % of absent templates' peaks; no peak refined to the expected place
    had under 0.53). The place is then checked on the half level (4x cheaper than full): under ``HALF_FIRST`` (multiscale)
    or ``HALF_MIN`` (same scale) it is dropped. Multiscale keeps the coarse scale when it fits there
    (``HALF_GOOD``), else settles the scale over +-6 %, then matches the winner at full resolution
    over +-1.5 % (+-3 % after a settle, unless it is the ``expected`` scale: the one the screen sizes
    give, searched first). At the expected scale, when it fits at half resolution, full resolution
    tries it alone and +-1.5 % only when that fits worse than ``FULL_GOOD`` (x1.33 median -20 % on the
    tuning part). Same scale matches it at full resolution in a 4 px window.
    """
    return _Refining(pyr, tg, x, y, scale, d, multiscale, memo, tkey, sized, expected).best()


SCALE_STEPS = (0.94, 0.97, 1.0, 1.03, 1.06)   # a multiscale peak's scale settles over +-6 %
Peak = tuple[float, BBox, float]              # NCC, box in full pixels, scale


@dataclass
class _Refining:
    """`_refine`'s stages, each its own method: the quarter check, the half level, the full resolution."""

    pyr: Pyramid
    tg: np.ndarray
    x: int
    y: int
    scale: float
    d: int
    multiscale: bool
    memo: dict[Any, Any] | None
    tkey: Any
    sized: dict[tuple[int, int], np.ndarray] | None
    expected: bool

    @property
    def wide(self) -> int:
        """The window margin with room for the +-6 % scale steps."""
        return self.d + 3 + round(0.06 * int(max(self.tg.shape)) * self.scale)

    def best(self) -> Peak | None:
        if not self._quarter_holds():
            return None
        if 2 in self.pyr.denominators and min(self.tg.shape) * self.scale * 0.5 >= 10:
            return self._through_half()
        margin, scales = (self.wide, [self.scale * f for f in SCALE_STEPS]) if self.multiscale else \
            (self.d + 3, [self.scale])
        return _big_enough(_refine_at(self.pyr[1], self.tg, self.x, self.y, scales, margin, self.sized))

    def _check(self, name: str, n: int, margin: int) -> Peak | None:
        """The peak on the 1/``n`` level at its coarse scale alone: the same check for both tiers,
        remembered per locate (multiscale re-checks the template tier's peaks)."""
        pyr, tg, x, y, scale, sized = self.pyr, self.tg, self.x, self.y, self.scale, self.sized
        return remembered(self.memo, (name, self.tkey, x, y, round(scale, 4), self.d),
                           lambda: _refine_at(pyr[n], tg, x // n, y // n, [scale / n], margin, sized))

    def _quarter_holds(self) -> bool:
        """A peak from a level coarser than 1/4 holds on the 1/4 level (``QUARTER_MIN``), or cannot be told."""
        if self.d > 4 and 4 in self.pyr.denominators and min(self.tg.shape) * self.scale / 4 >= 8:
            quarter = self._check("quarter", 4, (self.d + 3) // 4 + 2)
            return quarter is not None and quarter[0] >= QUARTER_MIN
        return True

    def _at_half(self) -> tuple[Peak, bool] | None:
        """The place on the half level and whether its coarse scale settled there (``HALF_GOOD``); None when
        it is too weak (``HALF_FIRST`` / ``HALF_MIN``)."""
        first = self._check("half", 2, self.wide // 2 + 2)   # 4x cheaper than full resolution
        if first is None or first[0] < (HALF_FIRST if self.multiscale else HALF_MIN):
            return None
        best = first
        settled = first[0] >= HALF_GOOD   # the coarse scale fits: the +-6 % steps would not beat it
        if self.multiscale and not settled:   # the scale settled over +-6 % there
            other = _refine_at(self.pyr[2], self.tg, self.x // 2, self.y // 2,
                               [self.scale * f * 0.5 for f in SCALE_STEPS if f != 1.0], self.wide // 2 + 2, self.sized)
            if other is not None and other[0] > first[0]:
                best = other
        # Every match accepted on the bench had NCC >= 0.79 here (a verified 0.8 needs it):
        # a peak this weak is an absent template's, not worth the full-resolution pass.
        return (best, settled) if best[0] >= HALF_MIN else None

    def _through_half(self) -> Peak | None:
        """The half level's place matched at full resolution, over the scales the half level leaves open."""
        half = self._at_half()
        if half is None:
            return None
        (_, box, s_half), settled = half
        x, y = box[0] * 2, box[1] * 2
        if self.multiscale and settled and self.expected:   # the expected scale alone; +-1.5 % when it fits badly
            return _big_enough(self._expected_alone(x, y, s_half))
        fine = (1.0,) if not self.multiscale else (0.985, 1.0, 1.015) if settled or self.expected \
            else (0.97, 0.985, 1.0, 1.015, 1.03)
        return _big_enough(_refine_at(self.pyr[1], self.tg, x, y, [s_half * 2 * f for f in fine], 3, self.sized))

    def _expected_alone(self, x: int, y: int, s_half: float) -> Peak | None:
        sg, tg, sized = self.pyr[1], self.tg, self.sized
        found = _refine_at(sg, tg, x, y, [s_half * 2], 3, sized)
        if found is None or found[0] < FULL_GOOD:
            more = _refine_at(sg, tg, x, y, [s_half * 2 * 0.985, s_half * 2 * 1.015], 3, sized)
            found = max((f for f in (found, more) if f is not None), key=lambda f: f[0], default=None)
        return found


def _big_enough(found: tuple[float, BBox, float] | None) -> tuple[float, BBox, float] | None:
    """A refined match, or None when its box came out under ``MIN_TEMPLATE_SIDE``."""
    if found is None or min(found[1][2] - found[1][0], found[1][3] - found[1][1]) < MIN_TEMPLATE_SIDE:
        return None
    return found


def remembered(memo: dict[Any, Any] | None, key: Any, compute: Callable[[], _T]) -> _T:
    """``compute()``, kept in ``memo`` (one dict per locate) under ``key`` when there is a memo."""
    if memo is None:
        return compute()
    if key not in memo:
        memo[key] = compute()
    found: _T = memo[key]
    return found


