"""The frame a model sees, and exact mapping of its numbers back to device pixels (pure).

A family's *frame policy* says how its server reshapes an image before the model
sees it: Qwen's ``smart_resize`` (each side a multiple of the block, total pixels
between ``min_pixels`` and ``max_pixels``), DashScope's downscale of a large image
(a lower ``max_pixels`` unless ``vl_high_resolution_images`` is honoured),
Claude's longest-side cap. :func:`send_size` picks a size that every one of those
steps leaves unchanged, so **the frame the model sees is the image sent**, and
pixel answers mean pixels of a frame we know exactly; :func:`seen_size` is what
the published resize gives for a size (used to prove it, and by
:class:`Frame` anyway).

Numbers come back through :class:`Frame`: pixel conventions relative to the
frame seen (each axis on its own: a block-aligned frame is not exactly the
screen's aspect), relative conventions relative to the image whatever its size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from remote.ai.answers import Box, Point, Scale

Size = tuple[int, int]
EDGE_SLACK = 0.05     # a box may reach 5 % past an edge (clipped); its centre must be inside


@dataclass(frozen=True)
class FramePolicy:
    """What the model's side does to an image: ``block`` (sides rounded to multiples), pixel bounds, a
    longest-side cap. Defaults: the image is seen as sent."""

    block: int = 1
    min_pixels: int = 0
    max_pixels: int = 0          # 0: no cap
    max_side: int = 0            # 0: no cap


def _round(value: float, block: int) -> int:
    return max(block, round(value / block) * block)


def seen_size(size: Size, policy: FramePolicy) -> Size:
    """The size the model sees for an image of ``size`` (Qwen's published ``smart_resize`` with the policy's
    block and bounds, then the longest-side cap), ``(width, height)``."""
    w, h = size
    block = max(1, policy.block)
    sw, sh = _round(w, block), _round(h, block)
    if policy.max_pixels and sw * sh > policy.max_pixels:
        beta = math.sqrt(w * h / policy.max_pixels)
        sw = max(block, math.floor(w / beta / block) * block)
        sh = max(block, math.floor(h / beta / block) * block)
    elif policy.min_pixels and sw * sh < policy.min_pixels:
        beta = math.sqrt(policy.min_pixels / (w * h))
        sw, sh = math.ceil(w * beta / block) * block, math.ceil(h * beta / block) * block
    if policy.max_side and max(sw, sh) > policy.max_side:
        f = policy.max_side / max(sw, sh)
        sw, sh = max(1, round(sw * f)), max(1, round(sh * f))
    return sw, sh


def send_size(source: Size, max_side: int, policy: FramePolicy) -> Size:
    """The size to send ``source`` at: longest side at most ``max_side`` (and the policy's cap), sides multiples
    of the block, pixels within the bounds, so that :func:`seen_size` leaves it as it is.

    >>> send_size((1080, 2400), 1280, FramePolicy(block=28, min_pixels=3136, max_pixels=1003520))
    (560, 1260)
    """
    w, h = source
    block = max(1, policy.block)
    side = min(s for s in (max_side, policy.max_side, max(w, h)) if s > 0)
    f = side / max(w, h)
    if policy.max_pixels:
        f = min(f, math.sqrt(policy.max_pixels / (w * h)))
    if block == 1:
        sw, sh = max(1, round(w * f)), max(1, round(h * f))
    else:
        sw, sh = max(block, math.floor(w * f / block) * block), max(block, math.floor(h * f / block) * block)
    if policy.min_pixels and sw * sh < policy.min_pixels:   # too small: the model's side would enlarge it
        f = math.sqrt(policy.min_pixels / (w * h))
        sw, sh = math.ceil(w * f / block) * block, math.ceil(h * f / block) * block
    return sw, sh


@dataclass(frozen=True)
class Frame:
    """An image as a model saw it: ``source`` (device pixels of what we had), ``seen`` (the model's frame).

    ``offset`` places a crop on the screen (a zoomed region): numbers map to the crop, then shift.
    """

    source: Size
    seen: Size
    offset: tuple[int, int] = (0, 0)

    def fraction(self, x: float, y: float, scale: Scale) -> tuple[float, float]:
        """A coordinate of ``scale`` as fractions of the frame (0-1 inside it)."""
        if scale is Scale.PIXEL:
            return x / self.seen[0], y / self.seen[1]
        full = scale.full or 1.0
        return x / full, y / full

    def inside(self, fx: float, fy: float, slack: float = 0.0) -> bool:
        return -slack <= fx <= 1 + slack and -slack <= fy <= 1 + slack

    def _device(self, fx: float, fy: float) -> tuple[float, float]:
        return self.offset[0] + fx * self.source[0], self.offset[1] + fy * self.source[1]

    def point(self, point: Point) -> tuple[int, int] | None:
        """A point to device pixels (rounded, kept on the image); None when it lies outside the frame."""
        fx, fy = self.fraction(point.x, point.y, point.convention.scale)
        if not self.inside(fx, fy, 0.005):
            return None
        x, y = self._device(min(max(fx, 0.0), 1.0), min(max(fy, 0.0), 1.0))
        return (min(round(x), self.offset[0] + self.source[0] - 1),
                min(round(y), self.offset[1] + self.source[1] - 1))

    def box(self, box: Box) -> tuple[int, int, int, int] | None:
        """A box to device pixels (``x2, y2`` exclusive, at least 1 px, clipped); None when its centre is
        outside the frame or a corner reaches more than 5 % past an edge."""
        scale = box.convention.scale
        fx1, fy1 = self.fraction(box.x1, box.y1, scale)
        fx2, fy2 = self.fraction(box.x2, box.y2, scale)
        if not (self.inside(fx1, fy1, EDGE_SLACK) and self.inside(fx2, fy2, EDGE_SLACK)
                and self.inside((fx1 + fx2) / 2, (fy1 + fy2) / 2)):
            return None
        x1, y1 = self._device(max(fx1, 0.0), max(fy1, 0.0))
        x2, y2 = self._device(min(fx2, 1.0), min(fy2, 1.0))
        left, top = round(x1), round(y1)
        return left, top, max(round(x2), left + 1), max(round(y2), top + 1)

    def to_convention(self, x: float, y: float, scale: Scale) -> tuple[float, float]:
        """Device pixels -> ``scale`` on this frame (the inverse of :meth:`point`, unrounded): what a model that
        is exactly right would answer."""
        fx = (x - self.offset[0]) / self.source[0]
        fy = (y - self.offset[1]) / self.source[1]
        if scale is Scale.PIXEL:
            return fx * self.seen[0], fy * self.seen[1]
        full = scale.full or 1.0
        return fx * full, fy * full
