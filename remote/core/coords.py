"""The single owner of coordinate arithmetic.

Conventions: a bbox is ``(x1, y1, x2, y2)`` in pixels with the right and bottom
edges exclusive (as in ``uiautomator`` bounds); sizes are ``(width, height)``.
Models answer on a 0-1000 scale (``norm1000``); OCR, templates and the UI tree
answer in pixels (``pixel``); ``auto`` decides with :func:`is_normalized` and is
only for sources whose convention is unknown.

Bad input (empty, too short, not numbers, NaN, None) never raises here: the
functions return ``None`` (or an invalid verdict) and log a warning with the raw
value, so one bad element in a model reply does not spoil the others.

The hot path (:func:`to_pixels`) is written for speed: one conversion costs well
under a microsecond (``bench/coords_bench.py``).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

from remote.errors import ActionError

logger = logging.getLogger(__name__)

BBox = tuple[int, int, int, int]
Size = tuple[int, int]

_INFO = logging.INFO
MODES = ("auto", "norm1000", "pixel")
MIN_VISIBLE_FRACTION = 0.5   # interactable when at least half of the box is on screen
MIN_VISIBLE_SIDE = 10        # ... and the visible part is at least 10 px on each side


def is_normalized(bbox: Sequence[float], image_size: Size) -> bool:
    """True when the bbox looks like 0-1000 model output rather than pixels.

    The rule of the specification: normalized when the largest absolute value is
    smaller than the image's smaller side. ``[100, 200, 300, 400]`` on 1920x1080 is
    normalized; ``[500, 600, 700, 800]`` on 800x600 is not.
    """
    try:
        return max(abs(v) for v in bbox) < min(image_size)
    except (TypeError, ValueError):
        return False


def _clip_box(x1: int, y1: int, x2: int, y2: int, w: int, h: int) -> BBox:
    # Order the corners, clip to the image, and keep at least 1 px, also at the far edges.
    if x2 < x1:
        x1, x2 = x2, x1
    if y2 < y1:
        y1, y2 = y2, y1
    x1 = 0 if x1 < 0 else (w - 1 if x1 > w - 1 else x1)
    y1 = 0 if y1 < 0 else (h - 1 if y1 > h - 1 else y1)
    x2 = x1 + 1 if x2 <= x1 else (w if x2 > w else x2)
    y2 = y1 + 1 if y2 <= y1 else (h if y2 > h else y2)
    return x1, y1, x2, y2


def _normalized(mode: str, side: float, x1: float, y1: float, x2: float, y2: float) -> bool:
    """Whether a box's numbers are 0-1000: as ``mode`` says, or (``auto``) when every one is below the
    image's smaller side (`is_normalized`, written out: this is the hot path)."""
    if mode == "auto":
        return -side < x1 < side and -side < y1 < side and -side < x2 < side and -side < y2 < side
    if mode == "norm1000":
        return True
    if mode == "pixel":
        return False
    raise ValueError(f"unknown mode {mode!r}")


def to_pixels(bbox: Any, image_size: Any, mode: str = "auto") -> BBox | None:
    """Convert a bbox to pixel coordinates of an image of ``image_size`` (w, h).

    >>> to_pixels([500, 500, 600, 600], (1920, 1080))
    (960, 540, 1152, 648)
    >>> to_pixels([900, 500, 1050, 600], (1920, 1080))   # clipped on the right
    (1728, 540, 1920, 648)
    >>> to_pixels([], (1920, 1080)) is None
    True
    """
    try:
        x1, y1, x2, y2 = bbox
        try:
            w, h, side, sx, sy = _SIZES[image_size]
        except (KeyError, TypeError):  # a new size, or an unhashable one (a list)
            w, h, side, sx, sy = _size_facts(image_size)
        normalized = _normalized(mode, side, x1, y1, x2, y2)
        if normalized:
            px1, py1, px2, py2 = _clip_box(round(x1 * sx), round(y1 * sy), round(x2 * sx), round(y2 * sy), w, h)
        else:
            px1, py1, px2, py2 = _clip_box(round(x1), round(y1), round(x2), round(y2), w, h)
        if normalized and logger.isEnabledFor(_INFO):
            logger.info("[坐标] 检测到归一化坐标 %s, 已转换为实际坐标 %s, 图像尺寸: %s",
                        _fmt(bbox), (px1, py1, px2, py2), (w, h))
        return px1, py1, px2, py2
    except (TypeError, ValueError, OverflowError) as exc:
        # NaN fails in round(); strings in abs()/arithmetic; wrong lengths in unpacking.
        logger.warning("[坐标] 无效坐标 %r, 图像尺寸: %r, 已跳过 (%s)", bbox, image_size, exc)
        return None


