"""What a template match must pass, and the images it is measured on (pure functions, no I/O).

:func:`as_bgr` turns PIL images and gray/BGR/BGRA arrays into one layout with a clear error
for empty input. :func:`verify` measures a candidate box against the template with
agreements independent of the gray NCC the search ranks by (gradient structure, joint colour,
chroma), so one weak measure is enough to reject. :func:`information` says whether a template
carries enough to be matched at all (flat patches and thin lines match anywhere).
The search that produces candidate boxes lives in :mod:`remote.core.locate.matching`.
"""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np

from remote.errors import LocateError

BBox = tuple[int, int, int, int]

MIN_TEMPLATE_SIDE = 4
LOW_INFO_STD = 6.0         # gray std below this: a flat patch
LOW_INFO_EDGES = 0.015     # fraction of strong-gradient pixels below this: nearly flat
LOW_INFO_SPREAD = 0.2      # share of rows (or columns) with an edge below this: a thin line
LUMA_MIN = 0.75            # window/template mean-brightness ratio (+16) below this: another state, or a scrim over it
FLAT_EDGES = 0.001         # edge pixels below this (or std under LOW_INFO_STD): a flat patch, no place of its own


class ImageInputError(LocateError, ValueError):
    """An image given to a matcher is empty, has no pixels or an unsupported layout."""


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
        return np.asarray(cv2.cvtColor(arr, cv2.COLOR_GRAY2BGR))
    channels = arr.shape[2]
    if channels == 1:
        return np.asarray(cv2.cvtColor(arr[:, :, 0], cv2.COLOR_GRAY2BGR))
    if channels == 4:
        return np.asarray(cv2.cvtColor(arr, cv2.COLOR_BGRA2BGR))
    if channels == 3:
        return np.asarray(arr)
    raise ImageInputError(f"{what} has {channels} channels; expected 1, 3 or 4")


def to_gray(bgr: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY) if bgr.ndim == 3 else bgr


def _grad(gray: np.ndarray) -> np.ndarray:
    g = gray.astype(np.float32)
    gx = cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3)
    return cv2.GaussianBlur(cv2.magnitude(gx, gy), (3, 3), 0)


def information(template: Any) -> dict[str, float]:
    """How much a template says: gray ``std``, ``edges`` (fraction of strong-gradient pixels) and
    ``spread`` (share of rows or columns, the fewer, holding an edge).

    ``flat``: a colour patch or a smooth gradient (std ~0 or no edge at all) has no place of its
    own: it matches every patch of that colour. ``low_info``: flat, or thin (few edge pixels, or
    edges in few rows or columns: a line, three dots in a column, a lone glyph): it can be found,
    but only a near-exact match is evidence (``visual_policy.THIN_MIN_RAW``).
    """
    gray = to_gray(as_bgr(template, "template"))
    std = float(gray.std())
    grad = _grad(gray)
    strong = grad > 60
    edges = float(strong.mean())
    # A line or a lone bar has edges in few rows (or few columns): it matches any similar line.
    spread = min(float(strong.any(axis=1).mean()), float(strong.any(axis=0).mean()))
    flat = std < LOW_INFO_STD or edges < FLAT_EDGES or min(gray.shape) < MIN_TEMPLATE_SIDE * 2
    low = flat or edges < LOW_INFO_EDGES or spread < LOW_INFO_SPREAD
    return {"std": round(std, 2), "edges": round(edges, 4), "spread": round(spread, 3), "low_info": float(low),
            "flat": float(flat)}


# -- verification -------------------------------------------------------------

