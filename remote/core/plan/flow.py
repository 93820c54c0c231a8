"""Steps that look, wait, branch, repeat and read: their typed, bounded arguments, parsed once (pure).

A template writes them in Maestro's spirit, the step's kind as its key::

    - assert_visible: "text:WLAN"                                  # a mid-flow check
    - wait_until: {visible: "text:已连接", timeout_ms: 5000}
    - scroll_until_visible: {target: "text:关于手机", direction: down, max_swipes: 8}
    - extract: {below: "text:张三", as: last_message}              # then "{last_message}" later on
    - run: {task: open_page, slots: {page: 蓝牙}}                   # another template (or run: {steps: [...]})
    - repeat: {until_visible: "text:没有更多了", max: 10, steps: [...]}
    - retry: {times: 3, steps: [...]}
    - {action: tap, target_ref: "text:允许", when: {visible: "text:允许"}}

and a model's plan the same in its JSON form, ``{"action": "wait_until", "params": {"visible": "text:已连接"}}``.
:func:`short_form` turns the first form into the second; :func:`parse_any` gives every step its typed
arguments (an action's from :mod:`remote.core.plan.actions`, a flow kind's from here); :func:`parse_when`
reads a ``when``. Every wait is bounded by a timeout, every loop by a count, every block by a depth.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from remote.core.plan.actions import DIRECTIONS, ActionName, Args, ArgsError, ParamReader, parse_args
from remote.core.plan.values import VALUE_TYPES, parse_version_spec

FLOW_KINDS = ("assert_visible", "assert_not_visible", "wait_until", "scroll_until_visible", "extract", "run",
              "repeat", "retry")
BLOCK_KINDS = ("run", "repeat", "retry")
# The params key that names a kind's target (the step's target_ref), in the order they are looked for.
TARGET_KEYS: dict[str, tuple[str, ...]] = {
    "assert_visible": ("target",), "assert_not_visible": ("target",), "wait_until": ("visible", "not_visible"),
    "scroll_until_visible": ("target",), "extract": ("from", "below", "right_of")}
PARAM_KEYS: dict[str, tuple[str, ...]] = {
    "assert_visible": ("target", "timeout_ms"), "assert_not_visible": ("target", "timeout_ms"),
    "wait_until": ("visible", "not_visible", "timeout_ms"),
    "scroll_until_visible": ("target", "direction", "max_swipes"),
    "extract": ("from", "below", "right_of", "region", "focused", "as", "pattern", "type"),
    "run": ("task", "module", "slots", "steps"), "repeat": ("times", "while_visible", "until_visible", "max", "steps"),
    "retry": ("times", "steps")}
EXTRACT_SOURCES = ("from", "below", "right_of", "region", "focused")
WHEN_KEYS = ("visible", "not_visible", "app", "checked", "not_checked", "version")
MAX_WAIT_MS = 60_000
ASSERT_TIMEOUT_MS = 1_000      # an assert looks again for up to a second (the screen may still be settling)
WAIT_TIMEOUT_MS = 5_000
MAX_SWIPES, DEFAULT_SWIPES = 30, 5
MAX_ROUNDS = 50                # repeat: times and max
MAX_ATTEMPTS, DEFAULT_ATTEMPTS = 10, 2
MAX_DEPTH = 5                  # blocks inside blocks, sub-tasks included
MAX_BLOCK_STEPS = 50
MAX_PATTERN_CHARS = 200
_NAME = re.compile(r"^[^\W\d]\w{0,39}$")


@dataclass(frozen=True)
class Condition:
    """One clause of a ``when``: ``Condition("visible", "text:允许")``, ``Condition("version", ">=8.0.30")``."""

    kind: str
    value: str

    def describe(self) -> str:
        return {"visible": f"{self.value} is on the screen", "not_visible": f"{self.value} is not on the screen",
                "app": f"{self.value} is in front", "checked": f"{self.value} is switched on",
                "not_checked": f"{self.value} is switched off",
                "version": f"the app's version is {self.value}"}[self.kind]


@dataclass(frozen=True)
class When:
    """Every condition must hold for the step to run; otherwise it is skipped, with the reason recorded."""

    conditions: tuple[Condition, ...]

    def to_dict(self) -> dict[str, str]:
        return {c.kind: c.value for c in self.conditions}

    def describe(self) -> str:
        return " and ".join(c.describe() for c in self.conditions)


@dataclass(frozen=True)
class Assert:
    visible: bool                  # assert_visible (True) or assert_not_visible
    timeout_ms: int = ASSERT_TIMEOUT_MS

    def describe(self, targets: tuple[str, ...]) -> str:
        return " | ".join(targets)


@dataclass(frozen=True)
class WaitUntil:
    visible: bool
    timeout_ms: int = WAIT_TIMEOUT_MS

    def describe(self, targets: tuple[str, ...]) -> str:
        return f"{'visible' if self.visible else 'not_visible'} {' | '.join(targets)} ({self.timeout_ms} ms)"


@dataclass(frozen=True)
class ScrollUntil:
    direction: str = "down"        # where the list goes: down shows what is below (the finger moves up)
    max_swipes: int = DEFAULT_SWIPES

    def describe(self, targets: tuple[str, ...]) -> str:
        return f"{' | '.join(targets)} ({self.direction}, max {self.max_swipes} swipes)"


@dataclass(frozen=True)
class Extract:
    source: str                    # from | below | right_of (a target) | region | focused
    name: str                      # the variable: {name} in later steps and in the answer
    kind: str = "string"           # string | number | bool | list
    pattern: str | None = None
    region: tuple[float, float, float, float] | None = None   # pixels, or 0-1000 of the screen

    def describe(self, targets: tuple[str, ...]) -> str:
        what = " | ".join(targets)
        source = {"from": what, "region": f"[{', '.join(f'{v:g}' for v in self.region or ())}]", "focused": ""}
        words = [w for w in ("" if self.source == "from" else self.source, source.get(self.source, what)) if w]
        return f"{' '.join(words)} as {self.name}"


@dataclass(frozen=True)
class RunTask:
    task: str | None = None        # a template's name; None: the step's own steps (an inline block)
    module: str | None = None      # None: the module of the task that runs it
    slots: tuple[tuple[str, str], ...] = ()

    def describe(self, targets: tuple[str, ...]) -> str:
        return f"{self.module + '.' if self.module else ''}{self.task}" if self.task else "a block of steps"


@dataclass(frozen=True)
class Repeat:
    max: int                       # rounds at most (times, when given)
    times: int | None = None
    while_visible: tuple[str, ...] = ()    # targets: any of them on the screen
    until_visible: tuple[str, ...] = ()

    def describe(self, targets: tuple[str, ...]) -> str:
        if self.times is not None:
            return f"{self.times} times"
        kind = "while_visible" if self.while_visible else "until_visible"
        return f"{kind} {' | '.join(self.while_visible or self.until_visible)} (max {self.max})"


@dataclass(frozen=True)
class Retry:
    times: int = DEFAULT_ATTEMPTS  # tries of the whole block, the first included

    def describe(self, targets: tuple[str, ...]) -> str:
        return f"up to {self.times} tries"


FlowArgs = Assert | WaitUntil | ScrollUntil | Extract | RunTask | Repeat | Retry
StepArgs = Args | FlowArgs


def is_flow(action: str) -> bool:
    return action in FLOW_KINDS


def short_form(raw: dict[str, Any]) -> dict[str, Any]:
    """``{wait_until: {visible: T}, when: ...}`` -> ``{action: wait_until, params: {visible: T}, when: ...}``.

    A step that already names its action, or names no kind (or several), is returned as it is.
    """
    kinds = [k for k in raw if k in FLOW_KINDS]
    if "action" in raw or len(kinds) != 1:
        return raw
    kind = kinds[0]
    value = raw[kind]
    out = {k: v for k, v in raw.items() if k != kind}
    out["action"] = kind
    if isinstance(value, dict):
        params = dict(value)
    elif kind in ("assert_visible", "assert_not_visible", "scroll_until_visible"):
        params = {"target": value}
    elif kind == "wait_until":
        params = {"visible": value}
    elif kind == "run" and isinstance(value, str):
        params = {"task": value}
    else:
        params = {"_bad": value}
    out["params"] = {**(raw.get("params") or {}), **params} if isinstance(raw.get("params"), dict) else params
    return out


def target_of(action: str, params: dict[str, Any]) -> Any:
    """The target a flow kind's params name (``{visible: "text:完成"}`` -> ``"text:完成"``), or None."""
    return next((params[k] for k in TARGET_KEYS.get(action, ()) if params.get(k) is not None), None)


