"""VisionAgent: the locator's last tier — a vision model finds an element, in device pixels, and never
alone decides where a tap goes.

Each model is asked and read in its *family's* own dialect (:mod:`remote.ai.families`):
the image goes out at a size whose frame the family sees unchanged
(:mod:`remote.ai.frames`), the prompt names its convention, its reply is read by
the one reader (:mod:`remote.ai.reader`) and mapped back exactly. Then:

- **snapped**: where the screen's UI tree has an element holding the model's point
  (``elements``, from the locator), the answer is that element's box;
- **set-of-mark**: when the locator has competing candidates, or the family has no
  trained grounding (GPT, unknown models), elements are drawn numbered and the
  model answers a number: an exact element box;
- **confirmed**: an answer that disagrees with itself (two boxes, a point outside its
  box), or an untrusted family's box with no element under it, costs one more call
  (set-of-mark among the elements there, else a zoomed crop); what is not confirmed
  is not returned;
- **zoom**: a trusted family's small box with nothing under it is asked again on an
  enlarged crop; a box its own second look does not find is not returned either.

A reply that cannot be read, or that points outside the image, gets one corrective
re-ask naming the family's convention; then ``LocateResult(success=False, ...)``,
never an exception to the locator and never a tap.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from PIL import Image

from remote.ai import images as imaging
from remote.ai.calls import CallLog
from remote.ai.families import Family, family_for
from remote.ai.frames import Frame, send_size
from remote.ai.llm import UsesModel, ask_read
from remote.ai.locating import Located, agree, confirms, read_located, union
from remote.ai.prompting import placeholders, render, render_text
from remote.ai.protocols import ChatModel
from remote.config import LLMConfig
from remote.core import coords
from remote.core.locate.assets import AssetsManager
from remote.core.locate.snapping import holding, snap
from remote.core.records import LocateResult, ModelUsage, UIElement
from remote.errors import ModelError

logger = logging.getLogger(__name__)

MAX_MARKS = 40
ZOOM_BELOW = 0.08     # zoom when the box's longer side is under 8 % of the screen's shorter side
BBox = tuple[int, int, int, int]
Outcome = tuple[UIElement, str] | str   # the element and how it was found, or why nothing was


def _candidate_box(candidate: Any) -> BBox | None:
    box = getattr(candidate, "bbox", None) or getattr(candidate, "bounds", None) or candidate
    try:
        x1, y1, x2, y2 = (int(v) for v in box)
    except (TypeError, ValueError):
        return None
    return (x1, y1, x2, y2) if x2 > x1 and y2 > y1 else None


def _candidate_label(candidate: Any) -> str:
    for attr in ("description", "label", "text"):
        value = getattr(candidate, attr, "")
        if value:
            return str(value)
    return str(getattr(candidate, "element_type", "") or "element")


def snap_to_candidate(box: BBox, candidates: Sequence[BBox]) -> int | None:
    """Index of the candidate a rough box means: best IoU, else the one holding its center."""
    best, best_iou = None, 0.0
    for i, c in enumerate(candidates):
        overlap = coords.iou(box, c)
        if overlap > best_iou:
            best, best_iou = i, overlap
    if best is not None and best_iou >= 0.1:
        return best
    cx, cy = coords.bbox_center(box)
    inside = [i for i, c in enumerate(candidates) if c[0] <= cx < c[2] and c[1] <= cy < c[3]]
    return min(inside, key=lambda i: (candidates[i][2] - candidates[i][0]) * (candidates[i][3] - candidates[i][1]),
               default=best)


class VisionAgent(UsesModel):
    """``VisionAgent(config).find_element(screenshot, "底部消息输入框", elements=tree_elements) -> LocateResult``."""

    def __init__(self, llm_config: LLMConfig, *, client: ChatModel | None = None, assets: AssetsManager | None = None,
                 usage: ModelUsage | None = None, zoom: bool = True, family: Family | None = None) -> None:
        self.config = llm_config
        self.family = family or family_for(llm_config.model, llm_config.family)
        self.assets = assets
        self.zoom = zoom
        self._client = client
        self._usage = usage
        self.log = CallLog(self.family.name)   # the calls of the last locate (what was sent, what came back)

    # -- public (the VisionTier protocol) --------------------------------------------------------

    def find_element(self, screenshot: Image.Image, description: str, *, candidates: Sequence[Any] = (),
                     elements: Sequence[UIElement] = ()) -> LocateResult:
        return self._locate(screenshot, description, None, candidates, elements)

    def find_element_by_image(self, reference_image: Image.Image, screenshot: Image.Image, *,
                              candidates: Sequence[Any] = (), elements: Sequence[UIElement] = ()) -> LocateResult:
        return self._locate(screenshot, render("reference_description").strip(), reference_image, candidates,
                            elements)

    def learn(self, name: str, screenshot: Image.Image, bbox: BBox) -> Path | None:
        """Offer the crop the model found as a learned variant of ``name`` (``custom/``)."""
        if self.assets is None:
            return None
        x1, y1, x2, y2 = (int(v) for v in bbox)
        crop = screenshot.crop((x1, y1, x2, y2))
        path: Path = self.assets.add_learned(name, crop, screenshot.size)
        logger.info("learned a variant of %s from the vision tier: %s", name, path)
        return path

    # -- the ways ---------------------------------------------------------------------------------

    def _locate(self, screenshot: Image.Image, description: str, reference: Image.Image | None,
                candidates: Sequence[Any], elements: Sequence[UIElement]) -> LocateResult:
        start = time.monotonic()
        self.log.clear()
        if not self.config.supports_vision:
            return self._fail(start, f"model {self.config.model!r} cannot see images; no vision locate")
        picked = [(b, _candidate_label(c)) for c in candidates[:MAX_MARKS] if (b := _candidate_box(c))]
        try:
            if picked and self.family.json_prompts:
                result = self._by_marks(screenshot, description, reference, picked, "set-of-mark")
            elif picked:
                result = self._among(screenshot, description, reference, picked)
            elif not self.family.trusted and elements and self.family.json_prompts:
                marks = [(e.bbox, e.description or e.element_type) for e in elements[:MAX_MARKS]]
                result = self._by_marks(screenshot, description, reference, marks, "set-of-mark (untrusted family)")
            else:
                result = self._by_coordinates(screenshot, description, reference, elements)
        except ModelError as exc:
            raw = f" (raw reply: {exc.raw[:300]!r})" if exc.raw else ""
            return self._fail(start, f"vision model failed: {exc.message}{raw}")
        if isinstance(result, str):
            return self._fail(start, result)
        element, note = result
        element.metadata.setdefault("how", note)
        element.metadata.setdefault("family", self.family.name)
        element.metadata["model_calls"] = list(self.log.calls)
        return LocateResult(True, element, method_used="vision", elapsed_ms=(time.monotonic() - start) * 1000,
                            tiers_tried=["vision"])

    def _by_coordinates(self, screenshot: Image.Image, description: str, reference: Image.Image | None,
                        elements: Sequence[UIElement]) -> Outcome:
        frame = self._frame(screenshot.size)
        located = self._ask_native(description, reference, screenshot, frame)
        if located.not_found is not None:
            return self._not_found(located.not_found.reason, located.not_found.suggestion)
        meta = {"model_values": [list(v) for v in located.values], "reply_shape": located.shape,
                "learnable": reference is not None}
        boxes = located.boxes
        if not agree(boxes):
            return self._confirm(screenshot, description, reference, boxes, elements, meta)
        box = max(boxes, key=lambda b: (b[2] - b[0]) * (b[3] - b[1]))
        meta["model_box"] = list(box)
        element = snap(box, elements)
        if element is not None:
            return self._element(element.bbox, description, located.data, snapped_to=element.description,
                                 **meta), "coordinates (snapped to the UI tree)"
        if not self.family.trusted:
            second = self._zoom(screenshot, description, box) if reference is None else None
            if not isinstance(second, tuple) or not confirms(box, second):
                return (f"the {self.family.name} model's box {list(box)} was not confirmed by a second look "
                        f"({'none' if second is None else list(second) if isinstance(second, tuple) else second}); "
                        "not tapping a guess")
            return self._element(second, description, located.data, first_estimate=box, **meta), \
                "coordinates (confirmed by zoom)"
        if self.zoom and reference is None and max(box[2] - box[0], box[3] - box[1]) < ZOOM_BELOW * min(screenshot.size):
            zoomed = self._zoom(screenshot, description, box)
            if isinstance(zoomed, tuple):
                return self._element(zoomed, description, located.data, first_estimate=box, **meta), \
                    "coordinates+zoom"
            if zoomed is None:   # its own closer look did not find it: the first box was a guess
                return (f"the {self.family.name} model's box {list(box)} was not found again by its own zoomed "
                        "second look; not tapping a guess")
        return self._element(box, description, located.data, **meta), "coordinates"

    def _confirm(self, screenshot: Image.Image, description: str, reference: Image.Image | None,
                 boxes: Sequence[BBox], elements: Sequence[UIElement], meta: dict[str, Any]) -> Outcome:
        """An answer that disagrees with itself: the one element under all of it, else one more call."""
        meta["model_boxes"] = [list(b) for b in boxes]
        under = _under(boxes, elements)
        if len(under) == 1 and len(boxes) == sum(1 for b in boxes if snap(b, elements) is under[0]):
            return self._element(under[0].bbox, description, {}, snapped_to=under[0].description, **meta), \
                "coordinates (one element under every box)"
        if len(under) > 1 and self.family.json_prompts:
            marks = [(e.bbox, e.description or "element") for e in under]
            return self._by_marks(screenshot, description, reference, marks, "set-of-mark (answer disagreed)")
        return self._settle_by_zoom(screenshot, description, reference, boxes, elements, meta)

    def _settle_by_zoom(self, screenshot: Image.Image, description: str, reference: Image.Image | None,
                        boxes: Sequence[BBox], elements: Sequence[UIElement], meta: dict[str, Any]) -> Outcome:
        """A second look on a zoomed crop around every box: the box it confirms, else no tap."""
        second = self._zoom(screenshot, description, union(boxes)) if reference is None else None
        chosen = [b for b in boxes if isinstance(second, tuple) and confirms(b, second)]
        if not chosen or not isinstance(second, tuple):
            return (f"the {self.family.name} model's answer disagrees with itself ({meta['model_boxes']}) and a "
                    "second look did not settle it; not tapping")
        settled = snap(second, elements)
        found = {"snapped_to": settled.description} if settled else {"first_estimate": union(boxes)}
        return self._element(settled.bbox if settled else second, description, {}, **found, **meta), \
            "coordinates (disagreement settled by zoom)"

    def _among(self, screenshot: Image.Image, description: str, reference: Image.Image | None,
               picked: list[tuple[BBox, str]]) -> Outcome:
        """Competing candidates, a family that answers only in its own shapes: its box, snapped to one."""
        frame = self._frame(screenshot.size)
        located = self._ask_native(description, reference, screenshot, frame)
        if located.not_found is not None:
            return self._not_found(located.not_found.reason, located.not_found.suggestion)
        boxes = [b for b, _ in picked]
        index = snap_to_candidate(located.boxes[0], boxes) if agree(located.boxes) else None
        if index is None:
            return "the model's box matched none of the competing candidates; not tapping a guess"
        return self._element(boxes[index], description, located.data, mark=index + 1, candidate=picked[index][1],
                             learnable=reference is not None), "coordinates (snapped to a candidate)"

    def _by_marks(self, screenshot: Image.Image, description: str, reference: Image.Image | None,
                  picked: list[tuple[BBox, str]], how: str) -> Outcome:
        boxes = [b for b, _ in picked]
        marked = imaging.draw_marks(screenshot, boxes)
        frame = self._frame(screenshot.size)
        listing = "\n".join(f"{i + 1}. {label}" for i, (_, label) in enumerate(picked))
        note = render("marks_reference_note").strip() if reference is not None else ""
        prompt = render("locate_marks", {"description": description, "candidates": listing, "images_note": note})
        images = [reference, marked] if reference is not None else [marked]
        located = ask_read(self.client, [{"role": "user", "content": prompt}], purpose="locate", images=images,
                           read=self._reader("set-of-mark", frame,
                                             lambda raw: read_located(raw, self.family, frame, marks=len(boxes))),
                           shape='one JSON object: {"found": true, "mark": N} with N one of the numbers drawn')
        if located.not_found is not None:
            return self._not_found(located.not_found.reason, located.not_found.suggestion)
        if located.mark is not None:
            index = located.mark - 1
        else:
            snapped = snap_to_candidate(located.boxes[0], boxes) if agree(located.boxes) else None
            if snapped is None:
                return "the model's box matched none of the numbered elements; not tapping a guess"
            index, how = snapped, how.replace("set-of-mark", "set-of-mark (snapped)", 1)
        return self._element(boxes[index], description, located.data, mark=index + 1, candidate=picked[index][1],
                             learnable=reference is not None), how

    def _zoom(self, screenshot: Image.Image, description: str, around: BBox) -> BBox | str | None:
        """Ask again on an enlarged crop around ``around``: the box there (device pixels), None when the model
        does not find it there, or why the call failed."""
        region = imaging.zoom_region(around, screenshot.size)
        crop = screenshot.crop(region)
        size = (region[2] - region[0], region[3] - region[1])
        frame = Frame(size, send_size(size, self.config.max_image_side, self.family.frame), (region[0], region[1]))
        values = {"description": description, **self._ask_values(frame)}
        try:
            located: Located = ask_read(self.client, [{"role": "user", "content": render("locate_zoom", values)}],
                               purpose="locate", images=[crop], shape=self._shape(frame),
                               read=self._reader("zoom", frame, lambda raw: read_located(raw, self.family, frame)))
        except ModelError as exc:
            logger.info("zoom pass failed (%s)", exc.message)
            return exc.message
        if located.not_found is not None or not located.boxes or not agree(located.boxes):
            return None
        return max(located.boxes, key=lambda b: (b[2] - b[0]) * (b[3] - b[1]))

    # -- asking and reading --------------------------------------------------------------------

    def _frame(self, size: tuple[int, int]) -> Frame:
        return Frame(size, send_size(size, self.config.max_image_side, self.family.frame))

    def _ask_values(self, frame: Frame) -> dict[str, str]:
        sizes = {"width": str(frame.seen[0]), "height": str(frame.seen[1])}
        ask = render_text(self.family.ask, {k: sizes[k] for k in placeholders(self.family.ask)},
                          source=f"family {self.family.name}")
        return {"ask": ask, "not_found": self.family.not_found}

    def _shape(self, frame: Frame) -> str:
        return f"{self.family.shape}; coordinates are {self.family.convention.words(frame.seen)}"

    def _ask_native(self, description: str, reference: Image.Image | None, screenshot: Image.Image,
                    frame: Frame) -> Located:
        if reference is not None:
            prompt = render("locate_native_image", self._ask_values(frame))
            images = [reference, screenshot]
        else:
            prompt = render("locate_native", {"description": description, **self._ask_values(frame)})
            images = [screenshot]
        located: Located = ask_read(self.client, [{"role": "user", "content": prompt}], purpose="locate",
                                    images=images, shape=self._shape(frame),
                                    read=self._reader("locate", frame, lambda raw: read_located(raw, self.family, frame)))
        return located

    def _reader(self, kind: str, frame: Frame, read: Callable[[str], Located]) -> Callable[[str], Located]:
        """``read``, noting each reply with what was sent (the family's convention and frame) in ``self.log``."""
        return self.log.reader(self.client, kind, frame, self.family.convention, read, _noted)

    # -- results ---------------------------------------------------------------------------------

    def _element(self, box: BBox, description: str, data: dict[str, Any], **metadata: Any) -> UIElement:
        """The found element. Its confidence says how it was found, not what the model claims (kept as
        ``stated_confidence``): an element of the screen (snapped, a mark) 1.0, a box a second look confirmed
        0.95, a trusted family's own box 0.85."""
        exact = "snapped_to" in metadata or "mark" in metadata
        confidence = 1.0 if exact else 0.95 if "first_estimate" in metadata else 0.85
        meta = {"reason": str(data.get("reason") or ""), "suggestion": str(data.get("suggestion") or ""),
                **({"stated_confidence": data["confidence"]} if "confidence" in data else {}), **metadata}
        return UIElement(element_type="vision", description=description, bbox=box, confidence=confidence,
                         center=coords.bbox_center(box), metadata=meta)

    @staticmethod
    def _fail(start: float, error: str) -> LocateResult:
        return LocateResult(False, None, method_used="vision", error=error, tiers_tried=["vision"],
                            elapsed_ms=(time.monotonic() - start) * 1000)

    @staticmethod
    def _not_found(reason: str, suggestion: str) -> str:
        return f"not found: {reason or 'not on the screen'}" + (f"; suggestion: {suggestion}" if suggestion else "")


def _noted(located: Located) -> dict[str, Any]:
    """What a locate reply was read as: the numbers as written, the device boxes, a mark or a not-found."""
    return {"values": [list(v) for v in located.values], "device_boxes": [list(b) for b in located.boxes],
            "mark": located.mark, "not_found": located.not_found.reason if located.not_found else None}


def list_learned(assets: AssetsManager | None) -> list[dict[str, Any]]:
    """Learned variants for review (``python -m remote modules learned``): name, path, screen size."""
    if assets is None:
        return []
    return sorted(assets.learned(), key=lambda e: (str(e.get("name")), str(e.get("path"))))


def _under(boxes: Sequence[BBox], elements: Sequence[UIElement]) -> list[UIElement]:
    """The elements under the centres of ``boxes`` (the innermost one each), each once, in order."""
    under: list[UIElement] = []
    for box in boxes:
        for element in holding(((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), elements)[:1]:
            if element not in under:
                under.append(element)
    return under
