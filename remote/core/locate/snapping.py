"""A model's box (or point) to the real element there: no tap goes where only a model pointed (pure).

A vision model or a phone agent gives coordinates; the UI tree (or an OCR line)
usually has the element it means. :func:`screen_elements` lists the screen's
candidates, :func:`snap` picks the one holding the model's point, and the tap
goes to that element's box, exact to the pixel. When nothing is there (a canvas,
a game), the model's box stands, and the caller decides what that is worth.
"""

from __future__ import annotations

from collections.abc import Sequence

from remote.core.locate.ocr import TextBox
from remote.core.locate.ui_tree import UINode, UITree
from remote.core.records import UIElement

BBox = tuple[int, int, int, int]
MAX_ELEMENTS = 150
CONTAINER_SHARE = 0.5     # a node over half the screen is a container, not something one taps


def _label(tree: UITree, node: UINode) -> str:
    """What the element says: its text or description, else those of what it holds, else its hint; an empty
    text field is "text field" (focusing one is harmless, unlike an unlabelled icon)."""
    if node.label.strip():
        return node.label.strip()
    inner = [n.label.strip() for n in tree.nodes if n.label.strip() and tree.on_screen(n)
             and tree.is_ancestor(node, n)]
    if inner:
        return " / ".join(inner[:3])
    if node.hint.strip():
        return node.hint.strip()
    return "text field" if "EditText" in node.class_name else ""


def screen_elements(tree: UITree | None, limit: int = MAX_ELEMENTS) -> list[UIElement]:
    """The elements a model may point at: each tap target (a clickable node, or the clickable ancestor of a
    labelled node) once, on screen, not a full-screen container, top to bottom. ``description`` is its label."""
    if tree is None:
        return []
    w, h = tree.screen_size
    area = max(1, w * h)
    seen: dict[BBox, UIElement] = {}
    for node in tree.nodes:
        if not tree.on_screen(node) or not (node.clickable or node.long_clickable or node.label.strip()
                                            or node.checkable):
            continue
        target = tree.clickable_target(node)
        x1, y1, x2, y2 = target.bounds
        if (x2 - x1) * (y2 - y1) > CONTAINER_SHARE * area or target.bounds in seen:
            continue
        label = _label(tree, target)
        seen[target.bounds] = UIElement(element_type="tree", description=label, bbox=target.bounds,
                                        confidence=1.0, center=target.center,
                                        metadata={"class": target.class_name, "clickable": target.clickable})
    ordered = sorted(seen.values(), key=lambda e: (e.bbox[1], e.bbox[0]))
    return ordered[:limit]


def text_elements(lines: Sequence[TextBox], limit: int = MAX_ELEMENTS) -> list[UIElement]:
    """OCR lines as elements, for a screen whose UI tree shows nothing (a canvas, a game, a WebView)."""
    return [UIElement(element_type="ocr", description=line.text, bbox=line.bbox, confidence=line.score,
                      center=line.center) for line in lines[:limit] if line.text.strip()]


def holding(point: tuple[float, float], elements: Sequence[UIElement]) -> list[UIElement]:
    """The elements whose box holds ``point``, smallest first."""
    x, y = point
    hits = [e for e in elements if e.bbox[0] <= x < e.bbox[2] and e.bbox[1] <= y < e.bbox[3]]
    return sorted(hits, key=lambda e: (e.bbox[2] - e.bbox[0]) * (e.bbox[3] - e.bbox[1]))


def snap(box: BBox, elements: Sequence[UIElement]) -> UIElement | None:
    """The element ``box`` means: the smallest one holding its centre (None when none does)."""
    x1, y1, x2, y2 = box
    hits = holding(((x1 + x2) / 2, (y1 + y2) / 2), elements)
    return hits[0] if hits else None
