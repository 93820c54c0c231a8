"""What each action takes, parsed once: a plan's ``params`` -> one typed, bounded arguments object.

Every plan (a model's JSON, a module's YAML template, a replayed record) goes
through :func:`parse_args`; the executor reads only the typed object. Numbers are
bounded here, before anything runs, so nothing a model writes can wait an hour or
press a key a million times::

    parse_args(ActionName.SWIPE, {"start": [100, 200], "end": "100,900"}, None)
        -> Swipe(direction=None, start=(100, 200), end=(100, 900), distance=0.5, duration_ms=300)
    parse_args(ActionName.WAIT, {"ms": "NaN"}, None)   -> ArgsError(["ms must be a finite number, not 'NaN'"])
    parse_args(ActionName.PRESS_KEY, {"key": "BACK", "times": 1e8}, None) -> ArgsError(["times 100000000 ..."])
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from remote.core.device.keys import keycode
from remote.errors import ActionError, InvalidPlan

MAX_WAIT_MS = 60_000          # one wait; the run's own time budget bounds the sum
MAX_REPEAT = 50               # key presses of one step
MAX_GESTURE_MS = 10_000       # a swipe's or long press's duration
MAX_TEXT_CHARS = 10_000
DIRECTIONS = ("up", "down", "left", "right")
_PACKAGE = re.compile(r"[A-Za-z][\w]*(\.[A-Za-z_][\w]*)+")
_POINT = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*$")

class ActionName(enum.StrEnum):
    TAP = "tap"
    LONG_PRESS = "long_press"
    SWIPE = "swipe"
    INPUT_TEXT = "input_text"
    PRESS_KEY = "press_key"
    WAIT = "wait"
    GO_HOME = "go_home"
    LAUNCH_APP = "launch_app"
    OPEN_URL = "open_url"
    CALL = "call"
    BACK_TO_HOME = "back_to_home"
    TAKE_OVER = "take_over"
    FINISH = "finish"
    # Steps that look, wait, branch, repeat and read (their arguments: remote.core.plan.flow)
    ASSERT_VISIBLE = "assert_visible"
    ASSERT_NOT_VISIBLE = "assert_not_visible"
    WAIT_UNTIL = "wait_until"
    SCROLL_UNTIL_VISIBLE = "scroll_until_visible"
    EXTRACT = "extract"
    RUN = "run"
    REPEAT = "repeat"
    RETRY = "retry"


class ArgsError(InvalidPlan):
    """Arguments that cannot be used; ``problems`` lists every reason (short, quoting at most 40 characters)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def _what(targets: tuple[str, ...], *values: object) -> str:
    """The step's target(s), else the first value it was given: what a label names after the action."""
    return " | ".join(targets) or next((str(v) for v in values if v not in (None, "")), "")


@dataclass(frozen=True)
class Tap:
    toggle: bool | None = None      # a switch to leave on (True) or off (False); None: a plain tap
    stay_in_app: bool = False       # the tap must not leave the module's app

    def describe(self, targets: tuple[str, ...]) -> str:
        return _what(targets)


@dataclass(frozen=True)
class LongPress:
    duration_ms: int = 800

    def describe(self, targets: tuple[str, ...]) -> str:
        return _what(targets)


@dataclass(frozen=True)
class Swipe:
    direction: str | None = None
    start: tuple[int, int] | None = None
    end: tuple[int, int] | None = None
    distance: float = 0.5           # a fraction of the screen, for a direction
    duration_ms: int = 300

    def describe(self, targets: tuple[str, ...]) -> str:
        return _what(targets, self.direction)


@dataclass(frozen=True)
class InputText:
    text: str
    clear: bool = False

    def describe(self, targets: tuple[str, ...]) -> str:
        return f"{_what(targets)} {self.text[:60]!r}".lstrip()


@dataclass(frozen=True)
class PressKey:
    key: str | int
    times: int = 1

    def describe(self, targets: tuple[str, ...]) -> str:
        return _what(targets, self.key)


@dataclass(frozen=True)
class Wait:
    ms: int

    def describe(self, targets: tuple[str, ...]) -> str:
        return _what(targets)


@dataclass(frozen=True)
class GoHome:
    def describe(self, targets: tuple[str, ...]) -> str:
        return _what(targets)


@dataclass(frozen=True)
class LaunchApp:
    package: str | None = None      # a package name, or
    name: str | None = None         # an app's name, resolved on the phone (aliases, installed packages)

    def describe(self, targets: tuple[str, ...]) -> str:
        return _what(targets, self.package, self.name)


@dataclass(frozen=True)
class OpenUrl:
    url: str

    def describe(self, targets: tuple[str, ...]) -> str:
        return _what(targets, self.url)

    @property
    def scheme(self) -> str:
        match = re.match(r"^([a-zA-Z][\w+.-]*):", self.url)
        return match.group(1).lower() if match else ""


