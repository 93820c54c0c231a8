"""Calibrated confidence: the same number means the same reliability whichever tier produced it.

Each tier has its own raw score (template/multiscale/ORB: the verified score of
``matching.verify``; tree: exact/contains; OCR: text similarity times the
recognizer's score; vision: the model's own number). ``calibrate(tier, raw)``
maps it through a per-tier monotone table so that ``confidence`` approximates
the probability that the box is the right one (precision).

How the tables were fitted: ``bench/locate_bench.py --calibration`` prints, per
tier, the precision of found boxes in bins of the raw score on
../shared/data/real-dev (positives in every condition plus negatives from another
app). The knots below are those precisions, made monotone and rounded down;
re-run the bench and update them when the matchers change.

``ACCEPT`` is the one threshold every tier shares: below it a result falls
through to the next tier.
"""

from __future__ import annotations

import bisect

ACCEPT = 0.7
LOW_INFO_CAP = 0.5      # a flat or thin template can match anywhere: never trusted alone
AMBIGUITY_MARGIN = 0.03  # raw scores this close to the best make competing candidates

# tier -> [(raw, confidence), ...] knots; linear between knots, clamped outside.
TABLES: dict[str, list[tuple[float, float]]] = {
    "template": [(0.0, 0.0), (0.5, 0.02), (0.7, 0.2), (0.8, 0.75), (0.88, 0.95), (1.0, 0.995)],
    "multiscale": [(0.0, 0.0), (0.6, 0.02), (0.75, 0.2), (0.82, 0.75), (0.9, 0.95), (1.0, 0.99)],
    "orb": [(0.0, 0.0), (0.5, 0.05), (0.7, 0.6), (0.85, 0.9), (1.0, 0.97)],
    "tree": [(0.0, 0.0), (0.5, 0.6), (0.8, 0.9), (1.0, 0.98)],
    "ocr": [(0.0, 0.0), (0.6, 0.3), (0.8, 0.75), (0.9, 0.9), (1.0, 0.95)],
    "vision": [(0.0, 0.0), (1.0, 0.9)],
    "fixed": [(0.0, 1.0), (1.0, 1.0)],
}


def calibrate(tier: str, raw: float) -> float:
    """Raw tier score -> calibrated confidence in [0, 1].

    >>> calibrate("template", 1.0)
    0.995
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
