"""A screen's gray image at 1/2 ... 1/8 of its size, built once per screenshot and shared by every
template search on it (``Screen.pyramid``). Coarse searches run on its levels (:mod:`remote.core.locate.matching`
picks the level a template keeps enough pixels on); pure functions on numpy arrays, no I/O.
"""

from __future__ import annotations

import cv2
import numpy as np

PYRAMID_LEVELS = 4         # full, 1/2, 1/4, 1/8 (a 1/16 level lost matches at x1.33 and saved nothing)
BETWEEN_LEVELS = (3, 5, 6, 7)   # 1/3, 1/5, 1/6, 1/7 between them, built on first use


class Pyramid:
    """A screen's gray image at 1/d of its size, indexed by ``d`` (``pyr[1]`` is the screen itself).

    1/2, 1/4 and 1/8 are halved levels (:func:`_halved`, 2x2 means; they stop when a side would drop
    under 64 px); 1/3 and 1/5-1/7 are resized (linear) from the halved level above them on first use,
    50-90 us each.
    A template is searched on the coarsest level where it keeps ``COARSE_MIN_SIDE`` px: with powers
    of two alone, a 60-95 px template was searched on the 1/4 level, 1.6-3x the pixels it needs
    (absent templates' median -11 % and -15 % on the bench, no hit lost).
    """

    def __init__(self, gray: np.ndarray, levels: int = PYRAMID_LEVELS) -> None:
        self._down = {1: gray}                        # halved levels
        self._between: dict[int, np.ndarray] = {}    # resized from the halved level above
        d = 1
        while len(self._down) < levels and min(self._down[d].shape[:2]) >= 128:
            self._down[d * 2] = _halved(self._down[d])
            d *= 2
        self.denominators = sorted(set(self._down) | {b for b in BETWEEN_LEVELS if b < d})

    def __getitem__(self, d: int) -> np.ndarray:
        image = self._down.get(d, self._between.get(d))
        if image is None:
            if d not in self.denominators:
                raise KeyError(f"no 1/{d} level in this pyramid (levels: {self.denominators})")
            above = self._down[max(k for k in self._down if k < d)]
            H, W = self._down[1].shape[:2]
            image = self._between[d] = cv2.resize(above, (round(W / d), round(H / d)),
                                                  interpolation=cv2.INTER_LINEAR)
        return image


def _halved(image: np.ndarray) -> np.ndarray:
    """``image`` at half size (rounded up, as pyrDown), each pixel the mean of a 2x2 block: INTER_AREA's
    exact-halving path, 5x cheaper than pyrDown's 5x5 Gaussian (on the tuning part: no hit lost, +3 at
    x0.75, +7 at zoom1.15, absent templates' peaks dropped on the 1/4 level 33 -> 41 %; one thin label of
    the checking part lost to the sampling phase, see docs/locator.md). An odd last row
    or column is repeated (dropped, a template at the screen's edge lost its last column on the coarse
    levels)."""
    h, w = image.shape[:2]
    if h % 2 or w % 2:
        image = cv2.copyMakeBorder(image, 0, h % 2, 0, w % 2, cv2.BORDER_REPLICATE)
    return cv2.resize(image, ((w + 1) // 2, (h + 1) // 2), interpolation=cv2.INTER_AREA)


def gray_pyramid(gray: np.ndarray, levels: int = PYRAMID_LEVELS) -> Pyramid:
    """The :class:`Pyramid` of a gray screen. Build it once per screenshot (``Screen.pyramid``)
    and pass it to :func:`search`."""
    return Pyramid(gray, levels)
