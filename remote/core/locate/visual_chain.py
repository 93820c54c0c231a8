"""The visual tiers in a chain: template, multiscale, ORB, for one or more reference images of a target.

A tier runs only where it can help (``visual_policy``: same-scale template only when the screens' sizes allow
it, ORB only for references with enough texture or after weak template scores); the coarse peaks the template
tier found are handed to multiscale; each tier's elements are decided (``deciding.decide``) with near-equal
places told apart where the template differs (``image_checks.tell_apart``). The first tier that finds (or
finds the target not interactable) answers; otherwise the failing tiers' best elements come back as
candidates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from remote.core.locate import features, image_checks, matching, visual_policy
from remote.core.locate.confidence import ACCEPT, LOW_INFO_CAP, calibrate, make_element
from remote.core.locate.deciding import decide
from remote.core.locate.screen import Screen
from remote.core.records import LocateFailure, LocateResult, UIElement


def visual_chain(refs: list[Any], tiers: Sequence[str], screen: Screen, etype: str,
                 tried: list[str]) -> LocateResult:
    """``refs`` (image, its source screen's size) through ``tiers`` in order; each tier run is added to
    ``tried``."""
    errors = []
    near: list[UIElement] = []   # the failing tiers' best elements, kept as candidates
    best_before: float | None = None   # best raw score of the template tiers that ran
    memo: dict[Any, Any] = {}   # coarse peaks the template tier found, reused by multiscale
    try:
        bgrs = [(matching.as_bgr(ref, "reference image"), size) for ref, size in refs]
        tpls = [(tpl, size, matching.information(tpl)) for tpl, size in bgrs]
    except matching.ImageInputError as exc:
        return LocateResult(False, error=str(exc), method_used=tiers[0] if tiers else "",
                            failure=LocateFailure.BAD_INPUT)
    for tier in tiers:
        if not _worth_running(tier, tiers, tpls, screen, best_before):
            continue
        tried.append(tier)
        elements = [e for k, (tpl, size, info) in enumerate(tpls)
                    for e in _visual_elements(tier, tpl, screen, etype, size, memo, info, k)]
        if tier != "orb":
            best_before = max([best_before or 0.0] + [e.metadata["raw_score"] for e in elements])
        result = decide(tier, elements, screen, lambda a, b: image_checks.tell_apart(
            screen.bgr, tpls[a.metadata["ref"]][0], a.bbox, b.bbox))
        if result is not None and (result.success or result.failure is LocateFailure.NOT_INTERACTABLE):
            return result
        if result is not None:
            errors.append(result.error)
            near += result.candidates[:3]
    return LocateResult(False, error="; ".join(errors) or "no visual match", failure=LocateFailure.NOT_FOUND,
                        candidates=sorted(near, key=lambda e: e.confidence, reverse=True)[:5])


def _worth_running(tier: str, tiers: Sequence[str], tpls: list[tuple[Any, Any, dict[str, float]]], screen: Screen,
                   best_before: float | None) -> bool:
    """ORB only when a reference has the texture for it and the template tiers did not come close; the
    same-scale template tier not when multiscale follows and no reference can be at the screen's scale."""
    if tier == "orb":
        return any(visual_policy.orb_worth_trying(info, best_before) for _, _, info in tpls)
    if tier == "template" and "multiscale" in tiers:
        return any(visual_policy.same_scale_possible(size, screen.size) for _, size, _ in tpls)
    return True


def _visual_elements(tier: str, tpl: Any, screen: Screen, etype: str, source_size: tuple[int, int] | None,
                     memo: dict[Any, Any], info: dict[str, float], ref: int = 0) -> list[UIElement]:
    if tier == "template":
        found = matching.find_template(screen.bgr, tpl, pyramid=screen.pyramid(), memo=memo)
    elif tier == "multiscale":
        found = matching.find_multiscale(screen.bgr, tpl, *visual_policy.scale_range(source_size, screen.size),
                                         pyramid=screen.pyramid(), memo=memo,
                                         prior_scale=visual_policy.expected_scale(source_size, screen.size))
    else:
        found = features.find_orb(screen.bgr, tpl, screen_features=screen.orb())
    out = []
    for m in found:
        # Off-scale on a screen the size of the reference's source: must verify better (scale prior).
        raw = m.score - visual_policy.scale_penalty(m.scale, source_size, screen.size)
        conf = calibrate(tier, raw)
        extra = {}
        why = visual_policy.refusal(info, raw)
        if why and conf >= ACCEPT:
            conf, extra = LOW_INFO_CAP, {"refused": why}
        out.append(make_element(tier, m.bbox, raw, "", etype, conf, scale=m.scale, ncc=m.ncc,
                                checks=m.checks, low_info=bool(info["low_info"]), verified=m.score, ref=ref,
                                **extra))
    return out
