"""The task template being built on the page: its steps, its YAML, its problems, and saving it into a module.

A draft is one entry of a module's ``tasks.yaml`` (name, patterns, steps,
success_check) plus what the page knows that the file does not yet: the example
value of each slot (a typed text marked as ``{message}`` keeps "你好" as its
example, so "run step" can type it) and the reference crops cut on the spot
(``studio_c3``), which "save" writes into the module's ``images/`` under the
task's name. Its YAML is checked as ``modules check`` checks a file
(``tasks_file.check_text`` and the same target checks), without writing one.
"""

from __future__ import annotations

import copy
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from remote.apps import AppModule
from remote.apps.base import build_plan
from remote.apps.schema import slots_used
from remote.apps.tasks_file import append_task, check_text, save_crop, task_block
from remote.commands.modules import template_id_warnings, template_problems
from remote.core.locate.assets import AssetsManager
from remote.core.plan.actions import ActionName
from remote.core.plan.schema import parse_step
from remote.core.records import TaskPlan
from remote.core.safe_files import write_atomic
from remote.errors import BadInput, ConfigError
from remote.runner.learn_slots import patterns_for
from remote.studio.inspector import CROP_PREFIX, CropShelf
from remote.studio.lines import LINE, ends_as, step_line, step_spans

MAX_STEPS = 100
MAX_TEXT = 2000
NAME = re.compile(r"[A-Za-z_][\w-]{0,63}")
SLOT_NAME = re.compile(r"[A-Za-z_]\w{0,29}")
FLOW_KINDS = "wait_until" in ActionName._value2member_map_   # issue 28's step kinds, when the schema has them


