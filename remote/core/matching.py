"""Template, multiscale and ORB matching: pure functions on numpy arrays (no I/O).

Arrays are OpenCV-ordered: BGR, BGRA or grayscale ``uint8``; PIL images are accepted
too (RGB). Every finder returns a list of :class:`Match`, best first, after
non-maximum suppression; several near-equal matches are all returned (the
caller turns them into candidates), never silently reduced to one.

How absent templates are rejected (plain NCC at 0.8 "finds" 30-50 % of them):

1. *Search*: normalized cross-correlation (``TM_CCOEFF_NORMED``) on a downscaled
   pyramid level, all scales at once, keeping the top few peaks; each peak is
   refined at full resolution in a small window (and +-4 % in scale).
2. *Verify* every refined peak with measures independent of gray NCC
   (:func:`verify`): NCC of the gradient-magnitude maps (structure at the edges, not
   the broad shading that makes random windows correlate), per-channel colour NCC,
   and a chroma difference (tolerant of brightness gain). The verified score
   (``score``) is the minimum of those agreements, so one weak measure is enough
   to reject.
3. *Information content*: a flat patch or a thin line matches anywhere; templates
   whose gray std or edge density is too low are marked ``low_info`` and the
   locator refuses to claim high confidence for them.

``Match.score`` is the raw score; the locator maps it to a calibrated confidence
per tier (``remote.core.confidence``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from remote.core.coords import iou
from remote.errors import LocateError

BBox = tuple[int, int, int, int]

COARSE_MIN_SIDE = 12       # template side (px) kept on the coarse pyramid level
SMALL_MIN_SIDE = 8         # ... for a template that would need the full or half level
FILL_MIN_SIDE = 8          # the same for the fill-in scales (second group): a coarser, 2-4x cheaper pass
COARSE_PEAKS = 4           # peaks taken per scale on the coarse level
REFINE_TOP_K = 8           # coarse peaks refined at full resolution
COARSE_MIN = 0.4           # coarse peaks under this are not refined
COARSE_MARGIN = 0.2        # nor those this far below the best coarse peak
EARLY_STOP = 0.85          # a match verified this well ends the scale search after its group
HALF_MIN = 0.7             # multiscale: a peak under this NCC on the half level is not refined further
HALF_FIRST = 0.5           # ... checked first at its coarse scale alone: under this, the other scales are not tried
PYRAMID_LEVELS = 4         # full, 1/2, 1/4, 1/8 (a 1/16 level lost matches at x1.33 and saved nothing)
PRIOR_SCALES = (1.0, 0.75, 1.3333, 0.5, 0.6667, 1.5)
MIN_TEMPLATE_SIDE = 4
LOW_INFO_STD = 6.0         # gray std below this: a flat patch
LOW_INFO_EDGES = 0.015     # fraction of strong-gradient pixels below this: nearly flat
LOW_INFO_SPREAD = 0.2      # share of rows (or columns) with an edge below this: a thin line


class ImageInputError(LocateError, ValueError):
    """An image given to a matcher is empty, has no pixels or an unsupported layout."""


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


# -- inputs -------------------------------------------------------------------

def as_bgr(image: Any, what: str = "image") -> np.ndarray:
    """A BGR ``uint8`` array from a PIL image or a gray/BGR/BGRA array; clear error when empty."""
    if image is None:
        raise ImageInputError(f"{what} is missing")
    if not isinstance(image, np.ndarray):
        if hasattr(image, "convert"):  # PIL; an RGB image is not converted (a 7 MB copy: ~7 ms on 1080x2340)
            image = cv2.cvtColor(np.asarray(image if image.mode == "RGB" else image.convert("RGB")),
                                 cv2.COLOR_RGB2BGR)
        else:
            raise ImageInputError(f"{what} is not an image: {type(image).__name__}")
    arr = image
    if arr.size == 0 or arr.ndim not in (2, 3) or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ImageInputError(f"{what} is empty (shape {arr.shape})")
    if arr.dtype != np.uint8:
        arr = np.clip(arr, 0, 255).astype(np.uint8)
    if arr.ndim == 2:
        return cv2.cvtColor(arr, cv2.COLOR_GRAY2BGR)
    channels = arr.shape[2]
    if channels == 1:
        return cv2.cvtColor(arr[:, :, 0], cv2.COLOR_GRAY2BGR)
    if channels == 4:
        return cv2.cvtColor(arr, cv2.COLOR_BGRA2BGR)
    if channels == 3:
        return arr
    raise ImageInputError(f"{what} has {channels} channels; expected 1, 3 or 4")


def to_gray(bgr: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY) if bgr.ndim == 3 else bgr


def _grad(gray: np.ndarray) -> np.ndarray:
    g = gray.astype(np.float32)
    gx = cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3)
    return cv2.GaussianBlur(cv2.magnitude(gx, gy), (3, 3), 0)


def information(template: Any) -> dict[str, float]:
    """How much a template says: gray ``std`` and ``edges`` (fraction of strong-gradient pixels).

    A flat colour patch has std ~0; a thin line or a single glyph on a plain
    background has few edge pixels. Both match almost anywhere.
    """
    gray = to_gray(as_bgr(template, "template"))
    std = float(gray.std())
    grad = _grad(gray)
    strong = grad > 60
    edges = float(strong.mean())
    # A line or a lone bar has edges in few rows (or few columns): it matches any similar line.
    spread = min(float(strong.any(axis=1).mean()), float(strong.any(axis=0).mean()))
    low = (std < LOW_INFO_STD or edges < LOW_INFO_EDGES or spread < LOW_INFO_SPREAD
           or min(gray.shape) < MIN_TEMPLATE_SIDE * 2)
    return {"std": round(std, 2), "edges": round(edges, 4), "spread": round(spread, 3), "low_info": float(low)}


# -- verification -------------------------------------------------------------

def _ncc(a: np.ndarray, b: np.ndarray) -> float:
    """Zero-mean normalized correlation of two same-size arrays (0 when one is flat)."""
    a = a.astype(np.float32).ravel()
    b = b.astype(np.float32).ravel()
    a -= a.mean()
    b -= b.mean()
    den = math.sqrt(float(a @ a) * float(b @ b))
    if den < 1e-6:
        return 0.0
    return float(a @ b) / den


def resize_image(img: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    w, h = size
    if img.shape[1] == w and img.shape[0] == h:
        return img
    interp = cv2.INTER_AREA if w < img.shape[1] else cv2.INTER_LINEAR
    return cv2.resize(img, (max(1, w), max(1, h)), interpolation=interp)


def verify(screen: np.ndarray, template: np.ndarray, bbox: BBox) -> dict[str, float]:
    """Independent agreements between the template and the screen window at ``bbox``.

    Returns ``gray`` (NCC), ``edge`` (NCC of gradient magnitudes), ``color`` (lowest
    per-channel NCC) and ``chroma`` (1 - mean chroma difference / (64 + half the chroma):
    tolerant of a brightness gain), each in [-1, 1], plus ``score`` = their minimum (clipped at 0).
    """
    x1, y1, x2, y2 = bbox
    h, w = screen.shape[:2]
    x1, y1, x2, y2 = max(0, x1), max(0, y1), min(w, x2), min(h, y2)
    if x2 - x1 < 2 or y2 - y1 < 2:
        return {"gray": 0.0, "edge": 0.0, "color": 0.0, "chroma": 0.0, "score": 0.0}
    win = screen[y1:y2, x1:x2]
    tpl = resize_image(template, (x2 - x1, y2 - y1))
    wg, tg = to_gray(win), to_gray(tpl)
    gray = _ncc(wg, tg)
    edge = _ncc(_grad(wg), _grad(tg))
    # Joint NCC of the three channels (each centred on its own mean): a channel that is
    # nearly flat weighs little, instead of spoiling a per-channel minimum.
    wf, tf = win.astype(np.float32), tpl.astype(np.float32)
    wz = (wf - wf.mean(axis=(0, 1))).ravel()
    tz = (tf - tf.mean(axis=(0, 1))).ravel()
    den = math.sqrt(float(wz @ wz) * float(tz @ tz))
    color = float(wz @ tz) / den if den > 1e-6 else gray
    wc = np.stack([wf[:, :, 0] - wf[:, :, 1], wf[:, :, 2] - wf[:, :, 1]])
    tc = np.stack([tf[:, :, 0] - tf[:, :, 1], tf[:, :, 2] - tf[:, :, 1]])
    # Tolerance grows with the chroma itself: a brightness gain scales a saturated colour's
    # chroma (x1.12 moves a purple by ~14 levels) but never turns grey into orange.
    cw, ct = wc.mean(axis=(1, 2)), tc.mean(axis=(1, 2))
    chroma = 1.0 - float((np.abs(cw - ct) / (64.0 + 0.5 * np.maximum(np.abs(cw), np.abs(ct)))).max())
    score = max(0.0, min(gray, edge, color, chroma))
    return {"gray": round(gray, 4), "edge": round(edge, 4), "color": round(color, 4),
            "chroma": round(chroma, 4), "score": round(score, 4)}


# -- search -------------------------------------------------------------------

def nms(matches: list[Match], iou_threshold: float = 0.3) -> list[Match]:
    """Keep the best of each group of overlapping matches (by ``score``, then ``ncc``)."""
    kept: list[Match] = []
    for m in sorted(matches, key=lambda m: (m.score, m.ncc), reverse=True):
        if all(iou(m.bbox, k.bbox) <= iou_threshold for k in kept):
            kept.append(m)
    return kept


def gray_pyramid(gray: np.ndarray, levels: int = PYRAMID_LEVELS) -> list[np.ndarray]:
    """``[gray, gray/2, gray/4, gray/8]`` (pyrDown; stops when a side would drop under 64 px).

    Build it once per screenshot (``Screen.pyramid``) and pass it to :func:`search`.
    """
    out = [gray]
    while len(out) < levels and min(out[-1].shape[:2]) >= 128:
        out.append(cv2.pyrDown(out[-1]))
    return out


def _peaks(result: np.ndarray, tw: int, th: int, k: int, floor: float) -> list[tuple[float, int, int]]:
    """Top ``k`` local maxima of a matchTemplate map, suppressing a template-sized area around each."""
    res = result.copy()
    out = []
    for _ in range(k):
        _, val, _, loc = cv2.minMaxLoc(res)
        if val < floor or not math.isfinite(val):
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


def _level_for(side: float, n_levels: int, min_side: int = COARSE_MIN_SIDE) -> int:
    """The coarsest pyramid level where a template side of ``side`` px keeps ``min_side`` px."""
    k = 0
    while k + 1 < n_levels and side / 2 ** (k + 1) >= min_side:
        k += 1
    if k < 2 and min_side > SMALL_MIN_SIDE:   # a small template: a fine level costs 12-55 ms a scale
        return _level_for(side, n_levels, SMALL_MIN_SIDE)
    return k


def _refine_at(sg: np.ndarray, tg: np.ndarray, x: int, y: int, scales: list[float],
               margin: int) -> tuple[float, BBox, float] | None:
    """Best NCC in a window around (x, y) of ``sg`` for each template scale; (score, box, scale)."""
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
        res = cv2.matchTemplate(sg[y0:y1, x0:x1], resize_image(tg, (tw, th)), cv2.TM_CCOEFF_NORMED)
        _, val, _, loc = cv2.minMaxLoc(res)
        if math.isfinite(val) and (best is None or val > best[0]):
            best = (float(val), (x0 + loc[0], y0 + loc[1], x0 + loc[0] + tw, y0 + loc[1] + th), s)
    return best


def _refine(pyr: list[np.ndarray], tg: np.ndarray, x: int, y: int, scale: float, k: int,
            multiscale: bool) -> tuple[float, BBox, float] | None:
    """Best full-resolution NCC near the coarse peak (x, y) found on pyramid level ``k``.

    Multiscale: the scale is settled over +-6 % on the half level (4x cheaper), then the
    winner is matched at full resolution over +-1.5 %.
    """
    sg = pyr[0]
    m = 2 ** k + 3
    scales = [scale]
    if multiscale:
        steps = (0.94, 0.97, 1.0, 1.03, 1.06)
        m += round(0.06 * max(tg.shape) * scale)
        if len(pyr) > 1 and min(tg.shape) * scale * 0.5 >= 10:
            first = _refine_at(pyr[1], tg, x // 2, y // 2, [scale * 0.5], m // 2 + 2)
            if first is None or first[0] < HALF_FIRST:
                return None
            coarse = _refine_at(pyr[1], tg, x // 2, y // 2, [scale * f * 0.5 for f in steps if f != 1.0],
                                m // 2 + 2)
            if coarse is None or coarse[0] < first[0]:
                coarse = first
            val, box, s_half = coarse
            # Every match accepted on the bench had NCC >= 0.79 here (a verified 0.8 needs it):
            # a peak this weak is an absent template's, not worth the full-resolution pass.
            if val < HALF_MIN:
                return None
            x, y, m = box[0] * 2, box[1] * 2, 4
            scales = [s_half * 2 * f for f in (0.97, 0.985, 1.0, 1.015, 1.03)]
        else:
            scales = [scale * f for f in steps]
    found = _refine_at(sg, tg, x, y, scales, m)
    if found is None or min(found[1][2] - found[1][0], found[1][3] - found[1][1]) < MIN_TEMPLATE_SIDE:
        return None
    return found


def _coarse_peaks(pyr: list[np.ndarray], tg: np.ndarray, s: float, floor: float,
                  min_side: int = COARSE_MIN_SIDE) -> list[tuple[float, int, int, float, int]]:
    """Peaks of the template at scale ``s`` on a coarse level: (ncc, x, y, scale, level) in full pixels."""
    th0, tw0 = tg.shape
    k = _level_for(min(tw0, th0) * s, len(pyr), min_side)
    small = pyr[k]
    f = 0.5 ** k
    tw, th = round(tw0 * s * f), round(th0 * s * f)
    if tw < 3 or th < 3 or tw > small.shape[1] or th > small.shape[0]:
        return []
    res = cv2.matchTemplate(small, resize_image(tg, (tw, th)), cv2.TM_CCOEFF_NORMED)
    return [(v, round(x / f), round(y / f), s, k) for v, x, y in _peaks(res, tw, th, COARSE_PEAKS, floor)]


def _memo_peaks(memo: dict[Any, list[Any]] | None, pyr: list[np.ndarray], tg: np.ndarray, s: float, floor: float,
                min_side: int) -> list[tuple[float, int, int, float, int]]:
    if memo is None:
        return _coarse_peaks(pyr, tg, s, floor, min_side)
    key = (tg.shape, hash(tg.tobytes()), round(s, 4), floor, min_side)
    if key not in memo:
        memo[key] = _coarse_peaks(pyr, tg, s, floor, min_side)
    return memo[key]


def search(screen: Any, template: Any, *, scales: tuple[float, float] = (1.0, 1.0),
           method: str = "template", top_k: int = REFINE_TOP_K, floor: float = 0.5,
           pyramid: list[np.ndarray] | None = None, prior_scale: float | None = None,
           memo: dict[Any, list[Any]] | None = None) -> list[Match]:
    """Find ``template`` in ``screen`` at scales in ``[lo, hi]``; verified matches, best first.

    Every refined peak is returned with its checks (the caller applies thresholds);
    a template larger than the screen at every scale gives ``[]``. ``pyramid`` is the
    screen's :func:`gray_pyramid` when the caller keeps one (saves ~3 ms a call).
    Scale groups (:func:`_scale_groups`) are searched in order and the search stops
    after a group that produced a match verified at ``EARLY_STOP`` or better. ``prior_scale``
    (the scale the element is expected at, e.g. from the reference's source screen size) is
    searched alone first; the fill-in group is searched on a coarser level (``FILL_MIN_SIDE``).
    ``memo`` (one dict per locate) remembers coarse peaks per template and scale, so the multiscale
    tier does not search again the scale the template tier just searched on the same pyramid.
    """
    sb, tb = as_bgr(screen, "screenshot"), as_bgr(template, "template")
    pyr = pyramid if pyramid is not None else gray_pyramid(to_gray(sb))
    tg = to_gray(tb)
    H, W = pyr[0].shape
    th0, tw0 = tg.shape
    multi = scales[1] - scales[0] > 1e-6
    matches: list[Match] = []
    for gi, group in enumerate(_scale_groups(*scales, prior=prior_scale)):
        usable = [s for s in group if tw0 * s <= W and th0 * s <= H and min(tw0, th0) * s >= MIN_TEMPLATE_SIDE]
        fill = gi > 0 and all(abs(s / f - 1) > 0.03 for s in group for f in PRIOR_SCALES)
        side = FILL_MIN_SIDE if fill else COARSE_MIN_SIDE
        coarse = sorted((p for s in usable for p in _memo_peaks(memo, pyr, tg, s, floor - 0.25, side)), reverse=True)
        # A place an earlier group refined is refined again at this group's scales (nms keeps the better):
        # an in-between scale (x1.13) matches weakly at 1.0 (refined up to x1.09), then well from 1.1.
        seen: list[BBox] = []
        refined = 0
        for cv, x, y, s, k in coarse:
            if refined >= top_k or cv < COARSE_MIN or cv < coarse[0][0] - COARSE_MARGIN:
                break
            bw, bh = round(tw0 * s), round(th0 * s)
            if any(iou((x, y, x + bw, y + bh), b) > 0.5 for b in seen):
                continue
            seen.append((x, y, x + bw, y + bh))
            refined += 1
            ref = _refine(pyr, tg, x, y, s, k, multi)
            if ref is None or ref[0] < floor:
                continue
            val, box, s2 = ref
            checks = verify(sb, tb, box)
            checks["coarse"] = round(cv, 4)
            matches.append(Match(box, checks["score"], round(val, 4), round(s2, 4), method, checks))
        if any(m.score >= EARLY_STOP for m in matches):
            break
    return nms(matches)


def find_template(screen: Any, template: Any, **kw: Any) -> list[Match]:
    """Same-scale template matching (the template is exactly as it appears on this screen)."""
    return search(screen, template, scales=(1.0, 1.0), method="template", **kw)


def find_multiscale(screen: Any, template: Any, lo: float = 0.5, hi: float = 1.5, **kw: Any) -> list[Match]:
    """Template matching over scales ``lo``-``hi`` (other screen densities)."""
    return search(screen, template, scales=(lo, hi), method="multiscale", **kw)


def find_orb(screen: Any, template: Any, **kw: Any) -> list[Match]:
    """ORB feature matching; lives in :mod:`remote.core.features` (kept here for callers)."""
    from remote.core import features
    return features.find_orb(screen, template, **kw)


def orb_features(image: Any, nfeatures: int = 4000) -> tuple[Any, Any]:
    """ORB keypoints and descriptors of a screenshot (:func:`remote.core.features.orb_features`)."""
    from remote.core import features
    return features.orb_features(image, nfeatures)
