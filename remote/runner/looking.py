"""Looking at a screen without touching it: is a target there, is a switch on, what does it say (model-free).

The flow steps (``flow.py``) look at the live screen through these functions, and ``remote replay`` at
the recorded one, so a replay decides exactly as the run did. The UI tree decides whenever it can tell
(it has readable nodes and the screen is not secure); OCR reads only a screen whose tree cannot; a
reference image goes through the picture tiers. Nothing here calls a model::

    see(locator, screen, "text:允许")              -> Seen(found=True, evidence="tree at [96, 1170, 984, 1290]")
    switch(locator, screen, "role:toggle:蓝牙")    -> Seen(found=False, evidence="the switch is off")
    read(locator, screen, Extract("below", "last"), ("text:张三",)) -> Reading(texts=["明天见"], method="tree")
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from remote.core.coords import to_pixels
from remote.core.locate import ocr
from remote.core.locate.screen import Screen
from remote.core.locate.tree_facts import switch_state
from remote.core.locate.ui_tree import UINode, UITree
from remote.core.plan.actions import ActionName, ArgsError
from remote.core.plan.flow import Extract, parse_any
from remote.core.plan.values import ReadError, Value, convert
from remote.core.records import LocateResult
from remote.runner.protocols import Locator

LOOK_TIERS = ("tree", "template", "multiscale", "orb", "fixed")
OCR_TIERS = (*LOOK_TIERS, "ocr")
SHOWN_TEXTS = 12          # texts quoted as evidence of what the screen showed instead

BBox = tuple[int, int, int, int]


@dataclass(frozen=True)
class Seen:
    found: bool | None    # None: nothing could tell (no tree, no OCR reading)
    evidence: str = ""
    method: str = ""
    bbox: BBox | None = None


@dataclass
class Reading:
    """What an extract read: texts in reading order, a switch's state, or why nothing."""

    texts: list[str] = field(default_factory=list)
    checked: bool | None = None
    method: str = ""
    evidence: str = ""


def tree_can_tell(screen: Screen) -> bool:
    """A tree with something readable on a screen that is not secure: the tree's word is final."""
    tree = screen.tree()
    return tree is not None and not screen.secure and any(n.label.strip() for n in tree.visible_nodes())


def tiers_for(screen: Screen) -> tuple[str, ...]:
    return LOOK_TIERS if tree_can_tell(screen) else OCR_TIERS


def locate(locator: Locator, screen: Screen, targets: Sequence[str],
           tiers: Sequence[str] | None = None) -> LocateResult | None:
    """The first of ``targets`` found (free tiers; ``matched_ref`` says which), or the last failure (None for
    no targets)."""
    last = None
    for target in targets:
        last = locator.locate_with_fallback(target, tiers or tiers_for(screen), screen)
        if last.success and last.element is not None:
            last.matched_ref = target
            return last
    return last


def see(locator: Locator, screen: Screen, targets: Sequence[str]) -> Seen:
    """Is any of ``targets`` on the screen?"""
    return seen_in(locate(locator, screen, targets), screen, targets)


def seen_in(loc: LocateResult | None, screen: Screen, targets: Sequence[str]) -> Seen:
    """What a locate of ``targets`` on ``screen`` says of their presence: found wherever a place matches (one,
    or several nearly equally well), None when nothing can tell (a secure screen without a UI tree)."""
    if loc is not None and loc.success and loc.element is not None:
        box = loc.element.bbox
        return Seen(True, f"{loc.matched_ref or targets[0]} found by {loc.method_used} at {list(box)}",
                    loc.method_used, box)
    if screen.tree() is None and screen.secure:
        return Seen(None, "a secure screen with no UI tree", "")
    return Seen(False, f"{' | '.join(targets)} not on the screen", "tree" if tree_can_tell(screen) else "ocr")


def switch(locator: Locator, screen: Screen, targets: Sequence[str]) -> Seen:
    """Is the switch on the row of ``targets`` on? ``found`` None when there is no such switch."""
    tree = screen.tree()
    loc = locate(locator, screen, targets, ("tree",))
    if tree is None or loc is None or not loc.success or loc.element is None:
        return Seen(None, f"{' | '.join(targets)} not found on the UI tree; {shows(screen)}", "tree")
    state = switch_state(tree.nodes, loc.element.bbox)
    if state is None:
        return Seen(None, f"no switch on the row of {' | '.join(targets)}", "tree")
    return Seen(state, f"the switch is {'on' if state else 'off'}", "tree", loc.element.bbox)


