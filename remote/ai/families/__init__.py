"""Model families: which one a model belongs to, from its name or ``LLM_MODEL_FAMILY``.

>>> family_for("qwen2.5-vl-72b-instruct").name
'qwen2.5-vl'
>>> family_for("google/gemini-2.5-flash").convention.order
'yx'
>>> family_for("my-own-model").name
'unknown'
"""

from __future__ import annotations

import re

from remote.ai.families import (
    autoglm,
    claude,
    doubao,
    doubao_ui_tars,
    gemini,
    glm,
    gpt,
    os_atlas,
    qwen3,
    qwen25,
    qwen_vl_max,
    qwen_vl_max_2508,
    showui,
    ui_tars,
    ui_tars_1,
    unknown,
)
from remote.ai.families.spec import AgentProtocol, Family
from remote.errors import ConfigError

# In any order: a model goes to the family that claims most of its name (`family_for`).
ALL: tuple[Family, ...] = (
    qwen_vl_max_2508.FAMILY, qwen25.FAMILY, qwen_vl_max.FAMILY, qwen3.FAMILY, glm.FAMILY, autoglm.FAMILY,
    gemini.FAMILY, ui_tars.FAMILY, doubao_ui_tars.FAMILY, ui_tars_1.FAMILY, doubao.FAMILY, os_atlas.FAMILY,
    showui.FAMILY, gpt.FAMILY, claude.FAMILY,
)
UNKNOWN = unknown.FAMILY
BY_NAME = {f.name: f for f in (*ALL, UNKNOWN)}

__all__ = ["ALL", "BY_NAME", "UNKNOWN", "AgentProtocol", "Family", "by_name", "claim", "family_for"]


def _normal(model: str) -> str:
    return model.strip().lower().replace("_", "-")


def by_name(name: str) -> Family:
    """The family called ``name`` (``LLM_MODEL_FAMILY``); ``ConfigError`` listing the names otherwise."""
    family = BY_NAME.get(name.strip().lower())
    if family is None:
        raise ConfigError(f"unknown model family {name!r}", hint=f"LLM_MODEL_FAMILY is one of: {', '.join(BY_NAME)}")
    return family


def family_for(model: str, family: str = "") -> Family:
    """The family of ``model``: ``family`` when given (``LLM_MODEL_FAMILY``), else the one whose name pattern
    claims the longest part of the name (``doubao-1-5-ui-tars`` is Doubao's UI-TARS, not UI-TARS 1.0 which
    claims only ``ui-tars``), else ``unknown`` (whose coordinates are never trusted). Two families claiming
    equally much: ``unknown`` too, never a choice by the order of `ALL`."""
    if family:
        return by_name(family)
    name = _normal(model)
    claims = sorted(((claim(candidate, name), candidate) for candidate in ALL), key=lambda c: c[0], reverse=True)
    best, runner_up = claims[0][0], claims[1][0]
    return claims[0][1] if best > runner_up else UNKNOWN


def claim(family: Family, name: str) -> int:
    """How many characters of the (normalised) model ``name`` the patterns of ``family`` match (0: none)."""
    found = (re.search(pattern, name) for pattern in family.models)
    return max((len(m.group(0)) for m in found if m is not None), default=0)
