"""The ``target_ref`` grammar: how a step names what to touch, and which tiers look for each form.

    text:张三 -> ("text", "张三")      id:pkg:id/x -> ("id", "pkg:id/x")     wechat -> ("ref", "wechat")
    editable: -> ("editable", "")     role:Button:发送 -> ("role", "Button:发送")

See the table in DESIGN.md and docs/modules.md; the tier names are HybridLocator's.
``editable:`` and ``role:`` name a target the way a person sees it (a text field; a
button called 发送), so they survive the id renames of app updates (``tree_roles``).
"""

from __future__ import annotations

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