@dataclass
class Draft:
    module: AppModule
    name: str = "new_task"
    patterns: list[str] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)
    success_check: dict[str, Any] = field(default_factory=dict)
    examples: dict[str, str] = field(default_factory=dict)            # slot -> the value it was shown with
    notes: list[str] = field(default_factory=list)                    # what the studio says of the steps built
    crops: dict[str, tuple[Image.Image, tuple[int, int]]] = field(default_factory=dict)
    shelf: CropShelf = field(default_factory=CropShelf)               # crops cut by the inspector
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # ------------------------------------------------------------------ what it is
    def task(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "patterns": list(self.patterns) or ["(say the task here)"],
                               "steps": copy.deepcopy(self.steps)}
        if self.success_check:
            out["success_check"] = copy.deepcopy(self.success_check)
        return out

    def yaml(self) -> str:
        return "tasks:\n" + task_block(self.task(), f"built in remote studio for module {self.module.name}")

    @property
    def pseudo_path(self) -> Path:
        return self.module.path / "tasks.yaml (studio draft)"

    def problems(self) -> list[str]:
        """What ``modules check`` would say of this task in the module (file-less: lines of ``yaml()``)."""
        if not self.steps:
            return []             # nothing built yet: not a problem to report
        templates, found = check_text(self.yaml(), self.pseudo_path, self.module.failures)
        out = [str(p) for p in found]
        assets = _Assets(self.module, set(self.crops))
        for template in templates:
            out += template_problems(self.pseudo_path, template, assets)
            out += template_id_warnings(self.module, self.pseudo_path, template)
        return out

    def state(self) -> dict[str, Any]:
        problems = self.problems()
        return {"module": self.module.name, "task": self.task(), "yaml": self.yaml(), "examples": self.examples,
                "crops": sorted(self.crops), "problems": problems,
                "ok": not [p for p in problems if ": warning: " not in p], "flow_kinds": FLOW_KINDS,
                "lines": [step_line(s) for s in self.steps], "step_problems": self.step_problems(problems),
                "ends": ends_as(self.success_check), "notes": list(self.notes)}

    def step_problems(self, problems: list[str]) -> list[list[str]]:
        """``problems`` beside the step whose lines of ``yaml()`` they name (the others stay in the list)."""
        spans = step_spans(self.yaml())
        out: list[list[str]] = [[] for _ in self.steps]
        for problem in problems:
            found = LINE.search(problem)
            line = int(found.group(1)) if found else -1
            n = next((i for i, (a, b) in enumerate(spans) if a <= line <= b), None)
            if n is not None and n < len(out):
                out[n].append(problem[found.end():] if found else problem)
        return out

    # ------------------------------------------------------------------ changing it
    def add_step(self, step: Any) -> int:
        """Append a step (the ``tasks.yaml`` schema); a BadInput with the schema's words when it is not one."""
        if not isinstance(step, dict):
            raise BadInput("a step must be a JSON object, e.g. {\"action\": \"tap\", \"target_ref\": \"text:张三\"}")
        if len(self.steps) >= MAX_STEPS:
            raise BadInput(f"a template of {MAX_STEPS} steps is long enough", hint="save it and start another")
        check_step(step, self.examples)
        self.take_crops([text for text in strings(step) if text.startswith(CROP_PREFIX)])
        self.steps.append(copy.deepcopy(step))
        return len(self.steps)

    def take_crops(self, refs: list[str]) -> None:
        """The inspector's crops that these targets name become the draft's (saved with it)."""
        for ref in refs:
            if ref.startswith(CROP_PREFIX) and ref not in self.crops:
                crop = self.shelf.get(ref)
                if crop is None:
                    raise BadInput(f"no crop named {ref!r} (crops are cut by POST /api/inspect)")
                self.crops[ref] = crop

    def remove_step(self, number: int) -> None:
        self._index(number)
        del self.steps[number - 1]

    def replace_step(self, number: int, step: Any) -> None:
        """Step ``number`` edited in place (its line on the page): checked as `add_step` checks a new one."""
        self._index(number)
        if not isinstance(step, dict):
            raise BadInput("a step must be a mapping, e.g. {action: tap, target_ref: \"text:张三\"}")
        check_step(step, self.examples)
        self.take_crops([text for text in strings(step) if text.startswith(CROP_PREFIX)])
        self.steps[number - 1] = copy.deepcopy(step)

    def move_step(self, number: int, to: int) -> None:
        """Step ``number`` dragged to place ``to`` (both 1-based)."""
        self._index(number)
        self._index(to)
        self.steps.insert(to - 1, self.steps.pop(number - 1))

    def _index(self, number: int) -> None:
        if not 1 <= number <= len(self.steps):
            raise BadInput(f"no step {number} (the template has {len(self.steps)})")

    def set_task(self, body: dict[str, Any]) -> None:
        """``name``, ``patterns`` or a ``sentence`` (its example values become ``{slots}``), ``success_check``,
        ``examples``; what is not given stays."""
        if "name" in body:
            self.name = valid_name(body["name"])
        if "examples" in body:
            self.examples.update(_examples(body["examples"]))
        if "sentence" in body:
            sentence = _text(body["sentence"], "sentence")
            found = patterns_for(sentence, {k: v for k, v in self.examples.items() if v in sentence})
            if not found:
                raise BadInput(f"{sentence!r} has too little of its own besides its values to be a pattern")
            self.patterns = found
        if "patterns" in body:
            raw = body["patterns"]
            if not isinstance(raw, list) or not raw or not all(isinstance(p, str) and p.strip() for p in raw):
                raise BadInput("patterns must be a list of sentences, e.g. [\"给{contact}发消息说{message}\"]")
            self.patterns = [_text(p, "pattern") for p in raw]
        if "success_check" in body:
            check = body["success_check"]
            if not isinstance(check, dict):
                raise BadInput("success_check must be an object, e.g. {\"text\": \"{message}\"}")
            self.success_check = copy.deepcopy(check)

    def add_check(self, kind: str, value: str) -> None:
        """"check this is visible / gone / switch on / switch off / app in front": a clause of the task's
        success_check (several targets: a list), the one thing that makes a run of it SUCCESS."""
        if kind == "app":
            self.success_check["app"] = value
        elif kind in ("switch_on", "switch_off"):
            self.success_check["toggle"] = {"target": value, "state": kind.removeprefix("switch_")}
        else:
            key = "target" if kind == "check" else "absent"
            values = self.success_check.get(key) or []
            values = [values] if isinstance(values, str) else list(values)
            if value not in values:
                values.append(value)
            self.success_check[key] = values[0] if len(values) == 1 and key == "target" else values

    # ------------------------------------------------------------------ using it
    def plan(self, first: int = 1, last: int | None = None) -> TaskPlan:
        """Steps ``first``..``last`` (1-based) as a plan of the module, slots filled with their examples; the
        final check only when the plan runs to the end."""
        last = len(self.steps) if last is None else last
        if not self.steps or not 1 <= first <= last <= len(self.steps):
            raise BadInput(f"no steps {first}-{last} (the template has {len(self.steps)})")
        task = self.task()
        task["steps"] = task["steps"][first - 1:last]
        if last < len(self.steps):
            task.pop("success_check", None)
        return plan_of(self.module, task, self.examples)

    def save(self, module_dir: Path) -> Path:
        """Append the task to the module's tasks.yaml (its text and comments kept) and its crops to images/."""
        if self.name == "new_task" or not self.patterns:
            raise BadInput("give the task a name and its patterns (or the sentence) before saving")
        if not self.success_check:
            raise BadInput(f"{self.name} has no final check: a run of it could never end SUCCESS (it would end "
                           "'final check undecided', which is not a success)",
                           hint="click what the finished screen shows, then \"check this is visible\" (or gone, "
                                "switch on/off, app in front)")
        names = {t.name for t in self.module.templates}
        if self.name in names:
            raise BadInput(f"module {self.module.name} has a task named {self.name!r} already",
                           hint="choose another name")
        task = self.task()
        renames = {old: f"{self.name}_{old[len(CROP_PREFIX):]}" for old in self.crops if used(task, old)}
        task = rename_refs(task, renames)
        images = module_dir / "images"
        for new in renames.values():
            if (images / f"{new}.png").exists():
                raise ConfigError(f"{images / (new + '.png')} exists already", hint="rename the task")
        text = append_task(module_dir / "tasks.yaml", task, f"built in remote studio ({self.name})",
                           doing="saving", failures=self.module.failures)
        for old, new in renames.items():
            images.mkdir(exist_ok=True)
            image, size = self.crops[old]
            save_crop(image, images / f"{new}.png", list(size))
        write_atomic(module_dir / "tasks.yaml", text)
        return module_dir / "tasks.yaml"


