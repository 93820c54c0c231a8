"""A model's reply as text: the answer outside its thinking, and the JSON values in it (pure, no I/O).

Real replies wrap their answer in code fences and prose (Chinese or English),
write Python literals (single quotes, ``True``, trailing commas), think aloud
first (``<think>…</think>``, ``<thought>``, GLM's ``<answer>…</answer>``, UI-TARS'
``Thought: … Action: …``) and correct themselves ("…, Corrected: {…}"). The rules:

- the answer is what stands outside the thinking; a draft inside it never wins;
- of several complete JSON values, the last is meant (objects before arrays).

::

    >>> parse_json_reply("<think>{'found': True, 'bbox': [1, 2, 3, 4]}</think>"
    ...                  "```json\\n{'found': True, 'bbox': [5, 6, 7, 8],}\\n```")
    {'found': True, 'bbox': [5, 6, 7, 8]}

:mod:`remote.ai.reader` reads the coordinate shapes (special tokens, action calls)
on top of this.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from remote.ai.answers import ReplyError

_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}
_THINKING = ("think", "thought", "thinking", "reasoning")
_NAMES = "|".join(_THINKING)
_BLOCK = re.compile(rf"<({_NAMES})>.*?</\1>", re.DOTALL | re.IGNORECASE)
_OPEN = re.compile(rf"<({_NAMES})>", re.IGNORECASE)
_CLOSE = re.compile(rf"</({_NAMES})>", re.IGNORECASE)
_ANSWER = re.compile(r"<answer>(.*?)(?:</answer>|$)", re.DOTALL | re.IGNORECASE)
MAX_REPLY = 200_000   # characters read of one reply (a runaway reply is cut, not parsed for minutes)
MAX_SPANS = 200

Expect = Callable[[Any], Any] | Sequence[str] | None
JSONReplyError = ReplyError   # the name callers of the JSON layer know


def split_thinking(text: str) -> tuple[str, str]:
    """``(answer, thinking)``: closed thinking blocks removed; text before a stray ``</think>`` (a server that
    strips the opening tag) is thinking; an unclosed ``<think>`` makes the rest thinking. A GLM/AutoGLM
    ``<answer>`` block, when there is one, is the answer."""
    text = text[:MAX_REPLY]
    thoughts = [m.group(0) for m in _BLOCK.finditer(text)]
    rest = _BLOCK.sub(" ", text)
    closing = list(_CLOSE.finditer(rest))
    if closing:
        thoughts.append(rest[:closing[-1].end()])
        rest = rest[closing[-1].end():]
    opening = _OPEN.search(rest)
    if opening:
        thoughts.append(rest[opening.start():])
        rest = rest[:opening.start()]
    answers = _ANSWER.findall(rest)
    if answers:
        rest = answers[-1]
    thinking = _OPEN.sub("", _CLOSE.sub("", "\n".join(t.strip() for t in thoughts)))
    return rest.strip(), thinking.strip()


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    value: Any


def brackets(text: str, start: int = 0, stop: int | None = None, *, opens: str = "([{", closes: str = ")]}",
             quotes_at_top: bool = True) -> Iterator[tuple[int, int]]:
    """(index, depth after it) of every bracket of ``opens``/``closes`` in ``text[start:stop]`` outside quoted
    strings ("..." or '...', backslash escapes honoured); a close with nothing open is skipped. Without
    ``quotes_at_top`` a quote opens a string only inside brackets (prose's apostrophes around JSON)."""
    depth, quote, escape = 0, "", False
    for i in range(start, len(text) if stop is None else min(len(text), stop)):
        ch = text[i]
        if quote:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'" and (depth or quotes_at_top):
            quote = ch
        elif ch in opens:
            depth += 1
            yield i, depth
        elif ch in closes and depth:
            depth -= 1
            yield i, depth


def _balanced(text: str, offset: int = 0) -> list[tuple[int, int]]:
    """Every top-level ``{...}`` / ``[...]`` span (start, end), honouring strings in either quote."""
    spans: list[tuple[int, int]] = []
    start = -1
    for i, depth in brackets(text, opens="{[", closes="}]", quotes_at_top=False):
        if depth == 1 and text[i] in "{[":
            start = i
        elif depth == 0:
            spans.append((offset + start, offset + i + 1))
            if len(spans) >= MAX_SPANS:
                break
    return spans


_NOTHING = object()


def load_value(candidate: str) -> Any:
    """JSON, else JSON without trailing commas, else a Python literal (never executed); ``_NOTHING`` if none."""
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
    try:
        return ast.literal_eval(fixed)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        pass
    jsonish = re.sub(r"\b(True|False|None)\b", lambda m: _PY_LITERALS[m.group(1)], fixed)
    try:
        return json.loads(jsonish)
    except ValueError:
        return _NOTHING


def json_spans(text: str) -> list[Span]:
    """The complete JSON (or Python-literal) values in ``text``, in order; a span that does not load is
    searched inside (``see [{"a": 1}] above`` still gives the object)."""
    found: list[Span] = []
    pending = _balanced(text)
    while pending and len(found) < MAX_SPANS:
        start, end = pending.pop(0)
        value = load_value(text[start:end])
        if value is not _NOTHING and isinstance(value, dict | list):
            found.append(Span(start, end, value))
        elif end - start > 2:
            pending = _balanced(text[start + 1:end - 1], start + 1) + pending
    return sorted(found, key=lambda s: s.start)


def parse_json_reply(text: str) -> Any:
    """The last complete JSON object outside the thinking (else the last array); ``ReplyError`` if none."""
    if not isinstance(text, str) or not text.strip():
        raise ReplyError("the reply is empty")
    answer, _ = split_thinking(text)
    spans = json_spans(answer)
    objects = [s.value for s in spans if isinstance(s.value, dict)]
    if objects:
        return objects[-1]
    if spans:
        return spans[-1].value
    raise ReplyError("the reply contains no JSON object" + (" outside its thinking" if answer != text.strip()
                                                             else ""))


def check_expected(value: Any, expect: Expect) -> Any:
    """Validate a parsed reply: ``expect`` is a callable (returns the value to use,
    raises ``ValueError``) or a list of required keys of an object."""
    if expect is None:
        if not isinstance(value, dict):
            raise ReplyError("expected a JSON object")
        return value
    if callable(expect):
        return expect(value)
    if not isinstance(value, dict):
        raise ReplyError("expected a JSON object")
    missing = [k for k in expect if k not in value]
    if missing:
        raise ReplyError(f"missing keys: {', '.join(missing)}")
    return value
