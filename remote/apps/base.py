"""App modules: what a module folder declares, and the handler that turns a task into a plan.

A module is a folder ``remote/apps/<name>/`` with::

    config.yaml        name, display_name, package, keywords, home_ref, sensitive, fixed_points, stable_ids
    tasks.yaml         templates: patterns with named slots + the steps that use them
    images/*.png       reference images (NAME.png, NAME_v2.png, ...) and images/aliases.yaml
    prompts/planner.txt  extra planner instructions for this app (optional)
    handler.py         an AppHandler subclass named Handler (optional)

Everything is loaded once into frozen dataclasses and validated at start-up;
errors name the file and the line.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from remote.apps.loader import LineDict, line_of, load_yaml
from remote.core.plan.schema import parse_step
from remote.errors import ConfigError
from remote.records import StepPlan, TaskPlan

_SLOT = re.compile(r"\{(\w+)\}")
# Words that always make a step ask for confirmation, whatever the module says.
SENSITIVE_WORDS = ("支付", "付款", "转账", "红包", "删除", "卸载", "pay", "transfer", "delete", "uninstall")


@dataclass(frozen=True)
class TaskTemplate:
    name: str
    patterns: tuple[str, ...]
    steps: tuple[dict[str, Any], ...]          # raw step dicts with {slot} placeholders
    slots: dict[str, dict[str, str]]           # slot -> {spoken value: canonical value}; empty = free text
    success_check: dict[str, Any]
    description: str = ""
    line: int | None = None
    _regexes: tuple[re.Pattern[str], ...] = field(default=(), repr=False, compare=False)

    def match(self, task: str) -> dict[str, str] | None:
        """Slot values when the whole task fits one of the patterns, else None."""
        text = _normalize_task(task)
        for rx in self._regexes:
            m = rx.fullmatch(text)
            if not m:
                continue
            values = {k: v.strip() for k, v in m.groupdict().items()}
            if all(v for v in values.values()) and self._slots_ok(values):
                return {k: self._canonical(k, v) for k, v in values.items()}
        return None

    def _slots_ok(self, values: dict[str, str]) -> bool:
        return all(not self.slots.get(k) or _lookup(self.slots[k], v) is not None for k, v in values.items())

    def _canonical(self, slot: str, value: str) -> str:
        choices = self.slots.get(slot)
        return _lookup(choices, value) or value if choices else value


def _lookup(choices: dict[str, str], value: str) -> str | None:
    key = value.strip().lower().replace(" ", "")
    for spoken, canonical in choices.items():
        if spoken.lower().replace(" ", "") == key:
            return canonical
    return None


def _normalize_task(task: str) -> str:
    return task.strip().strip("。.!！?？ \t")


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """``给{contact}发消息{message}`` -> a regex with named groups (the last slot takes the rest)."""
    parts = _SLOT.split(pattern)
    rx = ""
    slots = parts[1::2]
    for i, part in enumerate(parts):
        if i % 2 == 0:
            rx += r"\s*".join(re.escape(ch) for ch in part.replace(" ", ""))
        else:
            last = i == len(parts) - 2 and parts[-1] == ""
            rx += rf"\s*(?P<{part}>.+)\s*" if last else rf"\s*(?P<{part}>.+?)\s*"
    if len(set(slots)) != len(slots):
        raise ValueError(f"slot repeated in pattern {pattern!r}")
    return re.compile(rx, re.IGNORECASE | re.DOTALL)


def fill_slots(value: Any, slots: dict[str, str]) -> Any:
    """Replace ``{slot}`` in every string of a step (values are inserted literally, never re-parsed)."""
    if isinstance(value, str):
        return _SLOT.sub(lambda m: slots.get(m.group(1), m.group(0)), value)
    if isinstance(value, dict):
        return {k: fill_slots(v, slots) for k, v in value.items()}
    if isinstance(value, list):
        return [fill_slots(v, slots) for v in value]
    return value


@dataclass(frozen=True)
class AppModule:
    name: str
    path: Path
    display_name: str = ""
    package: str = ""
    keywords: tuple[str, ...] = ()
    home_ref: str | None = None
    sensitive: tuple[str, ...] = ()
    fixed_points: dict[str, tuple[float, float]] = field(default_factory=dict)
    templates: tuple[TaskTemplate, ...] = ()
    default: bool = False
    # The app keeps its resource ids across releases (Chrome, AOSP Settings), so ``id:`` targets are safe;
    # apps that obfuscate them (WeChat) leave it false and `modules check` warns about ``id:`` targets.
    stable_ids: bool = False

    @property
    def images_dir(self) -> Path:
        return self.path / "images"

    @property
    def prompt_path(self) -> Path | None:
        p = self.path / "prompts" / "planner.txt"
        return p if p.is_file() else None

    def is_sensitive(self, step: StepPlan) -> bool:
        """Declared by the module (or the built-in pay/transfer/delete/uninstall words), not by a model."""
        if step.sensitive:
            return True
        # Typed text is not looked at: a message that mentions 删除 is not a deletion.
        haystack = " ".join(str(x) for x in (step.target_ref, step.description) if x)
        words = self.sensitive + SENSITIVE_WORDS
        return any(w and w.lower() in haystack.lower() for w in words)


def load_module(folder: Path) -> AppModule:
    """Read and validate one module folder (ConfigError with file:line on any problem)."""
    config_path = folder / "config.yaml"
    cfg = load_yaml(config_path) or LineDict()
    if not isinstance(cfg, dict):
        raise ConfigError("config.yaml must be a mapping", path=str(config_path), line=1)
    unknown = set(cfg) - {"name", "display_name", "package", "keywords", "home_ref", "sensitive",
                          "fixed_points", "default", "description", "stable_ids"}
    if unknown:
        raise ConfigError(f"unknown keys {sorted(unknown)}", path=str(config_path), line=line_of(cfg, 1))
    name = str(cfg.get("name") or folder.name)
    fixed = {}
    for key, point in (cfg.get("fixed_points") or {}).items():
        if not (isinstance(point, list | tuple) and len(point) == 2 and all(isinstance(v, int | float) for v in point)):
            raise ConfigError(f"fixed_points.{key} must be [x, y]", path=str(config_path), line=line_of(cfg, 1))
        fixed[str(key)] = (float(point[0]), float(point[1]))
    if not isinstance(cfg.get("stable_ids", False), bool):
        raise ConfigError("stable_ids must be true or false", path=str(config_path), line=line_of(cfg, 1))
    tasks_path = folder / "tasks.yaml"
    templates = tuple(_load_templates(tasks_path)) if tasks_path.is_file() else ()
    return AppModule(name=name, path=folder, display_name=str(cfg.get("display_name") or name),
                     package=str(cfg.get("package") or ""), keywords=tuple(str(k) for k in cfg.get("keywords") or ()),
                     home_ref=cfg.get("home_ref"), sensitive=tuple(str(s) for s in cfg.get("sensitive") or ()),
                     fixed_points=fixed, templates=templates, default=bool(cfg.get("default")),
                     stable_ids=bool(cfg.get("stable_ids", False)))


def _load_templates(path: Path) -> list[TaskTemplate]:
    data = load_yaml(path) or {}
    raw_tasks = data.get("tasks") if isinstance(data, dict) else None
    if not isinstance(raw_tasks, list):
        raise ConfigError("tasks.yaml needs a 'tasks:' list", path=str(path), line=line_of(data, 1))
    out = []
    for raw in raw_tasks:
        line = line_of(raw)
        if not isinstance(raw, dict) or not raw.get("name") or not raw.get("patterns") or not raw.get("steps"):
            raise ConfigError("each task needs name, patterns and steps", path=str(path), line=line)
        patterns = [raw["patterns"]] if isinstance(raw["patterns"], str) else list(raw["patterns"])
        slots = {str(k): _slot_choices(v, path, line) for k, v in (raw.get("slots") or {}).items()}
        try:
            regexes = tuple(compile_pattern(p) for p in patterns)
        except (ValueError, re.error) as exc:
            raise ConfigError(f"task {raw['name']}: {exc}", path=str(path), line=line) from exc
        declared = {s for p in patterns for s in _SLOT.findall(p)}
        for i, step in enumerate(raw["steps"], start=1):
            problems: list[str] = []
            parse_step(copy.deepcopy(step), i, problems=problems, repairs=[])
            used = set(_SLOT.findall(str(step)))
            if used - declared:
                problems.append(f"uses undeclared slots {sorted(used - declared)}")
            if problems:
                raise ConfigError(f"task {raw['name']}: " + "; ".join(problems), path=str(path),
                                  line=line_of(step, line))
        out.append(TaskTemplate(name=str(raw["name"]), patterns=tuple(patterns), steps=tuple(raw["steps"]),
                                slots=slots, success_check=dict(raw.get("success_check") or {}),
                                description=str(raw.get("description") or ""), line=line, _regexes=regexes))
    return out


def _slot_choices(value: Any, path: Path, line: int | None) -> dict[str, str]:
    if isinstance(value, list):
        return {str(v): str(v) for v in value}
    if isinstance(value, dict):
        out: dict[str, str] = {}
        for canonical, spoken in value.items():
            for word in ([spoken] if isinstance(spoken, str) else spoken or []):
                out[str(word)] = str(canonical)
            out[str(canonical)] = str(canonical)
        return out
    raise ConfigError("slot choices must be a list or a mapping canonical -> [spoken words]", path=str(path),
                      line=line)


class AppHandler:
    """Turns a task into a plan for one module. Subclass it in a module's handler.py as ``Handler``."""

    def __init__(self, module: AppModule) -> None:
        self.module = module

    def match(self, task: str) -> tuple[TaskTemplate, dict[str, str]] | None:
        for template in self.module.templates:
            slots = template.match(task)
            if slots is not None:
                return template, slots
        return None

    def plan(self, task: str) -> TaskPlan | None:
        """A plan from the module's templates, or None when no template fits (the model plans then)."""
        found = self.match(task)
        if found is None:
            return None
        template, slots = found
        return build_plan(self.module, template, slots)


class DefaultHandler(AppHandler):
    """The handler of modules without handler.py: templates only."""


def build_plan(module: AppModule, template: TaskTemplate, slots: dict[str, str]) -> TaskPlan:
    steps = []
    for i, raw in enumerate(template.steps, start=1):
        problems: list[str] = []
        unfilled = parse_step(copy.deepcopy(dict(raw)), i, problems=problems, repairs=[])
        step = parse_step(fill_slots(copy.deepcopy(dict(raw)), slots), i, problems=problems, repairs=[])
        if step is None or unfilled is None or problems:  # validated at load time
            raise ConfigError(f"task {template.name}: " + "; ".join(problems), path=str(module.path / "tasks.yaml"),
                              line=line_of(raw))
        # Sensitivity is decided on the module's own words, not on what the user's slots contain.
        step.sensitive = bool(raw.get("sensitive")) or module.is_sensitive(unfilled)
        steps.append(step)
    return TaskPlan(analysis={"template": template.name, "slots": slots}, steps=steps,
                    success_criteria=template.description, source="template", module=module.name,
                    success_check=fill_slots(dict(template.success_check), slots))
