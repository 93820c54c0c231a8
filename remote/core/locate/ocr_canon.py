"""The one comparison form OCR matching reads in (`remote.core.locate.ocr_text`): full-width -> half-width (NFKC),
Traditional -> Simplified (OpenCC ``t2s``, one character at a time so positions line up), no whitespace,
case-folded, no icon-font glyphs, format characters or pictographs, every dash as "-", look-alikes the
recognizer confuses folded (:func:`fold`), and an ellipsis however it is read as "...". docs/locator.md, "OCR".
"""

from __future__ import annotations

import functools
import re
import unicodedata

import opencc

from remote.core.locate.ui_tree import normalize_text


@functools.cache
def _t2s() -> opencc.OpenCC:
    return opencc.OpenCC("t2s")


@functools.lru_cache(maxsize=8192)
def canon_char(c: str) -> str:
    """One character's comparison form (several characters for one: NFKC turns "…" into "..."). Format
    characters (zero-width space, soft hyphen) and pictographs (category So: emoji, dingbats such as the
    "❤ ❤ ❤" after an app's name, drawn in colour, which the recognizer reads as nothing or anything) are
    nothing; every dash and hyphen (category Pd: the
    non-breaking hyphen U+2011 of an emulator's "Wi‑Fi hotspot", which NFKC leaves a U+2010, en and em
    dashes) and the minus sign are "-", as the recognizer reads them all."""
    if "\ue000" <= c <= "\uf8ff" or c.isspace() or unicodedata.category(c) in ("Cf", "So"):
        return ""
    out = []
    for d in unicodedata.normalize("NFKC", c):
        if d.isspace():
            continue
        if unicodedata.category(d) == "Pd" or d == "\u2212":   # every dash and hyphen as "-" (fold)
            d = "-"
        if "\u3400" <= d <= "\u9fff":
            d = _t2s().convert(d)[:1] or d
        out += [fold(x) for x in d.casefold()]
    text = "".join(out)
    return "..." if text == "⋯" else text


def fold(c: str) -> str:
    """One case-folded character as OCR is compared: an accented Latin letter is its base letter
    (the recognizer reads "Loïc" as "Loic") and the letter o is the digit 0 (it reads "Oct" as
    "0ct"). Both seen on the tuning part; one character in, one out, so positions still line up."""
    if c == "o":
        return "0"
    d = unicodedata.normalize("NFD", c)
    return d[0] if len(d) > 1 and d[0].isascii() and d[0].isalpha() else c


def _ellipsis(text: str) -> str:
    """A trailing run of dots read for "…" ("..", "。。。", "··", "...") as "..."."""
    m = re.search(r"[.。·・•]{2,}$", text)
    return text[:m.start()] + "..." if m else text


def canon(s: str) -> str:
    """The comparison form of a target or of a line read (module docstring)."""
    return _ellipsis(normalize_text("".join(canon_char(c) for c in s or "")))


def canon_map(text: str) -> tuple[str, list[int]]:
    """``canon(text)`` without the trailing-ellipsis folding, and for each of its characters the index of
    the character of ``text`` it came from."""
    flat, where = [], []
    for i, c in enumerate(text):
        for d in canon_char(c):
            flat.append(d)
            where.append(i)
    return "".join(flat), where
