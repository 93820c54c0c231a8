"""The detector's input without its long blank bands.

A phone screen is mostly rows that draw nothing: the gaps between list rows, cards and paragraphs are
runs of rows of one colour. The text detector's work grows with its input's area, blank or not, so the
first reading hands it the screen with each run of blank rows longer than ``2 * BAND_MARGIN`` cut down
to ``2 * BAND_MARGIN`` rows -- ``BAND_MARGIN`` rows of the run's own top kept above the cut and of its
bottom below it, so every drawn line still has at least that much blank around it, as it had -- and the
lines found are put back at their rows (:func:`rows_back`, which drops a quad the cut made: one with
drawn rows on both sides of it). A row is blank when every pixel of it is within ``BLANK_RANGE`` of the
others in each channel: a faint hint text, a photo, a gradient across the row are not blank; a band
whose colour changes from row to row, each row even, is.
"""

from __future__ import annotations

from typing import NamedTuple

import cv2
import numpy as np

BLANK_RANGE = 6    # a row's pixels may differ by this much (0-255, per channel) and the row is blank
BAND_MARGIN = 16   # detector pixels of blank kept on each side of a cut
STRIDE = 32        # the detector's input height is a multiple of this (RapidOCR's DetResizeForTest)


class Cut(NamedTuple):
    """What :func:`squeeze` kept: each kept row's row in the input, and whether it is blank."""

    rows: np.ndarray
    blank: np.ndarray


def blank_rows(img: np.ndarray) -> np.ndarray:
    """One bool per row of ``img`` (H x W x 3, uint8): the row draws nothing."""
    hi = cv2.reduce(img, 1, cv2.REDUCE_MAX)
    lo = cv2.reduce(img, 1, cv2.REDUCE_MIN)
    return np.asarray(cv2.absdiff(hi, lo).reshape(img.shape[0], -1).max(axis=1) <= BLANK_RANGE)


def squeeze(img: np.ndarray) -> tuple[np.ndarray, Cut | None]:
    """``img`` with every run of blank rows longer than ``2 * BAND_MARGIN`` cut to that many rows, and what
    was cut (None, and ``img`` itself, when no run is that long)."""
    blank = blank_rows(img)
    edges = np.flatnonzero(np.diff(np.concatenate(([0], blank.view(np.int8), [0]))))
    keep = np.ones(len(blank), dtype=bool)
    runs = zip(edges[::2], edges[1::2], strict=True)
    cuts = [(start + BAND_MARGIN, end - BAND_MARGIN) for start, end in runs if end - start > 2 * BAND_MARGIN]
    if not cuts:
        return img, None
    for a, b in cuts:
        keep[a:b] = False
    # The detector takes a height that is a multiple of 32 and stretches any other: the longest cut gives
    # back the rows that make it one, so the squeezed screen keeps its proportions.
    a, b = max(cuts, key=lambda c: c[1] - c[0])
    extra = min(b - a, -int(keep.sum()) % STRIDE)
    keep[a:a + extra] = True
    rows = np.flatnonzero(keep)
    return np.ascontiguousarray(img[rows]), Cut(rows, blank[rows])


def rows_back(found: np.ndarray | None, cut: Cut | None) -> np.ndarray | None:
    """The detector's quads (N x 4 x 2, x then y, on the squeezed input) with their y put back on the
    input's rows, but for a quad with drawn rows on both sides of a cut: no line of the whole screen holds
    a blank band taller than ``2 * BAND_MARGIN``, so such a quad joins things the cut brought together
    (on a screen of plain buttons the detector, seeing less blank, took three of them for one line)."""
    if found is None or cut is None or len(found) == 0:
        return found
    rows, blank = cut
    seams = np.flatnonzero(np.diff(rows) > 1)   # a cut between kept rows k and k + 1
    last = len(rows) - 1

    def one_line(q: np.ndarray) -> bool:
        y0 = int(np.clip(np.floor(q[:, 1].min()), 0, last))
        y1 = int(np.clip(np.ceil(q[:, 1].max()), 0, last))
        return not any((~blank[y0:k + 1]).any() and (~blank[k + 1:y1 + 1]).any()
                       for k in seams[(seams >= y0) & (seams < y1)])

    out = np.array([q for q in found if one_line(q)], dtype=np.float32).reshape(-1, 4, 2)
    grid = np.arange(len(rows) + 1, dtype=np.float64)
    at = np.concatenate((rows, rows[-1:] + 1)).astype(np.float64)
    out[..., 1] = np.interp(out[..., 1], grid, at)
    return out