_SIZES: dict[Any, tuple[int, int, int, float, float]] = {}


def _size_facts(image_size: Any) -> tuple[int, int, int, float, float]:
    """(w, h, smaller side, w/1000, h/1000) of an image size; remembered for tuples (a few sizes recur)."""
    w, h = image_size
    w = int(w)
    h = int(h)
    if w <= 0 or h <= 0:
        raise ValueError("empty image")
    facts = (w, h, w if w < h else h, w / 1000.0, h / 1000.0)
    if isinstance(image_size, tuple) and len(_SIZES) < 64:
        _SIZES[image_size] = facts
    return facts


def _fmt(bbox: Sequence[Any]) -> str:
    return "(" + ", ".join(str(int(v)) if float(v).is_integer() else str(v) for v in bbox) + ")"


def bbox_center(bbox: Sequence[float]) -> tuple[int, int]:
    """Center of a pixel bbox (integer division, as taps are integers)."""
    x1, y1, x2, y2 = bbox
    return (int(x1) + int(x2)) // 2, (int(y1) + int(y2)) // 2


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def validate_bbox(bbox: Any, screen_size: Size) -> dict[str, Any]:
    """``{"valid": True}`` when the bbox is well formed and lies on the screen (the seed's rule).

    Malformed, empty, or reaching outside the screen: ``{"valid": False, "error": ...}``
    (``(-50, 200, 300, 250)`` is ``坐标超出屏幕范围``). How much of a partly visible box
    can be tapped is :func:`visible_region`'s question.
    """
    problem = _shape_problem(bbox, screen_size)
    if problem:
        return {"valid": False, "error": problem}
    x1, y1, x2, y2 = bbox
    w, h = screen_size
    if x1 < 0 or y1 < 0 or x2 > w or y2 > h:
        return {"valid": False, "error": "坐标超出屏幕范围"}
    return {"valid": True}


def overlaps_screen(bbox: Any, screen_size: Size) -> bool:
    """Well formed, not empty, and at least partly on the screen."""
    return not _shape_problem(bbox, screen_size)


def _shape_problem(bbox: Any, screen_size: Size) -> str:
    if bbox is None or not isinstance(bbox, Sequence) or len(bbox) != 4 or not all(map(_is_number, bbox)):
        logger.warning("[坐标] 无效坐标 %r, 屏幕尺寸: %r", bbox, screen_size)
        return "坐标格式无效"
    x1, y1, x2, y2 = bbox
    w, h = screen_size
    if x2 <= x1 or y2 <= y1:
        return "坐标区域为空"
    if x2 <= 0 or y2 <= 0 or x1 >= w or y1 >= h:
        return "坐标超出屏幕范围"
    return ""


def visible_region(bbox: Any, screen_size: Size) -> dict[str, Any]:
    """How much of a bbox is on screen, and where it is safe to tap.

    ``{"can_interact": True, "safe_region": (x1, y1, x2, y2)}`` when the visible part
    is at least half of the box and at least 10 px on each side; otherwise
    ``can_interact`` is False (``safe_region`` is the visible part, or None when
    nothing is visible). ``visible_fraction`` is added for the record.
    """
    if not overlaps_screen(bbox, screen_size):
        return {"can_interact": False, "safe_region": None, "visible_fraction": 0.0}
    x1, y1, x2, y2 = (int(round(v)) for v in bbox)
    w, h = screen_size
    vx1, vy1, vx2, vy2 = max(0, x1), max(0, y1), min(w, x2), min(h, y2)
    area = (x2 - x1) * (y2 - y1)
    visible = max(0, vx2 - vx1) * max(0, vy2 - vy1)
    fraction = visible / area if area else 0.0
    ok = (fraction >= MIN_VISIBLE_FRACTION and vx2 - vx1 >= MIN_VISIBLE_SIDE
          and vy2 - vy1 >= MIN_VISIBLE_SIDE)
    region = (vx1, vy1, vx2, vy2) if visible else None
    return {"can_interact": ok, "safe_region": region, "visible_fraction": round(fraction, 4)}