class _Assets(AssetsManager):
    """The module's images and the draft's crops, which are not on disk until the draft is saved."""

    def __init__(self, module: AppModule, pending: set[str]) -> None:
        super().__init__(module_dirs=[module.path])
        self.pending = pending

    def has(self, name_or_alias: str) -> bool:
        return name_or_alias in self.pending or super().has(name_or_alias)


def plan_of(module: AppModule, task: dict[str, Any], examples: dict[str, str]) -> TaskPlan:
    """A task entry as the plan a run of it would have (checked by the schema first), its slots filled with their
    example values (the patterns do not matter here: a run from the page names no sentence)."""
    used = sorted(slots_used(task.get("steps")) | slots_used(task.get("success_check")))
    missing = [s for s in used if s not in examples]
    if missing:
        raise BadInput(f"slot {{{missing[0]}}} has no example value to run with",
                       hint="give one: POST /api/template {\"examples\": {\"" + missing[0] + "\": \"...\"}}")
    task = dict(task, patterns=[" ".join(["studio run", *("{" + s + "}" for s in used)])])
    templates, problems = check_text("tasks:\n" + task_block(task, "studio"), Path("studio"), module.failures)
    errors = [p.message for p in problems if not p.warning]
    if errors or not templates:
        raise BadInput("; ".join(errors) or "the steps do not make a task")
    return build_plan(module, templates[0], examples)


def check_step(step: dict[str, Any], examples: dict[str, str]) -> None:
    """A BadInput with the schema's words when ``step`` is not a step of a template."""
    problems: list[str] = []
    if any(not isinstance(k, str) for k in step):
        raise BadInput("a step's keys are words")
    if parse_step(copy.deepcopy(step), 1, source="template", problems=problems, repairs=[]) is None or problems:
        raise BadInput("; ".join(problems) or "not a step")


def strings(value: Any) -> list[str]:
    """Every string in a step (its targets wherever they are: target_ref, verify_ref, a flow step's)."""
    if isinstance(value, dict):
        return [t for v in value.values() for t in strings(v)]
    if isinstance(value, list):
        return [t for v in value for t in strings(v)]
    return [value] if isinstance(value, str) else []


def used(value: Any, name: str) -> bool:
    """``name`` is one of the strings of ``value`` (a target anywhere: a step, a block's steps, the check)."""
    return name in strings(value)