def texts(screen: Screen) -> list[str]:
    """What the screen shows, for evidence: the tree's texts, else what OCR read (at most SHOWN_TEXTS)."""
    tree = screen.tree()
    if tree is not None and tree_can_tell(screen):
        out = tree.texts()
    else:
        out = [b.text for b in screen.text_boxes()] if not screen.secure and ocr.available() else []
    return list(dict.fromkeys(t.strip() for t in out if t.strip()))[:SHOWN_TEXTS]


def page_of(screen: Screen) -> Any:
    """What a list shows, to tell whether a swipe moved it: the tree's texts, else the picture."""
    tree = screen.tree()
    if tree is not None and tree_can_tell(screen):
        return tuple(tree.texts())
    return screen.pil.tobytes()


def shows(screen: Screen) -> str:
    shown = texts(screen)
    return "the screen shows: " + ", ".join(repr(t[:30]) for t in shown) if shown else "nothing readable on it"


# ---------------------------------------------------------------------------------------------- reading
def read(locator: Locator, screen: Screen, args: Extract, targets: Sequence[str],
         tiers: Sequence[str] | None = None) -> Reading:
    """Read what ``args`` names: the target's own text (``from``), the text below or right of it, a region's
    texts, or the focused field; a checkable target also gives its state."""
    tree = screen.tree()
    if args.source == "focused":
        node = tree.focused_node() if tree is not None else None
        return Reading([node.text], method="tree") if node is not None and node.text.strip() else \
            Reading(evidence=f"no focused field with text; {shows(screen)}")
    if args.source == "region":
        return _region(screen, args)
    loc = locate(locator, screen, targets, tiers)
    if loc is None or not loc.success or loc.element is None:
        return Reading(evidence=f"{' | '.join(targets)} not found ({(loc.error if loc else '')[:120]}); "
                                f"{shows(screen)}")
    position = loc.element.metadata.get("node")
    node = tree.nodes[position] if tree is not None and isinstance(position, int) and \
        0 <= position < len(tree.nodes) else None
    if args.source == "from":
        return _own(screen, node, loc)
    anchor = node.bounds if node is not None else loc.element.bbox
    if tree is not None and tree_can_tell(screen):
        near = _beside(tree, node, anchor, args.source)
        if near is not None:
            return Reading([near.label], method="tree")
    return _beside_by_ocr(screen, anchor, args.source)


def _own(screen: Screen, node: UINode | None, loc: LocateResult) -> Reading:
    tree = screen.tree()
    if node is not None and tree is not None:
        checked = switch_state(tree.nodes, node.bounds) if node.checkable else None
        return Reading([node.label] if node.label.strip() else [], checked, "tree")
    assert loc.element is not None
    if loc.method_used.startswith("ocr") and loc.element.description:
        return Reading([loc.element.description], method="ocr")
    inside = [b.text for b in screen.text_boxes() if _inside(b.center, loc.element.bbox)]
    return Reading(inside, method="ocr") if inside else Reading(
        evidence=f"found by {loc.method_used} at {list(loc.element.bbox)}, but no text there")


def _inside(point: tuple[int, int], box: Sequence[int]) -> bool:
    return box[0] <= point[0] < box[2] and box[1] <= point[1] < box[3]


def _region(screen: Screen, args: Extract) -> Reading:
    assert args.region is not None
    box = to_pixels(list(args.region), screen.size)
    if box is None:
        return Reading(evidence=f"region {list(args.region)} is not on this {screen.size} screen")
    tree = screen.tree()
    if tree is not None and tree_can_tell(screen):
        nodes = [n for n in tree.visible_nodes() if n.text.strip() and _inside(n.center, box)
                 and not any(tree.is_ancestor(n, m) for m in tree.nodes if m.text.strip() and m is not n)]
        if nodes:
            return Reading([n.text for n in sorted(nodes, key=lambda n: (n.bounds[1], n.bounds[0]))], method="tree")
    boxes = sorted((b for b in screen.text_boxes() if _inside(b.center, box)), key=lambda b: (b.bbox[1], b.bbox[0]))
    if boxes:
        return Reading([b.text for b in boxes], method="ocr")
    return Reading(evidence=f"no text in region {list(box)}; {shows(screen)}")


