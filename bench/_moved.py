"""The ``moved`` condition of the locator bench: a template cut from one screenshot, located on another
screenshot of the same app where its element sits elsewhere.

Every other positive condition locates a template on the pixels it was cut from (rescaled or
recompressed); here the screen is another capture: other content around the element, the element at
another place. Which element is "the same" comes from the two UI dumps, not from pixels: the same
resource-id and nearly the same words (``_cases._same_element``), the same size within 2 px, and its
box moved by at least 8 px. The other screenshot must hold exactly one such node (else where the
target is would be a guess), and the element must be drawn in range (32-400 px, inside the screen).
Whether the element looks the same there is not checked: a switch turned on, a row highlighted, a
node the dump lists under another view are the screens a user's reference meets too, and they count
for both matchers alike.

Sources: the development screens of the bench's parts (``_cases.PARTS``), and with ``--zh`` the
Chinese development screens (the data folder's ``real-zh``: QQ Music, Settings, a launcher, Santiao IM),
never used to fit a locator constant, in the checking part (:data:`ZH_PART`).
"""

from __future__ import annotations

import random

import numpy as np
from _cases import MAX_SIDE, MIN_SIDE, PART_NAMES, PARTS, Case, Pair, clickable_boxes, node_labels
from _cases import _same_element as same_element
from PIL import Image

MOVED_PX = 8        # the element's box moved at least this far (in x plus y) on the other screenshot
SIZE_PX = 2         # and kept its size within this
ZH_PART = "checking"


def part_of(pair: Pair, zh_folders: set[str]) -> str | None:
    return ZH_PART if pair.folder in zh_folders else PARTS.get(pair.folder)


def _labelled(xml: str) -> dict[tuple[int, int, int, int], tuple[str, str]]:
    return {b: lab for b, lab in node_labels(xml).items() if lab[0] or lab[1]}


def _in_range(box: tuple[int, int, int, int], size: tuple[int, int]) -> bool:
    w, h = box[2] - box[0], box[3] - box[1]
    return (MIN_SIDE <= w <= MAX_SIDE and MIN_SIDE <= h <= MAX_SIDE and box[0] >= 0 and box[1] >= 0
            and box[2] <= size[0] and box[3] <= size[1])


def elsewhere(box, label, other: dict[tuple[int, int, int, int], tuple[str, str]]):
    """The one node of ``other`` that is the element at ``box`` moved elsewhere, or None (none, several,
    resized, or in place)."""
    same = [b for b, lab in other.items() if same_element(label, lab)]
    if len(same) != 1:
        return None
    b = same[0]
    w, h = box[2] - box[0], box[3] - box[1]
    if abs((b[2] - b[0]) - w) > SIZE_PX or abs((b[3] - b[1]) - h) > SIZE_PX:
        return None
    return b if abs(b[0] - box[0]) + abs(b[1] - box[1]) >= MOVED_PX else None


def build_moved(pairs: list[Pair], per_screen: int, zh_folders: set[str], seed: int = 7, limit: int | None = None,
                low_info=None, parts: tuple[str, ...] = PART_NAMES) -> tuple[list[Case], dict[str, int]]:
    """Per part: for ``limit`` screenshots (all when None), up to ``per_screen`` clickable elements that sit
    elsewhere on another screenshot of the same app and folder, each located there. A template cut again
    from another screen (the same pixels) is the same test and skipped."""
    cases: list[Case] = []
    counts = {"moved_screens": 0}
    taken: set[bytes] = set()
    dumps: dict[int, str] = {}
    labelled: dict[int, dict[tuple[int, int, int, int], tuple[str, str]]] = {}

    def dump(i: int) -> str:
        if i not in dumps:
            dumps[i] = pairs[i].xml_path.read_text(encoding="utf-8", errors="replace")
        return dumps[i]

    def labels_of(i: int) -> dict[tuple[int, int, int, int], tuple[str, str]]:
        if i not in labelled:
            labelled[i] = _labelled(dump(i))
        return labelled[i]

    for part in parts:
        rng = random.Random(seed + 2)
        members = [i for i, p in enumerate(pairs) if part_of(p, zh_folders) == part]
        order = list(members)
        rng.shuffle(order)
        for pi in order[:limit] if limit else order:
            p = pairs[pi]
            img = Image.open(p.image_path).convert("RGB")
            labels = labels_of(pi)
            boxes = [b for b in clickable_boxes(dump(pi), img.size) if b in labels]
            rng.shuffle(boxes)
            others = [j for j in members if j != pi and pairs[j].folder == p.folder and pairs[j].package == p.package]
            rng.shuffle(others)
            arr, got = np.asarray(img), 0
            for box in boxes:
                if got >= per_screen:
                    break
                for j in others:
                    size = Image.open(pairs[j].image_path).size
                    to = elsewhere(box, labels[box], labels_of(j))
                    if to is None or not _in_range(to, size):
                        continue
                    crop = arr[box[1]:box[3], box[0]:box[2]]
                    key = crop.tobytes() + bytes(str(crop.shape), "ascii")
                    if key not in taken:
                        taken.add(key)
                        flat = bool(low_info is not None and low_info(crop))
                        cases.append(Case(j, "moved", box, pi, to, part, flat))
                        got += 1
                    break
            counts["moved_screens"] += got > 0
    return cases, counts
