"""Calibrated confidence: the same number means the same reliability whichever tier produced it.

Each tier has its own raw score (template/multiscale/ORB: the verified score of
``matching.verify``; tree: exact/contains; OCR: text similarity times the
recognizer's score; vision: the model's own number). ``calibrate(tier, raw)``
maps it through a per-tier monotone table so that ``confidence`` approximates
the probability that the box is the right one (precision).

How the tables were fitted (``bench/locate_bench.py --calibration``, the data folder's real-dev,
40 screenshots, every condition including both negative sets; see docs/locator.md):
for each tier, the best box of every locate is judged right or wrong; raw scores are
binned by 0.05; adjacent bins are pooled until precision rises with the score (pool
adjacent violators, ties pooled); each pooled block's confidence is the one-sided 95 %
Wilson lower bound of its precision (so 3 right boxes out of 3 do not claim 1.0), made
non-decreasing. The result is a step per block (the knots below: block start, and just
under the next block's start). Where the bench has fewer than 5 boxes in a block, or
none, the previous hand-set knots stay, capped by the next block's fitted confidence.
ORB keeps its previous knots: on the bench its boxes were right at every raw score
(it found nothing on the 115 negatives), so no wrong box bounds its table from below.
Re-run the bench and refit when the matchers change.

``ACCEPT`` is the one threshold every tier shares: below it a result falls
through to the next tier.
"""

from __future__ import annotations

import bisect
from typing import Any

from remote.core.records import UIElement

ACCEPT = 0.7
LOW_INFO_CAP = 0.5      # a flat or thin template can match anywhere: never trusted alone
AMBIGUITY_MARGIN = 0.03  # raw scores this close to the best make competing candidates

# tier -> [(raw, confidence), ...] knots; linear between knots, clamped outside.
TABLES: dict[str, list[tuple[float, float]]] = {
    # fitted 2026-11: 0/17 right under 0.75; 131/131 at 0.85+; 0.75-0.85 had no box (previous knots)
    "template": [(0.0, 0.0), (0.749, 0.0), (0.75, 0.475), (0.8, 0.75), (0.85, 0.98), (1.0, 0.98)],
    # 0/16 under 0.75; 1/2 at 0.80-0.85 (too few: previous knots); 45/46 at 0.85-0.95; 277/281 at 0.95+
    "multiscale": [(0.0, 0.0), (0.749, 0.0), (0.75, 0.2), (0.82, 0.75), (0.85, 0.908), (0.949, 0.908),
                   (0.95, 0.969), (1.0, 0.969)],
    "orb": [(0.0, 0.0), (0.5, 0.05), (0.7, 0.6), (0.85, 0.9), (1.0, 0.97)],
    # exact 620/620; "contains" (0.5-0.8) had 1 box on the bench: previous knots
    "tree": [(0.0, 0.0), (0.5, 0.6), (0.8, 0.9), (0.95, 0.996), (1.0, 0.996)],
    # 47/48 at 0.75-0.85 (mostly "part" hits), 504/507 at 0.85+; under 0.75 no box: previous knots
    "ocr": [(0.0, 0.0), (0.6, 0.3), (0.749, 0.64), (0.75, 0.912), (0.849, 0.912), (0.85, 0.985), (1.0, 0.985)],
    "vision": [(0.0, 0.0), (1.0, 0.9)],
    "fixed": [(0.0, 1.0), (1.0, 1.0)],
}


def calibrate(tier: str, raw: float) -> float:
    """Raw tier score -> calibrated confidence in [0, 1].

    >>> calibrate("template", 1.0)
    0.98
    >>> calibrate("fixed", 0.3)
    1.0
    """
    table = TABLES.get(tier)
    if table is None:
        return max(0.0, min(1.0, float(raw)))
    xs = [k[0] for k in table]
    raw = float(raw)
    if raw <= xs[0]:
        return table[0][1]
    if raw >= xs[-1]:
        return table[-1][1]
    i = bisect.bisect_right(xs, raw)
    (x0, y0), (x1, y1) = table[i - 1], table[i]
    return round(y0 + (y1 - y0) * (raw - x0) / (x1 - x0), 4)


def make_element(tier: str, bbox: tuple[int, int, int, int], raw: float, desc: str, etype: str,
                 conf: float | None = None, **meta: Any) -> UIElement:
    """A tier's found element: its box as ints, its confidence calibrated from ``raw`` (or ``conf``),
    the tier and raw score in its metadata."""
    c = calibrate(tier, raw) if conf is None else conf
    box = (int(bbox[0]), int(bbox[1]), int(bbox[2]), int(bbox[3]))
    return UIElement(element_type=etype, description=desc, bbox=box, confidence=round(c, 4),
                     metadata={"tier": tier, "raw_score": round(float(raw), 4), **meta})
