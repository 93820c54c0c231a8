"""The ``target_ref`` grammar: how a step names what to touch, and which tiers look for each form.

    text:张三 -> ("text", "张三")      id:pkg:id/x -> ("id", "pkg:id/x")     wechat -> ("ref", "wechat")

See the table in DESIGN.md; the tier names are HybridLocator's.
"""

from __future__ import annotations

KINDS = ("text", "id", "desc", "dynamic", "xy", "fixed")
VISUAL = ("template", "multiscale", "orb")
TIERS_BY_KIND: dict[str, tuple[str, ...]] = {
    "ref": (*VISUAL, "vision"), "text": ("tree", "ocr", "vision"), "id": ("tree",), "desc": ("tree", "ocr"),
    "dynamic": ("vision",), "xy": ("fixed",), "fixed": ("fixed",),
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