def parse_any(action: ActionName, params: dict[str, Any], target_ref: str | None, description: str = "",
              *, body: int = 0) -> StepArgs:
    """The typed arguments of any step (``body``: how many steps a block holds); :class:`ArgsError` lists
    every problem."""
    if not is_flow(action.value):
        return parse_args(action, params, target_ref, description)
    r = ParamReader(params)
    if "_bad" in params:
        r.problems.append(f"needs a mapping of its keys ({', '.join(PARAM_KEYS[action.value])}), "
                          f"not {str(params['_bad'])[:40]!r}")
    args = _FLOW[action.value](r, target_ref, body)
    if r.problems:
        raise ArgsError([f"{action.value} {p}" for p in r.problems])
    return args


def _timeout(r: ParamReader, default: int) -> int:
    return int(r.number("timeout_ms", default=default, low=0, high=MAX_WAIT_MS) or 0)


def _needs_target(r: ParamReader, target_ref: str | None, keys: str) -> None:
    if not target_ref:
        r.problems.append(f"needs {keys}: TARGET")


def _assert(visible: bool) -> Callable[[ParamReader, str | None, int], Assert]:
    def parse(r: ParamReader, target_ref: str | None, body: int) -> Assert:
        _needs_target(r, target_ref, "target")
        return Assert(visible, _timeout(r, ASSERT_TIMEOUT_MS))
    return parse