def describe_visibility(region: dict[str, Any] | None) -> str:
    """``{"visible_fraction": 0.12, ...}`` -> "12% of it is on the screen" (never a raw dict in a message)."""
    if not region:
        return "it is off the screen"
    fraction = float(region.get("visible_fraction") or 0.0)
    return "it is off the screen" if fraction <= 0 else f"only {fraction:.0%} of it is on the screen"


def scale_factor(image_size: Size, screen_size: Size) -> tuple[float, float]:
    """(sx, sy) that map image pixels to screen pixels (``screen = image * s``)."""
    return screen_size[0] / image_size[0], screen_size[1] / image_size[1]


def image_to_screen(bbox: Sequence[float], image_size: Size, screen_size: Size) -> BBox | None:
    """A pixel bbox on a downscaled copy of the screen, back to device pixels."""
    try:
        sx, sy = scale_factor(image_size, screen_size)
        x1, y1, x2, y2 = bbox
        return _clip_box(round(x1 * sx), round(y1 * sy), round(x2 * sx), round(y2 * sy),
                         int(screen_size[0]), int(screen_size[1]))
    except (TypeError, ValueError, ZeroDivisionError, OverflowError) as exc:
        logger.warning("[坐标] 无效坐标 %r, 图像尺寸: %r, 屏幕尺寸: %r (%s)", bbox, image_size, screen_size, exc)
        return None


def screen_to_image(bbox: Sequence[float], screen_size: Size, image_size: Size) -> BBox | None:
    """A device-pixel bbox onto a downscaled copy of the screen."""
    return image_to_screen(bbox, screen_size, image_size)


def point_to_screen(point: Sequence[float], image_size: Size, screen_size: Size) -> tuple[int, int]:
    """A point on a downscaled image back to device pixels, clipped to the screen."""
    sx, sy = scale_factor(image_size, screen_size)
    x = min(max(0, round(point[0] * sx)), int(screen_size[0]) - 1)
    y = min(max(0, round(point[1] * sy)), int(screen_size[1]) - 1)
    return x, y


def downscale_size(size: Size, max_side: int) -> Size:
    """The size of a copy whose longer side is at most ``max_side`` (aspect kept)."""
    w, h = size
    longest = max(w, h)
    if max_side <= 0 or longest <= max_side:
        return w, h
    f = max_side / longest
    return max(1, round(w * f)), max(1, round(h * f))


def iou(a: Sequence[float], b: Sequence[float]) -> float:
    """Intersection over union of two pixel bboxes (0 when they do not overlap)."""
    ix = min(a[2], b[2]) - max(a[0], b[0])
    iy = min(a[3], b[3]) - max(a[1], b[1])
    if ix <= 0 or iy <= 0:
        return 0.0
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def swipe_vector(direction: str, size: tuple[int, int], distance: float = 0.5) -> tuple[int, int, int, int]:
    """The finger's path for ``up``/``down``/``left``/``right`` across the middle of a ``size`` screen, over
    ``distance`` of it: ``swipe_vector("up", (1080, 2400)) == (540, 1800, 540, 600)``."""
    w, h = size
    cx, cy = w // 2, h // 2
    dx, dy = int(w * distance / 2), int(h * distance / 2)
    vectors = {"up": (cx, cy + dy, cx, cy - dy), "down": (cx, cy - dy, cx, cy + dy),
               "left": (cx + dx, cy, cx - dx, cy), "right": (cx - dx, cy, cx + dx, cy)}
    if direction not in vectors:
        raise ActionError(f"unknown swipe direction {direction!r}", hint="use up, down, left or right")
    return vectors[direction]
