"""OCR text matching (pure): whether a line the recognizer read is the ``text:`` target, and where.

Both sides are compared in one form (:func:`canon`): full-width -> half-width (NFKC), Traditional ->
Simplified (OpenCC ``t2s``, one character at a time so positions line up), no whitespace, case-folded,
no icon-font glyphs, look-alikes the recognizer confuses folded (`ocr_canon.fold`), and an ellipsis
however it is read ("…", "...", "。。。", "··", "⋯") as "...". Then the rules for how apps draw text, each
with the screens that show it (docs/locator.md, "OCR") and the look-alike it still refuses:

* **separators** (:data:`SEPARATORS`): a target ``10.1千米 | 安定路1号`` is drawn with a bar the
  recognizer reads as ``1``, ``丨``, ``一``, ``l``, ``/`` or not at all; the target matches a line that
  reads its segments, in order, with at most one such glyph between them -- the whole line, nothing
  more (a longer line that only contains it stays a ``contains``).
* **ellipsis truncation** (:func:`truncated_of`): a label too long for its view is drawn up to "…";
  the line's part before the dots must start the target and be long enough to say which label it is.
* **numbers**: a fuzzy hit (similar, contains, truncated) must carry the target's numbers unchanged
  ("6条评论" is never "1条评论", "3.0" never "3.6"); a number split from its unit ("2.3" | "万") is joined.
* **line breaks inside one node**: runs of lines merged (:func:`_merged_lines`), words side by side
  joined (:func:`_joined_words`).
"""

from __future__ import annotations

import difflib
import functools
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from remote.core.locate.confidence import ACCEPT, calibrate
from remote.core.locate.ocr_canon import canon, canon_char, canon_map

MIN_SIMILARITY = 0.6
PART_SIMILARITY = 0.8   # a label read as a word-bounded part of a longer line (its own sub-box)
UNSURE_GLYPH = 0.5      # a character read less sure than this is as likely no glyph at all (drawn_copy)
SURE_KINDS = ("exact", "part", "truncated", "unnamed")   # hits that need no second reading
NEAR_KINDS = ("contains", "similar")          # a near miss: the text may be there, misread or cut differently
# Separators apps draw between the parts of one label, and the glyphs the recognizer reads them as
# (besides nothing at all): seen on list rows of map and shop apps ("10.1千米 | 安定路1号…").
SEPARATORS = "|丨·•/∙・"   # "/" only between spaces (_SPLIT)
SEPARATOR_READS = SEPARATORS + "1li一!:'-."
TRUNC_MIN_UNITS = 6.0   # a truncated line's stem this wide (6 CJK glyphs, ~11 Latin) names its label alone
_DIGITS = re.compile(r"\d+(?:\.\d+)?")
# A separator splits a target where it is drawn as one: a bar or dot anywhere, a slash only between
# spaces ("2021/12/06" and "km/h" are one word), an icon-font glyph inside a label (the ASUS lock screen's
# clock "9\ue01a47": its colon is a private-use glyph, read ":").
_SPLIT = re.compile(r"\s*[|丨·•∙・\ue000-\uf8ff]\s*|\s+/\s+")


@dataclass(frozen=True)
class TextBox:
    text: str
    bbox: tuple[int, int, int, int]   # device pixels
    score: float                      # the recognizer's own confidence, 0-1
    chars: tuple[float, ...] = ()     # its confidence per character of ``text`` (empty: not known)
    cols: tuple[float, ...] = ()      # where each character's middle lies, 0-1 of the box's width (empty: not known)

    @property
    def center(self) -> tuple[int, int]:
        return (self.bbox[0] + self.bbox[2]) // 2, (self.bbox[1] + self.bbox[3]) // 2

    def score_of(self, a: int, b: int) -> float:
        """The recognizer's confidence in characters ``a..b`` (inclusive) of ``text``: the mean of their
        own scores where known (a line mixing a sure label and an unsure neighbour), else the line's."""
        part = self.chars[a:b + 1] if len(self.chars) == len(self.text) else ()
        return sum(part) / len(part) if part else self.score


