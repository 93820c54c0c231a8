"""One screen as the locator's tiers see it: an image and (when it was dumped with it) its UI tree.

Pure: a Screen never talks to a phone. Whoever captures it (the runner's
``Capture``, a test, a command reading files) says whether the UI dump was taken
with it; derived data (gray copy, pyramid, OCR lines, ORB features, the parsed
tree) is computed once, on first use. Its frame may come later (`FrameLater`: a screen read as a tree whose
pixels nobody has needed yet); it is taken the first time anything reads the pixels (`Screen.frame_taken`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
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


class FrameLater:
    """A screen's frame not taken yet: ``take`` gives it (the image and whether the screen was secure) the first
    time it is asked for, once; ``size`` is the display's meanwhile. ``take`` raises (`remote.errors.FrameGone`,
    from the runner's capture) once something has changed the screen since its tree was read."""

    def __init__(self, size: tuple[int, int], take: Callable[[], tuple[Any, bool]]) -> None:
        self.size = size
        self._take = take
        self._got: tuple[Any, bool] | None = None
        self._lock = threading.Lock()

    @property
    def taken(self) -> bool:
        return self._got is not None

    def get(self) -> tuple[Any, bool]:
        with self._lock:
            if self._got is None:
                self._got = self._take()
            return self._got


class Screen:
    def __init__(self, screenshot: Any, hierarchy: str | UITree | None = None, *, secure: bool = False,
                 tree_error: str = "") -> None:
        self.source = screenshot       # the image, or the `FrameLater` the image comes from
        self._later = screenshot if isinstance(screenshot, FrameLater) else None
        self._bgr: np.ndarray | None = None
        self._gray: np.ndarray | None = None
        self._pil: Image.Image | None = None
        self._secure = secure          # the image is a black stand-in: a FLAG_SECURE window (the tree still works)
        if self._later is None:
            self._set(screenshot, secure)
        else:
            self.size = self._later.size
            if self._later.taken:
                self._set(*self._later.get())
        self.hierarchy = hierarchy
        self._tree: UITree | None = None
        self._tree_error = tree_error
        self._texts: dict[str, list[ocr.TextBox]] = {}
        self._quads: dict[str, list[np.ndarray]] = {}   # per reading: every line its detector found
        self.ocr_timing: dict[str, dict[str, float]] = {}   # per reading: det_ms, rec_ms, lines (ocr.read_text)
        self._orb: tuple[Any, Any] | None = None
        self._pyramid: Pyramid | None = None
        self.tree_reused = False       # the tree came from an earlier capture of the same screen state
        self._thumb: np.ndarray | None = None

    def _set(self, image: Any, secure: bool) -> None:
        self._bgr = matching.as_bgr(image, "screenshot")
        self._gray = matching.to_gray(self._bgr)
        self.size = (self._bgr.shape[1], self._bgr.shape[0])
        self._pil = image if isinstance(image, Image.Image) else None
        self._secure = secure

    def _pixels(self) -> None:
        if self._bgr is None:
            assert self._later is not None
            self._set(*self._later.get())

    def take_frame(self) -> None:
        """Take the frame now if it is not at hand (a step whose verdict may compare pixels, before it acts)."""
        self._pixels()

    @property
    def frame_taken(self) -> bool:
        """The frame is at hand: given, or taken since (a screen read as a tree alone takes it on first use)."""
        return self._later is None or self._later.taken

    @property
    def bgr(self) -> np.ndarray:
        self._pixels()
        assert self._bgr is not None
        return self._bgr

    @property
    def gray(self) -> np.ndarray:
        self._pixels()
        assert self._gray is not None
        return self._gray

    @property
    def secure(self) -> bool:
        """The image is a black stand-in (a FLAG_SECURE window; the tree still works). Only the picture tells:
        asked of a screen whose frame is not taken yet, it takes it (what asks is about to read the pixels)."""
        self._pixels()
        return self._secure

    @property
    def pil(self) -> Image.Image:
        if self._pil is None:
            self._pil = to_pil(self.bgr)
        return self._pil

    def pil_if_taken(self) -> Image.Image | None:
        """The picture when the frame is at hand, else None (for what needs it only when it is there: the
        screen's size comes with its tree)."""
        return self.pil if self.frame_taken else None

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
