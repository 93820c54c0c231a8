"""Learned tasks: candidate templates that runs solved by the model left behind, one YAML file each.

A learned file is a ``tasks.yaml`` with one task and a ``learned:`` block saying
where it came from; it is read, checked and planned exactly like a module's task::

    # learned by remote from a run the model planned; edit it like any tasks.yaml
    learned:
      module: wechat                # whose sensitive words, failure screens and home apply
      task: 麻烦帮我跟王五讲一声明天见
      source_run: runs/20261127-020309-麻烦帮我跟王五讲一声明天见
      learned_at: 2026-11-27T02:03:09
      app: com.tencent.mm
      app_version: 8.0.47           # when the phone said
      screen: [1080, 2400]
    tasks:
      - name: learned_1f2e3d4c
        patterns: ["麻烦帮我跟{contact}讲一声{message}", "跟{contact}讲一声{message}"]
        steps: [...]
        success_check: {text: "{message}"}

Its record of replays lives beside it in ``NAME.state.json`` (replays, clean
replays, heals, the last result, trusted, set aside), so the YAML stays as its
author (remote, then a person) wrote it. Reference crops go to ``images/``.

The folder is per user (``REMOTE_LEARNED_DIR``, default ``~/.local/share/remote/learned``),
never inside the shipped modules.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml
from PIL import Image

from remote.apps.base import TaskTemplate
from remote.apps.loading import load_templates
from remote.apps.schema import Checker, Problem
from remote.apps.tasks_file import append_task, plain, save_crop
from remote.core.safe_files import write_atomic
from remote.errors import ConfigError
from remote.yamlfile import load_yaml

logger = logging.getLogger(__name__)

LEARNED_TOP_KEYS = ("learned", "tasks")
META_KEYS = ("module", "task", "slots", "source_run", "learned_at", "app", "app_version", "screen", "model_calls",
             "tokens", "seconds", "healed")
TRUST_AFTER = 2            # clean replays before a candidate is trusted
SET_ASIDE_AFTER = 2        # failures in a row before a candidate is no longer tried
HEADER = ("# Learned by remote from a run that succeeded (a model's plan, a phone agent's or an MCP agent's steps).\n"
          "# Edit it like any tasks.yaml; `remote modules learned` lists it, `remote modules adopt NAME --module M`\n"
          "# moves it into a module.\n")
_NAME = re.compile(r"[\w-]{1,80}")


@dataclass
class LearnedState:
    """What the replays of one candidate did."""

    replays: int = 0
    clean_replays: int = 0          # with no heal and no hand-over
    heals: int = 0
    failures_in_row: int = 0
    last_result: str = ""
    last_run: str = ""
    trusted: bool = False
    set_aside: bool = False


@dataclass
class LearnedTask:
    name: str
    path: Path
    template: TaskTemplate
    meta: dict[str, Any]
    state: LearnedState = field(default_factory=LearnedState)

    @property
    def module(self) -> str:
        return str(self.meta.get("module") or "")

    def summary(self) -> dict[str, Any]:
        return {"name": self.name, "file": str(self.path), "patterns": list(self.template.patterns),
                "module": self.module, "source_run": self.meta.get("source_run", ""), **asdict(self.state)}


class LearnedStore:
    """The learned folder: read, match, save, count replays, promote, forget, adopt."""

    def __init__(self, folder: Path, *, trust_after: int = TRUST_AFTER) -> None:
        self.folder = Path(folder)
        self.trust_after = max(1, trust_after)
        self.problems: list[Problem] = []
        self._tasks: dict[str, LearnedTask] | None = None

    @property
    def images_dir(self) -> Path:
        return self.folder / "images"

    # ------------------------------------------------------------------ reading
    def tasks(self) -> dict[str, LearnedTask]:
        if self._tasks is None:
            self._tasks, self.problems = {}, []
            for path in sorted(self.folder.glob("*.yaml")) if self.folder.is_dir() else []:
                task = self._read(path)
                if task is not None:
                    self._tasks[task.name] = task
        return self._tasks

    def _read(self, path: Path) -> LearnedTask | None:
        c = Checker(path)
        try:
            data = load_yaml(path)
        except ConfigError as exc:
            c.add(exc.line, exc.message, exc.hint)
            self.problems += c.problems
            return None
        templates = load_templates(c, (), data, top_keys=LEARNED_TOP_KEYS)
        meta = data.get("learned") if isinstance(data, dict) else None
        if not isinstance(meta, dict):
            c.add(1, "a learned task needs its 'learned:' block (module, task, source_run ...)")
        else:
            c.keys(meta, META_KEYS, "learned")
        if len(templates) != 1 and not c.problems:
            c.add(1, "a learned file holds exactly one task")
        self.problems += c.problems
        if any(not p.warning for p in c.problems) or not templates or not isinstance(meta, dict):
            return None
        template = templates[0]
        if not valid_name(template.name) or template.name != path.stem:
            # the name reaches the file system (its crops, forget, adopt): a name is a name, never a path
            c.add(1, f"a learned task's name must be its file's name and letters, digits and _ only, not "
                     f"{template.name[:60]!r}", "rename the file and its task, or delete it")
            self.problems += c.problems
            return None
        return LearnedTask(template.name, path, template, dict(meta), self._state(path))

    @staticmethod
    def _state_path(path: Path) -> Path:
        return path.with_suffix(".state.json")

    def _state(self, path: Path) -> LearnedState:
        state_path = self._state_path(path)
        try:
            raw = json.loads(state_path.read_text(encoding="utf-8")) if state_path.is_file() else {}
        except (OSError, ValueError) as exc:
            logger.warning("learned state %s unreadable (%s); starting afresh", state_path, exc)
            raw = {}
        known = LearnedState.__dataclass_fields__
        values = {k: v for k, v in raw.items() if k in known and isinstance(v, type(getattr(LearnedState(), k)))} \
            if isinstance(raw, dict) else {}
        return LearnedState(**values)

    def match(self, task: str) -> tuple[LearnedTask, dict[str, str]] | None:
        """The candidate whose pattern fits the whole task (set-aside ones are not tried), and its slots."""
        for learned in self.tasks().values():
            if learned.state.set_aside:
                continue
            slots = learned.template.match(task)
            if slots is not None:
                return learned, slots
        return None

    def get(self, name: str) -> LearnedTask:
        task = self.tasks().get(name)
        if task is None:
            known = ", ".join(sorted(self.tasks())) or "none yet"
            raise ConfigError(f"no learned task named {name!r} in {self.folder}", hint=f"learned tasks: {known}")
        return task

    # ------------------------------------------------------------------ writing
    def save(self, task: dict[str, Any], meta: dict[str, Any], crops: dict[str, Image.Image]) -> LearnedTask:
        """Write a candidate (replacing one of the same name: the same sentence shape learned again)."""
        if not valid_name(str(task.get("name", ""))) or not all(valid_name(ref) for ref in crops):
            raise ConfigError(f"a learned task's name is letters, digits and _ only, not {str(task.get('name'))[:60]!r}")
        self.folder.mkdir(parents=True, exist_ok=True)
        for ref, image in crops.items():
            self.images_dir.mkdir(exist_ok=True)
            save_crop(image, self.images_dir / f"{ref}.png", meta.get("screen"))
        path = self.folder / f"{task['name']}.yaml"
        self._write_yaml(path, {"learned": meta, "tasks": [task]})
        with contextlib.suppress(FileNotFoundError):
            self._state_path(path).unlink()
        self._tasks = None
        learned = self.tasks().get(task["name"])
        if learned is None:
            problems = "; ".join(str(p) for p in self.problems if p.path == path)
            raise ConfigError(f"the learned task did not read back: {problems}", path=str(path))
        return learned

    @staticmethod
    def _write_yaml(path: Path, data: dict[str, Any]) -> None:
        text = HEADER + yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=110)
        write_atomic(path, text)

    def _save_state(self, learned: LearnedTask) -> None:
        write_atomic(self._state_path(learned.path), json.dumps(asdict(learned.state), ensure_ascii=False, indent=1))

    def record_replay(self, name: str, *, success: bool, heals: int, handed_over: bool, run: str = "") -> LearnedState:
        """Count one replay; clean ones promote after ``trust_after``, two failures in a row set it aside."""
        learned = self.get(name)
        state = learned.state
        state.replays += 1
        state.heals += heals
        state.last_run = run
        clean = success and not heals and not handed_over
        state.last_result = "success" if clean else "healed" if success and heals and not handed_over else \
            "handed over" if success else "failed"
        if success and not handed_over:
            state.failures_in_row = 0
            state.clean_replays += int(clean)
            if state.clean_replays >= self.trust_after:
                state.trusted = True
        else:
            state.failures_in_row += 1
            if state.failures_in_row >= SET_ASIDE_AFTER:
                state.set_aside = True
        self._save_state(learned)
        return state

    def write_back(self, name: str, index: int, target_ref: str) -> None:
        """A healed step's new target, written into the candidate (step ``index``, 1-based); the old forms stay
        as alternatives after it."""
        learned = self.get(name)
        data = load_yaml(learned.path)
        step = data["tasks"][0]["steps"][index - 1]
        old = step.get("target_ref")
        olds = old if isinstance(old, list) else [old] if old else []
        step["target_ref"] = [target_ref, *[o for o in olds if o != target_ref]][:4]
        step.pop("anchors", None)   # the screen it acts on has changed: its old anchors no longer say which it is
        healed = list(data["learned"].get("healed") or [])
        healed.append({"step": index, "target_ref": target_ref})
        data["learned"]["healed"] = healed
        self._write_yaml(learned.path, plain(data))
        self._tasks = None

    def promote(self, name: str) -> LearnedState:
        learned = self.get(name)
        learned.state.trusted, learned.state.set_aside, learned.state.failures_in_row = True, False, 0
        self._save_state(learned)
        return learned.state

    def forget(self, name: str) -> Path:
        learned = self.get(name)
        for path in (learned.path, self._state_path(learned.path), *self._crops(learned)):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        self._tasks = None
        return learned.path

    def _crops(self, learned: LearnedTask) -> list[Path]:
        """The task's reference crops: plain files directly inside images/ (never a link, never elsewhere)."""
        if not self.images_dir.is_dir() or not valid_name(learned.name):
            return []
        return sorted(p for p in self.images_dir.glob(f"{learned.name}_*.png")
                      if p.parent == self.images_dir and p.is_file() and not p.is_symlink())

    def adopt(self, name: str, module_dir: Path) -> Path:
        """Move a candidate into a module: its task appended to the module's tasks.yaml (the file's own text and
        comments kept), its crops into the module's images/. Returns the tasks.yaml written."""
        learned = self.get(name)
        tasks_file = module_dir / "tasks.yaml"
        images = module_dir / "images"
        for crop in self._crops(learned):
            images.mkdir(exist_ok=True)
            target = images / crop.name
            if target.exists():
                raise ConfigError(f"{target} exists already", hint="rename one of them first")
        text = append_task(tasks_file, load_yaml(learned.path)["tasks"][0],
                           f"adopted from a learned task ({learned.meta.get('task', '')})", doing="adopting")
        for crop in self._crops(learned):
            os.replace(crop, images / crop.name)
        write_atomic(tasks_file, text)
        self.forget(name)
        return tasks_file


def valid_name(name: str) -> bool:
    return bool(_NAME.fullmatch(name))
