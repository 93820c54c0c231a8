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
