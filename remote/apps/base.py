"""App modules: what a module folder declares, and the handler that turns a task into a plan.

A module is a folder ``remote/apps/<name>/`` with::

    config.yaml        name, display_name, package, keywords, home_ref, sensitive, fixed_points, stable_ids, failures
    tasks.yaml         templates: patterns with named slots + the steps that use them + success_check
    images/*.png       reference images (NAME.png, NAME_v2.png, ...) and images/aliases.yaml
    prompts/planner.txt  extra planner instructions for this app (optional)
    handler.py         an AppHandler subclass named Handler (optional)

Everything is loaded once (``remote.apps.loading``) into frozen dataclasses and validated against one
schema (``schema.py``); problems name the file and the line, each once.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from remote.apps.schema import (
    SLOT_KINDS,
)
from remote.core.plan import sensitivity
from remote.core.plan.actions import ArgsError
from remote.core.plan.checks import FailureScreen, parse_success_check
from remote.core.plan.schema import parse_step
from remote.core.plan.values import SLOT, fill_slots
from remote.core.records import StepPlan, TaskPlan
from remote.errors import ConfigError
from remote.yamlfile import line_of

MAX_TASK_CHARS = 500   # a sentence, not a document: routing stays fast whatever the text


@dataclass(frozen=True)
class TaskTemplate:
    name: str
    patterns: tuple[str, ...]
    steps: tuple[dict[str, Any], ...]          # raw step dicts with {slot} placeholders
    slots: dict[str, dict[str, str]]           # slot -> {spoken value: canonical value}; empty = free text
    success_check: dict[str, Any]
    description: str = ""
    line: int | None = None
    failures: tuple[dict[str, str], ...] = ()
    answer: str = ""                           # "{variable}" or a text with {variables}: what the task answers
    env: dict[str, str | None] = field(default_factory=dict)   # slots -e KEY=VALUE may give (default or None)
    kinds: dict[str, str] = field(default_factory=dict)   # slot -> the kind of value it takes (schema.SLOT_KINDS)
    _regexes: tuple[re.Pattern[str], ...] = field(default=(), repr=False, compare=False)

    def match(self, task: str) -> dict[str, str] | None:
        """Slot values when the whole task fits one of the patterns, else None."""
        text = normalize_task(task)
        for rx in self._regexes:
            m = rx.fullmatch(text)
            if not m:
                continue
            values = {k: v.strip() for k, v in m.groupdict().items()}
            if all(v for v in values.values()) and self._slots_ok(values):
                return {k: self._canonical(k, v) for k, v in values.items()}
        return None

    def _slots_ok(self, values: dict[str, str]) -> bool:
        return all((not self.slots.get(k) or _lookup(self.slots[k], v) is not None)
                   and (k not in self.kinds or SLOT_KINDS[self.kinds[k]](v)) for k, v in values.items())

    def specificity(self) -> int:
        """How narrowly the slots are bound, to break a routing tie: 2 no free slot (every one a closed list),
        1 some slot of a kind (a URL), 0 some slot of free text. ``open {app}`` with a known app name (2) wins
        over ``open {url}`` (1)."""
        free = [k for k in declared_slots(list(self.patterns)) if not self.slots.get(k)]
        return 0 if any(k not in self.kinds for k in free) else 1 if free else 2

    def _canonical(self, slot: str, value: str) -> str:
        choices = self.slots.get(slot)
        if not choices:
            return value
        return _lookup(choices, value) or value


def _lookup(choices: dict[str, str], value: str) -> str | None:
    if value in choices:
        return choices[value]
    lowered = {k.lower(): v for k, v in choices.items()}
    return lowered.get(value.lower())


def normalize_task(task: str) -> str:
    """Runs of white space become one space; the ends and closing punctuation are dropped."""
    return " ".join(task.split()).strip("。.!！?？ ")


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """``给{contact}发消息{message}`` -> a regex with named groups (the last slot takes the rest).

    Matched against :func:`normalize_task` text, where a space is at most one
    character: literal characters allow one optional space between them, and no
    two quantifiers compete for the same run of spaces, so a match costs at most
    the task's length times the pattern's for each slot. Where the pattern puts a
    space between a slot and a Latin word (``send {message} to {contact}``), the
    word must stand alone: "tomorrow" does not end a message at its "to".
    """
    parts = SLOT.split(pattern)
    rx = ""
    slots = parts[1::2]
    for i, part in enumerate(parts):
        if i % 2 == 0:
            word = part.replace(" ", "")
            rx += (_ALONE_BEFORE if i > 0 and part.startswith(" ") and _latin(word[:1]) else "") \
                + " ?".join(re.escape(ch) for ch in word) \
                + (_ALONE_AFTER if i < len(parts) - 1 and part.endswith(" ") and _latin(word[-1:]) else "")
        else:
            last = i == len(parts) - 2 and parts[-1] == ""
            rx += rf" ?(?P<{part}>.+) ?" if last else rf" ?(?P<{part}>.+?) ?"
    if len(set(slots)) != len(slots):
        raise ValueError(f"slot repeated in pattern {pattern!r}")
    return re.compile(rx, re.IGNORECASE | re.DOTALL)


_ALONE_BEFORE, _ALONE_AFTER = r"(?<![a-z0-9])", r"(?![a-z0-9])"   # the pattern is compiled IGNORECASE


def _latin(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


@dataclass(frozen=True)
class AppModule:
    name: str
    path: Path
    display_name: str = ""
    package: str = ""
    keywords: tuple[str, ...] = ()
    home_ref: str | None = None              # the first of home_refs (a module's home screen marker)
    home_refs: tuple[str, ...] = ()          # any of these on screen means "home" (ROMs and releases differ)
    sensitive: tuple[str, ...] = ()
    fixed_points: dict[str, tuple[float, float]] = field(default_factory=dict)
    templates: tuple[TaskTemplate, ...] = ()
    default: bool = False
    stable_ids: bool = False
    failures: tuple[dict[str, str], ...] = ()

    @property
    def images_dir(self) -> Path:
        return self.path / "images"

    @property
    def prompt_path(self) -> Path | None:
        p = self.path / "prompts" / "planner.txt"
        return p if p.is_file() else None

    def is_sensitive(self, step: StepPlan) -> bool:
        """Declared by the module's words, or by what the step does (:mod:`remote.core.plan.sensitivity`)."""
        return step.sensitive or bool(sensitivity.decide(step, self.sensitive))