@dataclass(frozen=True)
class TextHit:
    box: TextBox
    kind: str          # "exact" | "part" | "truncated" | "unnamed" | "contains" | "similar"
    similarity: float  # 1.0 for exact, else difflib ratio / containment share


def _numbers(s: str) -> list[str]:
    return _DIGITS.findall(s)


Box = tuple[int, int, int, int]


def _chains(boxes: list[TextBox], order: Callable[[TextBox], tuple[int, int]], max_n: int,
            step: Callable[[TextBox, Box, TextBox], bool | None], grow: Callable[[Box, Box], Box]) -> list[TextBox]:
    """Runs of boxes in ``order``, each run from one box on, as one box per run length: ``step(first, box,
    nxt)`` says whether ``nxt`` extends the run so far (True), is stepped over (False), or ends the
    search (None: every later box is farther still); ``grow`` is the run's box with ``nxt``'s."""
    seq = sorted(boxes, key=order)
    out = []
    for i, first in enumerate(seq):
        text, box, score, n = first.text, first.bbox, first.score, 1
        for nxt in seq[i + 1:]:
            verdict = step(first, box, nxt)
            if verdict is None:
                break
            if not verdict:
                continue
            text, box, score = text + " " + nxt.text, grow(box, nxt.bbox), min(score, nxt.score)
            out.append(TextBox(text, box, score))
            n += 1
            if n >= max_n:
                break
    return out


def _next_line(first: TextBox, box: Box, nxt: TextBox) -> bool | None:
    line_h = first.bbox[3] - first.bbox[1]
    gap = nxt.bbox[1] - box[3]
    if gap > 1.2 * line_h:   # sorted by top: every later box starts lower still
        return None
    overlap = min(box[2], nxt.bbox[2]) - max(box[0], nxt.bbox[0])
    h = min(line_h, nxt.bbox[3] - nxt.bbox[1])
    return not (gap > 1.2 * h or gap < -0.5 * h or overlap <= 0)


def _next_word(first: TextBox, box: Box, nxt: TextBox) -> bool | None:
    h = min(box[3] - box[1], nxt.bbox[3] - nxt.bbox[1])
    overlap = min(box[3], nxt.bbox[3]) - max(box[1], nxt.bbox[1])
    gap = nxt.bbox[0] - box[2]
    if gap > 2 * (box[3] - box[1]):   # sorted by x: every later box is farther still
        return None
    return not (overlap < 0.5 * h or not -0.5 * h <= gap <= 2 * h)


def _merged_lines(boxes: list[TextBox], max_lines: int = 6) -> list[TextBox]:
    """Runs of consecutive lines (reading order) merged into one box: a label wrapped over
    several lines is read as several boxes, one per line. A box on the same row or in another
    column (no horizontal overlap) is stepped over, not taken for the end of the label."""
    return _chains(boxes, lambda b: (b.bbox[1], b.bbox[0]), max_lines, _next_line,
                   lambda box, nb: (min(box[0], nb[0]), box[1], max(box[2], nb[2]), nb[3]))


def _joined_words(boxes: list[TextBox], max_boxes: int = 3) -> list[TextBox]:
    """Runs of boxes side by side on one line merged into one box: OCR splits a label at a wide
    word gap ("Create New" | "Account"), or a number from its unit ("2.3" | "万"). Neighbours
    overlap by half the smaller height and lie less than two line heights apart."""
    return _chains(boxes, lambda b: (b.bbox[0], b.bbox[1]), max_boxes, _next_word,
                   lambda box, nb: (box[0], min(box[1], nb[1]), max(box[2], nb[2]), max(box[3], nb[3])))


