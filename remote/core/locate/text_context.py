"""What the UI tree says about a text hit's surroundings (pure): the run's own typing, and longer labels.

Two things a tier cannot see from the pixels or the one node it matched:

* **Our own echo.** A text field showing a text this run typed (``HybridLocator.note_typed``) holds that
  text: a ``text:不存在的人`` found inside it, by the tree, OCR or a model, is the search box echoing the
  query, not the contact (OCR once tapped it three times).
* **A quoted mention.** OCR grades a target found at a word boundary of a longer line as a ``part`` (two
  labels read as one line, or a row such as 蓝牙、NFC). When the tree's node there shows the target only
  between quotation marks (没有找到“不存在的人”相关结果), the sentence mentions it and is not it: graded
  ``contains`` (a candidate, never tapped unasked), as ``text:张三`` never taps 没有找到'张三'相关结果.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from remote.core.coords import BBox, bbox_center
from remote.core.locate.tree_roles import is_editable
from remote.core.locate.ui_tree import UITree, normalize_text
from remote.core.records import UIElement

QUOTES = "\"'“”‘’「」『』《》〈〉«»‹›"


def typed_echoes(tree: UITree, typed: Sequence[str], value: str) -> list[BBox]:
    """Boxes of the text fields that show a text this run typed and that holds ``value``."""
    said = {normalize_text(t) for t in typed if normalize_text(t)}
    q = normalize_text(value)
    return [n.bounds for n in tree.nodes if q and is_editable(n) and tree.on_screen(n)
            and normalize_text(n.text) in said and q in normalize_text(n.text)]


def without_echoes(tree: UITree, typed: Sequence[str], value: str,
                   elements: list[UIElement]) -> list[UIElement]:
    """``elements`` less those whose centre lies in a field echoing what the run typed."""
    boxes = typed_echoes(tree, typed, value)
    return [e for e in elements if not any(_inside(e.bbox, box) for box in boxes)]


def ocr_grade(tree: UITree | None, kind: str, bbox: BBox, value: str) -> str:
    """An OCR hit's kind, ``part`` demoted to ``contains`` where the tree's node quotes the target."""
    if kind != "part" or tree is None:
        return kind
    return "contains" if quoted_in(tree.label_at(bbox_center(bbox)), value) else kind


def quoted_in(label: str, value: str) -> bool:
    """``value`` appears in ``label``, and only between quotation marks.

    >>> quoted_in("没有找到“张三”相关结果", "张三"), quoted_in("蓝牙、NFC", "蓝牙")
    (True, False)
    """
    text, q = unicodedata.normalize("NFKC", label).casefold(), unicodedata.normalize("NFKC", value).casefold().strip()
    spots = [i for i in range(len(text)) if q and text.startswith(q, i)]
    return bool(spots) and all(i > 0 and i + len(q) < len(text) and text[i - 1] in QUOTES
                               and text[i + len(q)] in QUOTES for i in spots)


def _inside(bbox: BBox, box: BBox) -> bool:
    cx, cy = bbox_center(bbox)
    return box[0] <= cx <= box[2] and box[1] <= cy <= box[3]
