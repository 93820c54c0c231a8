"""Draw a widget tree (Pillow) and write it as `uiautomator dump` XML.

The XML follows AccessibilityNodeInfoDumper: one line, attributes in the real
order, ``bounds="[x1,y1][x2,y2]"`` clipped to the display::

    <?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0"
    text="" resource-id="" class="android.widget.FrameLayout" package="com.tencent.mm" ...
    bounds="[0,0][1080,2400]">...</node></hierarchy>
"""

from __future__ import annotations

import functools
import io
import logging
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from remote.sim.widgets import Widget

log = logging.getLogger(__name__)

# Package data shared with the run report, found by path: the phone imports nothing of the product.
FONT_DIR = Path(__file__).resolve().parent.parent / "assets" / "fonts"
FONT_FILE = FONT_DIR / "WenQuanYiMicroHeiSubset.ttf"

_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


@functools.lru_cache(maxsize=64)
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """The shipped CJK font at `size` px; Pillow's default font if the file is missing."""
    try:
        return ImageFont.truetype(str(FONT_FILE), max(6, size))
    except OSError:
        log.warning("sim font %s missing; Chinese text will not render", FONT_FILE)
        return ImageFont.load_default(size=max(6, size))


def text_width(text: str, size: int) -> int:
    return int(font(size).getlength(text))


def fit_text(text: str, size: int, width: int) -> str:
    """Shorten `text` with an ellipsis so it fits in `width` px."""
    if text_width(text, size) <= width:
        return text
    while text and text_width(text + "…", size) > width:
        text = text[:-1]
    return text + "…"


def draw_tree(root: Widget, size: tuple[int, int], background: tuple[int, int, int] = (255, 255, 255)) -> Image.Image:
    """Render the tree into a new RGB image of `size`; children are drawn over their parents."""
    image = Image.new("RGB", size, background)
    draw = ImageDraw.Draw(image)
    for widget in root.walk():
        if widget.dim:
            box = _clip(widget.bounds, size)
            region = image.crop(box)
            image.paste(Image.blend(region, Image.new("RGB", region.size, (0, 0, 0)), widget.dim), box[:2])
        _draw_widget(draw, widget)
    return image


def _draw_widget(draw: ImageDraw.ImageDraw, w: Widget) -> None:
    x1, y1, x2, y2 = w.bounds
    if x2 <= x1 or y2 <= y1:
        return
    if w.bg is not None or w.border is not None:
        box = (x1, y1, x2 - 1, y2 - 1)
        width = max(1, (y2 - y1) // 40) if w.border else 0
        if w.radius:
            draw.rounded_rectangle(box, radius=w.radius, fill=w.bg, outline=w.border, width=width)
        else:
            draw.rectangle(box, fill=w.bg, outline=w.border, width=width)
    if w.paint is not None:
        w.paint(draw, w)
    text, color = w.text, w.fg
    if not text and w.hint:
        text, color = w.hint, (160, 160, 160)
    if text and w.text_size:
        draw_label(draw, w.bounds, text, w.text_size, color, w.align)


def draw_label(draw: ImageDraw.ImageDraw, bounds: tuple[int, int, int, int], text: str, size: int,
               color: tuple[int, int, int], align: str = "left") -> None:
    x1, y1, x2, y2 = bounds
    if "\n" in text or "\r" in text:
        _draw_lines(draw, bounds, text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), size, color, align)
        return
    pad = size // 2 if align != "center" else 0
    text = fit_text(text, size, max(1, x2 - x1 - 2 * pad))
    f = font(size)
    tw = f.getlength(text)
    if align == "center":
        x = x1 + (x2 - x1 - tw) / 2
    elif align == "right":
        x = x2 - pad - tw
    else:
        x = x1 + pad
    draw.text((x, (y1 + y2) / 2), text, fill=color, font=f, anchor="lm")