def drawn_copy(target: str, h: TextHit) -> bool:
    """Whether a ``contains`` hit is the target with only unsure characters beside it, at most two, each read
    with less than :data:`UNSURE_GLYPH`: another copy of the label whose badge or icon was read as a glyph
    (Weibo's ``大象新闻蓉``, its verified badge read ``蓉`` at 0.44). Such a line is a rival of an exact hit
    elsewhere (``deciding.decide``), never a tap of its own: ``11条评论`` read with an unsure ``1`` is not
    ``1条评论``."""
    t, box = target.strip(), h.box
    i = box.text.find(t) if t and h.kind == "contains" and len(box.chars) == len(box.text) else -1
    extra = box.chars[:i] + box.chars[i + len(t):] if i >= 0 else ()
    return 0 < len(extra) <= 2 and all(c < UNSURE_GLYPH for c in extra)


def hit_raw(h: TextHit) -> float:
    """The OCR tier's raw score for a hit (``confidence.TABLES["ocr"]`` calibrates it): the text's
    similarity times the recognizer's confidence in it (+0.1, at most 1)."""
    return h.similarity * min(1.0, 0.1 + h.box.score)


def sure(hits: list[TextHit]) -> bool:
    """Whether one of ``hits`` is a sure kind the recognizer was sure of (an exact "3.0" read at 0.4 is a
    guess, never tapped)."""
    return any(h.kind in SURE_KINDS and calibrate("ocr", hit_raw(h)) >= ACCEPT for h in hits)


def unsure(hits: list[TextHit]) -> bool:
    """Whether ``hits`` deserve a closer look (``ocr.read_regions``): no :func:`sure` hit, but something
    like the target: a sure hit read with too little confidence, or a near miss
    (:func:`wants_second_reading`)."""
    if sure(hits):
        return False
    return any(h.kind in SURE_KINDS for h in hits) or wants_second_reading(hits)


def better(again: list[TextHit], hits: list[TextHit]) -> bool:
    """The closer look's hits are better than the first ones: its best sure hit scores higher."""
    def best(hs: list[TextHit]) -> float:
        return max((hit_raw(h) for h in hs if h.kind in SURE_KINDS), default=0.0)
    return best(again) > best(hits)


def nearby(hits: list[TextHit], boxes: list[TextBox], k: int = 3) -> str:
    """What was read near the best hit, its row and the lines next to it: the words a miss reports
    ("read nearby: '3.0' 0.41, '1条评论' 0.38")."""
    if not hits:
        return ""
    y1, y2 = hits[0].box.bbox[1], hits[0].box.bbox[3]
    line = max(8, y2 - y1)
    near = sorted((b for b in boxes if b.bbox[3] > y1 - line and b.bbox[1] < y2 + line),
                  key=lambda b: (b.bbox[1], b.bbox[0]))[:k]
    return "read nearby: " + ", ".join(f"{b.text[:30]!r} {b.score:.2f}" for b in near)


def wants_second_reading(hits: list[TextHit]) -> bool:
    """Whether the second reading is worth its cost after the first gave ``hits``: only for a near
    miss -- no sure hit, but a line containing the target, inside it, or reading like it. A text not
    on the screen rarely has one, so it costs one reading (the rule and its figures, fitted on the
    tuning part: ``bench/ocr_bench.py``)."""
    return not any(h.kind in SURE_KINDS for h in hits) and any(h.kind in NEAR_KINDS for h in hits)


def _cls(ch: str) -> str:
    if ch.isspace():
        return "space"
    if ch.isdigit():
        return "digit"
    if ch.isalpha():
        return "cjk" if unicodedata.category(ch) == "Lo" else "latin"
    return "punct"


def _units(text: str) -> float:
    """Rough drawn width: a CJK glyph is square, Latin and digits about half as wide."""
    return sum(1.0 if _cls(c) == "cjk" else 0.3 if c.isspace() else 0.55 for c in text)


