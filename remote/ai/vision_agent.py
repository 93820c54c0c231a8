"""VisionAgent: the locator's last tier — a vision model finds an element, in device pixels.

Three ways, best first:

- **set-of-mark**: when the UI tree or OCR gave candidate boxes, they are drawn
  numbered on the screenshot and the model answers a number; the result is that
  candidate's exact box. A reply with coordinates instead is snapped to the
  candidate it overlaps.
- **coordinates**: the model answers a box under its preset's coordinate
  contract (``coord_mode``, ``box_order``); :func:`coords.model_box_to_pixels`
  maps it from the (downscaled) image sent back to device pixels.
- **zoom**: for a small target the region around the first estimate is cropped
  and asked again at full resolution, then mapped back.

Replies are validated (one corrective re-ask); a reply that stays unusable, or a
failed call, becomes ``LocateResult(success=False, error=...)`` — never an
exception to the locator. Not-found replies keep the model's reason and
suggestion in ``error``; found ones keep them in ``element.metadata``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PIL import Image

from remote.ai import images as imaging
from remote.ai.llm import UsesModel, ask_json
from remote.ai.prompting import render
from remote.ai.protocols import ChatModel
from remote.config import LLMConfig
from remote.core import coords
from remote.core.records import LocateResult, ModelUsage, UIElement
from remote.errors import ModelError

logger = logging.getLogger(__name__)

MAX_MARKS = 40
ZOOM_BELOW = 0.08     # zoom when the box's longer side is under 8 % of the screen's shorter side
BBox = tuple[int, int, int, int]


def _box_values(data: dict[str, Any], box_order: str) -> tuple[list[Any], str] | None:
    """The four numbers of a reply's box and their order: keys win over lists."""
    if all(k in data for k in ("xmin", "ymin", "xmax", "ymax")):
        return [data["xmin"], data["ymin"], data["xmax"], data["ymax"]], "xyxy"
    if isinstance(data.get("box_2d"), list):          # Gemini's native [ymin, xmin, ymax, xmax]
        return data["box_2d"], "yxyx"
    for key in ("bbox", "box", "bbox_2d"):
        if isinstance(data.get(key), list):
            return data[key], box_order
    return None


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
    holding = [i for i, c in enumerate(candidates) if c[0] <= cx < c[2] and c[1] <= cy < c[3]]
    return min(holding, key=lambda i: (candidates[i][2] - candidates[i][0]) * (candidates[i][3] - candidates[i][1]),
               default=best)


