"""Model families are matched by the most specific name, whatever the order of `families.ALL`.

Each family's names below are the ones its own documentation and the providers' model lists use
(docs/models.md); a family's patterns must claim its own names and claim less of every other family's.
"""

from __future__ import annotations

import dataclasses

import pytest

from remote.ai import families
from remote.ai.families import ALL, BY_NAME, UNKNOWN, claim, family_for

NAMES = {
    "qwen2.5-vl": ["qwen2.5-vl-72b-instruct", "Qwen/Qwen2.5-VL-7B-Instruct", "qwen-vl-max-2025-04-08",
                   "qwen-vl-plus-2025-01-25", "gui-owl-7b"],
    "qwen-vl-max": ["qwen-vl-max", "qwen-vl-plus-latest"],
    "qwen-vl-max-2508": ["qwen-vl-max-2025-08-13", "qwen-vl-plus-2025-09-11"],
    "qwen3-vl": ["qwen3-vl-plus", "qwen3-vl-235b-a22b-instruct", "Qwen/Qwen3-VL-8B-Instruct"],
    "glm-v": ["glm-4.5v", "glm-4.1v-thinking-flash", "zai-org/GLM-4.5V"],
    "autoglm-phone": ["autoglm-phone-9b", "zai-org/AutoGLM-Phone-9B"],
    "gemini": ["gemini-2.5-flash", "google/gemini-2.5-pro"],
    "ui-tars-1.5": ["ui-tars-1.5-7b", "ByteDance-Seed/UI-TARS-1.5-7B"],
    "ui-tars-1.0": ["ui-tars-7b-dpo", "bytedance-research/UI-TARS-72B-SFT"],
    "doubao-ui-tars": ["doubao-1-5-ui-tars-250428", "doubao-1.5-ui-tars"],
    "doubao-vision": ["doubao-seed-1-6-vision-250815", "doubao-1.5-vision-pro-32k", "doubao-seed-1.6"],
    "os-atlas": ["os-atlas-pro-7b", "OS-Copilot/OS-Atlas-Base-7B"],
    "showui": ["showui-2b", "showlab/ShowUI-2B"],
    "gpt": ["gpt-4o-mini", "openai/gpt-4.1", "chatgpt-4o-latest"],
    "claude": ["claude-sonnet-4-5", "anthropic/claude-3-7-sonnet"],
}
CASES = [(family, name) for family, names in NAMES.items() for name in names]


def test_every_family_has_names_to_be_checked_against():
    assert set(NAMES) == {f.name for f in ALL}


@pytest.mark.parametrize(("family", "name"), CASES)
def test_a_family_claims_its_names_and_no_other_family_claims_as_much(family, name):
    normal = name.strip().lower().replace("_", "-")
    own = claim(BY_NAME[family], normal)
    assert own > 0, f"{family} does not claim {name}"
    rivals = {f.name: claim(f, normal) for f in ALL if f.name != family and claim(f, normal) >= own}
    assert rivals == {}, f"{name}: {rivals} claim as much as {family} ({own} characters)"
    assert family_for(name).name == family


@pytest.mark.parametrize("order", ["reversed", "rotated"])
def test_the_order_of_the_families_decides_nothing(monkeypatch, order):
    shuffled = tuple(reversed(ALL)) if order == "reversed" else ALL[7:] + ALL[:7]
    monkeypatch.setattr(families, "ALL", shuffled)
    assert {name: family_for(name).name for _, name in CASES} == {name: family for family, name in CASES}


def test_a_name_no_family_claims_or_two_claim_equally_is_unknown(monkeypatch):
    assert family_for("my-new-vl-model") is UNKNOWN
    twin = dataclasses.replace(BY_NAME["gpt"], name="gpt-twin")     # claims gpt's names exactly as much
    monkeypatch.setattr(families, "ALL", (*ALL, twin))
    assert family_for("gpt-4o-mini") is UNKNOWN