def _part(q: str, box: TextBox) -> TextBox | None:
    """``q`` inside a longer OCR line at a word boundary (OCR reads neighbouring labels such as
    "Save to album  Copy Link" or "10-20 11:43来自山东" as one line): the part's own box, placed by
    glyph widths, scored by its own characters (:meth:`TextBox.score_of`); None inside a word
    ("发送" in "发送给朋友" is no boundary, nor "54" in "254万")."""
    orig = box.text
    flat, where = canon_map(orig)
    start = flat.find(q)
    if start < 0 or len(q) < 2:
        return None
    a, b = where[start], where[start + len(q) - 1]
    left = orig[a - 1] if a > 0 else " "
    right = orig[b + 1] if b + 1 < len(orig) else " "
    for outside, inside in ((left, orig[a]), (right, orig[b])):
        if _cls(outside) not in ("space", "punct") and _cls(outside) == _cls(inside):
            return None
    x1, y1, x2, y2 = box.bbox
    lo, hi = _span(box, a, b)
    px1, px2 = x1 + round((x2 - x1) * lo), x1 + round((x2 - x1) * hi)
    return TextBox(orig[a:b + 1], (px1, y1, max(px2, px1 + 2), y2), box.score_of(a, b))


def _span(box: TextBox, a: int, b: int) -> tuple[float, float]:
    """Where characters ``a..b`` of a line lie, 0-1 of its width: half-way to the neighbouring characters'
    middles where the recognizer said where each character is (``TextBox.cols``), else by glyph widths."""
    text, cols = box.text, box.cols
    if len(cols) == len(text) and len(text) > 1:
        # At the line's ends the half step to the next character inside stands for the missing neighbour
        # (a detector box often starts at an icon or padding before the first character).
        left = (cols[a - 1] + cols[a]) / 2 if a > 0 else max(0.0, cols[a] - (cols[a + 1] - cols[a]) / 2)
        right = (cols[b] + cols[b + 1]) / 2 if b + 1 < len(text) else min(1.0, cols[b] + (cols[b] - cols[b - 1]) / 2)
        return left, right
    total = _units(text) or 1.0
    return _units(text[:a]) / total, _units(text[:b + 1]) / total


def truncated_of(read: str, q: str) -> bool:
    """``read`` (canonical) is ``q`` cut short with an ellipsis: the screen draws "Recomme…" for a
    label too long for its view. The part before the dots must start ``q``, be at least 3 characters,
    and either 60 % of ``q`` or :data:`TRUNC_MIN_UNITS` wide ("Sett..." is not "Settings": it could as
    well be "Settlement"; "朝阳区新源南路2号..." names one address). Its numbers must be ``q``'s."""
    if not read.endswith("..."):
        return False
    stem = read[:-3].rstrip(".")
    long_enough = len(stem) >= 0.6 * len(q) or _units(stem) >= TRUNC_MIN_UNITS
    return len(stem) >= 3 and long_enough and q.startswith(stem) and len(stem) < len(q)


@functools.lru_cache(maxsize=1024)
def _separated(target: str) -> re.Pattern[str] | None:
    """For a target drawn with separators, the pattern a line read must match as a whole: its segments in
    order, at most one separator glyph (or nothing) between them; None for a target without one."""
    segments = [canon(p) for p in _SPLIT.split(unicodedata.normalize("NFKC", target))]
    segments = [s for s in segments if s]
    if len(segments) < 2:
        return None
    glyph = f"[{re.escape(canon(SEPARATOR_READS) + SEPARATORS)}]?"
    return re.compile(glyph.join(re.escape(s) for s in segments))


@functools.lru_cache(maxsize=1024)
def _unnamed(target: str, known: frozenset[str]) -> tuple[re.Pattern[str], int] | None:
    """For a target holding CJK glyphs the recognizer cannot name (not among its ``known`` characters: the
    shipped PP-OCRv4 recognizer's 6623 lack 撥 週 儲 緊 階 尋 隻 預 飽, common in Traditional Chinese), the
    pattern a line read must match as a whole -- each such glyph read as its Simplified form, as any one
    non-digit glyph, or not at all -- and the target's length; None when the target has none, or when
    too little of it is named to say which label it is (fewer than two named letters or CJK glyphs, or
    more unnamed glyphs than named ones)."""
    parts, named, unnamed = [], 0, 0
    for c in unicodedata.normalize("NFKC", target):
        form = canon_char(c)
        if not form:
            continue
        if "\u3400" <= c <= "\u9fff" and c not in known:
            parts.append(f"(?:{re.escape(form)}|[^0-9])?")
            unnamed += 1
            continue
        parts.append(re.escape(form))
        named += sum(x.isalpha() for x in form)
    if not unnamed or named < 2 or unnamed > named:
        return None
    return re.compile("".join(parts)), len(canon(target))


