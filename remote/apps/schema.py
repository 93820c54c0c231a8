"""The one schema of a module's YAML files, used by the loader and by ``remote modules check`` alike.

Every key of ``config.yaml``, of each task in ``tasks.yaml``, of each step and of
``success_check`` / ``failures`` is checked here; so a misspelled ``wait_afer:`` or
``txt:`` is an error with its file, line and a "did you mean" hint, never a key
that silently does nothing. Slots: every ``{slot}`` used must be declared in the
task's patterns, and every declared slot should be used.

A slot takes free text unless ``slots:`` constrains it: a list or mapping of the
values people say (a closed list), or the name of a kind of value, which the text
must have for the template to fit at all::

    slots:
      url: url        # a URL: a scheme (https://...), localhost, an IP, or a host with a dot (example.com)
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from remote.core.plan.actions import ActionName
from remote.core.plan.checks import KEYS as CHECK_KEYS
from remote.errors import did_you_mean
from remote.yamlfile import line_of, line_of_key

CONFIG_KEYS = ("name", "display_name", "package", "keywords", "home_ref", "sensitive", "fixed_points", "default",
               "description", "stable_ids", "failures")
TASK_KEYS = ("name", "description", "patterns", "slots", "steps", "success_check", "failures")
STEP_KEYS = ("step", "action", "target_ref", "target", "target_type", "description", "params", "verify_ref",
             "success_condition", "fallback", "timeout", "retry", "wait_before", "wait_after", "sensitive", "anchors")
FAILURE_KEYS = ("text", "target", "says")
PARAM_KEYS: dict[ActionName, tuple[str, ...]] = {
    ActionName.TAP: ("toggle", "stay_in_app"),
    ActionName.LONG_PRESS: ("duration", "duration_ms"),
    ActionName.SWIPE: ("direction", "distance", "duration", "duration_ms", "start", "end", "x1", "y1", "x2", "y2"),
    ActionName.INPUT_TEXT: ("text", "clear"),
    ActionName.PRESS_KEY: ("key", "keycode", "times", "repeat"),
    ActionName.WAIT: ("ms", "seconds", "duration"),
    ActionName.GO_HOME: (),
    ActionName.LAUNCH_APP: ("package", "app"),
    ActionName.OPEN_URL: ("url",),
    ActionName.CALL: ("number", "phone"),
    ActionName.BACK_TO_HOME: (),
    ActionName.TAKE_OVER: ("message",),
    ActionName.FINISH: ("success", "status", "message", "reason"),
}
SLOT = re.compile(r"\{(\w+)\}")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://\S+$")
_LABEL = re.compile(r"^(?!-)[\w-]{1,63}(?<!-)$")


def url_shaped(value: str) -> bool:
    """A URL as people type one: ``https://x``, ``localhost:8080``, ``10.0.0.1``, ``[::1]``, ``example.com/a``.

    ``settings``, ``设置`` and ``my phone`` are not: a host needs a dot and a last label of letters.

    >>> [url_shaped(v) for v in ("example.com", "https://settings", "settings", "a b.com", "10.0.0.1:80")]
    [True, True, False, False, True]
    """
    value = value.strip().rstrip("。，,!！")
    if not value or any(c.isspace() for c in value):
        return False
    if _SCHEME.match(value):
        return True
    host = re.split(r"[/?#]", value, maxsplit=1)[0]
    if host.startswith("["):
        host = host[1:host.find("]")] if "]" in host else ""
    elif host.count(":") == 1:
        host, _, port = host.partition(":")
        if not port.isdigit():
            return False
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        pass
    labels = host.lower().split(".")
    if host.lower() == "localhost":
        return True
    return len(labels) >= 2 and all(_LABEL.match(label) for label in labels) and labels[-1].isalpha() \
        and len(labels[-1]) >= 2


SLOT_KINDS: dict[str, Callable[[str], bool]] = {"url": url_shaped}


@dataclass(frozen=True)
class Problem:
    """One thing wrong in a module, where it is, and what to do about it."""

    path: Path
    line: int | None
    message: str
    hint: str = ""
    warning: bool = False

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        kind = "warning: " if self.warning else ""
        return f"{where}: {kind}{self.message}" + (f" ({self.hint})" if self.hint else "")


class Checker:
    """Collects the problems of one file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problems: list[Problem] = []

    def add(self, line: int | None, message: str, hint: str = "", *, warning: bool = False) -> None:
        self.problems.append(Problem(self.path, line, message, hint, warning))

    def keys(self, mapping: Any, known: tuple[str, ...], what: str, line: int | None = None) -> None:
        if not isinstance(mapping, dict):
            return
        for key in mapping:
            if key not in known:
                self.add(line_of_key(mapping, key) or line, f"{what}: unknown key {str(key)[:40]!r}",
                         did_you_mean(str(key), known))

    def mapping(self, value: Any, what: str, line: int | None) -> bool:
        if isinstance(value, dict):
            return True
        self.add(line, f"{what} must be a mapping, not {type(value).__name__}")
        return False

    def string_list(self, value: Any, what: str, line: int | None) -> list[str]:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str | int | float) and not isinstance(v, bool)
                                                  for v in items):
            self.add(line, f"{what} must be a list of words")
            return []
        return [str(v) for v in items]