def _wait(r: ParamReader, target_ref: str | None, body: int) -> WaitUntil:
    states = [k for k in ("visible", "not_visible") if k in r.params]
    if len(states) != 1:
        r.problems.append("needs one of visible: TARGET or not_visible: TARGET")
    return WaitUntil(states != ["not_visible"], _timeout(r, WAIT_TIMEOUT_MS))


def _scroll(r: ParamReader, target_ref: str | None, body: int) -> ScrollUntil:
    _needs_target(r, target_ref, "target")
    direction = str(r.params.get("direction", "down")).strip().lower()
    if direction not in DIRECTIONS:
        r.problems.append(f"direction must be one of {', '.join(DIRECTIONS)}, not {direction[:20]!r}")
    swipes = r.number("max_swipes", default=DEFAULT_SWIPES, low=0, high=MAX_SWIPES)
    return ScrollUntil(direction, int(swipes if swipes is not None else DEFAULT_SWIPES))


def _extract(r: ParamReader, target_ref: str | None, body: int) -> Extract:
    sources = [k for k in EXTRACT_SOURCES if k in r.params]
    if len(sources) != 1:
        r.problems.append(f"needs exactly one of {', '.join(EXTRACT_SOURCES)} (what to read)")
    source = sources[0] if sources else "from"
    name = r.params.get("as")
    if not isinstance(name, str) or not _NAME.match(name):
        r.problems.append(f"needs as: NAME (letters, digits, _; the variable), not {str(name)[:40]!r}")
    kind = str(r.params.get("type", "string")).strip().lower()
    if kind not in VALUE_TYPES:
        r.problems.append(f"type must be one of {', '.join(VALUE_TYPES)}, not {kind[:20]!r}")
    pattern = r.text("pattern", limit=MAX_PATTERN_CHARS)
    if pattern is not None:
        try:
            re.compile(pattern)
        except re.error as exc:
            r.problems.append(f"pattern {pattern[:40]!r} is not a regular expression ({exc})")
    region = _region(r) if source == "region" else None
    return Extract(source, str(name), kind, pattern, region)


def _region(r: ParamReader) -> tuple[float, float, float, float] | None:
    value = r.params.get("region")
    if isinstance(value, list | tuple) and len(value) == 4 and all(
            isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= 20_000 for v in value):
        x1, y1, x2, y2 = (float(v) for v in value)
        if x2 > x1 and y2 > y1:
            return x1, y1, x2, y2
    r.problems.append(f"region must be [x1, y1, x2, y2] (pixels, or 0-1000 of the screen), not {str(value)[:40]!r}")
    return None


