"""HTML pieces of report.html: escaping, tables, screenshots as data URLs, the page around them.

Every value from a record passes through :func:`esc` (run.json is not trusted:
a task, a note or a model's reply may hold markup). The page loads nothing: a
Content-Security-Policy allows only inline styles and ``data:`` images and fonts.
"""

from __future__ import annotations

import base64
import html
import io
import threading
from collections import OrderedDict
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from remote.core.imagefile import check_size
from remote.core.record.report_font import FAMILY, font_face
from remote.errors import BadInput
from remote.kept import Kept

THUMB_WIDTH = 300
THUMBS_KEPT = 256            # thumbnails remembered (~15 kB each): a long run's, or a few runs' in one process
_THUMBS: OrderedDict[tuple[str, int, int, str], str | None] = OrderedDict()
SHOWN_KEPT = 6               # screens just written kept as images (`shown`): a step's, until its thumbnails are made
_SHOWN: Kept[tuple[str, int, int], Image.Image] = Kept(SHOWN_KEPT)
_THUMBS_LOCK = threading.Lock()
PHASES = ("capture", "locate", "act", "wait", "verify")
PHASE_COLOURS = {"capture": "#7aa6d6", "locate": "#e0a84f", "act": "#6fbf73", "wait": "#c9c9c9", "verify": "#b58ad6"}
OTHER_COLOUR = "#8c8c8c"
CSP = "default-src 'none'; img-src data:; font-src data:; style-src 'unsafe-inline'"

CSS = """body{font-family:FAMILY,system-ui,sans-serif;margin:2em auto;max-width:1200px;color:#222;line-height:1.45}
h1{font-size:1.5em;margin-bottom:.3em} h2{font-size:1.2em;margin-top:1.8em;border-bottom:1px solid #ddd}
h3{font-size:1em;margin:1.2em 0 .3em} pre,code{font-family:ui-monospace,monospace,FAMILY}
.outcome{padding:.8em 1em;border-radius:8px;font-size:1.05em} .outcome b{font-size:1.25em;margin-right:.5em}
.ok{background:#e3f6e1;border:1px solid #9fd89a} .bad{background:#fbe3e3;border:1px solid #e59b9b}
.unsure{background:#f6f1dc;border:1px solid #d9c97d}
table{border-collapse:collapse} td,th{vertical-align:top;text-align:left;padding:.25em .8em .25em 0}
table.grid td,table.grid th{border-bottom:1px solid #eee;padding:.35em .8em .35em .3em}
table.grid th{color:#555;font-weight:600;background:#fafafa} .facts th{color:#555;font-weight:normal}
.badge{display:inline-block;font-size:.8em;padding:1px 8px;border-radius:8px;background:#ddd;white-space:nowrap}
.b-success,.b-yes{background:#c8f0c5} .b-failed,.b-NO{background:#f5c2c2}
.b-skipped,.b-not_checked,.b-could{background:#f3e7b8}
.sub{color:#777;font-size:.85em} .num{text-align:right;font-variant-numeric:tabular-nums}
.bar{display:flex;height:8px;width:160px;background:#f2f2f2;margin-top:3px} .bar span{display:block;height:8px}
.legend span{display:inline-block;width:10px;height:10px;margin:0 3px 0 12px;vertical-align:middle}
details{margin:.4em 0;border:1px solid #e4e4e4;border-radius:6px;padding:.3em .8em}
summary{cursor:pointer;padding:.2em 0} details[open] summary{margin-bottom:.5em}
.shots{display:flex;gap:1em;flex-wrap:wrap} figure{margin:0} figcaption{font-size:.8em;color:#777}
img{border:1px solid #999;max-width:300px} .noimg{color:#888;width:300px;font-size:.9em}
pre{background:#f5f5f5;padding:1em;overflow:auto;max-height:40em;font-size:.85em;white-space:pre-wrap}
ol.plan li{margin:.15em 0} .popups{display:flex;gap:1.5em;flex-wrap:wrap}""".replace("FAMILY", FAMILY)


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def badge(kind: str, text: str | None = None) -> str:
    return f"<span class='badge b-{esc(kind.split(' ')[0])}'>{esc(text if text is not None else kind)}</span>"


def facts(rows: list[tuple[str, Any]]) -> str:
    """A two-column table of the rows whose value is not empty; values are escaped."""
    body = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows if v not in ("", None, [], {}))
    return f"<table class=facts>{body}</table>" if body else ""


def grid(head: list[str], rows: list[list[str]], numeric: tuple[int, ...] = ()) -> str:
    """A table of already-escaped cells; ``numeric`` columns are right-aligned."""
    def cells(row: list[str], tag: str) -> str:
        return "".join(f"<{tag}{' class=num' if i in numeric else ''}>{c}</{tag}>" for i, c in enumerate(row))
    return (f"<table class=grid><tr>{cells([esc(h) for h in head], 'th')}</tr>"
            + "".join(f"<tr>{cells(r, 'td')}</tr>" for r in rows) + "</table>")


