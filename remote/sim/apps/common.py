"""Building blocks the simulated apps share: bars, arrows, icons, list rows, the spinner."""

from __future__ import annotations

import math
from collections.abc import Callable

from PIL import ImageDraw

from remote.sim.render import draw_label, font
from remote.sim.widgets import Color, Metrics, Widget

GREY_BAR = (237, 237, 237)
TEXT = (25, 25, 25)
SUBTLE = (136, 136, 136)
LINE = (229, 229, 229)
WECHAT_GREEN = (7, 193, 96)


def text_view(bounds: tuple[int, int, int, int], text: str, size: int, *, rid: str = "", fg: Color = TEXT,
              align: str = "left", clickable: bool = False, on_tap: Callable[[], None] | None = None,
              bg: Color | None = None, desc: str = "") -> Widget:
    return Widget("android.widget.TextView", bounds, text=text, rid=rid, text_size=size, fg=fg, align=align,
                  clickable=clickable, focusable=clickable, on_tap=on_tap, bg=bg, desc=desc)


def status_bar(m: Metrics, bg: Color | None, dark_text: bool = True) -> Widget:
    """The clock and battery strip; drawn, but (like the real one) not in the app window's dump."""
    color = TEXT if dark_text else (255, 255, 255)

    def paint(draw: ImageDraw.ImageDraw, w: Widget) -> None:
        x1, y1, x2, y2 = w.bounds
        size = m.px(12)
        draw_label(draw, (m.px(12), y1, m.px(80), y2), "12:00", size, color)
        bx = x2 - m.px(34)
        draw.rounded_rectangle((bx, y1 + m.px(8), bx + m.px(20), y2 - m.px(8)), radius=m.px(2), outline=color,
                               width=max(1, m.px(1)))
        draw.rectangle((bx + m.px(2), y1 + m.px(10), bx + m.px(15), y2 - m.px(10)), fill=color)
        for i in range(4):  # signal bars
            h = m.px(3 + 2 * i)
            x = bx - m.px(30) + i * m.px(5)
            draw.rectangle((x, y2 - m.px(7) - h, x + m.px(3), y2 - m.px(7)), fill=color)

    return Widget("android.widget.FrameLayout", m.box(0, 0, 360, m.status_dp), package="com.android.systemui",
                  bg=bg, paint=paint, dump=False)


def nav_handle(m: Metrics, dark: bool = True) -> Widget:
    def paint(draw: ImageDraw.ImageDraw, w: Widget) -> None:
        cx, cy = w.center
        half = m.px(54)
        draw.rounded_rectangle((cx - half, cy - m.px(2), cx + half, cy + m.px(2)), radius=m.px(2),
                               fill=(60, 60, 60) if dark else (230, 230, 230))

    return Widget("android.widget.FrameLayout", m.box(0, m.content_bottom_dp, 360, m.nav_dp),
                  package="com.android.systemui", paint=paint, dump=False)


