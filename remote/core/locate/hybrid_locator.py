"""HybridLocator: find a ``target_ref`` on the screen, free tiers first, the vision model last.

Tier order per target_ref form (docs/locator.md, "target_ref forms and tier order"):

    NAME / alias     template -> multiscale -> orb -> vision (with the reference image)
    text:张三         tree (text, then content-desc; exact, then contains) -> ocr -> vision
    id:pkg:id/name    tree by resource-id
    desc:发送          tree by content-desc -> ocr
    editable:[LABEL]  tree: the focused / only text field, or one with that hint, text or desc
    role:CLASS:LABEL  tree: a node of that class named LABEL (``tree_roles``)
    dynamic:描述       vision only
    xy:540,2280       the given pixel;  fixed:NAME  from ``fixed_points`` (pixel or 0-1000)

A tier "finds" when its best element's calibrated confidence (``confidence.py``) is
at least ``ACCEPT``; otherwise the next tier runs. Several elements scoring nearly
as well as the best are returned as ``candidates`` with ``reliable=False``. Every
element is checked with ``coords.overlaps_screen``/``visible_region``; a partly
visible element is tapped in the middle of its visible part, or reported as not
interactable. Given no screenshot, it captures one from its ``device`` (and the UI
dump only when a tier needs it).

The text this run typed (``note_typed``) shows in its field: a ``text:``/``desc:``
target found inside a field that shows it, by any tier, is that echo and never a
target (OCR read 不存在的人 in the search box and tapped it three times).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

from PIL import Image

from remote.core.coords import (
    overlaps_screen,
    visible_region,
)
from remote.core.device.protocol import ScreenSource
from remote.core.locate import matching, ocr, ocr_namer, ocr_text, text_context, tree_tier
from remote.core.locate.assets import AssetsManager
from remote.core.locate.cache import LocateCache
from remote.core.locate.confidence import ACCEPT, calibrate, make_element
from remote.core.locate.deciding import decide
from remote.core.locate.protocols import VisionTier
from remote.core.locate.screen import Screen
from remote.core.locate.snapping import screen_elements, text_elements
from remote.core.locate.target_ref import VISUAL, FixedPoint, default_tiers, fixed_box, parse_target
from remote.core.locate.ui_tree import UITree, parse_hierarchy
from remote.core.locate.visual_chain import visual_chain
from remote.core.records import LocateFailure, LocateResult, LocateStrategy, UIElement
from remote.errors import RemoteError

__all__ = ["HybridLocator", "LocateStrategy", "parse_target"]

logger = logging.getLogger(__name__)

ALIASES = {"visual": VISUAL, "opencv": VISUAL, "ui_tree": ("tree",), "model": ("vision",)}
KNOWN_TIERS = {"tree", "template", "multiscale", "orb", "ocr", "vision", "fixed"}


class HybridLocator:
    """Every argument is optional: a locator for screenshot files needs no device."""

    def __init__(self, device: ScreenSource | None = None, assets: AssetsManager | None = None,
                 vision: VisionTier | None = None, strategy: LocateStrategy | str = LocateStrategy.OPENCV_FIRST,
                 fixed_points: Mapping[str, FixedPoint] | None = None, *, cache_ttl: float = 30.0,
                 learn_from_vision: bool = False, cache: LocateCache | None = None) -> None:
        self.device = device
        self.assets = assets if assets is not None else AssetsManager()
        self.vision = vision
        self.strategy = LocateStrategy(strategy)
        self.fixed_points = dict(fixed_points or {})
        self.learn_from_vision = learn_from_vision
        self.cache = cache if cache is not None else LocateCache(ttl=cache_ttl)
        self._last: Screen | None = None
        self.typed: list[str] = []   # texts this run typed: their echo in a field is not a target

    def note_typed(self, text: str) -> None:
        """``text`` was typed into a field: from now on, that field showing it is not a ``text:`` target."""
        if text.strip() and text not in self.typed:
            self.typed.append(text)

    # -- public API ------------------------------------------------------------
    def capture_screen(self, region: dict[str, int] | Sequence[int] | None = None) -> Image.Image:
        """The device's screen (optionally a region ``{"x","y","width","height"}`` or x1,y1,x2,y2)."""
        if self.device is None:
            raise ValueError("no device: pass a screenshot, or build the locator with device=")
        img = self.device.screenshot()
        if region is None:
            return img
        if isinstance(region, dict):
            x, y = int(region["x"]), int(region["y"])
            box = (x, y, x + int(region["width"]), y + int(region["height"]))
        else:
            x0, y0, x1, y1 = (int(v) for v in region)
            box = (x0, y0, x1, y1)
        return img.crop(box)

    @property
    def cache_stats(self) -> dict[str, float]:
        return self.cache.stats

    def clear_cache(self) -> None:
        self.cache.clear()

    def locate(self, target_ref: str, screenshot: Any = None, element_type: str | None = None, *,
               hierarchy: str | UITree | None = None) -> LocateResult:
        """Find ``target_ref`` with the tier order of its form (see the module docstring)."""
        kind, _ = parse_target(target_ref)
        return self.locate_with_fallback(target_ref, default_tiers(kind), screenshot,
                                         hierarchy=hierarchy, element_type=element_type)

    def locate_with_fallback(self, target_ref: str, strategies: Sequence[str], screenshot: Any = None, *,
                             hierarchy: str | UITree | None = None,
                             element_type: str | None = None) -> LocateResult:
        """Try the named tiers in order (``tree template multiscale orb ocr vision fixed``, or
        ``visual`` = template+multiscale+orb); a low-confidence answer falls through."""
        start = time.perf_counter()
        kind, value = parse_target(target_ref)
        if not value and kind != "editable":   # a bare editable: means the focused or only text field
            return LocateResult(False, error=f"empty target_ref {target_ref!r}", failure=LocateFailure.BAD_INPUT)
        screen = self._screen(screenshot, hierarchy, need_tree="tree" in strategies)
        key = (target_ref, tuple(strategies), self.strategy.value, id(self.assets), screen.size, tuple(self.typed))
        # the cache knows screens by their pixels: a screen whose frame is not taken yet (read as a tree alone,
        # `remote.runner.frames`) is located afresh, and its frame is taken only if a tier reads the pixels
        pixels = screen.frame_taken
        cached = self.cache.get(key, screen.gray) if pixels else None
        if cached is not None:
            cached.elapsed_ms = round((time.perf_counter() - start) * 1000, 2)
            return cached
        result = self._run(kind, value, self._expand(strategies), screen, element_type or kind)
        result.elapsed_ms = round((time.perf_counter() - start) * 1000, 2)
        if pixels or screen.frame_taken:
            self.cache.put(key, screen.gray, result)
        return result

    def locate_image(self, reference: Any, screenshot: Any = None, tiers: Sequence[str] = VISUAL, *,
                     source_size: tuple[int, int] | None = None) -> LocateResult:
        """Find a reference given as an image (PIL or array): template -> multiscale -> orb.
        ``source_size``: the screen size the reference was cut from, when known (scale prior,
        ``visual_policy``)."""
        start = time.perf_counter()
        screen = self._screen(screenshot, None)
        tried: list[str] = []
        result = visual_chain([(reference, source_size)], tiers, screen, "image", tried)
        result.tiers_tried = tried
        result.elapsed_ms = round((time.perf_counter() - start) * 1000, 2)
        return result

    def verify_location(self, element: UIElement, screenshot: Any = None) -> bool:
        """True when ``element`` is still on the screen: valid box, interactable, and the
        stored template (``metadata['template']``, if any) still matches there."""
        screen = self._screen(screenshot, None)
        if not overlaps_screen(element.bbox, screen.size):
            return False
        if not visible_region(element.bbox, screen.size)["can_interact"]:
            return False
        tpl = element.metadata.get("template")
        if tpl is None:
            return True
        checks = matching.verify(screen.bgr, matching.as_bgr(tpl), element.bbox)
        return calibrate("template", checks["score"]) >= ACCEPT

    # -- internals -------------------------------------------------------------
    def _screen(self, screenshot: Any, hierarchy: str | UITree | None, *, need_tree: bool = False) -> Screen:
        if isinstance(screenshot, Screen):  # a caller that already holds the screen (the runner)
            self._last = screenshot
            return screenshot
        if screenshot is None:
            screenshot = self.capture_screen()
            if hierarchy is None and need_tree and self.device is not None:
                hierarchy = self.device.dump_hierarchy()   # taken with the screenshot, explicitly
        if self._last is not None and self._last.source is screenshot and (
                hierarchy is None or self._last.hierarchy is hierarchy):
            return self._last
        self._last = Screen(screenshot, hierarchy)
        return self._last

    def _expand(self, strategies: Sequence[str]) -> list[str]:
        tiers: list[str] = []
        for name in strategies:
            for t in ALIASES.get(name, (name,)):
                if t not in KNOWN_TIERS:
                    raise ValueError(f"unknown locate strategy {name!r}; use one of {sorted(KNOWN_TIERS)} or visual")
                if t not in tiers:
                    tiers.append(t)
        if self.strategy is LocateStrategy.OPENCV_ONLY:
            tiers = [t for t in tiers if t != "vision"]
        elif self.strategy is LocateStrategy.AI_ONLY:
            tiers = [t for t in tiers if t in ("vision", "fixed")]
        return tiers

    def _run(self, kind: str, value: str, tiers: list[str], screen: Screen, etype: str) -> LocateResult:
        tried: list[str] = []
        errors: list[str] = []
        seen: list[UIElement] = []   # every element a free tier saw: set-of-mark candidates for vision
        refs = self._references(kind, value, tiers, errors)
        i = 0
        while i < len(tiers):
            tier = tiers[i]
            if tier in VISUAL:
                group = [t for t in tiers[i:] if t in VISUAL]
                i += len(group)
                if refs:
                    chained = visual_chain(refs, group, screen, etype, tried)
                    if _decisive(chained):
                        chained.tiers_tried = tried
                        return chained
                    errors.append(chained.error)
                continue
            i += 1
            tried.append(tier)
            result = self._one_tier(tier, kind, value, screen, etype, refs, seen, errors)
            if result is not None:
                result.tiers_tried = tried
                return result
        return LocateResult(False, method_used="", error="; ".join(e for e in errors if e) or
                            _nothing_found(kind, value, tried), tiers_tried=tried, failure=LocateFailure.NOT_FOUND)

    def _references(self, kind: str, value: str, tiers: list[str], errors: list[str]) -> list[Any]:
        """A ``ref:`` target's images (with their source screens' sizes); none found: said when a tier needs one."""
        if kind != "ref":
            return []
        refs: list[Any] = self.assets.variants_with_sources(value)
        if not refs and any(t in VISUAL or t == "vision" for t in tiers):
            errors.append(f"unknown reference {value!r} (no image in modules or assets)")
        return refs

    def _one_tier(self, tier: str, kind: str, value: str, screen: Screen, etype: str, refs: list[Any],
                  seen: list[UIElement], errors: list[str]) -> LocateResult | None:
        """One tier's decisive result, or None (its error noted, its elements added to ``seen``)."""
        if tier == "ocr" and kind in ("text", "desc") and not ocr.available():
            # A broken install is the environment's failure, not "not on the screen": said, never skipped.
            return LocateResult(False, method_used=tier, error=f"ocr: {ocr.unavailable_reason()}",
                                failure=LocateFailure.UNAVAILABLE)
        elements, err = self._tier(tier, kind, value, screen, etype, refs, seen)
        elements = self._without_echoes(kind, value, screen, elements, errors)
        if err:
            errors.append(f"{tier}: {err}")
        result = decide(tier, elements, screen)
        if result is not None and _decisive(result):
            return result
        if result is not None:
            errors.append(result.error)
        seen += elements
        return None

    def _without_echoes(self, kind: str, value: str, screen: Screen, elements: list[UIElement],
                        errors: list[str]) -> list[UIElement]:
        tree = screen.tree() if self.typed and kind in ("text", "desc") and elements else None
        kept = text_context.without_echoes(tree, self.typed, value, elements) if tree is not None else elements
        if len(kept) < len(elements):
            errors.append(f"{value!r} in a text field is only the text typed there")
        return kept

    def _tier(self, tier: str, kind: str, value: str, screen: Screen, etype: str, refs: list[Any],
              seen: list[UIElement]) -> tuple[list[UIElement], str]:
        if tier == "tree":
            tree = screen.tree()
            if tree is None:
                return [], (f"no UI tree ({screen.tree_error})" if screen.tree_error
                            else "no UI tree came with this screenshot (give its dump: `--xml` on the command line, "
                                 "hierarchy= in Python)")
            return tree_tier.elements(tree, kind, value, etype), ""
        if tier == "ocr":
            if kind not in ("text", "desc"):
                return [], ""
            return self._ocr_elements(screen, value, etype)
        if tier == "fixed":
            return self._fixed_element(kind, value, screen, etype)
        if tier == "vision":
            return self._vision_elements(kind, value, screen, etype, refs, seen)
        return [], f"tier {tier} does not apply to {kind}:"

    def _ocr_elements(self, screen: Screen, value: str, etype: str) -> tuple[list[UIElement], str]:
        """OCR's hits for ``value`` as elements, and what was read near them when none is sure enough
        (nothing when no line is like it: then the tier did not read it).
        An unsure first reading (a near miss, or the text read with little confidence) is followed by a
        closer look at the rows that matter (``ocr.read_regions``), not by a second whole-frame reading;
        lines elsewhere keep their first reading, so a copy of the label elsewhere is still a rival."""
        boxes = screen.text_boxes()
        known = ocr.known_glyphs()
        hits = ocr.match_text(value, boxes, known=known)
        if not ocr_text.sure(hits) and ocr_namer.needed(value, known, read_like=bool(hits)):
            # glyphs the recognizer cannot name: the lines read by one that names them (ocr_namer)
            named = screen.named_boxes()
            again = ocr.match_text(value, named, known=ocr_namer.glyphs())
            if ocr_text.better(again, hits) or not any(h.kind in ocr.SURE_KINDS for h in hits):
                hits, boxes = again, named
        if ocr_text.unsure(hits):
            regions = ocr.regions_of(hits, screen.size)
            closer = [b for b in boxes if ocr.outside(b, regions)] + screen.region_boxes(regions)
            again = ocr.match_text(value, closer, known=known)
            if ocr_text.better(again, hits):
                hits, boxes = again, closer
        tree = screen.tree()
        out = [make_element("ocr", h.box.bbox, ocr_text.hit_raw(h), h.box.text, etype,
                            match=text_context.ocr_grade(tree, h.kind, h.box.bbox, value),
                            ocr_score=round(h.box.score, 3), copy=ocr_text.drawn_copy(value, h)) for h in hits]
        sure = any(e.confidence >= ACCEPT and e.metadata["match"] in ocr.SURE_KINDS for e in out)
        return out, "" if sure or not hits else ocr_text.nearby(hits, boxes)

    def _fixed_element(self, kind: str, value: str, screen: Screen, etype: str) -> tuple[list[UIElement], str]:
        box, err = fixed_box(kind, value, self.fixed_points, screen.size)
        return ([make_element("fixed", box, 1.0, value, etype)], "") if box is not None else ([], err)

    def _vision_elements(self, kind: str, value: str, screen: Screen, etype: str, refs: list[Any],
                         seen: list[UIElement]) -> tuple[list[UIElement], str]:
        if self.vision is None:
            return [], "no vision model configured"
        elements = screen_elements(self._tree_for_vision(screen))
        if not elements and not screen.secure and ocr.available():   # no tree to snap to: OCR's lines instead
            elements = text_elements(screen.text_boxes())
        if kind == "ref":
            if not refs:
                return [], f"no reference image for {value!r}"
            res = self.vision.find_element_by_image(refs[0][0], screen.pil, candidates=list(seen), elements=elements)
        else:
            res = self.vision.find_element(screen.pil, value, candidates=list(seen), elements=elements)
        if not res.success or res.element is None:
            return [], res.error or "the vision model did not find it"
        el = res.element
        raw = el.confidence if el.confidence > 0 else 0.8
        out = make_element("vision", el.bbox, raw, el.description or value, etype,
                            **{k: v for k, v in el.metadata.items() if k not in ("tier", "raw_score")})
        if self.learn_from_vision and kind == "ref" and el.metadata.get("learnable", True):
            # Self-healing: the crop the model found becomes a variant, so the next locate is free.
            name = self.assets.resolve_alias(value) or value
            crop = screen.pil.crop(el.bbox)
            out.metadata["learned"] = str(self.assets.add_learned(name, crop, screen.size))
        return [out], ""

    def _tree_for_vision(self, screen: Screen) -> UITree | None:
        """The screen's UI tree, for snapping a model's answer to a real element: the one taken with the
        screenshot, else a dump taken now (a vision call costs far more; the screen has not moved since)."""
        tree = screen.tree()
        if tree is not None or screen.tree_taken or self.device is None:
            return tree
        try:
            return parse_hierarchy(self.device.dump_hierarchy(), screen.size)
        except (RemoteError, ValueError) as exc:
            logger.info("no UI tree to snap the vision answer to: %s", exc)
            return None


NOT_SEEN = {"tree": "no node of the UI tree shows it", "ocr": "OCR did not read it on the screenshot",
            "vision": "the model did not see it", "fixed": "no such fixed point"}


def _nothing_found(kind: str, value: str, tried: list[str]) -> str:
    """Why a target is not found when no tier had more to say: ``text:张三 is not on this screen: no node of
    the UI tree shows it, OCR did not read it on the screenshot``."""
    said = ["the UI tree has no such text field" if t == "tree" and kind == "editable" else
            NOT_SEEN.get(t, f"the {t} tier found nothing") for t in tried]
    return f"{kind}:{value} is not on this screen: " + ", ".join(said) if said else \
        f"{kind}:{value}: no tier of this strategy can look for it"


def _decisive(result: LocateResult) -> bool:
    """A tier's result that ends the chain: found, or found but not interactable (later tiers would find it too)."""
    return result.success or result.failure is LocateFailure.NOT_INTERACTABLE