def _draw_lines(draw: ImageDraw.ImageDraw, bounds: tuple[int, int, int, int], lines: list[str], size: int,
                color: tuple[int, int, int], align: str) -> None:
    """Several lines, as a text field shows them: the last ones that fit, centred as a block."""
    x1, y1, x2, y2 = bounds
    step = max(1, int(size * 1.3))
    fit = max(1, (y2 - y1) // step)
    shown = lines[-fit:]
    top = y1 + ((y2 - y1) - step * len(shown)) // 2
    for i, line in enumerate(shown):
        draw_label(draw, (x1, top + i * step, x2, top + (i + 1) * step), line, size, color, align)


# ---------------------------------------------------------------- uiautomator XML


def _attr(value: str) -> str:
    value = _INVALID_XML.sub(".", value)
    return (value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&apos;").replace("\n", "&#10;").replace("\r", "&#13;")
            .replace("\t", "&#9;"))


def _b(flag: bool) -> str:
    return "true" if flag else "false"


def _has_label(w: Widget) -> bool:
    return any(n.text or n.desc for n in w.walk())


def _clip(bounds: tuple[int, int, int, int], size: tuple[int, int]) -> tuple[int, int, int, int]:
    x1, y1, x2, y2 = bounds
    return max(0, x1), max(0, y1), min(size[0], x2), min(size[1], y2)


def _node_xml(w: Widget, index: int, size: tuple[int, int], compressed: bool, out: list[str]) -> None:
    x1, y1, x2, y2 = _clip(w.bounds, size)
    naf = ' NAF="true"' if w.clickable and w.enabled and not _has_label(w) else ""
    out.append(
        f'<node{naf} index="{index}" text="{_attr(w.text)}" resource-id="{_attr(w.rid)}" class="{w.cls}" '
        f'package="{w.package}" content-desc="{_attr(w.desc)}" checkable="{_b(w.checkable)}" '
        f'checked="{_b(w.checked)}" clickable="{_b(w.clickable)}" enabled="{_b(w.enabled)}" '
        f'focusable="{_b(w.focusable)}" focused="{_b(w.focused)}" scrollable="{_b(w.scrollable)}" '
        f'long-clickable="{_b(w.long_clickable)}" password="{_b(w.password)}" selected="{_b(w.selected)}" '
        f'bounds="[{x1},{y1}][{x2},{y2}]"')
    children = [c for c in w.children if c.dump and _visible(c, size)]
    if compressed:
        children = _important(children)
    if not children:
        out.append(" />")
        return
    out.append(">")
    for i, child in enumerate(children):
        _node_xml(child, i, size, compressed, out)
    out.append("</node>")


def _visible(w: Widget, size: tuple[int, int]) -> bool:
    x1, y1, x2, y2 = _clip(w.bounds, size)
    return x2 > x1 and y2 > y1


def _important(children: list[Widget]) -> list[Widget]:
    """--compressed drops layout-only containers and keeps their children in their place."""
    kept: list[Widget] = []
    for child in children:
        plain = not (child.text or child.desc or child.rid or child.clickable or child.checkable
                     or child.scrollable or child.focusable)
        if plain and child.children:
            kept.extend(_important(child.children))
        else:
            kept.append(child)
    return kept


def tree_to_xml(root: Widget, size: tuple[int, int], *, compressed: bool = False) -> str:
    """The dump of `root` as one line of XML, like `uiautomator dump` writes it."""
    out = ["<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>", '<hierarchy rotation="0">']
    _node_xml(root, 0, size, compressed, out)
    out.append("</hierarchy>")
    return "".join(out)


def png_bytes(image: Image.Image) -> bytes:
    """What ``screencap -p`` sends: the screen as a PNG (fast compression, as the phone's own)."""
    buf = io.BytesIO()
    image.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


def raw_bytes(image: Image.Image) -> bytes:
    """What ``screencap`` without -p sends: a 16-byte header (w, h, format 1 = RGBA_8888, colour space 1 =
    sRGB), then the rows."""
    w, h = image.size
    # An RGB image packed as RGBX is its RGBA conversion byte for byte (X is 255), without the converted copy:
    # a quarter of the time at 1440x3200 (18 ms, not 63), the simulated phone's largest cost per frame.
    rows = image.tobytes("raw", "RGBX") if image.mode == "RGB" else image.convert("RGBA").tobytes()
    return struct.pack("<IIII", w, h, 1, 1) + rows


@dataclass
class Shot:
    """One screen image with its `screencap` encodings made on first use (the simulated and the trace phone)."""

    image: Image.Image
    _png: bytes | None = field(default=None, repr=False)
    _raw: bytes | None = field(default=None, repr=False)

    def png(self) -> bytes:
        if self._png is None:
            self._png = png_bytes(self.image)
        return self._png

    def raw(self) -> bytes:
        if self._raw is None:
            self._raw = raw_bytes(self.image)
        return self._raw
