"""Images for models: data URLs at a bounded size, set-of-mark overlays, crops (Pillow only).

Every image is sent at the size its model family prefers
(:func:`remote.ai.frames.send_size`: longest side at most ``max_image_side``, sides
multiples of the family's block, under its pixel caps), so a caller that knows
the family and the config knows the frame the model saw (and maps its numbers
back through :class:`remote.ai.frames.Frame`).
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from dataclasses import dataclass

from PIL import Image, ImageDraw, ImageFont

PNG_MAX_SIDE = 400   # small images (reference icons, crops) stay PNG: lossless edges matter


@dataclass(frozen=True)
class EncodedImage:
    url: str                      # data:image/...;base64,...
    sent_size: tuple[int, int]    # what the model sees
    source_size: tuple[int, int]  # what we had (device pixels for a screenshot)

    @property
    def scale(self) -> float:
        """Sent pixels per source pixel (1.0 when not downscaled)."""
        return self.sent_size[0] / self.source_size[0]


def encode_image(image: Image.Image, size: tuple[int, int]) -> EncodedImage:
    """``image`` at ``size``: PNG for small or transparent images, JPEG (q85) for screenshots."""
    # Bicubic, as Qwen's own image processor resamples (about half the time of Lanczos on a full screenshot).
    img = image if size == image.size else image.resize(size, Image.Resampling.BICUBIC)
    buf = io.BytesIO()
    if max(size) <= PNG_MAX_SIDE or img.mode in ("RGBA", "LA", "P"):
        img.save(buf, format="PNG")
        mime = "image/png"
    else:
        img.convert("RGB").save(buf, format="JPEG", quality=85)
        mime = "image/jpeg"
    url = f"data:{mime};base64,{base64.b64encode(buf.getvalue()).decode('ascii')}"
    return EncodedImage(url, size, image.size)


def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1
        return ImageFont.load_default()


_MARK_COLOURS = ((230, 25, 75), (0, 130, 200), (60, 180, 75), (245, 130, 48), (145, 30, 180))


def draw_marks(screenshot: Image.Image, boxes: Sequence[tuple[int, int, int, int]]) -> Image.Image:
    """A copy of the screenshot with box ``i`` outlined and labelled ``i + 1``."""
    out = screenshot.convert("RGB")
    draw = ImageDraw.Draw(out)
    side = max(12, min(out.size) // 40)
    font = _font(side)
    width = max(2, min(out.size) // 300)
    for i, (x1, y1, x2, y2) in enumerate(boxes):
        colour = _MARK_COLOURS[i % len(_MARK_COLOURS)]
        draw.rectangle((x1, y1, x2 - 1, y2 - 1), outline=colour, width=width)
        label = str(i + 1)
        tx, ty = x1 + width, y1 + width
        bbox = draw.textbbox((tx, ty), label, font=font)
        draw.rectangle((bbox[0] - 2, bbox[1] - 2, bbox[2] + 2, bbox[3] + 2), fill=colour)
        draw.text((tx, ty), label, fill=(255, 255, 255), font=font)
    return out


def zoom_region(bbox: tuple[int, int, int, int], screen_size: tuple[int, int], *,
                factor: float = 3.0, min_side: int = 320) -> tuple[int, int, int, int]:
    """A region around ``bbox`` (``factor`` times its size, at least ``min_side``), inside the screen."""
    x1, y1, x2, y2 = bbox
    w, h = screen_size
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    half_w = min(w, max(min_side, (x2 - x1) * factor)) / 2
    half_h = min(h, max(min_side, (y2 - y1) * factor)) / 2
    left = int(max(0, min(w - 2 * half_w, cx - half_w)))
    top = int(max(0, min(h - 2 * half_h, cy - half_h)))
    return left, top, int(min(w, left + 2 * half_w)), int(min(h, top + 2 * half_h))