def check_step_keys(c: Checker, step: Any, where: str, line: int | None) -> None:
    """Unknown keys of a step, its params (for its action) and its fallback."""
    if not isinstance(step, dict):
        return
    c.keys(step, STEP_KEYS, where, line)
    action = str(step.get("action", "")).strip()
    params = step.get("params")
    if action in ActionName._value2member_map_ and isinstance(params, dict):
        known = PARAM_KEYS[ActionName(action)]
        for key in params:
            if key not in known:
                c.add(line_of_key(params, key) or line, f"{where}: {action} does not take params.{key}",
                      did_you_mean(str(key), known) if known else f"{action} takes no params")
    if isinstance(step.get("fallback"), dict):
        check_step_keys(c, step["fallback"], f"{where} fallback", line_of(step["fallback"], line))


def check_failures(c: Checker, value: Any, line: int | None) -> list[dict[str, str]]:
    """``failures: [{text: 没有找到, says: "没有找到联系人 {contact}"}]`` -> the entries that are sound."""
    if value is None:
        return []
    if not isinstance(value, list):
        c.add(line, "failures must be a list of {text or target, says}")
        return []
    out = []
    for entry in value:
        where = line_of(entry, line)
        if not isinstance(entry, dict):
            c.add(where, "each failure needs {text: ... or target: ..., says: ...}")
            continue
        c.keys(entry, FAILURE_KEYS, "failure", where)
        if not (isinstance(entry.get("text"), str) or isinstance(entry.get("target"), str)) \
                or not isinstance(entry.get("says"), str):
            c.add(where, "each failure needs text (or target) and says")
            continue
        out.append({k: str(v) for k, v in entry.items() if k in FAILURE_KEYS})
    return out


def slots_used(value: Any) -> set[str]:
    return set(SLOT.findall(str(value))) if value is not None else set()


def check_slots(c: Checker, task: dict[str, Any], name: str, line: int | None, extra_used: set[str]) -> None:
    patterns = task.get("patterns")
    patterns = [patterns] if isinstance(patterns, str) else patterns if isinstance(patterns, list) else []
    declared = {s for p in patterns for s in SLOT.findall(str(p))}
    used = slots_used(task.get("steps")) | slots_used(task.get("success_check")) | slots_used(task.get("failures"))
    used |= extra_used
    for slot in sorted(used - declared):
        c.add(line, f"task {name}: slot {{{slot}}} is used but no pattern declares it",
              "add it to a pattern, or write the value out")
    for slot in sorted(declared - used):
        c.add(line, f"task {name}: slot {{{slot}}} is declared but never used", "use it in a step or drop it",
              warning=True)
    choices = task.get("slots")
    if isinstance(choices, dict):
        for slot in choices:
            if slot not in declared:
                c.add(line_of_key(choices, slot) or line, f"task {name}: slots.{slot} has choices but no pattern "
                      "declares {" + str(slot) + "}")


def check_success(c: Checker, value: Any, name: str, line: int | None) -> None:
    if value is None:
        return
    if not isinstance(value, dict):
        c.add(line, f"task {name}: success_check must be a mapping ({', '.join(CHECK_KEYS)})")
        return
    c.keys(value, CHECK_KEYS, f"task {name}: success_check", line)