def rename_refs(value: Any, renames: dict[str, str]) -> Any:
    """Every string of ``value`` that is a crop's working name, by its saved name."""
    if isinstance(value, dict):
        return {k: rename_refs(v, renames) for k, v in value.items()}
    if isinstance(value, list):
        return [rename_refs(v, renames) for v in value]
    return renames.get(value, value) if isinstance(value, str) else value


def valid_name(value: Any) -> str:
    if not isinstance(value, str) or not NAME.fullmatch(value):
        raise BadInput("a task's name is a word: letters, digits, _ and - (e.g. open_bluetooth)")
    return value


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BadInput(f"{what} must be some text")
    if len(value) > MAX_TEXT:
        raise BadInput(f"{what} is {len(value)} characters long; at most {MAX_TEXT}")
    return value.strip()


def _examples(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        raise BadInput("examples must map slot names to values, e.g. {\"message\": \"你好\"}")
    out = {}
    for key, text in value.items():
        if not isinstance(key, str) or not SLOT_NAME.fullmatch(key):
            raise BadInput(f"slot name {str(key)[:30]!r}: a word of letters, digits and _")
        out[key] = _text(text, f"the example of {{{key}}}")
    return out


KINDS = ("launch", "tap", "long_press", "type", "wait", "check", "gone", "switch_on", "switch_off", "app")
CHECK_KINDS = ("check", "gone", "switch_on", "switch_off", "app")


def add_kind(draft: Draft, kind: str, ref: str, *, text: str = "", slot: str = "",
             home: tuple[str, ...] = ()) -> dict[str, Any]:
    """A button of the page at ``ref`` (the best target_ref of the element): "launch this app" (``text`` is the
    package in front, ``home`` the markers of its home page: the launch then goes back to that home, as shipped
    templates do), "tap this", "type here", "wait until this shows", and the final check's buttons ("check this
    is visible / gone / switch on / off / app in front": clauses of the task's success_check)."""
    if kind not in KINDS:
        raise BadInput(f"unknown kind {kind!r}", hint=f"one of {', '.join(KINDS)}")
    if kind == "launch":
        return _launch(draft, _text(text, "the app in front"), home)
    if kind == "app":
        draft.add_check("app", _text(text, "the app in front"))
        return {"success_check": draft.success_check}
    if kind == "type":
        return _type(draft, ref, text, slot)
    if not ref:
        raise BadInput(f"{kind} needs a target_ref (inspect a point first)")
    if kind in ("tap", "long_press"):
        step: dict[str, Any] = {"action": kind, "target_ref": ref}
    elif kind in CHECK_KINDS:
        draft.take_crops([ref])
        draft.add_check(kind, ref)
        return {"success_check": draft.success_check}
    elif FLOW_KINDS:
        draft.take_crops([ref])
        step = {"wait_until": {"visible": ref, "timeout_ms": 5000}}
    else:
        if not draft.steps or "action" not in draft.steps[-1]:
            raise BadInput("wait until this shows: on this schema it is the verify_ref of the step before "
                           "(the target that must be on its next screen): add that step first")
        draft.take_crops([ref])
        draft.steps[-1]["verify_ref"] = ref
        return draft.steps[-1]
    draft.add_step(step)
    return step


def _launch(draft: Draft, package: str, home: tuple[str, ...]) -> dict[str, Any]:
    step: dict[str, Any] = {"action": "launch_app", "params": {"package": package}}
    draft.add_step(step)
    if not home:
        draft.notes.append(f"no module knows the home page of {package}: the launch opens it where it was left, "
                           "so a run may start elsewhere than this one did")
        return step
    back = {"action": "back_to_home", "target_ref": home[0] if len(home) == 1 else list(home)}
    draft.add_step(back)
    draft.notes.append(f"the launch goes back to {package}'s home page ({' or '.join(home)}), as the shipped "
                       "templates do: run all and remote run start from there")
    return back


def _type(draft: Draft, ref: str, text: str, slot: str) -> dict[str, Any]:
    value = _text(text, "the text to type")
    if slot:
        if not SLOT_NAME.fullmatch(slot):
            raise BadInput(f"slot name {slot[:30]!r}: a word of letters, digits and _")
        draft.examples[slot] = value
        value = "{" + slot + "}"
    step: dict[str, Any] = {"action": "input_text", "params": {"text": value}}
    if ref:
        step["target_ref"] = ref
    draft.add_step(step)
    return step