@dataclass(frozen=True)
class Call:
    number: str

    def describe(self, targets: tuple[str, ...]) -> str:
        return _what(targets, self.number)


@dataclass(frozen=True)
class BackToHome:
    def describe(self, targets: tuple[str, ...]) -> str:
        return _what(targets)


@dataclass(frozen=True)
class TakeOver:
    message: str

    def describe(self, targets: tuple[str, ...]) -> str:
        return _what(targets)


@dataclass(frozen=True)
class Finish:
    success: bool = True            # False: the plan gives up (the task FAILED, with ``message``)
    message: str = ""

    def describe(self, targets: tuple[str, ...]) -> str:
        return _what(targets)


Args = (Tap | LongPress | Swipe | InputText | PressKey | Wait | GoHome | LaunchApp | OpenUrl | Call | BackToHome
        | TakeOver | Finish)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def finite_number(value: Any) -> float | None:
    """A plan's number as a float: ``5``, ``"5000"``, ``"300ms"``; None for text, booleans, NaN and infinities."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip().removesuffix("ms").strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


class ParamReader:
    """Reads one params dict, collecting every problem instead of stopping at the first."""

    def __init__(self, params: dict[str, Any]) -> None:
        self.params = params
        self.problems: list[str] = []

    def number(self, *names: str, default: float | None = None, low: float = 0, high: float = math.inf,
               scale: float = 1.0) -> float | None:
        name = next((n for n in names if n in self.params), None)
        if name is None:
            return default
        value = self.params[name]
        number = finite_number(value)
        if number is None:
            self.problems.append(f"{name} must be a finite number, not {_short(value)}")
            return None
        number *= scale
        if not low <= number <= high:
            self.problems.append(f"{name} {_short(value)} is outside {low:g}..{high:g}"
                                 + (f" (x{scale:g})" if scale != 1 else ""))
            return None
        return number

    def text(self, *names: str, required: bool = False, limit: int = MAX_TEXT_CHARS) -> str | None:
        name = next((n for n in names if n in self.params and self.params[n] is not None), None)
        if name is None:
            if required:
                self.problems.append(f"needs params.{names[0]}")
            return None
        value = self.params[name]
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            self.problems.append(f"{name} must be text, not {_short(value)}")
            return None
        text = str(value)
        if len(text) > limit:
            self.problems.append(f"{name} is {len(text)} characters long; at most {limit}")
            return None
        return text

    def flag(self, name: str, default: bool = False) -> bool:
        value = self.params.get(name, default)
        if isinstance(value, str):
            return value.strip().lower() in ("on", "true", "yes", "1", "开", "打开")
        return bool(value)

    def point(self, name: str) -> tuple[int, int] | None:
        value = self.params.get(name)
        if value is None:
            return None
        xy: list[Any] | None = None
        if isinstance(value, str) and _POINT.match(value):
            xy = [float(v) for v in value.split(",")]
        elif isinstance(value, list | tuple) and len(value) == 2:
            xy = list(value)
        elif isinstance(value, dict) and {"x", "y"} <= set(value):
            xy = [value["x"], value["y"]]
        if xy is None or not all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
                                 and 0 <= v <= 20_000 for v in xy):
            self.problems.append(f"{name} must be a point x,y on the screen, not {_short(value)}")
            return None
        return int(xy[0]), int(xy[1])


def _swipe(r: ParamReader) -> Swipe:
    direction = str(r.params.get("direction", "")).strip().lower() or None
    start = r.point("start") or _xy_pair(r, "x1", "y1")
    end = r.point("end") or _xy_pair(r, "x2", "y2")
    distance = r.number("distance", default=0.5, low=0.05, high=1.0)
    duration = r.number("duration", "duration_ms", default=300, low=1, high=MAX_GESTURE_MS)
    if direction is not None and direction not in DIRECTIONS:
        r.problems.append(f"direction must be one of {', '.join(DIRECTIONS)}, not {_short(direction)}")
    elif direction is None and (start is None or end is None) and not r.problems:
        r.problems.append("needs params.direction (up/down/left/right) or start and end points")
    return Swipe(direction=direction, start=None if direction else start, end=None if direction else end,
                 distance=distance or 0.5, duration_ms=int(duration or 300))


def _xy_pair(r: ParamReader, xname: str, yname: str) -> tuple[int, int] | None:
    if xname not in r.params and yname not in r.params:
        return None
    x = r.number(xname, low=0, high=20_000)
    y = r.number(yname, low=0, high=20_000)
    if x is None or y is None:
        if xname not in r.params or yname not in r.params:
            r.problems.append(f"{xname} and {yname} go together")
        return None
    return int(x), int(y)


def _key(r: ParamReader) -> PressKey:
    raw = r.params.get("key", r.params.get("keycode"))
    times = r.number("times", "repeat", default=1, low=1, high=MAX_REPEAT)
    if raw is None or raw == "":
        r.problems.append("needs params.key")
        return PressKey("BACK", 1)
    try:
        keycode(raw if isinstance(raw, int | str) else str(raw))
    except ActionError as exc:
        r.problems.append(exc.message)
    return PressKey(raw if isinstance(raw, int | str) else str(raw), int(times or 1))


def _launch(r: ParamReader, target_ref: str | None) -> LaunchApp:
    package = r.text("package", "app")
    if package is None and target_ref:
        package = target_ref.split(":", 1)[1] if target_ref.startswith(("text:", "desc:")) else target_ref
    if not package:
        r.problems.append("needs params.package (or an app's name)")
        return LaunchApp()
    package = package.strip()
    if _PACKAGE.fullmatch(package):
        return LaunchApp(package=package)
    if len(package) > 60 or any(c in package for c in "\n\r\t/\\;|&$`"):
        r.problems.append(f"{_short(package)} is neither a package name nor an app's name")
        return LaunchApp()
    return LaunchApp(name=package)


def _finish(r: ParamReader, description: str) -> Finish:
    status = str(r.params.get("status", "")).strip().lower()
    message = r.text("message", "reason", limit=2000) or description
    # judged by what the protocol says (its flag or its status); its words are the message, never the verdict
    if "success" in r.params:
        success = r.flag("success", True)
    else:
        success = not status or status in ("success", "succeeded", "done", "ok", "completed", "complete")
    return Finish(success=success, message=message)


def _tap(r: ParamReader, target_ref: str | None, description: str) -> Tap:
    toggle = r.params.get("toggle")
    return Tap(toggle=None if toggle is None else r.flag("toggle"), stay_in_app=r.flag("stay_in_app"))


def _long_press(r: ParamReader, target_ref: str | None, description: str) -> LongPress:
    return LongPress(int(r.number("duration", "duration_ms", default=800, low=1, high=MAX_GESTURE_MS) or 800))


def _input_text(r: ParamReader, target_ref: str | None, description: str) -> InputText:
    return InputText(r.text("text", required=True) or "", clear=r.flag("clear"))


def _wait(r: ParamReader, target_ref: str | None, description: str) -> Wait:
    seconds = r.number("seconds", low=0, high=MAX_WAIT_MS, scale=1000) if "seconds" in r.params else None
    ms = seconds if seconds is not None else r.number("ms", "duration", default=1000, low=0, high=MAX_WAIT_MS)
    return Wait(int(ms or 0))


def _open_url(r: ParamReader, target_ref: str | None, description: str) -> OpenUrl:
    url = (r.text("url", required=True, limit=2000) or "").strip()
    if url and any(c in url for c in "\n\r"):
        r.problems.append("url must be one line")
    return OpenUrl(url)


def _call(r: ParamReader, target_ref: str | None, description: str) -> Call:
    number = (r.text("number", "phone", required=True) or "").strip()
    if number and not re.fullmatch(r"\+?[\d*#,; -]{1,32}", number):
        r.problems.append(f"{_short(number)} is not a phone number")
    return Call(number)


def _take_over(r: ParamReader, target_ref: str | None, description: str) -> TakeOver:
    return TakeOver(r.text("message", limit=2000) or description or "please act on the phone")


# Each action's parser, by name: adding an action is one type above, one entry here, one case in
# ``StepRunner._dispatch`` (mypy's assert_never there names a type without one), one test.
PARSERS: dict[ActionName, Callable[[ParamReader, str | None, str], Args]] = {
    ActionName.TAP: _tap, ActionName.LONG_PRESS: _long_press,
    ActionName.SWIPE: lambda r, target_ref, description: _swipe(r),
    ActionName.INPUT_TEXT: _input_text, ActionName.PRESS_KEY: lambda r, target_ref, description: _key(r),
    ActionName.WAIT: _wait, ActionName.LAUNCH_APP: lambda r, target_ref, description: _launch(r, target_ref),
    ActionName.OPEN_URL: _open_url, ActionName.CALL: _call, ActionName.TAKE_OVER: _take_over,
    ActionName.FINISH: lambda r, target_ref, description: _finish(r, description),
    ActionName.GO_HOME: lambda r, target_ref, description: GoHome(),
    ActionName.BACK_TO_HOME: lambda r, target_ref, description: BackToHome(),
}


def parse_args(action: ActionName, params: dict[str, Any], target_ref: str | None, description: str = "") -> Args:
    """The typed arguments of one step; :class:`ArgsError` lists every problem."""
    parser = PARSERS.get(action)
    if parser is None:   # the flow kinds: remote.core.plan.flow.parse_any reads those
        raise ArgsError([f"{action.value} is not an action with params (see remote.core.plan.flow)"])
    r = ParamReader(params)
    args = parser(r, target_ref, description)
    if r.problems:
        raise ArgsError([f"{action.value} {p}" for p in r.problems])
    return args
