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
   and a chroma difference (brightness-shift invariant). The verified score
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

COARSE_MIN_SIDE = 7        # template side (px) on the coarse pyramid level
REFINE_TOP_K = 6           # coarse peaks refined at full resolution
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
        if hasattr(image, "convert"):  # PIL
            image = cv2.cvtColor(np.asarray(image.convert("RGB")), cv2.COLOR_RGB2BGR)
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


def _resize(img: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    w, h = size
    if img.shape[1] == w and img.shape[0] == h:
        return img
    interp = cv2.INTER_AREA if w < img.shape[1] else cv2.INTER_LINEAR
    return cv2.resize(img, (max(1, w), max(1, h)), interpolation=interp)


def verify(screen: np.ndarray, template: np.ndarray, bbox: BBox) -> dict[str, float]:
    """Independent agreements between the template and the screen window at ``bbox``.

    Returns ``gray`` (NCC), ``edge`` (NCC of gradient magnitudes), ``color`` (lowest
    per-channel NCC) and ``chroma`` (1 - mean chroma difference / 64, brightness-shift
    invariant), each in [-1, 1], plus ``score`` = their minimum (clipped at 0).
    """
    x1, y1, x2, y2 = bbox
    h, w = screen.shape[:2]
    x1, y1, x2, y2 = max(0, x1), max(0, y1), min(w, x2), min(h, y2)
    if x2 - x1 < 2 or y2 - y1 < 2:
        return {"gray": 0.0, "edge": 0.0, "color": 0.0, "chroma": 0.0, "score": 0.0}
    win = screen[y1:y2, x1:x2]
    tpl = _resize(template, (x2 - x1, y2 - y1))
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
    chroma = 1.0 - float(np.abs(wc.mean(axis=(1, 2)) - tc.mean(axis=(1, 2))).max()) / 64.0
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


def _scales(lo: float, hi: float, step: float = 1.12) -> list[float]:
    if lo >= hi:
        return [lo]
    # Geometric steps on each side of 1.0, so the native scale is always searched exactly.
    out = {1.0} if lo <= 1.0 <= hi else {lo}
    s = 1.0
    while s / step >= lo * 0.999:
        s /= step
        out.add(s)
    s = 1.0
    while s * step <= hi * 1.001:
        s *= step
        out.add(s)
    return sorted(v for v in out if lo * 0.999 <= v <= hi * 1.001)


def _coarse_factor(tw: int, th: int, min_scale: float) -> float:
    side = min(tw, th) * min_scale
    return float(min(1.0, max(0.2, COARSE_MIN_SIDE / max(side, 1.0))))


def _level(pyramid: list[np.ndarray], f: float, W: int, H: int) -> np.ndarray:
    """The screen at factor ``f``, resized from the nearest pyrDown level (cheap)."""
    k = 0
    while k + 1 < len(pyramid) and 0.5 ** (k + 1) >= f:
        k += 1
    if abs(0.5 ** k - f) < 1e-9:
        return pyramid[k]
    return _resize(pyramid[k], (max(1, round(W * f)), max(1, round(H * f))))


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
        res = cv2.matchTemplate(sg[y0:y1, x0:x1], _resize(tg, (tw, th)), cv2.TM_CCOEFF_NORMED)
        _, val, _, loc = cv2.minMaxLoc(res)
        if math.isfinite(val) and (best is None or val > best[0]):
            best = (float(val), (x0 + loc[0], y0 + loc[1], x0 + loc[0] + tw, y0 + loc[1] + th), s)
    return best


def _refine(sg: np.ndarray, half: np.ndarray | None, tg: np.ndarray, x: int, y: int, scale: float,
            scale_steps: tuple[float, ...]) -> tuple[float, BBox, float] | None:
    """Best full-resolution NCC near (x, y) for scales around ``scale``.

    With several scale steps the scale is settled on the half-resolution level first
    (4x cheaper), then only the winning scale is matched at full resolution.
    """
    side = min(tg.shape) * scale
    m = max(4, round(0.06 * max(tg.shape) * scale) + 4)
    scales = sorted({round(scale * f, 4) for f in scale_steps})
    if half is not None and len(scales) > 1 and side * 0.5 >= 10:
        coarse = _refine_at(half, tg, x // 2, y // 2, [s * 0.5 for s in scales], m // 2 + 2)
        if coarse is None:
            return None
        _, box, s_half = coarse
        x, y, m = box[0] * 2, box[1] * 2, 6
        scales = sorted({round(s_half * 2 * f, 4) for f in (0.975, 1.0, 1.025)})
    found = _refine_at(sg, tg, x, y, scales, m)
    if found is None or min(found[1][2] - found[1][0], found[1][3] - found[1][1]) < MIN_TEMPLATE_SIDE:
        return None
    return found


def search(screen: Any, template: Any, *, scales: tuple[float, float] = (1.0, 1.0),
           method: str = "template", top_k: int = REFINE_TOP_K, floor: float = 0.5) -> list[Match]:
    """Find ``template`` in ``screen`` at scales in ``[lo, hi]``; verified matches, best first.

    Every refined peak is returned with its checks (the caller applies thresholds);
    a template larger than the screen at every scale gives ``[]``.
    """
    sb, tb = as_bgr(screen, "screenshot"), as_bgr(template, "template")
    sg, tg = to_gray(sb), to_gray(tb)
    H, W = sg.shape
    th0, tw0 = tg.shape
    lo, hi = scales
    usable = [s for s in _scales(lo, hi) if tw0 * s <= W and th0 * s <= H
              and min(tw0, th0) * s >= MIN_TEMPLATE_SIDE]
    if not usable:
        return []
    f0 = _coarse_factor(tw0, th0, min(usable))
    pyramid = [sg]
    while len(pyramid) < 4 and min(pyramid[-1].shape) >= 64:
        pyramid.append(cv2.pyrDown(pyramid[-1]))
    levels: dict[float, np.ndarray] = {}
    coarse: list[tuple[float, int, int, float]] = []
    for s in usable:
        # Larger scales can use a coarser level: keep the template near COARSE_MIN_SIDE px there.
        f = f0
        while f / 2 >= 0.1 and min(tw0, th0) * s * f / 2 >= COARSE_MIN_SIDE:
            f /= 2
        if f not in levels:
            levels[f] = _level(pyramid, f, W, H)
        small = levels[f]
        tw, th = round(tw0 * s * f), round(th0 * s * f)
        if tw < 3 or th < 3 or tw > small.shape[1] or th > small.shape[0]:
            continue
        res = cv2.matchTemplate(small, _resize(tg, (tw, th)), cv2.TM_CCOEFF_NORMED)
        coarse += [(v, round(x / f), round(y / f), s) for v, x, y in _peaks(res, tw, th, 3, floor - 0.25)]
    coarse.sort(reverse=True)
    steps = (1.0,) if lo == hi else (0.9, 0.93, 0.96, 1.0, 1.04, 1.07, 1.1)
    half = pyramid[1] if len(steps) > 1 and len(pyramid) > 1 else None
    matches: list[Match] = []
    seen: list[BBox] = []
    for _, x, y, s in coarse:
        if len(matches) >= top_k:
            break
        bw, bh = round(tw0 * s), round(th0 * s)
        if any(iou((x, y, x + bw, y + bh), b) > 0.5 for b in seen):
            continue
        seen.append((x, y, x + bw, y + bh))
        ref = _refine(sg, half, tg, x, y, s, steps)
        if ref is None or ref[0] < floor:
            continue
        val, box, s2 = ref
        checks = verify(sb, tb, box)
        matches.append(Match(box, checks["score"], round(val, 4), round(s2, 4), method, checks))
    return nms(matches)


def find_template(screen: Any, template: Any, **kw: Any) -> list[Match]:
    """Same-scale template matching (the template is exactly as it appears on this screen)."""
    return search(screen, template, scales=(1.0, 1.0), method="template", **kw)


def find_multiscale(screen: Any, template: Any, lo: float = 0.5, hi: float = 1.5, **kw: Any) -> list[Match]:
    """Template matching over scales ``lo``-``hi`` (other screen densities)."""
    return search(screen, template, scales=(lo, hi), method="multiscale", **kw)


# -- ORB features -------------------------------------------------------------

ORB_MIN_TEMPLATE_SIDE = 96   # small icons are upscaled so ORB's patches fit inside them


def orb_features(image: Any, nfeatures: int = 4000) -> tuple[Any, Any]:
    """ORB keypoints and descriptors of an image (cache them per screenshot: ~20 ms on 1080x2400)."""
    gray = to_gray(as_bgr(image))
    orb = cv2.ORB_create(nfeatures=nfeatures, edgeThreshold=15, patchSize=15, fastThreshold=10)
    return orb.detectAndCompute(gray, None)


def _plausible_quad(quad: np.ndarray, tw: int, th: int) -> bool:
    """Reject degenerate homographies: not convex, collapsed or exploded, skewed."""
    if not cv2.isContourConvex(quad.astype(np.float32).reshape(-1, 1, 2)):
        return False
    area = abs(cv2.contourArea(quad.astype(np.float32)))
    ratio = area / float(tw * th)
    if not 0.2 <= ratio <= 4.0:
        return False
    p = quad.reshape(4, 2)
    top, bottom = np.linalg.norm(p[1] - p[0]), np.linalg.norm(p[2] - p[3])
    left, right = np.linalg.norm(p[3] - p[0]), np.linalg.norm(p[2] - p[1])
    if min(top, bottom, left, right) < 1:
        return False
    # A phone UI element moves and scales; it does not tilt: opposite sides stay equal.
    if max(top, bottom) / min(top, bottom) > 1.3 or max(left, right) / min(left, right) > 1.3:
        return False
    aspect = ((top + bottom) / (left + right)) / (tw / th)
    return 0.67 <= aspect <= 1.5


def find_orb(screen: Any, template: Any, *, screen_features: tuple[Any, Any] | None = None,
             ratio: float = 0.75, min_inliers: int = 8) -> list[Match]:
    """ORB matching with Lowe's ratio test and a RANSAC homography; at most one verified match."""
    sb, tb = as_bgr(screen, "screenshot"), as_bgr(template, "template")
    th, tw = tb.shape[:2]
    up = max(1.0, ORB_MIN_TEMPLATE_SIDE / min(tw, th))
    tb_up = _resize(tb, (round(tw * up), round(th * up))) if up > 1 else tb
    kt, dt = orb_features(tb_up, nfeatures=500)
    ks, ds = screen_features if screen_features is not None else orb_features(sb)
    if dt is None or ds is None or len(kt) < min_inliers or len(ks) < min_inliers:
        return []
    pairs = cv2.BFMatcher(cv2.NORM_HAMMING).knnMatch(dt, ds, k=2)
    good = [p[0] for p in pairs if len(p) == 2 and p[0].distance < ratio * p[1].distance]
    if len(good) < min_inliers:
        return []
    src = np.float32([kt[m.queryIdx].pt for m in good]).reshape(-1, 1, 2) / up
    dst = np.float32([ks[m.trainIdx].pt for m in good]).reshape(-1, 1, 2)
    hom, mask = cv2.findHomography(src, dst, cv2.RANSAC, 5.0)
    if hom is None or mask is None or int(mask.sum()) < min_inliers:
        return []
    corners = np.float32([[0, 0], [tw, 0], [tw, th], [0, th]]).reshape(-1, 1, 2)
    quad = cv2.perspectiveTransform(corners, hom)
    if not np.isfinite(quad).all() or not _plausible_quad(quad, tw, th):
        return []
    x, y, w, h = cv2.boundingRect(quad.astype(np.float32))
    H, W = sb.shape[:2]
    box = (max(0, x), max(0, y), min(W, x + w), min(H, y + h))
    if box[2] - box[0] < MIN_TEMPLATE_SIDE or box[3] - box[1] < MIN_TEMPLATE_SIDE:
        return []
    checks = verify(sb, tb, box)
    checks["inliers"] = float(mask.sum())
    scale = round(math.sqrt((w * h) / (tw * th)), 4)
    return [Match(box, checks["score"], checks["gray"], scale, "orb", checks)]
