"""App icons drawn by the project: a coloured shape and a simple glyph (no trademarks).

Every icon has its own colour and glyph so that template matching tells them apart.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from PIL import ImageDraw

from remote.sim.apps.common import gear
from remote.sim.render import draw_label
from remote.sim.widgets import Color, Widget

WHITE = (255, 255, 255)


@dataclass(frozen=True)
class AppInfo:
    name: str
    package: str
    activity: str
    color: Color
    shape: str = "squircle"   # squircle | circle | square
    glyph: str = ""           # a character drawn in white, or a named drawing (bubbles, gear, globe, ...)


def draw_icon(draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int], app: AppInfo) -> None:
    x1, y1, x2, y2 = box
    s = x2 - x1
    if app.shape == "circle":
        draw.ellipse((x1, y1, x2 - 1, y2 - 1), fill=app.color)
    elif app.shape == "square":
        draw.rounded_rectangle((x1, y1, x2 - 1, y2 - 1), radius=s // 10, fill=app.color)
    else:
        draw.rounded_rectangle((x1, y1, x2 - 1, y2 - 1), radius=s // 4, fill=app.color)
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    painter = _GLYPHS.get(app.glyph)
    if painter is not None:
        painter(draw, cx, cy, s)
    elif app.glyph:
        draw_label(draw, box, app.glyph, int(s * 0.5), WHITE, "center")


def _bubbles(draw: ImageDraw.ImageDraw, cx: float, cy: float, s: float) -> None:
    draw.ellipse((cx - s * 0.34, cy - s * 0.26, cx + s * 0.12, cy + s * 0.10), fill=WHITE)
    draw.polygon([(cx - s * 0.24, cy + s * 0.04), (cx - s * 0.28, cy + s * 0.16), (cx - s * 0.14, cy + s * 0.08)],
                 fill=WHITE)
    draw.ellipse((cx - s * 0.06, cy - s * 0.06, cx + s * 0.34, cy + s * 0.26), fill=(230, 245, 235),
                 outline=(7, 193, 96), width=max(1, int(s / 40)))
    for ex, ey in ((-0.19, -0.10), (-0.03, -0.10)):
        draw.ellipse((cx + s * ex - s * 0.03, cy + s * ey - s * 0.03, cx + s * ex + s * 0.03, cy + s * ey + s * 0.03),
                     fill=(7, 120, 60))


def _gear(draw: ImageDraw.ImageDraw, cx: float, cy: float, s: float) -> None:
    gear(draw, cx, cy, s * 0.3, WHITE, (96, 110, 128))


def _globe(draw: ImageDraw.ImageDraw, cx: float, cy: float, s: float) -> None:
    r = s * 0.3
    w = max(2, int(s / 24))
    draw.ellipse((cx - r, cy - r, cx + r, cy + r), outline=WHITE, width=w)
    draw.ellipse((cx - r * 0.45, cy - r, cx + r * 0.45, cy + r), outline=WHITE, width=w)
    draw.line([(cx - r, cy), (cx + r, cy)], fill=WHITE, width=w)
    draw.line([(cx, cy - r), (cx, cy + r)], fill=WHITE, width=w)


def _phone(draw: ImageDraw.ImageDraw, cx: float, cy: float, s: float) -> None:
    w = max(3, int(s / 9))
    draw.arc((cx - s * 0.28, cy - s * 0.28, cx + s * 0.28, cy + s * 0.28), start=100, end=260, fill=WHITE, width=w)
    draw.ellipse((cx - s * 0.22, cy - s * 0.34, cx - s * 0.02, cy - s * 0.18), fill=WHITE)
    draw.ellipse((cx - s * 0.22, cy + s * 0.18, cx - s * 0.02, cy + s * 0.34), fill=WHITE)


def _camera(draw: ImageDraw.ImageDraw, cx: float, cy: float, s: float) -> None:
    draw.rounded_rectangle((cx - s * 0.3, cy - s * 0.18, cx + s * 0.3, cy + s * 0.24), radius=int(s * 0.06), fill=WHITE)
    draw.rectangle((cx - s * 0.1, cy - s * 0.26, cx + s * 0.1, cy - s * 0.16), fill=WHITE)
    draw.ellipse((cx - s * 0.13, cy - s * 0.1, cx + s * 0.13, cy + s * 0.16), fill=(60, 60, 60))


def _clock(draw: ImageDraw.ImageDraw, cx: float, cy: float, s: float) -> None:
    r = s * 0.3
    w = max(2, int(s / 18))
    draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=WHITE)
    draw.line([(cx, cy), (cx, cy - r * 0.7)], fill=(30, 30, 30), width=w)
    draw.line([(cx, cy), (cx + r * 0.5, cy + r * 0.2)], fill=(30, 30, 30), width=w)


def _sun(draw: ImageDraw.ImageDraw, cx: float, cy: float, s: float) -> None:
    r = s * 0.14
    for i in range(8):
        a = math.pi * i / 4
        draw.line([(cx + math.cos(a) * r * 1.4, cy + math.sin(a) * r * 1.4),
                   (cx + math.cos(a) * r * 2.1, cy + math.sin(a) * r * 2.1)], fill=(255, 220, 80),
                  width=max(2, int(s / 20)))
    draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=(255, 220, 80))


def _mountain(draw: ImageDraw.ImageDraw, cx: float, cy: float, s: float) -> None:
    draw.polygon([(cx - s * 0.32, cy + s * 0.22), (cx - s * 0.08, cy - s * 0.14), (cx + s * 0.12, cy + s * 0.22)],
                 fill=WHITE)
    draw.polygon([(cx - s * 0.02, cy + s * 0.22), (cx + s * 0.14, cy - s * 0.02), (cx + s * 0.32, cy + s * 0.22)],
                 fill=(255, 235, 200))
    draw.ellipse((cx + s * 0.1, cy - s * 0.3, cx + s * 0.24, cy - s * 0.16), fill=WHITE)


def _envelope(draw: ImageDraw.ImageDraw, cx: float, cy: float, s: float) -> None:
    box = (cx - s * 0.3, cy - s * 0.2, cx + s * 0.3, cy + s * 0.2)
    draw.rectangle(box, fill=WHITE)
    draw.line([(box[0], box[1]), (cx, cy + s * 0.04), (box[2], box[1])], fill=(40, 90, 200),
              width=max(2, int(s / 20)))


def _folder(draw: ImageDraw.ImageDraw, cx: float, cy: float, s: float) -> None:
    draw.rectangle((cx - s * 0.3, cy - s * 0.22, cx - s * 0.04, cy - s * 0.12), fill=WHITE)
    draw.rectangle((cx - s * 0.3, cy - s * 0.14, cx + s * 0.3, cy + s * 0.22), fill=WHITE)


def _note(draw: ImageDraw.ImageDraw, cx: float, cy: float, s: float) -> None:
    w = max(3, int(s / 14))
    draw.line([(cx + s * 0.08, cy + s * 0.16), (cx + s * 0.08, cy - s * 0.26)], fill=WHITE, width=w)
    draw.line([(cx + s * 0.08, cy - s * 0.26), (cx + s * 0.26, cy - s * 0.16)], fill=WHITE, width=w)
    draw.ellipse((cx - s * 0.16, cy + s * 0.06, cx + s * 0.1, cy + s * 0.26), fill=WHITE)


def _mic(draw: ImageDraw.ImageDraw, cx: float, cy: float, s: float) -> None:
    draw.rounded_rectangle((cx - s * 0.1, cy - s * 0.28, cx + s * 0.1, cy + s * 0.08), radius=int(s * 0.1), fill=WHITE)
    draw.arc((cx - s * 0.2, cy - s * 0.12, cx + s * 0.2, cy + s * 0.2), start=0, end=180, fill=WHITE,
             width=max(2, int(s / 20)))
    draw.line([(cx, cy + s * 0.2), (cx, cy + s * 0.3)], fill=WHITE, width=max(2, int(s / 20)))


def _pin(draw: ImageDraw.ImageDraw, cx: float, cy: float, s: float) -> None:
    draw.ellipse((cx - s * 0.18, cy - s * 0.3, cx + s * 0.18, cy + s * 0.06), fill=(234, 67, 53))
    draw.polygon([(cx - s * 0.15, cy - s * 0.05), (cx + s * 0.15, cy - s * 0.05), (cx, cy + s * 0.3)],
                 fill=(234, 67, 53))
    draw.ellipse((cx - s * 0.07, cy - s * 0.19, cx + s * 0.07, cy - s * 0.05), fill=WHITE)


_GLYPHS: dict[str, Callable[[ImageDraw.ImageDraw, float, float, float], None]] = {
    "bubbles": _bubbles, "gear": _gear, "globe": _globe, "phone": _phone, "camera": _camera, "clock": _clock,
    "sun": _sun, "mountain": _mountain, "envelope": _envelope, "folder": _folder, "note": _note, "mic": _mic,
    "pin": _pin,
}


def icon_painter(app: AppInfo, icon_px: int, top_pad: int) -> Callable[[ImageDraw.ImageDraw, Widget], None]:
    """Draw `app`'s icon centred horizontally at the top of a launcher cell."""
    def paint(draw: ImageDraw.ImageDraw, w: Widget) -> None:
        x1, y1, x2, _ = w.bounds
        left = (x1 + x2 - icon_px) // 2
        draw_icon(draw, (left, y1 + top_pad, left + icon_px, y1 + top_pad + icon_px), app)
    return paint
