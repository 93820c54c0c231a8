"""The report's own CJK font: the shipped subset font, cut down to the characters one page uses.

A report is opened on machines with no CJK font (a CI box, a headless browser):
naming fonts in CSS is not enough, so the page embeds the glyphs it needs as a
WOFF in a ``data:`` URL (zlib, no brotli needed). A page of a typical run uses
50-100 distinct CJK characters: 20-25 kB of base64 with ASCII. The font file is package data
shared with the simulated phone, found by path (``remote/assets/fonts/``).
"""

from __future__ import annotations

import base64
import io
import logging
from pathlib import Path

logger = logging.getLogger(__name__)

FONT_FILE = Path(__file__).resolve().parents[2] / "assets" / "fonts" / "WenQuanYiMicroHeiSubset.ttf"
FAMILY = "remote-cjk"
ASCII = {c for c in range(0x20, 0x7F)}


def subset_woff(text: str, font_file: Path = FONT_FILE) -> bytes | None:
    """A WOFF holding the glyphs of ``text`` (plus printable ASCII) that the font has; None if it cannot be read."""
    from fontTools import subset  # 0.5-1.5 s of imports: paid where a report is written, in
    from fontTools.ttLib import TTFont, TTLibError  # warm()'s thread beside a run, not by every command

    codepoints = sorted(ASCII | {ord(c) for c in text if ord(c) > 0x7F and c.isprintable()})
    try:
        font = TTFont(font_file, lazy=True)
        options = subset.Options()
        options.hinting = False          # screens at 1x and 2x render it well unhinted, and it halves the size
        options.notdef_outline = True    # a character the font lacks shows as a box, not as nothing
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=codepoints)
        subsetter.subset(font)
        font.flavor = "woff"             # the options' flavor is only the command line's: set it on the font
        out = io.BytesIO()
        font.save(out)
    except (OSError, TTLibError, ValueError, KeyError, AssertionError) as exc:
        logger.warning("report font %s not embedded (%s): Chinese text needs a CJK font where it is read",
                       font_file, exc)
        return None
    return out.getvalue()


def warm() -> None:
    """Cut one font in this process ahead of the first report: the first cut costs three times a later one
    (fontTools' subsetter is loaded and set up then). Once per process; a run's record calls it beside the run."""
    global _warm
    if not _warm:
        _warm = True
        subset_woff("")


_warm = False


def font_face(text: str, font_file: Path = FONT_FILE) -> str:
    """The ``@font-face`` rule for :data:`FAMILY` drawing ``text``; ``""`` when the font cannot be read."""
    data = subset_woff(text, font_file)
    if data is None:
        return ""
    encoded = base64.b64encode(data).decode("ascii")
    return (f"@font-face{{font-family:{FAMILY};src:url(data:font/woff;base64,{encoded}) format('woff');"
            "font-display:block}")
