"""A learned task's words: which values of the sentence are slots, its patterns, and the slots put back
into the steps (pure; `remote.runner.learning` compiles a run with them).

``slot_values("给王五发消息说明天见", None, ["王五", "明天见"])`` -> ``{"text1": "王五", "text2": "明天见"}``;
``patterns_for`` -> ``["给{text1}发消息说{text2}"]``; ``generalise`` writes ``{text1}`` for 王五 everywhere.
"""

from __future__ import annotations

import re
from typing import Any

from remote.apps.base import TaskTemplate, compile_pattern, normalize_task
from remote.core.locate.target_ref import parse_target

MIN_LITERAL = 2            # a pattern keeps at least this many characters of its own ("打开{x}", not "{x}")
FILLERS = ("麻烦你", "麻烦", "帮我", "请你", "请", "帮忙", "给我", "please ", "can you ", "could you ")


def slot_values(task: str, named: Any, typed: list[str]) -> dict[str, str]:
    """``{slot: value}``: the values the model named (``analysis.slots``) that the sentence says, then each
    typed text the sentence says (``text1``, ``text2`` ...). A value must occur exactly once in the sentence."""
    text = normalize_task(task)
    out: dict[str, str] = {}
    if isinstance(named, dict):
        for key, value in named.items():
            name = re.sub(r"\W+", "_", str(key)).strip("_")[:30]
            if name and isinstance(value, str) and len(value.strip()) >= 1 and text.count(value.strip()) == 1:
                out.setdefault(name, value.strip())
    for value in typed:
        value = value.strip()
        if len(value) >= 2 and text.count(value) == 1 and value not in out.values():
            out[f"text{len(out) + 1}"] = value
    # a value inside another (王五 in 王五你好) would be cut twice: keep the longer one
    return {k: v for k, v in out.items() if not any(v != w and v in w for w in out.values())}


def patterns_for(task: str, slots: dict[str, str]) -> list[str]:
    """The sentence with its values as ``{slots}``; also without a polite opening ("麻烦帮我…"), since people
    (and a model paraphrasing) say the same task both ways. Each pattern must give back the same values."""
    text = normalize_task(task)
    pattern = text
    for name, value in sorted(slots.items(), key=lambda kv: -len(kv[1])):
        pattern = pattern.replace(value, "{" + name + "}", 1)
    out: list[str] = []
    for candidate in (pattern, _without_fillers(pattern)):
        if candidate and candidate not in out and _sound(candidate, text, slots):
            out.append(candidate)
    return out


def _without_fillers(pattern: str) -> str:
    lowered = pattern.lower()
    for filler in FILLERS:
        if lowered.startswith(filler):
            return _without_fillers(pattern[len(filler):].lstrip())
    return pattern


def _sound(pattern: str, task: str, slots: dict[str, str]) -> bool:
    """A pattern keeps some words of its own, and gives back the same values from the sentence it came from
    (the sentence without its polite opening, for the shorter pattern)."""
    literal = re.sub(r"\{\w+\}|\s", "", pattern)
    if len(literal) < MIN_LITERAL:
        return False
    try:
        rx = compile_pattern(pattern)
    except (ValueError, re.error):
        return False
    template = TaskTemplate(name="probe", patterns=(pattern,), steps=(), slots={}, success_check={},
                            _regexes=(rx,))
    said = {k: v for k, v in slots.items() if "{" + k + "}" in pattern}
    return template.match(task) == said or template.match(_without_fillers(task)) == said


def generalise(value: Any, slots: dict[str, str], *, whole: bool = False) -> Any:
    """Values of the sentence -> ``{slot}`` in every string (``whole``: only a target whose value is the slot's)."""
    if isinstance(value, dict):
        return {k: generalise(v, slots, whole=whole) for k, v in value.items()}
    if isinstance(value, list):
        return [generalise(v, slots, whole=whole) for v in value]
    if not isinstance(value, str):
        return value
    for name, slot_value in sorted(slots.items(), key=lambda kv: -len(kv[1])):
        if whole:
            kind, rest = parse_target(value)
            if kind in ("text", "desc") and rest == slot_value:
                return f"{kind}:{{{name}}}"
            if kind == "role" and rest.endswith(":" + slot_value):
                return f"role:{rest[: -len(slot_value)]}{{{name}}}"
            continue
        value = value.replace(slot_value, "{" + name + "}")
    return value