def paint_back_arrow(color: Color = TEXT) -> Callable[[ImageDraw.ImageDraw, Widget], None]:
    def paint(draw: ImageDraw.ImageDraw, w: Widget) -> None:
        cx, cy = w.center
        r = (w.bounds[3] - w.bounds[1]) // 5
        width = max(2, r // 4)
        draw.line([(cx + r // 2, cy - r), (cx - r // 2, cy), (cx + r // 2, cy + r)], fill=color, width=width,
                  joint="curve")
    return paint


def back_button(m: Metrics, y: float, rid: str, on_tap: Callable[[], None], color: Color = TEXT) -> Widget:
    return Widget("android.widget.ImageView", m.box(0, y, 48, 48), desc="返回", rid=rid, clickable=True,
                  focusable=True, on_tap=on_tap, paint=paint_back_arrow(color))


def paint_magnifier(color: Color = TEXT) -> Callable[[ImageDraw.ImageDraw, Widget], None]:
    def paint(draw: ImageDraw.ImageDraw, w: Widget) -> None:
        cx, cy = w.center
        r = (w.bounds[3] - w.bounds[1]) // 6
        width = max(2, r // 3)
        draw.ellipse((cx - r - r // 3, cy - r - r // 3, cx + r - r // 3, cy + r - r // 3), outline=color, width=width)
        draw.line([(cx + r // 2, cy + r // 2), (cx + r + r // 3, cy + r + r // 3)], fill=color, width=width)
    return paint


def paint_plus_circle(color: Color = TEXT) -> Callable[[ImageDraw.ImageDraw, Widget], None]:
    def paint(draw: ImageDraw.ImageDraw, w: Widget) -> None:
        cx, cy = w.center
        r = (w.bounds[3] - w.bounds[1]) // 4
        width = max(2, r // 6)
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), outline=color, width=width)
        draw.line([(cx - r // 2, cy), (cx + r // 2, cy)], fill=color, width=width)
        draw.line([(cx, cy - r // 2), (cx, cy + r // 2)], fill=color, width=width)
    return paint


def paint_avatar(name: str, color: Color) -> Callable[[ImageDraw.ImageDraw, Widget], None]:
    def paint(draw: ImageDraw.ImageDraw, w: Widget) -> None:
        x1, y1, x2, y2 = w.bounds
        draw.rounded_rectangle((x1, y1, x2 - 1, y2 - 1), radius=(x2 - x1) // 8, fill=color)
        draw_label(draw, w.bounds, name[:1], (y2 - y1) // 2, (255, 255, 255), "center")
    return paint


def avatar_color(name: str) -> Color:
    palette = [(87, 107, 149), (250, 157, 59), (100, 180, 230), (230, 100, 100), (120, 190, 120), (170, 120, 200)]
    return palette[sum(map(ord, name)) % len(palette)]


def spinner_content(m: Metrics, package: str, top: float) -> Widget:
    """What a screen shows until it settles: a ProgressBar and 加载中."""
    def paint(draw: ImageDraw.ImageDraw, w: Widget) -> None:
        x1, y1, x2, y2 = w.bounds
        width = max(3, (x2 - x1) // 10)
        draw.ellipse((x1, y1, x2, y2), outline=(225, 225, 225), width=width)
        draw.arc((x1, y1, x2, y2), start=-90, end=60, fill=WECHAT_GREEN, width=width)

    root = Widget("android.widget.FrameLayout", m.box(0, top, 360, m.content_bottom_dp - top), package=package,
                  bg=(255, 255, 255))
    mid = (top + m.content_bottom_dp) / 2
    root.add(Widget("android.widget.ProgressBar", m.box(156, mid - 48, 48, 48), rid="android:id/progress",
                    paint=paint),
             text_view(m.box(80, mid + 8, 200, 28), "加载中", m.px(15), fg=SUBTLE, align="center"))
    return root


def list_row(m: Metrics, y: float, h: float, title: str, *, rid: str = "", summary: str = "",
             on_tap: Callable[[], None] | None = None, x: float = 16, chevron: bool = False,
             title_size: float = 16) -> Widget:
    row = Widget("android.widget.LinearLayout", m.box(0, y, 360, h), rid=rid, clickable=True, focusable=True,
                 on_tap=on_tap or (lambda: None), paint=_row_divider(m, x))
    ty = y + (h - (40 if summary else 24)) / 2
    row.add(text_view(m.box(x, ty, 260 - x, 24), title, m.px(title_size), rid="android:id/title"))
    if summary:
        row.add(text_view(m.box(x, ty + 22, 260 - x, 18), summary, m.px(13), rid="android:id/summary", fg=SUBTLE))
    if chevron:
        row.add(Widget("android.widget.ImageView", m.box(320, y + (h - 24) / 2, 24, 24),
                       paint=_chevron(m)))
    return row


def _row_divider(m: Metrics, x: float) -> Callable[[ImageDraw.ImageDraw, Widget], None]:
    def paint(draw: ImageDraw.ImageDraw, w: Widget) -> None:
        x1, y1, x2, y2 = w.bounds
        draw.line([(x1 + m.px(x), y2 - 1), (x2, y2 - 1)], fill=LINE, width=max(1, m.px(0.5)))
    return paint


def _chevron(m: Metrics) -> Callable[[ImageDraw.ImageDraw, Widget], None]:
    def paint(draw: ImageDraw.ImageDraw, w: Widget) -> None:
        cx, cy = w.center
        r = m.px(5)
        draw.line([(cx - r // 2, cy - r), (cx + r // 2, cy), (cx - r // 2, cy + r)], fill=(190, 190, 190),
                  width=max(2, m.px(1.5)))
    return paint


def gear(draw: ImageDraw.ImageDraw, cx: float, cy: float, r: float, color: Color, hole: Color) -> None:
    teeth = 8
    for i in range(teeth):
        a = 2 * math.pi * i / teeth
        tx, ty = cx + math.cos(a) * r * 0.95, cy + math.sin(a) * r * 0.95
        draw.ellipse((tx - r * 0.22, ty - r * 0.22, tx + r * 0.22, ty + r * 0.22), fill=color)
    draw.ellipse((cx - r * 0.8, cy - r * 0.8, cx + r * 0.8, cy + r * 0.8), fill=color)
    draw.ellipse((cx - r * 0.35, cy - r * 0.35, cx + r * 0.35, cy + r * 0.35), fill=hole)


__all__ = ["font", "gear"]
