"""What is at a point of the screen, and every ``target_ref`` that finds it: the inspector's answers.

The forms come from the learning compiler (``runner.learning.candidate_forms``:
text, desc, role and label, ``editable:``, in its order), and a reference crop
cut on the spot (``learning.crop_at``); each is then looked for on the same
screen by the locator a run uses (no model), and reported with the tier that
found it, whether it finds *this* element and only it (a look-alike refusal
lists every place), its box and its tap point. Ranked: the forms that find the
element uniquely first, in the compiler's order, the crop after them, then the
ones a run would not use.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field
from typing import Any

from PIL import Image

from remote.core.locate.hybrid_locator import HybridLocator
from remote.core.locate.screen import Screen
from remote.core.locate.target_ref import parse_target
from remote.core.locate.tree_roles import is_editable
from remote.core.locate.ui_tree import UITree
from remote.core.records import LocateResult
from remote.runner.learning import candidate_forms, crop_at

MAX_ELEMENTS = 3000      # a real screen's dump has 50-400 nodes
MAX_CROPS = 200          # crops cut on the spot and not used yet: the oldest are dropped
CROP_PREFIX = "studio_c"


@dataclass
class Candidate:
    """One ``target_ref`` and what it finds on this screen."""

    target_ref: str
    kind: str                       # text, desc, role, editable, id, crop
    tier: str = ""                  # the tier that found it ("" when nothing did)
    found: bool = False
    unique: bool = False            # found, one place only, and it is the element at the point
    box: list[int] | None = None
    tap: list[int] | None = None
    places: list[list[int]] = field(default_factory=list)   # every place it matches (2+: refused as look-alikes)
    why: str = ""                   # why a run would not use it, when it would not
    image: str = ""                 # a crop: its URL on the studio

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class CropShelf:
    """Crops cut on the spot, by name (``studio_c1`` ...), until a step uses them or they are dropped."""

    def __init__(self) -> None:
        self.images: dict[str, tuple[Image.Image, tuple[int, int]]] = {}
        self._count = 0
        self._lock = threading.Lock()

    def add(self, image: Image.Image, screen_size: tuple[int, int]) -> str:
        with self._lock:
            self._count += 1
            name = f"{CROP_PREFIX}{self._count}"
            self.images[name] = (image, screen_size)
            while len(self.images) > MAX_CROPS:
                self.images.pop(next(iter(self.images)))
            return name

    def get(self, name: str) -> tuple[Image.Image, tuple[int, int]] | None:
        return self.images.get(name)


def elements(tree: UITree | None) -> list[dict[str, Any]]:
    """The on-screen nodes of the UI tree, in tree order: box, text, desc, role (short class), id, depth, and
    the attributes the page's attribute pane shows (class, package, enabled, checkable, scrollable, ...)."""
    if tree is None:
        return []
    out = []
    for node in tree.visible_nodes()[:MAX_ELEMENTS]:
        out.append({"box": list(node.bounds), "text": node.text, "desc": node.content_desc,
                    "role": node.class_name.rsplit(".", 1)[-1], "id": node.resource_id, "depth": node.depth,
                    "clickable": node.clickable, "editable": is_editable(node), "checked": node.checked,
                    "focused": node.focused, "class": node.class_name, "package": node.package,
                    "enabled": node.enabled, "checkable": node.checkable, "scrollable": node.scrollable,
                    "selected": node.selected, "long_clickable": node.long_clickable, "password": node.password,
                    "n": node.position, "parent": node.parent})
    return out


def inspect_point(screen: Screen, point: tuple[int, int], locator: HybridLocator, shelf: CropShelf, *,
                  stable_ids: bool = False) -> list[Candidate]:
    """Every candidate ``target_ref`` for the element at ``point``, best first."""
    out = [_judge(form, parse_target(form)[0], locator.locate(form, screen), point)
           for form in candidate_forms(screen, point, stable_ids=stable_ids)]
    crop = crop_at(screen, point, icon=True)
    if crop is not None:
        name = shelf.add(crop, screen.size)
        found = locator.locate_image(crop, screen, source_size=screen.size)
        out.append(_judge(name, "crop", found, point, image=f"/api/crops/{name}.png"))
    return [c for c in out if c.unique] + [c for c in out if not c.unique]


def best_target(candidates: list[Candidate]) -> Candidate | None:
    """The candidate a step should use: the first that finds the element, and only it."""
    return next((c for c in candidates if c.unique), None)


def _judge(ref: str, kind: str, found: LocateResult, point: tuple[int, int], image: str = "") -> Candidate:
    el = found.element
    out = Candidate(ref, kind, tier=found.method_used if found.success else "", found=found.success, image=image)
    if el is not None:
        out.box, out.tap = list(el.bbox), list(el.center)
    if not found.success or el is None:
        out.why = found.error or "not found"
        return out
    if not found.reliable:
        out.places = [list(c.bbox) for c in found.candidates]
        out.why = f"refused: {len(out.places)} places look alike ({', '.join(map(str, out.places))}); a run " \
                  "would not tap a guess"
        return out
    out.places = [list(el.bbox)]
    if not _contains(el.bbox, point):
        out.why = f"finds another element, at {list(el.bbox)}"
        return out
    out.unique = True
    return out


def _contains(box: tuple[int, int, int, int], point: tuple[int, int]) -> bool:
    return box[0] <= point[0] < box[2] and box[1] <= point[1] < box[3]