def _row_box(tree: UITree, node: UINode | None) -> BBox | None:
    if node is None:
        return None
    row = tree.clickable_target(node)
    return row.bounds if row.position != node.position else None


def _beside(tree: UITree, node: UINode | None, anchor: BBox, side: str) -> UINode | None:
    """The nearest text below (``below``) or right of (``right_of``) the anchor, in the anchor's row when
    it has one (a chat-list row: the name, the last message under it, the time at its right)."""
    row = _row_box(tree, node)
    height = anchor[3] - anchor[1]
    best: tuple[float, UINode] | None = None
    for n in tree.visible_nodes():
        if not n.label.strip() or (node is not None and (n is node or tree.is_ancestor(n, node)
                                                          or tree.is_ancestor(node, n))):
            continue
        if row is not None and not _inside(n.center, row):
            continue
        gap = _gap(anchor, n.bounds, side)
        if gap is None or (row is None and gap > 2 * height):
            continue
        if best is None or gap < best[0]:
            best = (gap, n)
    return best[1] if best is not None else None


def _gap(anchor: BBox, box: BBox, side: str) -> float | None:
    """How far ``box`` lies below / right of ``anchor`` (None: not on that side, or not in line with it)."""
    ax1, ay1, ax2, ay2 = anchor
    x1, y1, x2, y2 = box
    if side == "below":
        overlaps = min(ax2, x2) - max(ax1, x1) > 0
        below = (y1 + y2) / 2 > ay2 - (ay2 - ay1) * 0.25
        return max(0.0, y1 - ay2) + abs(x1 - ax1) / 100 if overlaps and below else None
    in_line = min(ay2, y2) - max(ay1, y1) > 0
    right = (x1 + x2) / 2 > ax2 - (ax2 - ax1) * 0.25
    return max(0.0, x1 - ax2) if in_line and right else None


def _beside_by_ocr(screen: Screen, anchor: BBox, side: str) -> Reading:
    gaps = [(gap, b.text) for b in screen.text_boxes() if (gap := _gap(anchor, b.bbox, side)) is not None
            and not _inside(b.center, anchor) and gap <= 2 * (anchor[3] - anchor[1])]
    if gaps:
        return Reading([min(gaps)[1]], method="ocr")
    return Reading(evidence=f"nothing {side.replace('_', ' ')} the target; {shows(screen)}")


def value_of(reading: Reading, args: Extract) -> tuple[Value | None, str]:
    """The typed value of a reading, or None and why: a switch's state for a bool, else the texts converted."""
    try:
        if reading.checked is not None and args.kind == "bool":
            return reading.checked, ""
        if reading.texts or not reading.evidence:   # evidence without texts: nothing was found to read
            return convert(reading.texts, args.kind, args.pattern), ""
    except ReadError as exc:
        return None, str(exc) + (f" (read by {reading.method})" if reading.method else "")
    return None, reading.evidence


# ---------------------------------------------------------------------------------------------- replay
def again(look: dict[str, Any], step: dict[str, Any], screen: Screen, locator: Locator) -> tuple[str, str]:
    """A recorded look decided again on its recorded screen: (what the run saw, what is seen now), in words
    that are equal when the decision is the same."""
    kind, targets = str(look.get("kind")), [t for t in str(look.get("target") or "").split(" | ") if t]
    if kind == "extract":
        recorded = f"read {look.get('value')!r}" if look.get("seen") else "not read"
        try:
            args = parse_any(ActionName.EXTRACT, dict(step.get("params") or {}), step.get("target_ref"))
        except ArgsError as exc:
            return recorded, f"not replayable: {'; '.join(exc.problems)[:120]}"
        assert isinstance(args, Extract)
        refs = tuple(t for t in (step.get("target_ref"), *(step.get("alternatives") or ())) if t)
        value, _ = value_of(read(locator, screen, args, refs), args)
        return recorded, "not read" if value is None else f"read {value!r}"
    on_off = kind in ("checked", "not_checked")
    seen = switch(locator, screen, targets) if on_off else see(locator, screen, targets)
    return _seen_words(look.get("seen"), on_off), _seen_words(seen.found, on_off)


def _seen_words(found: Any, on_off: bool) -> str:
    """What was seen, not whether the condition held (a not_checked look that saw the switch on: "switch on")."""
    if found is None:
        return "could not tell"
    if on_off:
        return "switch on" if found is True else "switch off"
    return "on the screen" if found is True else "not on the screen"
