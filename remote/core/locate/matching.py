"""Template, multiscale and ORB matching: pure functions on numpy arrays (no I/O).

Arrays are OpenCV-ordered: BGR, BGRA or grayscale ``uint8``; PIL images are accepted
too (RGB). Every finder returns a list of :class:`Match`, best first, after
non-maximum suppression; several near-equal matches are all returned (the
caller turns them into candidates), never silently reduced to one.

How absent templates are rejected (plain NCC at 0.8 "finds" 30-50 % of them):

1. *Search*: normalized cross-correlation (``TM_CCOEFF_NORMED``) on a downscaled
   pyramid level, all scales at once, keeping the top few peaks; each peak is
   refined at full resolution in a small window (and in scale, unless it is the expected one and fits).
2. *Verify* every refined peak with measures independent of gray NCC
   (:func:`verify`): NCC of the gradient-magnitude maps (structure at the edges, not
   the broad shading that makes random windows correlate), per-channel colour NCC,
   and a chroma difference (tolerant of brightness gain). The verified score
   (``score``) is the minimum of those agreements, so one weak measure is enough
   to reject.
3. *Information content*: a flat patch or a thin line matches anywhere; templates
   whose gray std or edge density is too low are marked ``low_info`` and the
   locator refuses to claim high confidence for them.

The inputs, the verification measures and the information test live in
:mod:`remote.core.locate.image_checks` (re-exported here). ``Match.score`` is the raw score;
the locator maps it to a calibrated confidence per tier (``remote.core.locate.confidence``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import cv2
import numpy as np

from remote.core.coords import iou
from remote.core.locate.image_checks import MIN_TEMPLATE_SIDE as MIN_TEMPLATE_SIDE
from remote.core.locate.image_checks import ImageInputError as ImageInputError
from remote.core.locate.image_checks import as_bgr as as_bgr
from remote.core.locate.image_checks import information as information
from remote.core.locate.image_checks import resize_image as resize_image
from remote.core.locate.image_checks import to_gray as to_gray
from remote.core.locate.image_checks import verify as verify
from remote.core.locate.pyramid import Pyramid, gray_pyramid
from remote.core.locate.refining import refine, remembered

BBox = tuple[int, int, int, int]

COARSE_MIN_SIDE = 12       # template side (px) kept on the coarse pyramid level
STD_KEEP = 0.5             # the coarse level must keep this share of the template's gray std (else one finer)
SMALL_MIN_SIDE = 8         # ... for a template that would need a level finer than 1/4
FILL_MIN_SIDE = 8          # the same for the fill-in scales (second group): a coarser, 2-4x cheaper pass
COARSE_PEAKS = 4           # peaks taken per scale on the coarse level
REFINE_TOP_K = 4           # coarse peaks refined at full resolution per scale group (then the look-alike sweep)
SWEEP_MIN = 0.75           # a match verified this well sends the sweep over its scale's other coarse peaks
SWEEP_GRAY = 0.95          # ... as does a place this close in gray NCC that failed verification (colour)
LOOKALIKE_MAX = 16         # peaks kept per scale for the look-alike sweep once a match is found
COARSE_MIN = 0.4           # coarse peaks under this are not refined (0.5, fitted on the tuning part, lost two checking-part hits)
COARSE_MARGIN = 0.2        # nor those this far below the best coarse peak
EARLY_STOP = 0.85          # a match verified this well ends the scale search after its group
PRIOR_SCALES = (1.0, 0.75, 1.3333, 0.5, 0.6667, 1.5)


@dataclass
class Match:
    bbox: BBox
    score: float                 # verified raw score, 0-1 (min of the agreements)
    ncc: float                   # gray NCC at the refined location
    scale: float = 1.0
    method: str = "template"
    checks: dict[str, float] = field(default_factory=dict)

    @property
    def center(self) -> tuple[int, int]:
        return (self.bbox[0] + self.bbox[2]) // 2, (self.bbox[1] + self.bbox[3]) // 2


# -- search -------------------------------------------------------------------

def nms(matches: list[Match], iou_threshold: float = 0.3) -> list[Match]:
    """Keep the best of each group of overlapping matches (by ``score``, then ``ncc``)."""
    kept: list[Match] = []
    for m in sorted(matches, key=lambda m: (m.score, m.ncc), reverse=True):
        if all(iou(m.bbox, k.bbox) <= iou_threshold for k in kept):
            kept.append(m)
    return kept


def _peaks(result: np.ndarray, tw: int, th: int, k: int, floor: float) -> list[tuple[float, int, int]]:
    """Up to ``k`` local maxima of a matchTemplate map, best first, at least ``floor`` and within
    ``COARSE_MARGIN`` of the best (weaker ones are never refined), suppressing a template-sized area
    around each."""
    res = result.copy()
    out: list[tuple[float, int, int]] = []
    for _ in range(k):
        _, val, _, loc = cv2.minMaxLoc(res)
        if val < floor or not math.isfinite(val) or (out and val < out[0][0] - COARSE_MARGIN):
            break
        x, y = loc
        out.append((float(val), x, y))
        res[max(0, y - th // 2):y + th // 2 + 1, max(0, x - tw // 2):x + tw // 2 + 1] = -1.0
    return out


def _scale_groups(lo: float, hi: float, prior: float | None = None) -> list[list[float]]:
    """Scales to search in ``[lo, hi]``, in groups: native and common density ratios first.

    Android densities (160/240/320/420/480/640 dpi) make 0.75, 1.33, 0.5, 0.67 and 1.5
    the usual ratios between the phone that took a reference and the one running;
    the second group fills the range in ~12 % steps (the refinement covers +-6 %).
    """
    if hi - lo < 1e-6:
        return [[lo]]
    first = [s for s in PRIOR_SCALES if lo * 0.999 <= s <= hi * 1.001]
    rest: list[float] = []
    s = lo
    while s <= hi * 1.001:
        if all(abs(s / f - 1) > 0.06 for f in first + rest):
            rest.append(round(s, 4))
        s *= 1.12
    if prior is not None and lo * 0.999 <= prior <= hi * 1.001:
        # Searched alone first; a prior scale nearly equal to one of the first group replaces it.
        first = [s for s in first if abs(s / prior - 1) > 0.03]
        return [g for g in ([prior], first, rest) if g]
    return [g for g in (first, rest) if g]


def _level_for(side: float, denominators: list[int], min_side: int = COARSE_MIN_SIDE) -> int:
    """The coarsest pyramid level (its denominator) where a template side of ``side`` px keeps
    ``min_side`` px."""
    d = max((d for d in denominators if side / d >= min_side), default=1)
    if d < 4 and min_side > SMALL_MIN_SIDE:   # a small template: a fine level costs 12-55 ms a scale
        return max((d for d in denominators if d <= 4 and side / d >= SMALL_MIN_SIDE), default=1)
    return d


def _coarse_peaks(pyr: Pyramid, tg: np.ndarray, s: float, floor: float,
                  min_side: int = COARSE_MIN_SIDE) -> list[tuple[float, int, int, float, int]]:
    """Peaks of the template at scale ``s`` on a coarse level: (ncc, x, y, scale, level's denominator),
    in full pixels."""
    th0, tw0 = tg.shape
    d = _level_for(min(tw0, th0) * s, pyr.denominators, min_side)
    full_std = float(tg.std())
    while True:   # a level that blurs the template's content away (a thin label on a gradient) is too coarse
        tw, th = round(tw0 * s / d), round(th0 * s / d)
        small_tpl = resize_image(tg, (max(tw, 1), max(th, 1)))
        finer = [k for k in pyr.denominators if k < d and k >= 2]
        if not finer or float(small_tpl.std()) >= STD_KEEP * full_std:
            break
        d = max(finer)
    small = pyr[d]
    f = 1 / d
    if tw < 3 or th < 3 or tw > small.shape[1] or th > small.shape[0]:
        return []
    res = cv2.matchTemplate(small, small_tpl, cv2.TM_CCOEFF_NORMED)
    return [(v, round(x / f), round(y / f), s, d) for v, x, y in _peaks(res, tw, th, LOOKALIKE_MAX, floor)]


def _pick(coarse: list[tuple[float, int, int, float, int]], tw0: int, th0: int,
          top_k: int) -> list[tuple[float, int, int, float, int]]:
    """The coarse peaks (best first) worth refining: strong enough, near the best, one per place.

    A place an earlier scale group refined is refined again at this group's scales (nms keeps the
    better): an in-between scale (x1.13) matches weakly at 1.0 (refined up to x1.09), then well from 1.1.
    """
    picked: list[tuple[float, int, int, float, int]] = []
    seen: list[BBox] = []
    for peak in coarse:
        cv, x, y, s, _k = peak
        if len(picked) >= top_k or cv < COARSE_MIN or cv < coarse[0][0] - COARSE_MARGIN:
            break
        box = (x, y, x + round(tw0 * s), y + round(th0 * s))
        if all(iou(box, b) <= 0.5 for b in seen):
            seen.append(box)
            picked.append(peak)
    return picked


def search(screen: Any, template: Any, *, scales: tuple[float, float] = (1.0, 1.0),
           method: str = "template", top_k: int = REFINE_TOP_K, floor: float = 0.5,
           pyramid: Pyramid | None = None, prior_scale: float | None = None,
           memo: dict[Any, Any] | None = None) -> list[Match]:
    """Find ``template`` in ``screen`` at scales in ``[lo, hi]``; verified matches, best first.

    Every refined peak is returned with its checks (the caller applies thresholds);
    a template larger than the screen at every scale gives ``[]``. ``pyramid`` is the
    screen's :func:`gray_pyramid` when the caller keeps one (saves ~3 ms a call).
    Scale groups (:func:`_scale_groups`) are searched in order and the search stops
    after a group that produced a match verified at ``EARLY_STOP`` or better. ``prior_scale``
    (the scale the element is expected at, e.g. from the reference's source screen size) is
    searched alone first; the fill-in group is searched on a coarser level (``FILL_MIN_SIDE``).
    ``memo`` (one dict per locate) remembers coarse peaks per template and scale, and each peak's
    half-level check, so the multiscale tier does not redo what the template tier just did on the
    same pyramid. Once a match is found, the look-alike sweep (:func:`_lookalikes`) refines every
    other place that looked as good on the coarse level, so the caller can tell them apart.
    """
    sb, tb = as_bgr(screen, "screenshot"), as_bgr(template, "template")
    pyr = pyramid if pyramid is not None else gray_pyramid(to_gray(sb))
    tg = to_gray(tb)
    H, W = pyr[1].shape
    th0, tw0 = tg.shape
    tkey = (tg.shape, hash(tg.tobytes())) if memo is not None else None   # this template, in the memo's keys
    sized: dict[tuple[int, int], np.ndarray] = {}   # the template resized, per size, for every peak

    def refined(peak: tuple[float, int, int, float, int]) -> Match | None:
        cv, x, y, s, d = peak
        ref = refine(pyr, tg, x, y, s, d, scales[1] - scales[0] > 1e-6, memo, tkey, sized,
                      expected=prior_scale is not None and abs(s / prior_scale - 1) < 1e-3)
        if ref is None or ref[0] < floor:
            return None
        checks = verify(sb, tb, ref[1])
        checks["coarse"] = round(cv, 4)
        return Match(ref[1], checks["score"], round(ref[0], 4), round(ref[2], 4), method, checks)

    coarse: dict[float, list[tuple[float, int, int, float, int]]] = {}
    found: list[tuple[Match, float]] = []   # each match with the scale its coarse peak came from
    tried: set[tuple[int, int, float]] = set()
    for gi, group in enumerate(_scale_groups(*scales, prior=prior_scale)):
        usable = [s for s in group if tw0 * s <= W and th0 * s <= H and min(tw0, th0) * s >= MIN_TEMPLATE_SIDE]
        fill = gi > 0 and all(abs(s / f - 1) > 0.03 for s in group for f in PRIOR_SCALES)
        side = FILL_MIN_SIDE if fill else COARSE_MIN_SIDE
        for s in usable:
            coarse[s] = remembered(memo, ("coarse", tkey, round(s, 4), floor, side),
                                    partial(_coarse_peaks, pyr, tg, s, floor - 0.25, side))
        peaks = [p for s in usable for p in coarse[s][:COARSE_PEAKS]]
        for peak in _pick(sorted(peaks, reverse=True), tw0, th0, top_k):
            tried.add(peak[1:4])
            m = refined(peak)
            if m is not None:
                found.append((m, peak[3]))
        if any(m.score >= EARLY_STOP for m, _ in found):
            break
    return nms([m for m, _ in found] + _lookalikes(found, coarse, tried, refined, tw0, th0))


def _lookalikes(found: list[tuple[Match, float]], coarse: dict[float, list[tuple[float, int, int, float, int]]],
                tried: set[tuple[int, int, float]], refined: Callable[[tuple[float, int, int, float, int]], Match | None],
                tw0: int, th0: int) -> list[Match]:
    """When a match is found (``SWEEP_MIN``, or a place alike in gray, ``SWEEP_GRAY``), the other coarse
    peaks of its scale not refined yet (up to ``LOOKALIKE_MAX``, within ``COARSE_MARGIN``), refined: on the coarse level the keys of a keypad or
    the rows of a list look alike and the right one can rank fifth. Costs nothing on a miss."""
    best = max(found, key=lambda f: f[0].score, default=None)
    if best is None:
        return []
    if best[0].score < SWEEP_MIN:   # no match verified yet: a place alike in gray and not in colour
        best = max(found, key=lambda f: f[0].ncc)   # (a card among cards of other colours) sends it too
        if best[0].ncc < SWEEP_GRAY:
            return []
    out: list[Match] = []
    for peak in coarse.get(best[1], []):
        if peak[0] < COARSE_MIN:
            break
        box = (peak[1], peak[2], peak[1] + round(tw0 * peak[3]), peak[2] + round(th0 * peak[3]))
        if peak[1:4] in tried or any(iou(box, m.bbox) > 0.5 for m in [f[0] for f in found] + out):
            continue
        m = refined(peak)
        if m is not None:
            out.append(m)
    return out


def find_template(screen: Any, template: Any, **kw: Any) -> list[Match]:
    """Same-scale template matching (the template is exactly as it appears on this screen)."""
    return search(screen, template, scales=(1.0, 1.0), method="template", **kw)


def find_multiscale(screen: Any, template: Any, lo: float = 0.5, hi: float = 1.5, **kw: Any) -> list[Match]:
    """Template matching over scales ``lo``-``hi`` (other screen densities)."""
    return search(screen, template, scales=(lo, hi), method="multiscale", **kw)