def time_bar(timings: dict[str, float], total_ms: float, scale_ms: float) -> str:
    """A bar as long as the step took (the longest step fills it), split by phase."""
    if scale_ms <= 0 or total_ms <= 0:
        return ""
    parts, known = [], 0.0
    for phase, ms in timings.items():
        known += ms
        colour = PHASE_COLOURS.get(phase, OTHER_COLOUR)
        parts.append(f"<span style='width:{100 * ms / scale_ms:.1f}%;background:{colour}' "
                     f"title='{esc(phase)} {ms:.0f} ms'></span>")
    rest = total_ms - known
    if rest > 0:
        parts.append(f"<span style='width:{100 * rest / scale_ms:.1f}%;background:#e8e8e8' "
                     f"title='other {rest:.0f} ms'></span>")
    return f"<div class=bar>{''.join(parts)}</div>"


def legend() -> str:
    items = "".join(f"<span style='background:{c}'></span>{esc(p)}" for p, c in PHASE_COLOURS.items())
    return f"<p class='legend sub'>time per phase:{items}<span style='background:#e8e8e8'></span>other</p>"


def annotate(image: Image.Image, bbox: Any = None, point: Any = None, candidates: Any = ()) -> Image.Image:
    """A copy of ``image`` with candidates, the box and the tap point drawn (device pixels)."""
    img = image.convert("RGB")       # a copy, also of an RGB image
    draw = ImageDraw.Draw(img)
    width = max(2, img.width // 200)
    for cand in candidates or ():
        box = cand.get("bbox") if isinstance(cand, dict) else cand
        if box:
            draw.rectangle(list(box), outline=(255, 150, 0), width=width)
    if bbox:
        draw.rectangle(list(bbox), outline=(0, 200, 0), width=width * 2)
    if point:
        x, y = point
        r = max(8, img.width // 60)
        draw.line([x - r, y, x + r, y], fill=(255, 0, 0), width=width * 2)
        draw.line([x, y - r, x, y + r], fill=(255, 0, 0), width=width * 2)
        draw.ellipse([x - r // 2, y - r // 2, x + r // 2, y + r // 2], outline=(255, 0, 0), width=width)
    return img


def thumb_data_url(img: Image.Image) -> str:
    scale = THUMB_WIDTH / img.width
    # reducing_gap: an integer box reduction first, down to twice the thumbnail's size (Image.thumbnail's way):
    # a third less time for a 1440x3200 screen, pixels within 0.06 of 255 on average of the plain resize
    small = (img if img.mode == "RGB" else img.convert("RGB")).resize(
        (THUMB_WIDTH, max(1, round(img.height * scale))), Image.Resampling.BILINEAR, reducing_gap=2.0)
    buf = io.BytesIO()
    small.save(buf, "JPEG", quality=72)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def figure(path: Path | None, caption: str, marks: dict[str, Any] | None = None, *, tree: Path | None = None) -> str:
    """A screenshot thumbnail with its caption (escaped here), boxes drawn when ``marks`` are given; without one,
    why (``tree``: the UI tree the screen was judged on, in the record's folder; nothing read its pixels, so no
    frame was taken, ``--frames needed``)."""
    cap = f"<figcaption>{esc(caption)}</figcaption>"
    if path is None and tree is not None:
        return (f"<figure class=noimg>{cap}judged on its UI tree ({esc(tree.name)} in this folder): no frame was "
                "taken, nothing read its pixels (--frames every takes one)</figure>")
    if path is None:
        return f"<figure class=noimg>{cap}no screenshot (the step took none)</figure>"
    url = _thumbnail(path, marks)
    if url is None:
        return f"<figure class=noimg>{cap}unreadable or oversized screenshot</figure>"
    return f"<figure>{cap}<img src=\"{url}\" alt=\"{esc(caption)}\"></figure>"


def _thumbnail(path: Path, marks: dict[str, Any] | None) -> str | None:
    """The thumbnail's data URL (None when the file cannot be read), made once per file and marks: a run's
    record makes each step's while the run goes on (`RunRecorder`), and the final report finds them made."""
    try:
        stat = path.stat()
        key = (str(path), stat.st_mtime_ns, stat.st_size, repr(marks))
    except OSError:
        return None
    with _THUMBS_LOCK:
        if key in _THUMBS:
            _THUMBS.move_to_end(key)
            return _THUMBS[key]
    known = _SHOWN.get(key[:3])
    try:
        with (nullcontext(known) if known is not None else Image.open(path)) as img:
            check_size(img.size, "screenshot")
            url: str | None = thumb_data_url(annotate(img, **marks) if marks else img)
    except (BadInput, OSError, ValueError, TypeError):
        url = None
    with _THUMBS_LOCK:
        _THUMBS[key] = url
        while len(_THUMBS) > THUMBS_KEPT:
            _THUMBS.popitem(last=False)
    return url


def shown(path: Path, image: Image.Image | None) -> None:
    """``image`` is what the PNG just written at ``path`` holds: its thumbnails are made from it, not from the
    file decoded again (40 ms at 1440x3200). The last few are kept: a run's record makes each step's thumbnails
    right after storing its screens."""
    if image is None or image.mode not in ("RGB", "RGBA", "L"):     # the modes a PNG gives back as they were
        return
    try:
        stat = path.stat()
    except OSError:
        return
    _SHOWN.put((str(path), stat.st_mtime_ns, stat.st_size), image)


def page(title: str, body: str) -> str:
    """The whole document; the font embedded is cut to the characters of this page."""
    face = font_face(title + body)
    return (f"<!doctype html><html lang=zh><head><meta charset=utf-8>"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
            f"<meta name=viewport content=\"width=device-width,initial-scale=1\">"
            f"<title>{esc(title)}</title><style>{face}\n{CSS}</style></head><body>{body}</body></html>")