class VisionAgent(UsesModel):
    """``VisionAgent(config).find_element(screenshot, "底部消息输入框") -> LocateResult``."""

    def __init__(self, llm_config: LLMConfig, *, client: ChatModel | None = None, assets: Any = None,
                 usage: ModelUsage | None = None, zoom: bool = True) -> None:
        self.config = llm_config
        self.assets = assets
        self.zoom = zoom
        self._client = client
        self._usage = usage

    # -- public (the VisionTier protocol) --------------------------------------------------------

    def find_element(self, screenshot: Image.Image, description: str, *,
                     candidates: Sequence[Any] = ()) -> LocateResult:
        return self._locate(screenshot, description, None, candidates)

    def find_element_by_image(self, reference_image: Image.Image, screenshot: Image.Image, *,
                              candidates: Sequence[Any] = ()) -> LocateResult:
        return self._locate(screenshot, render("reference_description").strip(), reference_image, candidates)

    def learn(self, name: str, screenshot: Image.Image, bbox: BBox) -> Path | None:
        """Offer the crop the model found as a learned variant of ``name`` (``custom/``)."""
        if self.assets is None:
            return None
        x1, y1, x2, y2 = (int(v) for v in bbox)
        crop = screenshot.crop((x1, y1, x2, y2))
        path: Path = self.assets.add_learned(name, crop, screenshot.size)
        logger.info("learned a variant of %s from the vision tier: %s", name, path)
        return path

    # -- internals ------------------------------------------------------------------------------

    def _locate(self, screenshot: Image.Image, description: str, reference: Image.Image | None,
                candidates: Sequence[Any]) -> LocateResult:
        start = time.monotonic()
        if not self.config.supports_vision:
            return self._fail(start, f"model {self.config.model!r} cannot see images; no vision locate")
        boxes = [b for b in (_candidate_box(c) for c in candidates[:MAX_MARKS]) if b]
        labels = [_candidate_label(c) for c in candidates[:MAX_MARKS] if _candidate_box(c)]
        try:
            if boxes:
                result = self._by_marks(screenshot, description, reference, boxes, labels)
            else:
                result = self._by_coordinates(screenshot, description, reference)
        except ModelError as exc:
            raw = f" (raw reply: {exc.raw[:300]!r})" if exc.raw else ""
            return self._fail(start, f"vision model failed: {exc.message}{raw}")
        if isinstance(result, str):
            return self._fail(start, result)
        element, note = result
        element.metadata.setdefault("how", note)
        return LocateResult(True, element, method_used="vision", elapsed_ms=(time.monotonic() - start) * 1000,
                            tiers_tried=["vision"])

    @staticmethod
    def _fail(start: float, error: str) -> LocateResult:
        return LocateResult(False, None, method_used="vision", error=error, tiers_tried=["vision"],
                            elapsed_ms=(time.monotonic() - start) * 1000)

    @staticmethod
    def _not_found(data: dict[str, Any]) -> str:
        reason = str(data.get("reason") or "not found")
        suggestion = str(data.get("suggestion") or "")
        return f"not found: {reason}" + (f"; suggestion: {suggestion}" if suggestion else "")

    def _ask(self, prompt: str, images: list[Image.Image], expect: Any) -> Any:
        return ask_json(self.client, [{"role": "user", "content": prompt}], purpose="locate", images=images,
                        expect=expect)

    def _box_validator(self, sent: tuple[int, int], target: tuple[int, int]) -> Any:
        def expect(data: Any) -> dict[str, Any]:
            if not isinstance(data, dict) or not isinstance(data.get("found"), bool):
                raise ValueError("the reply needs a boolean 'found'")
            if not data["found"]:
                return data
            values = _box_values(data, self.config.box_order)
            if values is None:
                raise ValueError("found is true but there is no bbox [xmin, ymin, xmax, ymax]")
            box = coords.model_box_to_pixels(values[0], sent, target, self.config.coord_mode, values[1])
            if box is None:
                raise ValueError(f"bbox {values[0]} is not a valid box on the 0-1000 scale")
            return {**data, "_box": box, "_values": values[0]}
        return expect

    def _element(self, data: dict[str, Any], box: BBox, description: str, **metadata: Any) -> UIElement:
        try:
            confidence = min(1.0, max(0.0, float(data.get("confidence", 0.6))))
        except (TypeError, ValueError):
            confidence = 0.6
        meta = {"reason": str(data.get("reason") or ""), "suggestion": str(data.get("suggestion") or ""),
                **metadata}
        return UIElement(element_type="vision", description=description, bbox=box, confidence=confidence,
                         metadata=meta)

    def _by_coordinates(self, screenshot: Image.Image, description: str,
                        reference: Image.Image | None) -> tuple[UIElement, str] | str:
        sent = imaging.sent_size(screenshot.size, self.config.max_image_side)
        expect = self._box_validator(sent, screenshot.size)
        if reference is not None:
            data = self._ask(render("locate_image"), [reference, screenshot], expect)
        else:
            data = self._ask(render("locate_description", {"description": description}), [screenshot], expect)
        if not data["found"]:
            return self._not_found(data)
        box: BBox = data["_box"]
        element = self._element(data, box, description, model_box=data["_values"], learnable=reference is not None)
        if self.zoom and reference is None and max(box[2] - box[0], box[3] - box[1]) < ZOOM_BELOW * min(screenshot.size):
            zoomed = self._zoom(screenshot, description, box)
            if zoomed is not None:
                element.metadata["first_estimate"] = box
                element.bbox, element.center = zoomed, coords.bbox_center(zoomed)
                return element, "coordinates+zoom"
        return element, "coordinates"

    def _zoom(self, screenshot: Image.Image, description: str, box: BBox) -> BBox | None:
        region = imaging.zoom_region(box, screenshot.size)
        crop = screenshot.crop(region)
        crop_size = (region[2] - region[0], region[3] - region[1])
        sent = imaging.sent_size(crop_size, self.config.max_image_side)
        try:
            data = self._ask(render("locate_zoom", {"description": description}), [crop],
                             self._box_validator(sent, crop_size))
        except ModelError as exc:
            logger.info("zoom pass failed (%s); keeping the first estimate", exc.message)
            return None
        if not data["found"]:
            return None
        x1, y1, x2, y2 = data["_box"]
        return x1 + region[0], y1 + region[1], x2 + region[0], y2 + region[1]

    def _by_marks(self, screenshot: Image.Image, description: str, reference: Image.Image | None,
                  boxes: list[BBox], labels: list[str]) -> tuple[UIElement, str] | str:
        marked = imaging.draw_marks(screenshot, boxes)
        sent = imaging.sent_size(screenshot.size, self.config.max_image_side)
        coordinate_check = self._box_validator(sent, screenshot.size)

        def expect(data: Any) -> dict[str, Any]:
            if isinstance(data, dict) and data.get("found") is True and "mark" in data:
                try:
                    mark = int(data["mark"])
                except (TypeError, ValueError) as exc:
                    raise ValueError(f"mark {data['mark']!r} is not a number") from exc
                if not 1 <= mark <= len(boxes):
                    raise ValueError(f"mark {mark} is not one of the numbers 1-{len(boxes)}")
                return {**data, "mark": mark}
            checked: dict[str, Any] = coordinate_check(data)
            return checked

        listing = "\n".join(f"{i + 1}. {label}" for i, label in enumerate(labels))
        note = render("marks_reference_note").strip() if reference is not None else ""
        prompt = render("locate_marks", {"description": description, "candidates": listing, "images_note": note})
        images = [reference, marked] if reference is not None else [marked]
        data = self._ask(prompt, images, expect)
        if not data["found"]:
            return self._not_found(data)
        if "mark" in data:
            index, how = data["mark"] - 1, "set-of-mark"
        else:
            snapped = snap_to_candidate(data["_box"], boxes)
            if snapped is None:
                element = self._element(data, data["_box"], description, model_box=data["_values"])
                return element, "coordinates (no candidate matched)"
            index, how = snapped, "set-of-mark (snapped)"
        element = self._element(data, boxes[index], description, mark=index + 1, candidate=labels[index],
                                learnable=reference is not None)
        return element, how


def list_learned(assets: Any) -> list[dict[str, Any]]:
    """Learned variants for review (``python -m remote modules learned``): name, path, screen size."""
    if assets is None:
        return []
    return sorted(assets.learned(), key=lambda e: (str(e.get("name")), str(e.get("path"))))
