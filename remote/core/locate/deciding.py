"""A tier's answer from the elements it found: the best if confident, its rivals, and whether it can be tapped.

Used by every tier of ``HybridLocator`` (tree, OCR, the visual chain, vision): an element is accepted at
``confidence.ACCEPT``; a part of a longer text is a candidate only; elements nearly as good elsewhere are
rivals (``reliable=False``), which the visual tiers first try to settle where the template differs
(``visual_policy.settle``); every element is checked against the screen (``coords.visible_region``) and
tapped in the middle of its visible part.
"""

from __future__ import annotations

from collections.abc import Callable

from remote.core.coords import bbox_center, describe_visibility, iou, overlaps_screen, visible_region
from remote.core.locate import visual_policy
from remote.core.locate.confidence import ACCEPT, AMBIGUITY_MARGIN
from remote.core.locate.screen import Screen
from remote.core.records import LocateFailure, LocateResult, UIElement

PARTIAL_MATCHES = ("contains", "similar")   # tree and OCR hits that are not the whole label


def decide(tier: str, elements: list[UIElement], screen: Screen,
           apart: Callable[[UIElement, UIElement], float | None] | None = None) -> LocateResult | None:
    """The tier's answer: its best element if confident, with the rivals nearly as good
    (``reliable=False``). ``apart``: for the visual tiers, how much better the template agrees
    with one place than another where they differ (``image_checks.tell_apart``); near-equal
    matches are settled by it (``visual_policy.settle``) and only places it cannot tell apart
    stay rivals."""
    if not elements:
        return None
    elements = sorted(elements, key=lambda e: e.confidence, reverse=True)
    best = elements[0]
    if best.confidence < ACCEPT:
        return LocateResult(False, method_used=tier, candidates=elements[:5], failure=LocateFailure.NOT_FOUND,
                            error=f"{tier}: best confidence {best.confidence:.2f} < {ACCEPT}")
    if best.metadata.get("match") in PARTIAL_MATCHES:
        # Only part of a longer text ("张三" inside "没有找到'张三'相关结果"): a candidate, never tapped unasked.
        shown = ", ".join(repr(e.description[:40]) for e in elements[:3])
        how = ("contain it" if all(e.metadata.get("match") == "contains" for e in elements)
               else "read like it" if all(e.metadata.get("match") == "similar" for e in elements)
               else "contain it or read like it")
        return LocateResult(False, method_used=tier, candidates=elements[:5], failure=LocateFailure.NOT_FOUND,
                            error=f"{tier}: nothing shows exactly that; {len(elements)} text(s) {how} ({shown})")
    rivals = _rivals(best, elements[1:], visual_policy.RIVAL_MARGIN if apart else AMBIGUITY_MARGIN)
    if apart is not None and rivals:
        best, rivals = visual_policy.settle(best, rivals, apart)
    if not validate(best, screen.size):
        return LocateResult(False, element=best, method_used=tier, failure=LocateFailure.NOT_INTERACTABLE,
                            error=f"not interactable: {describe_visibility(best.visible_region)}")
    for e in rivals:
        validate(e, screen.size)
    if rivals:
        best.metadata["refused"] = "look_alike"
    return LocateResult(True, element=best, method_used=tier, candidates=[best, *rivals] if rivals else [],
                        reliable=not rivals)


def _rivals(best: UIElement, others: list[UIElement], margin: float) -> list[UIElement]:
    """The elements elsewhere than ``best`` nearly as good as it, or another drawn copy of the label read with
    an unsure glyph beside it (OCR's ``copy``: ``ocr_text.drawn_copy``)."""
    best_raw = best.metadata.get("raw_score", 0.0)
    return [e for e in others if iou(e.bbox, best.bbox) <= 0.5 and (e.metadata.get("copy") or (
            e.confidence >= ACCEPT and e.metadata.get("raw_score", 0.0) >= best_raw - margin))]


def validate(element: UIElement, size: tuple[int, int]) -> bool:
    """Can ``element`` be tapped on a screen of ``size``? Sets its visible region and its centre (the middle of
    its visible part; a point target is tapped where it is)."""
    if not overlaps_screen(element.bbox, size):
        element.visible_region = {"can_interact": False, "safe_region": None, "visible_fraction": 0.0}
        return False
    x1, y1, x2, y2 = element.bbox
    if x2 - x1 <= 1 or y2 - y1 <= 1:   # a point (xy:/fixed:): tap it
        element.visible_region = {"can_interact": True, "safe_region": element.bbox, "visible_fraction": 1.0}
        element.center = (x1, y1)
        return True
    vis = visible_region(element.bbox, size)
    element.visible_region = vis
    if vis["can_interact"]:
        element.center = bbox_center(vis["safe_region"])
    return bool(vis["can_interact"])
