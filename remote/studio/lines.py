"""A draft's steps as the page shows them: one line of YAML each, where ``modules check``'s messages go, and what
a run of the task ends as."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from remote.errors import BadInput
from remote.yamlfile import parse_yaml_text

MAX_LINE = 2000


LINE = re.compile(r"\(studio draft\):(\d+): ")


def step_line(step: dict[str, Any]) -> str:
    """A step as the one line of YAML the page shows and edits (``{action: tap, target_ref: text:显示}``)."""
    return yaml.safe_dump(step, default_flow_style=True, allow_unicode=True, sort_keys=False, width=10**6).strip()


def parse_line(text: Any) -> Any:
    """A step's line as edited on the page, read by the bounded YAML reader the modules are read with."""
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_LINE:
        raise BadInput(f"a step's line is some text of at most {MAX_LINE} characters")
    return parse_yaml_text(text, Path("the step's line"))


def step_spans(text: str) -> list[tuple[int, int]]:
    """The 1-based line range of each step in a draft's YAML (``yaml()``: one task, steps at four spaces)."""
    lines = text.splitlines()
    spans: list[tuple[int, int]] = []
    inside = False
    for number, line in enumerate(lines, start=1):
        if line.startswith("    steps:"):
            inside = True
        elif inside and line.startswith("    - "):
            spans.append((number, number))
        elif inside and line.startswith("      ") and spans:
            spans[-1] = (spans[-1][0], number)
        elif inside:
            inside = False
    return spans


def ends_as(check: dict[str, Any]) -> str:
    """What a run of the task ends as, in words: its final check, or why it can never be SUCCESS."""
    if not check:
        return "no final check yet: a run could never end SUCCESS (build one with the check buttons)"
    parts = []
    if check.get("app"):
        parts.append(f"{check['app']} in front")
    for key, said in (("target", "shows"), ("text", "reads"), ("absent", "no longer shows")):
        values = check.get(key) or []
        for value in [values] if isinstance(values, str) else values:
            parts.append(f"the screen {said} {value}")
    toggle = check.get("toggle")
    if isinstance(toggle, dict):
        parts.append(f"{toggle.get('target')} is {toggle.get('state')}")
    return "SUCCESS when " + " and ".join(parts)