def declared_slots(patterns: list[str]) -> set[str]:
    return {s for p in patterns for s in SLOT.findall(p)}


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


def build_plan(module: AppModule, template: TaskTemplate, slots: dict[str, str], *,
                source: str = "template", where: Path | None = None) -> TaskPlan:
    """The plan of ``template`` with its slots filled; ``source`` "learned" for a learned task (``where``: its
    file). A {name} no slot fills (a value from -e, an extracted one) stays, and each step keeps its form as
    written (``StepPlan.template``) to be filled at run time."""
    steps = []
    where_text = str(where or module.path / "tasks.yaml")
    for i, raw in enumerate(template.steps, start=1):
        problems: list[str] = []
        unfilled = parse_step(copy.deepcopy(dict(raw)), i, source="template", problems=problems, repairs=[])
        step = parse_step(fill_slots(copy.deepcopy(dict(raw)), slots), i, source=source, problems=problems,
                          repairs=[])
        if step is None or unfilled is None or problems:  # a slot's value made a bad step (a number, a URL)
            raise ConfigError(f"task {template.name}: " + "; ".join(problems), path=where_text, line=line_of(raw))
        _prepare(module, step, unfilled)
        steps.append(step)
    try:
        check = parse_success_check(fill_slots(dict(template.success_check), slots))
    except ArgsError as exc:
        raise ConfigError(f"task {template.name}: " + "; ".join(exc.problems), path=where_text,
                          line=template.line) from exc
    failures = tuple(FailureScreen(says=fill_slots(f["says"], slots), text=fill_slots(f.get("text"), slots),
                                   target=fill_slots(f.get("target"), slots)) for f in template.failures)
    return TaskPlan(analysis={"template": template.name, "slots": slots, "description": template.description},
                    steps=steps, source=source, module=module.name, success_check=check, failures=failures,
                    answer=template.answer, slots=dict(slots), env=dict(template.env),
                    check_template=dict(template.success_check))


def _prepare(module: AppModule, step: StepPlan, unfilled: StepPlan) -> None:
    """The step as written, kept for filling at run time; and its sensitivity, decided on the filled step
    (`remote.core.plan.sensitivity.decide`: a slot's value in a target counts, a message typed does not). A
    block's steps alike."""
    raw = unfilled.template or {}
    step.template = unfilled.template
    reason = sensitivity.decide(step, module.sensitive) or ("declared sensitive" if raw.get("sensitive") else "")
    step.sensitive, step.sensitive_reason = bool(reason), reason
    for child, plain in zip(step.steps, unfilled.steps, strict=False):
        _prepare(module, child, plain)
