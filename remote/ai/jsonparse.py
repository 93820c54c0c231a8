"""Lenient parsing of a model's JSON reply (pure, no I/O).

Models wrap JSON in code fences, add prose around it, use single quotes,
trailing commas or Python literals. :func:`parse_json_reply` recovers the first
JSON object (or array) from such a reply and raises :class:`JSONReplyError`
(a ``ValueError``) when nothing usable is there::

    >>> parse_json_reply("Sure! ```json\\n{'found': True, 'xmin': 10,}\\n```")
    {'found': True, 'xmin': 10}
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

_FENCE = re.compile(r"```(?:json|JSON|javascript|js)?\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}

Expect = Callable[[Any], Any] | Sequence[str] | None


class JSONReplyError(ValueError):
    """The reply holds no usable JSON, or the JSON lacks what the caller expects."""


def _balanced_spans(text: str) -> list[str]:
    """Every top-level ``{...}`` / ``[...]`` span, honouring strings (either quote)."""
    spans: list[str] = []
    depth, start, quote, escape = 0, -1, "", False
    for i, ch in enumerate(text):
        if quote:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == quote:
                quote = ""
            continue
        if ch in "\"'" and depth:
            quote = ch
        elif ch in "{[":
            if depth == 0:
                start = i
            depth += 1
        elif ch in "}]" and depth:
            depth -= 1
            if depth == 0:
                spans.append(text[start:i + 1])
    return spans


def _try_load(candidate: str) -> Any:
    candidate = candidate.strip()
    try:
        return json.loads(candidate)
    except ValueError:
        pass
    fixed = _TRAILING_COMMA.sub(r"\1", candidate)
    try:
        return json.loads(fixed)
    except ValueError:
        pass
    # Python-ish: single quotes, True/False/None. literal_eval never executes code.
    try:
        return ast.literal_eval(fixed)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        pass
    jsonish = re.sub(r"\b(True|False|None)\b", lambda m: _PY_LITERALS[m.group(1)], fixed)
    try:
        return json.loads(jsonish)
    except ValueError:
        return _NOTHING


_NOTHING = object()


def parse_json_reply(text: str) -> Any:
    """The first JSON object or array in ``text``; objects are preferred over arrays."""
    if not isinstance(text, str) or not text.strip():
        raise JSONReplyError("the reply is empty")
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    found_array: Any = _NOTHING
    for block in candidates:
        value = _try_load(block)
        if isinstance(value, dict):
            return value
        for span in _balanced_spans(block):
            value = _try_load(span)
            if isinstance(value, dict):
                return value
            if isinstance(value, list) and found_array is _NOTHING:
                found_array = value
    if found_array is not _NOTHING:
        return found_array
    raise JSONReplyError("the reply contains no JSON object")


def check_expected(value: Any, expect: Expect) -> Any:
    """Validate a parsed reply: ``expect`` is a callable (returns the value to use,
    raises ``ValueError``) or a list of required keys of an object."""
    if expect is None:
        if not isinstance(value, dict):
            raise JSONReplyError("expected a JSON object")
        return value
    if callable(expect):
        return expect(value)
    if not isinstance(value, dict):
        raise JSONReplyError("expected a JSON object")
    missing = [k for k in expect if k not in value]
    if missing:
        raise JSONReplyError(f"missing keys: {', '.join(missing)}")
    return value