def _one(q: str, target: str, b: TextBox, own_line: bool, known: frozenset[str] = frozenset()) -> TextHit | None:
    """How line ``b`` matches the canonical target ``q`` (``target`` as given), or None; ``known``: the
    characters the recognizer can name (empty: all of them)."""
    t = canon(b.text)
    if not t:
        return None
    if t == q:
        return TextHit(b, "exact", 1.0)
    sep = _separated(target)
    if sep is not None and sep.fullmatch(t):
        return TextHit(b, "exact", 1.0)
    unnamed = _unnamed(target, known) if known else None
    if unnamed is not None and len(t) >= unnamed[1] - 1 and unnamed[0].fullmatch(t):   # one glyph dropped at most
        return TextHit(b, "unnamed", PART_SIMILARITY)
    if q.endswith("...") and t == q[:-3]:
        # The dump's text ends in "…" and the line reads it without: the recognizer dropped the dots, or
        # it is another label (Google's search hint "搜尋…" and its "搜尋" tab, real-zh): a near miss only.
        return TextHit(b, "contains", len(t) / len(q))
    if q in t:
        part = _part(q, b) if own_line else None
        if part is not None:
            return TextHit(part, "part", PART_SIMILARITY)
        return TextHit(b, "contains", len(q) / len(t))
    if truncated_of(t, q):
        return TextHit(b, "truncated", PART_SIMILARITY)
    if t in q and len(t) >= 0.6 * len(q):
        return TextHit(b, "contains", len(t) / len(q))
    if _numbers(q) and _numbers(q) != _numbers(t):   # a misread number is another number, never "like" it
        return None
    r = difflib.SequenceMatcher(None, q, t).ratio()
    return TextHit(b, "similar", r) if r >= MIN_SIMILARITY else None


def match_text(target: str, boxes: list[TextBox], *, min_similarity: float = MIN_SIMILARITY,
               known: frozenset[str] = frozenset()) -> list[TextHit]:
    """Boxes whose text matches ``target``: exact, then contains, then similar (difflib), best first.

    Compared in :func:`canon` form; ``"张 三"`` matches ``"张三"`` exactly, ``"設定"`` matches ``"设定"``.
    Containment counts both ways only when the box text is not much longer than the target, so
    ``"发送"`` does not match a whole paragraph that happens to contain it first. A target longer
    than every line is also compared with runs of consecutive lines merged (a wrapped label, words
    on a line joined first) and with neighbours on one line joined (a split label); other targets
    only when such a run reads exactly the target. A target found at a word boundary inside a longer
    line (two labels read as one line) is a ``part`` hit with its own sub-box (:func:`_part`); a
    reading that is the target cut short with an ellipsis ("Recomme...") is a ``truncated`` hit.
    Both count as sure as ``part``, and so does an ``unnamed`` hit: the line reads the target but for
    glyphs the recognizer cannot name (``known``, its characters; :func:`_unnamed`).
    """
    q = canon(target)
    if not q:
        return []
    pool = list(boxes)
    joined = _joined_words(boxes)
    runs = _merged_lines(boxes + joined) + joined   # words joined into lines, lines into a wrapped label
    if len(q) > max((len(canon(b.text)) for b in boxes), default=0):
        pool += runs
    else:   # a longer line elsewhere on the screen: a run still counts when it reads exactly the target
        pool += [b for b in runs if (h := _one(q, target, b, False, known)) is not None and h.kind == "exact"]
    own = {id(b) for b in boxes}
    hits = [h for b in pool if (h := _one(q, target, b, id(b) in own, known)) is not None
            and (h.kind != "similar" or h.similarity >= min_similarity)]
    rank = {"exact": 0, "part": 1, "truncated": 1, "unnamed": 1, "contains": 2, "similar": 3}
    hits.sort(key=lambda h: (rank[h.kind], -h.similarity, -h.box.score))
    return hits
