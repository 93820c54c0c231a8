"""ORB feature matching: ratio test and a RANSAC homography, degenerate ones rejected (no I/O).

The last visual tier: it survives rescaling and small rotations that template
matching does not, and its one match is verified like every other
(:func:`remote.core.locate.matching.verify`).
"""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np

from remote.core.locate.image_checks import MIN_TEMPLATE_SIDE, as_bgr, resize_image, to_gray, verify
from remote.core.locate.matching import Match

ORB_MIN_TEMPLATE_SIDE = 96   # small icons are upscaled so ORB's patches fit inside them


def orb_features(image: Any, nfeatures: int = 4000) -> tuple[Any, Any]:
    """ORB keypoints and descriptors of an image (cache them per screenshot: ~20 ms on 1080x2400)."""
    gray = to_gray(as_bgr(image))
    orb = cv2.ORB.create(nfeatures=nfeatures, edgeThreshold=15, patchSize=15, fastThreshold=10)
    keypoints, descriptors = orb.detectAndCompute(gray, None)
    return keypoints, descriptors


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
    return bool(0.67 <= aspect <= 1.5)


def find_orb(screen: Any, template: Any, *, screen_features: tuple[Any, Any] | None = None,
             ratio: float = 0.75, min_inliers: int = 8) -> list[Match]:
    """ORB matching with Lowe's ratio test and a RANSAC homography; at most one verified match."""
    sb, tb = as_bgr(screen, "screenshot"), as_bgr(template, "template")
    th, tw = tb.shape[:2]
    up = max(1.0, ORB_MIN_TEMPLATE_SIDE / min(tw, th))
    tb_up = resize_image(tb, (round(tw * up), round(th * up))) if up > 1 else tb
    kt, dt = orb_features(tb_up, nfeatures=500)
    ks, ds = screen_features if screen_features is not None else orb_features(sb)
    if dt is None or ds is None or len(kt) < min_inliers or len(ks) < min_inliers:
        return []
    pairs = cv2.BFMatcher(cv2.NORM_HAMMING).knnMatch(dt, ds, k=2)
    good = [p[0] for p in pairs if len(p) == 2 and p[0].distance < ratio * p[1].distance]
    if len(good) < min_inliers:
        return []
    src = np.array([kt[m.queryIdx].pt for m in good], dtype=np.float32).reshape(-1, 1, 2) / up
    dst = np.array([ks[m.trainIdx].pt for m in good], dtype=np.float32).reshape(-1, 1, 2)
    hom, mask = cv2.findHomography(src, dst, cv2.RANSAC, 5.0)
    if hom is None or mask is None or int(mask.sum()) < min_inliers:
        return []
    corners = np.array([[0, 0], [tw, 0], [tw, th], [0, th]], dtype=np.float32).reshape(-1, 1, 2)
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
