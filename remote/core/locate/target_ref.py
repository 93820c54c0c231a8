"""The ``target_ref`` grammar: how a step names what to touch, and which tiers look for each form.

    text:张三 -> ("text", "张三")      id:pkg:id/x -> ("id", "pkg:id/x")     wechat -> ("ref", "wechat")
    editable: -> ("editable", "")     role:Button:发送 -> ("role", "Button:发送")

See the table in docs/locator.md and docs/modules.md; the tier names are HybridLocator's.
``editable:`` and ``role:`` name a target the way a person sees it (a text field; a
button called 发送), so they survive the id renames of app updates (``tree_roles``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from remote.core.coords import to_pixels

KINDS = ("text", "id", "desc", "editable", "role", "dynamic", "xy", "fixed")
VISUAL = ("template", "multiscale", "orb")
TIERS_BY_KIND: dict[str, tuple[str, ...]] = {
    "ref": (*VISUAL, "vision"), "text": ("tree", "ocr", "vision"), "id": ("tree",), "desc": ("tree", "ocr"),
    "editable": ("tree",), "role": ("tree",), "dynamic": ("vision",), "xy": ("fixed",), "fixed": ("fixed",),
}


def parse_target(target_ref: str) -> tuple[str, str]:
    """``"text:张三"`` -> ``("text", "张三")``; a plain name -> ``("ref", name)``."""
    ref = (target_ref or "").strip()
    for kind in KINDS:
        if ref.lower().startswith(kind + ":"):
            return kind, ref[len(kind) + 1:].strip()
    return "ref", ref


def default_tiers(kind: str) -> tuple[str, ...]:
    """The tiers tried, in order, for a target of this kind."""
    return TIERS_BY_KIND[kind]


def parse_role(value: str) -> tuple[str, str]:
    """The value of a ``role:`` target -> (class, label): ``"Button:发送"`` -> ``("Button", "发送")``.

    The label may itself contain ``:``; a role without a label (``role:Switch``) gives ``""``.
    """
    cls, _, label = (value or "").partition(":")
    return cls.strip(), label.strip()


# A module's fixed point: [x, y] or [x1, y1, x2, y2] (pixels or 0-1000), or {"point"|"bbox": ..., "mode": ...}.
FixedPoint = Sequence[float] | Mapping[str, object]


def fixed_box(kind: str, value: str, fixed_points: Mapping[str, FixedPoint],
              screen_size: tuple[int, int]) -> tuple[tuple[int, int, int, int] | None, str]:
    """The box an ``xy:X,Y`` (pixels) or ``fixed:NAME`` target (``fixed_points[NAME]``: a point or a
    box, pixels or 0-1000, or ``{"bbox"|"point": ..., "mode": ...}``) names on a screen of this size;
    a point becomes a 1 px box. ``(None, why)`` when it names none."""
    spec: Any = value
    mode = "pixel"
    if kind == "fixed":
        if value not in fixed_points:
            return None, f"no fixed point {value!r} in the module config"
        spec = fixed_points[value]
        mode = "auto"
        if isinstance(spec, Mapping):
            mode = str(spec.get("mode", "auto"))
            spec = spec.get("bbox") or spec.get("point")
    try:
        nums = [float(v) for v in (spec.split(",") if isinstance(spec, str) else spec)]
    except (TypeError, ValueError):
        return None, f"bad coordinates {spec!r}"
    if len(nums) == 2:
        nums = [nums[0], nums[1], nums[0], nums[1]]
    if len(nums) != 4:
        return None, f"bad coordinates {spec!r}"
    box = to_pixels(nums, screen_size, mode)
    if box is None:
        return None, f"bad coordinates {spec!r}"
    if nums[0] == nums[2] and box[2] - box[0] <= 1:   # a point: a 1 px box around it
        box = (box[0], box[1], box[0] + 1, box[1] + 1)
    return box, ""
