"""What a read text means, and how values fill a step (pure).

``extract`` reads text off the screen and gives it a type; later steps and a task's
``answer`` use it as ``{name}``::

    convert(["已使用 37% - 还剩 162 GB"], "number", r"(\\d+)%")   -> 37
    convert(["已关闭"], "bool", None)                                -> False
    convert(["明天见"], "string", None)                              -> "明天见"
    convert(["张三", "李四"], "list", None)                          -> ["张三", "李四"]
    fill_slots("给{contact}发", {"contact": "张三"})                  -> "给张三发"
    version_holds("8.0.47", ">=8.0.30")                              -> True

Values are inserted literally in one pass (a value that holds ``{braces}`` is not filled again).
"""

from __future__ import annotations

import re
from typing import Any

from remote.errors import FailureReason, RemoteError

Value = str | int | float | bool | list[str]
VALUE_TYPES = ("string", "number", "bool", "list")
SLOT = re.compile(r"\{(\w+)\}")
# Words that answer yes or no on a switch's row or in a sentence (compared whole, case and spaces ignored).
YES_WORDS = ("开", "开启", "已开启", "打开", "已打开", "启用", "已启用", "已连接", "是", "on", "yes", "true",
             "enabled", "connected")
NO_WORDS = ("关", "关闭", "已关闭", "未开启", "停用", "已停用", "未连接", "否", "off", "no", "false", "disabled",
            "not connected")
_NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?")
_VERSION_SPEC = re.compile(r"^\s*(>=|<=|==|!=|>|<|=)?\s*[vV]?(\d+(?:\.\d+){0,4})\s*$")
_VERSION = re.compile(r"(\d+(?:\.\d+){0,4})")


MAX_ENV_VALUE_CHARS = 10_000
_ENV_KEY = re.compile(r"^\w{1,40}$")


def env_entry(key: Any, value: Any) -> tuple[str, str]:
    """One ``-e KEY=VALUE`` (or a batch entry's ``env:`` item) checked: ValueError says why it is not one."""
    if not isinstance(key, str) or not _ENV_KEY.match(key):
        raise ValueError(f"{str(key)[:40]!r} is not a slot name (letters, digits and _)")
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"the value of {key} must be text, not {str(value)[:40]!r}")
    text = str(value)
    if len(text) > MAX_ENV_VALUE_CHARS:
        raise ValueError(f"the value of {key} is {len(text)} characters long; at most {MAX_ENV_VALUE_CHARS}")
    return key, text


class ReadError(RemoteError, ValueError):
    """A text that does not give a value of the wanted type; the message quotes what was read."""

    reason = FailureReason.NOT_READ


def _quote(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[:limit - 3] + "...")


def _match(pattern: str, text: str) -> str:
    found = re.search(pattern, text)
    if found is None:
        raise ReadError(f"pattern {pattern!r} does not match {_quote(text)}")
    return found.group(1) if found.groups() and found.group(1) is not None else found.group(0)


def yes_no(text: str) -> bool | None:
    """``"已开启"`` -> True, ``"关闭"`` -> False, ``"SimNet"`` -> None."""
    word = " ".join(text.split()).casefold()
    if word in YES_WORDS:
        return True
    if word in NO_WORDS:
        return False
    return None


def convert(texts: list[str], kind: str, pattern: str | None) -> Value:
    """The typed value of ``texts`` (what was read, in reading order); :class:`ReadError` says why not."""
    text = " ".join(t.strip() for t in texts if t.strip())
    if kind == "list":
        if pattern:
            return [m if isinstance(m, str) else m[0] for m in re.findall(pattern, text)]
        return [t.strip() for t in texts if t.strip()]
    if not text:
        raise ReadError("nothing to read there (no text)")
    if kind == "bool":
        if pattern:
            return re.search(pattern, text) is not None
        answer = yes_no(text)
        if answer is None:
            raise ReadError(f"cannot tell yes or no from {_quote(text)} (give a pattern, or read a switch)")
        return answer
    value = _match(pattern, text) if pattern else text
    if kind == "number":
        found = _NUMBER.search(value)
        if found is None:
            raise ReadError(f"no number in {_quote(value)}")
        number = float(found.group(0).replace(",", ""))
        return int(number) if number.is_integer() and abs(number) < 2 ** 53 else number
    return value


def as_text(value: Value) -> str:
    """A value as it goes into a step's text: ``True`` -> ``"true"``, ``3.0`` -> ``"3"``, a list joined by ``, ``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ", ".join(value)
    return str(value)


def fill_slots(value: Any, slots: dict[str, str]) -> Any:
    """Replace ``{slot}`` in every string of a step (values are inserted literally, never re-parsed)."""
    if isinstance(value, str):
        return SLOT.sub(lambda m: slots.get(m.group(1), m.group(0)), value)
    if isinstance(value, dict):
        return {k: fill_slots(v, slots) for k, v in value.items()}
    if isinstance(value, list):
        return [fill_slots(v, slots) for v in value]
    return value


def slots_in(value: Any) -> set[str]:
    """The ``{names}`` a step (or any nested value) uses."""
    if isinstance(value, str):
        return set(SLOT.findall(value))
    if isinstance(value, dict):
        return set().union(*(slots_in(v) for v in value.values())) if value else set()
    if isinstance(value, list | tuple):
        return set().union(*(slots_in(v) for v in value)) if value else set()
    return set()


def parse_version_spec(spec: str) -> tuple[str, tuple[int, ...]]:
    """``">=8.0.30"`` -> ``(">=", (8, 0, 30))``; a bare version means ``==``. ValueError when it is none."""
    found = _VERSION_SPEC.match(spec or "")
    if found is None:
        raise ValueError(f"version {spec!r} must look like >=8.0.30 (>=, >, <=, <, == or !=, then numbers)")
    op = found.group(1) or "=="
    return ("==" if op == "=" else op), tuple(int(p) for p in found.group(2).split("."))


def version_holds(actual: str, spec: str) -> bool | None:
    """Does the installed ``actual`` version meet ``spec``? None when ``actual`` has no version number."""
    found = _VERSION.search(actual or "")
    if found is None:
        return None
    op, wanted = parse_version_spec(spec)
    have = tuple(int(p) for p in found.group(1).split("."))
    size = max(len(have), len(wanted))
    a, b = have + (0,) * (size - len(have)), wanted + (0,) * (size - len(wanted))
    return {">=": a >= b, ">": a > b, "<=": a <= b, "<": a < b, "==": a == b, "!=": a != b}[op]