def resize_image(img: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    w, h = size
    if img.shape[1] == w and img.shape[0] == h:
        return img
    interp = cv2.INTER_AREA if w < img.shape[1] else cv2.INTER_LINEAR
    return cv2.resize(img, (max(1, w), max(1, h)), interpolation=interp)


def verify(screen: np.ndarray, template: np.ndarray, bbox: BBox) -> dict[str, float]:
    """Independent agreements between the template and the screen window at ``bbox``.

    Returns ``gray`` (NCC), ``edge`` (NCC of gradient magnitudes), ``color`` (lowest
    per-channel NCC), ``chroma`` (1 - mean chroma difference / (64 + half the chroma):
    tolerant of a brightness gain) and ``luma`` (1 while the two mean brightnesses are within a
    ratio of ``LUMA_MIN``, then falling twice as fast: the correlations ignore brightness, so a
    white button matched a grey one and a copy dimmed under a dialog's scrim matched the element),
    each in [-1, 1], plus ``score`` = their minimum (clipped at 0).
    """
    x1, y1, x2, y2 = bbox
    h, w = screen.shape[:2]
    x1, y1, x2, y2 = max(0, x1), max(0, y1), min(w, x2), min(h, y2)
    if x2 - x1 < 2 or y2 - y1 < 2:
        return {"gray": 0.0, "edge": 0.0, "color": 0.0, "chroma": 0.0, "luma": 0.0, "score": 0.0}
    win = np.ascontiguousarray(screen[y1:y2, x1:x2])
    tpl = resize_image(template, (x2 - x1, y2 - y1))
    wg, tg = to_gray(win), to_gray(tpl)
    gray = _same_size_ncc(wg, tg)
    edge = _same_size_ncc(_grad(wg), _grad(tg))
    # Joint NCC of the three channels (each centred on its own mean: OpenCV's TM_CCOEFF_NORMED on
    # a 3-channel pair): a channel that is nearly flat weighs little, instead of spoiling a minimum.
    color = _same_size_ncc(win, tpl, fallback=gray)
    (wb, wgr, wr), (tb, tgr, tr) = cv2.mean(win)[:3], cv2.mean(tpl)[:3]
    cw, ct = np.array([wb - wgr, wr - wgr]), np.array([tb - tgr, tr - tgr])   # mean chroma: B-G, R-G
    # Tolerance grows with the chroma itself: a brightness gain scales a saturated colour's
    # chroma (x1.12 moves a purple by ~14 levels) but never turns grey into orange.
    chroma = 1.0 - float((np.abs(cw - ct) / (64.0 + 0.5 * np.maximum(np.abs(cw), np.abs(ct)))).max())
    ratio = (cv2.mean(wg)[0] + 16.0) / (cv2.mean(tg)[0] + 16.0)
    luma = min(1.0, 1.0 - 2.0 * (LUMA_MIN - min(ratio, 1.0 / ratio)))
    score = max(0.0, min(gray, edge, color, chroma, luma))
    return {"gray": round(gray, 4), "edge": round(edge, 4), "color": round(color, 4),
            "chroma": round(chroma, 4), "luma": round(luma, 4), "score": round(score, 4)}


def _same_size_ncc(a: np.ndarray, b: np.ndarray, fallback: float = 0.0) -> float:
    """Zero-mean normalized correlation of two same-size images, each channel centred on its own
    mean (``fallback`` when one is flat): flat float32 dot products, 5-10x cheaper than numpy's
    per-channel reductions on a 250 px window."""
    af, bf = a.reshape(-1).astype(np.float32), b.reshape(-1).astype(np.float32)
    channels = a.shape[2] if a.ndim == 3 else 1
    n = af.size // channels
    sa, sb = np.array(cv2.sumElems(a)[:channels]), np.array(cv2.sumElems(b)[:channels])
    va = float(af @ af) - float(sa @ sa) / n
    vb = float(bf @ bf) - float(sb @ sb) / n
    if va <= 1e-3 * n or vb <= 1e-3 * n:
        return fallback
    return max(-1.0, min(1.0, (float(af @ bf) - float(sa @ sb) / n) / math.sqrt(va * vb)))


# -- look-alikes --------------------------------------------------------------

APART_DIFF = 16            # max channel difference (after a 5x5 blur) where two places differ: above JPEG noise
APART_PHASE = 1.0          # ... plus this many pixels' worth of the local slope: a resampling phase shift
APART_MIN_PIXELS = 12      # fewer differing pixels than this: the two places are copies

def _window(image: np.ndarray, box: BBox | None, size: tuple[int, int]) -> np.ndarray:
    """``image`` (or its ``box``) at ``size``, blurred 3x3 (5x5: a half-pixel resampling phase between two copies is no evidence), float."""
    if box is not None:
        h, w = image.shape[:2]
        image = image[max(0, box[1]):min(h, box[3]), max(0, box[0]):min(w, box[2])]
    return cv2.GaussianBlur(resize_image(image, size), (5, 5), 0).astype(np.float32)


def tell_apart(screen: np.ndarray, template: np.ndarray, box_a: BBox, box_b: BBox) -> float | None:
    """How much better ``template`` agrees with the place ``box_a`` than with ``box_b``, judged only
    on the pixels where the two places differ: the symbol on a key beside another key, the picture
    in a card among cards of one style, the selected dot in a row of page dots. Each place is seen at
    its best (:func:`_view`: aligned to the template within a few pixels, at its own refined size or
    the other's: two copies refined a scale step apart must not differ by that) and brought to
    ``box_a``'s size (the screen's scale: the template is the sharper one). The two places differ
    where their difference exceeds ``APART_DIFF`` plus what a shift of ``APART_PHASE`` px explains at
    the local slope (any channel, after a 5x5 blur); the screen's brightness change is fitted where
    they agree (:func:`_screen_gain`), and the template's mean absolute error against each place is
    compared where they differ. Returns ``(err_b - err_a) / (err_a + err_b)`` in [-1, 1] (1: the
    template is ``a`` wherever the two differ), or None when the places do not differ (identical
    copies: no evidence picks one).
    """
    size = (box_a[2] - box_a[0], box_a[3] - box_a[1])
    other = (box_b[2] - box_b[0], box_b[3] - box_b[1])
    if min(*size, *other) < 2:
        return None
    wa, wb = _view(screen, template, box_a, (size, other)), _view(screen, template, box_b, (size, other))
    tf = _window(resize_image(template, size), None, size)
    differ = (np.abs(wa - wb).max(axis=2) > APART_DIFF + APART_PHASE * np.maximum(_slope(wa), _slope(wb)))
    differ = differ.astype(np.uint8)
    differ[:2], differ[-2:], differ[:, :2], differ[:, -2:] = 0, 0, 0, 0   # the blur reaches past the window there
    if int(differ.sum()) < APART_MIN_PIXELS:
        return None
    mask = cv2.dilate(differ, np.ones((3, 3), np.uint8)).astype(bool)
    gain, offset = _screen_gain(tf[~mask], wa[~mask])
    err_a = float(np.abs(tf - (wa * gain + offset)).max(axis=2)[mask].mean())
    err_b = float(np.abs(tf - (wb * gain + offset)).max(axis=2)[mask].mean())
    return (err_b - err_a) / (err_a + err_b) if err_a + err_b > 1e-6 else None


def _slope(image: np.ndarray) -> np.ndarray:
    """Per-pixel gradient magnitude (levels per pixel, the steepest channel)."""
    gy, gx = np.gradient(image, axis=(0, 1))
    return np.asarray(np.sqrt(gx * gx + gy * gy).max(axis=2))


def _view(screen: np.ndarray, template: np.ndarray, box: BBox, sizes: tuple[tuple[int, int], ...]) -> np.ndarray:
    """The window near ``box`` that best overlays the template (NCC), over the window ``sizes`` and
    shifts of 2 px + 2 % of the size, brought to ``sizes[0]`` and blurred (:func:`_window`)."""
    H, W = screen.shape[:2]
    cx, cy = (box[0] + box[2]) // 2, (box[1] + box[3]) // 2
    best: tuple[float, BBox] = (-2.0, box)
    for w, h in dict.fromkeys(sizes):
        pad = 2 + round(0.02 * max(w, h))
        x0, y0 = max(0, cx - w // 2 - pad), max(0, cy - h // 2 - pad)
        x1, y1 = min(W, cx - w // 2 + w + pad), min(H, cy - h // 2 + h + pad)
        if x1 - x0 < w or y1 - y0 < h:
            continue
        res = cv2.matchTemplate(screen[y0:y1, x0:x1], resize_image(template, (w, h)), cv2.TM_CCOEFF_NORMED)
        _, val, _, (dx, dy) = cv2.minMaxLoc(res)
        if math.isfinite(val) and val > best[0]:
            best = (val, (x0 + dx, y0 + dy, x0 + dx + w, y0 + dy + h))
    return _window(screen, best[1], sizes[0])


def _screen_gain(t: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """The gain and offset that map the window's pixels ``w`` to the template's ``t``, fitted where
    the two places agree: the screen's own brightness change (JPEG, a brightness shift), which cannot
    absorb what differs between the places (a white dot and a grey one in a row of page dots). A
    flat surround (std under 5 levels) fixes only the offset."""
    if w.size == 0:
        return 1.0, 0.0
    wm, tm = float(w.mean()), float(t.mean())
    var = float(((w - wm) ** 2).mean())
    gain = float(((t - tm) * (w - wm)).mean()) / var if var > 25.0 else 1.0
    return gain, tm - gain * wm