def _run(r: ParamReader, target_ref: str | None, body: int) -> RunTask:
    task = r.params.get("task")
    if (task is None) == (body == 0):
        r.problems.append("needs task: NAME (another template) or steps: [...] (a block), one of them")
    if task is not None and (not isinstance(task, str) or not task.strip()):
        r.problems.append(f"task must be a template's name, not {str(task)[:40]!r}")
    module = r.params.get("module")
    if module is not None and (not isinstance(module, str) or not module.strip()):
        r.problems.append(f"module must be a module's name, not {str(module)[:40]!r}")
    slots = r.params.get("slots") or {}
    if not isinstance(slots, dict) or not all(isinstance(v, str | int | float) and not isinstance(v, bool)
                                              for v in slots.values()):
        r.problems.append("slots must map a slot to its value ({contact: 张三})")
        slots = {}
    return RunTask(task.strip() if isinstance(task, str) else None,
                   module.strip() if isinstance(module, str) else None,
                   tuple((str(k), str(v)) for k, v in slots.items()))


def _rounds(r: ParamReader, name: str) -> int | None:
    value = r.number(name, low=1, high=MAX_ROUNDS)
    return int(value) if value is not None else None


def _repeat(r: ParamReader, target_ref: str | None, body: int) -> Repeat:
    modes = [k for k in ("times", "while_visible", "until_visible") if k in r.params]
    if len(modes) != 1:
        r.problems.append("needs one of times: N, while_visible: TARGET or until_visible: TARGET")
    if body == 0:
        r.problems.append("needs steps: [...] (the block to repeat)")
    times = _rounds(r, "times") if "times" in r.params else None
    watched: dict[str, tuple[str, ...]] = {}
    for key in ("while_visible", "until_visible"):
        if key not in r.params:
            continue
        value = r.params[key]
        items = value if isinstance(value, list) else [value]
        if not items or not all(isinstance(v, str) and v.strip() for v in items):
            r.problems.append(f"{key} must be a target (or a list of them), not {str(value)[:40]!r}")
        watched[key] = tuple(str(v).strip() for v in items)
    if watched and "max" not in r.params:
        r.problems.append(f"is an unbounded loop: {next(iter(watched))} needs max: N (rounds, 1..{MAX_ROUNDS})")
    most = _rounds(r, "max") if "max" in r.params else None
    return Repeat(max=most or times or 1, times=times, while_visible=watched.get("while_visible", ()),
                  until_visible=watched.get("until_visible", ()))


def _retry(r: ParamReader, target_ref: str | None, body: int) -> Retry:
    if body == 0:
        r.problems.append("needs steps: [...] (the block to try again)")
    times = r.number("times", default=DEFAULT_ATTEMPTS, low=1, high=MAX_ATTEMPTS)
    return Retry(int(times or DEFAULT_ATTEMPTS))


_FLOW: dict[str, Callable[[ParamReader, str | None, int], FlowArgs]] = {"assert_visible": _assert(True), "assert_not_visible": _assert(False), "wait_until": _wait,
                         "scroll_until_visible": _scroll, "extract": _extract, "run": _run, "repeat": _repeat,
                         "retry": _retry}


def parse_when(value: Any) -> When | None:
    """``{visible: "text:允许"}`` -> :class:`When`; None for no condition; :class:`ArgsError` on bad ones."""
    if value is None:
        return None
    if not isinstance(value, dict) or not value:
        raise ArgsError([f"when must be a mapping of conditions ({', '.join(WHEN_KEYS)}), not {str(value)[:40]!r}"])
    problems, conditions = [], []
    for key, item in value.items():
        if key not in WHEN_KEYS:
            problems.append(f"when: unknown condition {str(key)[:40]!r} (known: {', '.join(WHEN_KEYS)})")
            continue
        if isinstance(item, bool) or not isinstance(item, str | int | float) or not str(item).strip():
            problems.append(f"when.{key} must be a target, a package or a version, not {str(item)[:40]!r}")
            continue
        if key == "version":
            try:
                parse_version_spec(str(item))
            except ValueError as exc:
                problems.append(f"when.{exc}")
                continue
        conditions.append(Condition(str(key), str(item).strip()))
    if problems:
        raise ArgsError(problems)
    return When(tuple(conditions))
