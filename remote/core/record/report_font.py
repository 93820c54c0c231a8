"""The report's own CJK font: the shipped subset font, cut down to the characters one page uses.

A report is opened on machines with no CJK font (a CI box, a headless browser):
naming fonts in CSS is not enough, so the page embeds the glyphs it needs as a
WOFF in a ``data:`` URL (zlib, no brotli needed). A page of a typical run uses
50-100 distinct CJK characters: 20-25 kB of base64 with ASCII. The font file is package data
shared with the simulated phone, found by path (``remote/assets/fonts/``).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import io
import logging
import os
import tempfile
from pathlib import Path

logger = logging.getLogger(__name__)

FONT_FILE = Path(__file__).resolve().parents[2] / "assets" / "fonts" / "WenQuanYiMicroHeiSubset.ttf"
FAMILY = "remote-cjk"
ASCII = {c for c in range(0x20, 0x7F)}
CACHE_ENV = "REMOTE_CACHE_DIR"     # where cut fonts are kept between commands (default: XDG_CACHE_HOME/remote)


def subset_woff(text: str, font_file: Path = FONT_FILE) -> bytes | None:
    """A WOFF holding the glyphs of ``text`` (plus printable ASCII) that the font has; None if it cannot be read.

    Cutting the font costs ~0.5 s a page, at the end of every run; the same characters give the same bytes, so a
    cut is kept in memory and on disk (`cache_dir`), keyed by the font file and the characters."""
    # the distinct characters first: a page holds megabytes of data: URLs
    codepoints = tuple(sorted(ASCII | {ord(c) for c in set(text) if ord(c) > 0x7F and c.isprintable()}))
    try:
        stat = font_file.stat()
    except OSError as exc:
        logger.warning("report font %s not embedded (%s): Chinese text needs a CJK font where it is read",
                       font_file, exc)
        return None
    return _cut(str(font_file), stat.st_size, stat.st_mtime_ns, codepoints)


def cache_dir() -> Path:
    base = os.environ.get(CACHE_ENV) or os.path.join(os.environ.get("XDG_CACHE_HOME") or
                                                      os.path.join(os.path.expanduser("~"), ".cache"), "remote")
    return Path(base) / "fonts"


@functools.lru_cache(maxsize=32)
def _cut(font_file: str, size: int, mtime_ns: int, codepoints: tuple[int, ...]) -> bytes | None:
    key = hashlib.sha256(repr((Path(font_file).name, size, mtime_ns, codepoints)).encode()).hexdigest()[:32]
    kept = cache_dir() / f"{key}.woff"
    try:
        return kept.read_bytes()
    except OSError:
        pass
    data = _subset(Path(font_file), codepoints)
    if data is not None:
        _keep(kept, data)
    return data


def _keep(path: Path, data: bytes) -> None:
    """Write ``data`` whole or not at all (a rename); a cache that cannot be written is only slower."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, delete=False, suffix=".part") as tmp:
            tmp.write(data)
        os.replace(tmp.name, path)
    except OSError as exc:
        logger.info("report font cache not written (%s)", exc)


def _subset(font_file: Path, codepoints: tuple[int, ...]) -> bytes | None:
    from fontTools import subset  # 0.5-1.5 s of imports: paid where a report is written, in
    from fontTools.ttLib import TTFont, TTLibError  # warm()'s thread beside a run, not by every command

    try:
        font = TTFont(font_file, lazy=True)
        options = subset.Options()
        options.hinting = False          # screens at 1x and 2x render it well unhinted, and it halves the size
        options.notdef_outline = True    # a character the font lacks shows as a box, not as nothing
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=list(codepoints))
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
    """Load fontTools' subsetter ahead of the first report (0.5-1.5 s of imports) when this page's font may have to
    be cut; a kept cut needs none. Once per process; a run's record calls it beside the run."""
    global _warm
    if not _warm:
        _warm = True
        from fontTools import subset  # noqa: F401
        from fontTools.ttLib import TTFont  # noqa: F401


_warm = False


def font_face(text: str, font_file: Path = FONT_FILE) -> str:
    """The ``@font-face`` rule for :data:`FAMILY` drawing ``text``; ``""`` when the font cannot be read."""
    data = subset_woff(text, font_file)
    if data is None:
        return ""
    encoded = base64.b64encode(data).decode("ascii")
    return (f"@font-face{{font-family:{FAMILY};src:url(data:font/woff;base64,{encoded}) format('woff');"
            "font-display:block}")
