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

import copy
import ipaddress
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from remote.core.plan import flow
from remote.core.plan.actions import ActionName
from remote.core.plan.checks import KEYS as CHECK_KEYS
from remote.core.plan.schema import parse_step
from remote.core.plan.values import SLOT
from remote.errors import did_you_mean
from remote.yamlfile import line_of, line_of_key

CONFIG_KEYS = ("name", "display_name", "package", "keywords", "home_ref", "sensitive", "fixed_points", "default",
               "description", "stable_ids", "failures")
TASK_KEYS = ("name", "description", "patterns", "slots", "steps", "success_check", "failures", "answer", "env")
STEP_KEYS = ("step", "action", "target_ref", "target", "target_type", "description", "params", "verify_ref",
             "success_condition", "fallback", "timeout", "retry", "wait_before", "wait_after", "sensitive", "anchors",
             "when", *flow.FLOW_KINDS)
# What a step of a flow kind may say beside its kind (a fallback, a verify_ref or retries belong to taps)
FLOW_STEP_KEYS = ("step", "action", "target_ref", "target", "description", "params", "when", "wait_before",
                  "wait_after", *flow.FLOW_KINDS)
FAILURE_KEYS = ("text", "target", "says")
PARAM_KEYS: dict[ActionName, tuple[str, ...]] = {**{ActionName(k): v for k, v in flow.PARAM_KEYS.items()},
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
        kind = "warning: " if self.warning else ""
        return self.said(kind)

    def said(self, kind: str = "") -> str:
        """``file:line: KIND message (hint)``; ``kind`` left out where the caller names the kind itself (a run's
        ``warning:`` line), so the word is said once."""
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
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


def kind_of(step: dict[str, Any]) -> str:
    """A step's kind as written: ``{wait_until: ...}`` -> ``wait_until``, ``{action: tap}`` -> ``tap``."""
    kinds = [k for k in step if k in flow.FLOW_KINDS]
    return kinds[0] if len(kinds) == 1 and "action" not in step else str(step.get("action", "")).strip()


def params_of(step: dict[str, Any]) -> Any:
    """A step's params as written: the mapping under its kind (``wait_until: {...}``), or ``params:``."""
    kind = kind_of(step)
    return step[kind] if kind in step and isinstance(step[kind], dict) else step.get("params")


def body_of(step: Any) -> Any:
    """The steps of a block (``repeat: {steps: [...]}``), as written; None for other steps."""
    if not isinstance(step, dict) or kind_of(step) not in flow.BLOCK_KINDS:
        return None
    params = params_of(step)
    return params.get("steps") if isinstance(params, dict) else step.get("steps")


def walk(steps: Any, line: int | None = None, path: str = "") -> Iterator[tuple[str, Any, int | None]]:
    """Every step of a template, the steps of its blocks included: ``("3.2", step, line)``."""
    if not isinstance(steps, list):
        return
    for i, step in enumerate(steps, start=1):
        here, at = f"{path}.{i}" if path else str(i), line_of(step, line)
        yield here, step, at
        yield from walk(body_of(step), at, here)


def step_targets(step: Any) -> list[str]:
    """Every target a step names as written: its target_ref(s), its fallback's, verify_ref, its kind's target,
    a repeat's while/until, its when's."""
    if not isinstance(step, dict):
        return []
    params = params_of(step) if isinstance(params_of(step), dict) else {}
    kind = kind_of(step)
    refs = [step.get("target_ref"), step.get("target"), (step.get("fallback") or {}).get("target_ref")
            if isinstance(step.get("fallback"), dict) else None, step.get("verify_ref")]
    if kind in flow.FLOW_KINDS:
        value = step.get(kind)
        refs += [value if isinstance(value, str | list) and kind not in ("run",) else None,
                 *(params.get(k) for k in (*flow.TARGET_KEYS.get(kind, ()), "while_visible", "until_visible"))]
    when = step.get("when")
    if isinstance(when, dict):
        refs += [when.get(k) for k in ("visible", "not_visible", "checked", "not_checked")]
    out: list[str] = []
    for ref in refs:
        out += [r for r in (ref if isinstance(ref, list) else [ref]) if isinstance(r, str) and r]
    return out


def extracted(steps: Any) -> list[tuple[str, int | None]]:
    """The variables a template's extract steps set, with their lines: ``[("last_message", 12)]``."""
    out = []
    for _, step, line in walk(steps):
        params = params_of(step) if isinstance(step, dict) else None
        if isinstance(step, dict) and kind_of(step) == "extract" and isinstance(params, dict) \
                and isinstance(params.get("as"), str):
            out.append((params["as"], line_of_key(params, "as") or line))
    return out


def check_step_keys(c: Checker, step: Any, where: str, line: int | None) -> None:
    """Unknown keys of a step, its params (for its kind), its when, its fallback and its block's steps."""
    if not isinstance(step, dict):
        return
    kind = kind_of(step)
    is_flow = kind in flow.FLOW_KINDS
    c.keys(step, STEP_KEYS, where, line)
    if is_flow:
        for key in step:
            if key in STEP_KEYS and key not in FLOW_STEP_KEYS:
                c.add(line_of_key(step, key) or line, f"{where}: {key} does not apply to a {kind} step",
                      "fallback, verify_ref, retry and timeout belong to taps and other actions")
    params = params_of(step)
    if kind in ActionName._value2member_map_ and isinstance(params, dict):
        known = PARAM_KEYS[ActionName(kind)]
        for key in params:
            if key not in known:
                c.add(line_of_key(params, key) or line, f"{where}: {kind} does not take {key}",
                      did_you_mean(str(key), known) if known else f"{kind} takes no params")
    if isinstance(step.get("when"), dict):
        c.keys(step["when"], flow.WHEN_KEYS, f"{where} when", line_of_key(step, "when") or line)
    if isinstance(step.get("fallback"), dict):
        check_step_keys(c, step["fallback"], f"{where} fallback", line_of(step["fallback"], line))
    body = body_of(step)
    for i, child in enumerate(body if isinstance(body, list) else [], start=1):
        check_step_keys(c, child, f"{where}.{i}", line_of(child, line))


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


def env_names(value: Any) -> dict[str, str | None]:
    """A task's ``env:`` (what ``-e KEY=VALUE`` may give): ``[contact]`` or ``{contact: 张三}`` (a default)."""
    if isinstance(value, list):
        return {str(v): None for v in value if isinstance(v, str | int)}
    if isinstance(value, dict):
        return {str(k): (None if v is None else str(v)) for k, v in value.items()}
    return {}


def check_slots(c: Checker, task: dict[str, Any], name: str, line: int | None, extra_used: set[str]) -> None:
    patterns = task.get("patterns")
    patterns = [patterns] if isinstance(patterns, str) else patterns if isinstance(patterns, list) else []
    declared = {s for p in patterns for s in SLOT.findall(str(p))} | set(env_names(task.get("env")))
    variables = extracted(task.get("steps"))
    used = slots_used(task.get("steps")) | slots_used(task.get("success_check")) | slots_used(task.get("failures"))
    used |= extra_used | slots_used(task.get("answer"))
    for var, at in variables:
        if var in declared:
            c.add(at or line, f"task {name}: extract as: {var} hides the slot {{{var}}}", "give the variable "
                  "another name")
        elif var not in used:
            c.add(at or line, f"task {name}: extract as: {var} is never used", "use {" + var + "} in a later "
                  "step, the success_check or the answer, or drop the extract", warning=True)
    for slot in sorted(used - declared - {v for v, _ in variables}):
        c.add(line, f"task {name}: slot {{{slot}}} is used but no pattern declares it",
              "add it to a pattern, or to env: to take it from -e KEY=VALUE, or write the value out")
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


def run_params(step: Any) -> dict[str, Any] | None:
    """A run step's task, module and slots as written (``run: NAME`` is ``run: {task: NAME}``); None for
    other steps and for inline blocks."""
    if not isinstance(step, dict) or kind_of(step) != "run":
        return None
    if isinstance(step.get("run"), str):
        return {"task": step["run"]}
    params = params_of(step)
    return params if isinstance(params, dict) and isinstance(params.get("task"), str) else None


def run_problem(catalog: dict[str, tuple[set[str], set[str]]], params: dict[str, Any]) -> tuple[str, str] | None:
    """What is wrong with running ``params["task"]`` from ``catalog`` (task -> (its pattern slots, its env)):
    an unknown task, or a slot it needs that is not given."""
    task = str(params["task"])
    if task not in catalog:
        return "no such task", did_you_mean(task, tuple(catalog))
    slots, env = catalog[task]
    given = set(params["slots"]) if isinstance(params.get("slots"), dict) else set()
    missing = sorted(slots - given - env)
    if missing:
        return (f"{', '.join('{' + m + '}' for m in missing)} of {task} not given",
                "slots: {" + ", ".join(f"{m}: ..." for m in missing) + "}")
    return None


def check_local_runs(c: Checker, raw_tasks: list[Any], module: str) -> None:
    """``run:`` steps naming a task of this same file (no ``module:``, or this one's): checked even when the
    module has other problems."""
    catalog = {str(t["name"]): (slots_used(t.get("patterns")), set(env_names(t.get("env"))))
               for t in raw_tasks if isinstance(t, dict) and t.get("name")}
    for task in raw_tasks:
        if not isinstance(task, dict):
            continue
        for _, step, line in walk(task.get("steps"), line_of(task)):
            params = run_params(step)
            if params is None or params.get("module") not in (None, module):
                continue
            problem = run_problem(catalog, params)
            if problem:
                c.add(line, f"task {task.get('name')}: run {module}.{params['task']}: {problem[0]}", problem[1])


_WHERE = re.compile(r"^step ([\d.]+):")


def check_steps(c: Checker, steps: list[Any], name: str, line: int | None) -> None:
    """Keys of every step (blocks' steps included), then each step parsed; a problem at its own step's line."""
    lines = {path: at for path, _, at in walk(steps, line)}
    for i, step in enumerate(steps, start=1):
        check_step_keys(c, step, f"task {name} step {i}", line_of(step, line))
        problems: list[str] = []
        parse_step(copy.deepcopy(step), i, source="template", problems=problems, repairs=[])
        for problem in problems:
            where = _WHERE.match(problem)
            c.add(lines.get(where.group(1)) if where else line_of(step, line), f"task {name}: {problem}")


def check_answer(c: Checker, raw: dict[str, Any], name: str, line: int | None) -> None:
    answer, env = raw.get("answer"), raw.get("env")
    if answer is not None and (not isinstance(answer, str) or not answer.strip()):
        c.add(line_of_key(raw, "answer") or line, f"task {name}: answer must be a text such as \"{{last_message}}\"")
    if env is not None and not (isinstance(env, list) and all(isinstance(v, str) for v in env)) and not (
            isinstance(env, dict) and all(isinstance(v, str | int | float | None) for v in env.values())):
        c.add(line_of_key(raw, "env") or line, f"task {name}: env must list slot names, or map each to a default",
              "env: [contact]   or   env: {contact: 张三}")
