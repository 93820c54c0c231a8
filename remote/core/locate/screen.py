"""One screen as the locator's tiers see it: an image and (when it was dumped with it) its UI tree.

Pure: a Screen never talks to a phone. Whoever captures it (the runner's
``Capture``, a test, a command reading files) says whether the UI dump was taken
with it; derived data (gray copy, pyramid, OCR lines, ORB features, the parsed
tree) is computed once, on first use.
"""

from __future__ import annotations

import logging
from typing import Any

import cv2
import numpy as np
from PIL import Image

from remote.core.device.capture import to_pil
from remote.core.locate import features, matching, ocr, ocr_namer
from remote.core.locate.pyramid import Pyramid, gray_pyramid
from remote.core.locate.ui_tree import UITree, UITreeError, parse_hierarchy

logger = logging.getLogger(__name__)
STATE_DIFF = 24              # gray levels a 1/8-size cell must move to count as changed
STATUS_BAR_SHARE = 0.05      # the top of the frame left out of comparisons (the status bar's clock)


class Screen:
    def __init__(self, screenshot: Any, hierarchy: str | UITree | None = None, *, secure: bool = False,
                 tree_error: str = "") -> None:
        self.source = screenshot
        self.bgr = matching.as_bgr(screenshot, "screenshot")
        self.gray = matching.to_gray(self.bgr)
        self.size = (self.bgr.shape[1], self.bgr.shape[0])
        self._pil = screenshot if isinstance(screenshot, Image.Image) else None
        self.hierarchy = hierarchy
        self.secure = secure           # the image is a black stand-in: a FLAG_SECURE window (the tree still works)
        self._tree: UITree | None = None
        self._tree_error = tree_error
        self._texts: dict[str, list[ocr.TextBox]] = {}
        self._quads: dict[str, list[np.ndarray]] = {}   # per reading: every line its detector found
        self.ocr_timing: dict[str, dict[str, float]] = {}   # per reading: det_ms, rec_ms, lines (ocr.read_text)
        self._orb: tuple[Any, Any] | None = None
        self._pyramid: Pyramid | None = None
        self.tree_reused = False       # the tree came from an earlier capture of the same screen state
        self._thumb: np.ndarray | None = None

    @property
    def pil(self) -> Image.Image:
        if self._pil is None:
            self._pil = to_pil(self.bgr)
        return self._pil

    @property
    def xml(self) -> str | None:
        """The UI dump as taken (None when the screen came without one, or as a parsed tree)."""
        return self.hierarchy if isinstance(self.hierarchy, str) else None

    @property
    def tree_taken(self) -> bool:
        """The UI dump was taken with this screen (it may have failed; then ``tree()`` is None)."""
        return self.hierarchy is not None or bool(self._tree_error) and self._tree_error != "no hierarchy"

    @property
    def tree_error(self) -> str:
        """Why this screen has no tree, when its dump was taken and failed (the phone's words, its hint)."""
        return "" if self._tree_error == "no hierarchy" else self._tree_error

    def tree(self) -> UITree | None:
        """The parsed UI tree, or None when the screen came without one (or it could not be parsed)."""
        if self._tree is not None or self._tree_error:
            return self._tree
        xml = self.hierarchy
        if isinstance(xml, UITree):
            self._tree = xml
            return xml
        if xml is None:
            self._tree_error = "no hierarchy"
            return None
        try:
            self._tree = parse_hierarchy(xml, self.size)
        except UITreeError as exc:
            logger.warning("[定位] UI 树无法解析: %s", exc)
            self._tree_error = str(exc)
        return self._tree

    def text_boxes(self, second: bool = False) -> list[ocr.TextBox]:
        """OCR lines, read once per screen: the first reading, or with ``second=True`` the
        second one (the detector at full resolution, ``ocr.read_text``), which the OCR tier
        asks for only after a near miss."""
        reading = "second" if second else "first"
        if reading not in self._texts:
            self.ocr_timing[reading], self._quads[reading] = {}, []
            self._texts[reading] = ocr.read_text(self.bgr, reading=reading, timing=self.ocr_timing[reading],
                                                 quads=self._quads[reading])
        return self._texts[reading]

    def named_boxes(self) -> list[ocr.TextBox]:
        """The first reading's lines read again by the second recognizer, the one that names Traditional
        glyphs the first cannot (``ocr_namer.read_named``), once per screen."""
        if "named" not in self._texts:
            self.text_boxes()
            self._texts["named"] = ocr_namer.read_named(self.bgr, self._quads.get("first", []))
        return self._texts["named"]

    def region_boxes(self, regions: tuple[tuple[int, int, int, int], ...]) -> list[ocr.TextBox]:
        """OCR lines of ``regions`` read closer (``ocr.read_regions``), once per set of regions."""
        key = "regions " + " ".join(f"{r[1]}-{r[3]}" for r in regions)
        if key not in self._texts:
            self._texts[key] = ocr.read_regions(self.bgr, regions)
        return self._texts[key]

    @property
    def ocr_readings(self) -> tuple[str, ...]:
        """The OCR readings made of this screen so far, in order ("first", then "second" or "regions ...")."""
        return tuple(self._texts)

    def pyramid(self) -> Pyramid:
        """Gray pyramid (1/2-1/8 of the screen) shared by every template search on this screen."""
        if self._pyramid is None:
            self._pyramid = gray_pyramid(self.gray)
        return self._pyramid

    def same_state(self, other: Screen) -> bool:
        """Does ``other`` show the same screen state (so its UI tree still holds)?

        Compared on 1/8-size gray copies, below the status bar (its clock moves), allowing
        a handful of changed cells: a blinking text caret is one column of cells, a typed
        character is several columns.
        """
        if other.size != self.size:
            return False
        diff = cv2.absdiff(self.thumb(), other.thumb())
        changed = int(np.count_nonzero(diff > STATE_DIFF))
        return changed <= max(2, diff.size // 5000)

    def thumb(self) -> np.ndarray:
        if self._thumb is None:
            w, h = self.size
            small = cv2.resize(self.gray, (max(1, w // 8), max(1, h // 8)), interpolation=cv2.INTER_AREA)
            self._thumb = small[int(small.shape[0] * STATUS_BAR_SHARE):]
        return self._thumb

    def orb(self) -> tuple[Any, Any]:
        if self._orb is None:
            self._orb = features.orb_features(self.bgr)
        return self._orb
