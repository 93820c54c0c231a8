"""Drawings for the WeChat screens: multi-line bubbles, the dots and smiley icons, the ad's close X."""

from __future__ import annotations

from collections.abc import Callable

from PIL import ImageDraw

from remote.sim.render import draw_label, text_width
from remote.sim.widgets import Metrics, Widget

Painter = Callable[[ImageDraw.ImageDraw, Widget], None]


def multiline(m: Metrics, lines: list[str], size: int) -> Painter:
    def paint(draw: ImageDraw.ImageDraw, w: Widget) -> None:
        x1, y1, x2, _ = w.bounds
        for i, line in enumerate(lines):
            ly = y1 + m.px(10) + i * m.px(22)
            draw_label(draw, (x1 + m.px(4), ly, x2, ly + m.px(22)), line, size, (25, 25, 25))
    return paint


def wrapped(text: str, m: Metrics, size_dp: float, width_dp: float) -> Painter:
    """Text broken into lines that fit ``width_dp``."""
    def paint(draw: ImageDraw.ImageDraw, w: Widget) -> None:
        size = m.px(size_dp)
        lines, line = [], ""
        for ch in text:
            if text_width(line + ch, size) > m.px(width_dp) - size:
                lines.append(line)
                line = ""
            line += ch
        lines.append(line)
        x1, y1, x2, _ = w.bounds
        for i, ln in enumerate(lines):
            ly = y1 + i * int(size * 1.5)
            draw_label(draw, (x1, ly, x2, ly + int(size * 1.5)), ln, size, (25, 25, 25))
    return paint


def paint_dots(draw: ImageDraw.ImageDraw, w: Widget) -> None:
    cx, cy = w.center
    r = max(2, (w.bounds[3] - w.bounds[1]) // 18)
    for dx in (-3, 0, 3):
        draw.ellipse((cx + dx * r * 2 - r, cy - r, cx + dx * r * 2 + r, cy + r), fill=(25, 25, 25))


def paint_smiley(draw: ImageDraw.ImageDraw, w: Widget) -> None:
    cx, cy = w.center
    r = (w.bounds[3] - w.bounds[1]) // 4
    width = max(2, r // 6)
    draw.ellipse((cx - r, cy - r, cx + r, cy + r), outline=(60, 60, 60), width=width)
    draw.arc((cx - r // 2, cy - r // 3, cx + r // 2, cy + r // 2), start=20, end=160, fill=(60, 60, 60), width=width)


def paint_close_x(draw: ImageDraw.ImageDraw, w: Widget) -> None:
    x1, y1, x2, y2 = w.bounds
    width = max(2, (x2 - x1) // 16)
    draw.ellipse((x1, y1, x2 - 1, y2 - 1), outline=(255, 255, 255), width=width)
    pad = (x2 - x1) // 3
    draw.line([(x1 + pad, y1 + pad), (x2 - pad, y2 - pad)], fill=(255, 255, 255), width=width)
    draw.line([(x2 - pad, y1 + pad), (x1 + pad, y2 - pad)], fill=(255, 255, 255), width=width)
