"""The runner's side of learning: pick a learned task, heal its steps, count its replays, save new ones.

* ``match``: a sentence no module template fits, but a learned task does, runs that task (0 model calls).
* ``heal``: a learned step that found nothing, or found it on a screen that is not the one it was learned
  on (its anchors), gets at most one model call: the vision model looks for what the step touched; the
  element it points at is named again by the free forms (text, desc, role, editable) and the step runs
  with that name, which is written back into the learned file. Where that fails, the task loop hands
  over to the planner (a replan with the steps done so far), as for any failed step.
* ``finish``: a replay is counted (clean, healed, handed over, failed: ``LearnedStore.record_replay``);
  a model-planned SUCCESS becomes a new candidate (``learning.compile_run``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from remote.apps import AppModule, ModuleRegistry
from remote.apps.base import build_plan, normalize_task
from remote.apps.learned import LearnedStore, LearnedTask
from remote.core.locate.screen import Screen
from remote.core.locate.snapping import screen_elements
from remote.core.plan.actions import LaunchApp
from remote.core.records import FailureReason, StepPlan, StepResult, StepStatus, TaskPlan, TaskResult
from remote.errors import ModelError, RemoteError
from remote.runner.learning import LEARNABLE_SOURCES, compile_run, target_forms
from remote.runner.protocols import Locator, VisionTier

logger = logging.getLogger(__name__)
HEALABLE = (FailureReason.NOT_FOUND, FailureReason.AMBIGUOUS, FailureReason.WRONG_PAGE,
            FailureReason.NOT_INTERACTABLE)


@dataclass
class Replay:
    """One replay of a learned task: which, and what happened to its steps."""

    task: LearnedTask
    healed: list[int] = field(default_factory=list)     # the learned step numbers healed
    handed_over: bool = False


class Learner:
    """``save``: write new candidates, counters and heals (``--no-learn`` turns it off; replays still run)."""

    def __init__(self, store: LearnedStore | None, *, save: bool = True) -> None:
        self.store = store
        self.save = save and store is not None
        self.replay: Replay | None = None
        self._healing: dict[int, int] = {}    # id(healed step) -> id(the step it heals)
        self._tried: set[int] = set()         # learned steps a heal was tried for (one model call each, at most)

    @property
    def folders(self) -> list[Path]:
        """The learned folder, for its reference crops (``images/``)."""
        return [self.store.folder] if self.store is not None else []

    # ------------------------------------------------------------------ before the run
    def match(self, task: str, registry: ModuleRegistry, routed: AppModule) -> tuple[AppModule, LearnedTask,
                                                                                      dict[str, str]] | None:
        """A learned task for ``task`` when no template of the routed module fits it as closely: a template
        wins unless the learned pattern says more of the sentence in its own words (``打开深色模式`` learned
        after ``打开{app}`` could not do it)."""
        if self.store is None:
            return None
        found = self.store.match(task)
        if found is None:
            return None
        learned, slots = found
        template = registry.handler(routed).match(task)
        if template is not None and _literal(task, template[1]) >= _literal(task, slots):
            return None
        module = registry.modules.get(learned.module) or routed
        return module, learned, slots

    def plan(self, module: AppModule, learned: LearnedTask, slots: dict[str, str]) -> TaskPlan:
        plan = build_plan(module, learned.template, slots, source="learned", where=learned.path)
        plan.analysis["learned"] = {"name": learned.name, "file": str(learned.path),
                                    "replays": learned.state.replays, "trusted": learned.state.trusted}
        self.replay = Replay(learned)
        return plan

    # ------------------------------------------------------------------ during the run
    def heal(self, index: int, step: StepPlan, sr: StepResult, screen: Screen, vision: VisionTier | None,
             locator: Locator) -> StepPlan | None:
        """One model call to find what a learned step touched: the step again, named by what is there now
        (run next by the task loop; its success is written back). None when there is nothing to heal with:
        the loop then hands over to the planner, or fails."""
        if self.replay is None or sr.failure not in HEALABLE or not step.targets or vision is None \
                or index in self._tried:
            return None
        self._tried.add(index)
        if sr.model_usage.calls:   # the locator's own vision tier already asked: that was the one call
            return None
        what = step.description or step.label
        try:
            found = vision.find_element(screen.pil, what, elements=screen_elements(screen.tree()))
        except ModelError as exc:
            logger.info("heal of %s: the model did not answer (%s)", step.label, exc)
            return None
        if not found.success or found.element is None:
            return None
        forms = target_forms(screen, found.element.center, locator)
        if not forms:
            return None
        healed = replace(step, target_ref=forms[0], alternatives=tuple(forms[1:]), anchors=(),
                         description=step.description)
        self._healing[id(healed)] = id(step)
        sr.notes.append(f"healing: the model found {what!r}; trying {forms[0]}")
        return healed

    def after_step(self, index: int, step: StepPlan, sr: StepResult, locator: Locator) -> None:
        """Write back a healed step that worked; a learned step the locator found only through the vision model
        (that call was its heal) is named again by the free forms at the point it tapped."""
        if self.replay is None or sr.status is not StepStatus.SUCCESS:
            return
        if id(step) in self._healing and step.target_ref:
            self._healed(index, step.target_ref)
            return
        loc, before = sr.locate_result, sr.screenshot_before
        if loc is None or "vision" not in loc.method_used or sr.tap_point is None or not isinstance(before, Screen):
            return
        forms = target_forms(before, sr.tap_point, locator)
        if forms:
            sr.notes.append(f"healed: now named {forms[0]}")
            self._healed(index, forms[0])

    def _healed(self, index: int, ref: str) -> None:
        assert self.replay is not None
        self.replay.healed.append(index)
        if self.save and self.store is not None:
            try:
                self.store.write_back(self.replay.task.name, index, ref)
            except (RemoteError, OSError, KeyError, IndexError) as exc:
                logger.warning("could not write the healed step back into %s: %s", self.replay.task.path, exc)

    def handed_over(self) -> None:
        if self.replay is not None:
            self.replay.handed_over = True

    # ------------------------------------------------------------------ after the run
    def finish(self, task: str, result: TaskResult, locator: Locator, registry: ModuleRegistry, *, stable_ids: bool,
               record_dir: Path | None, extra: dict[str, Any]) -> dict[str, Any]:
        """Count a replay, or learn from a model's success; what happened, for the run record."""
        if self.replay is not None:
            info: dict[str, Any] = {"replayed": self.replay.task.name, "healed_steps": self.replay.healed,
                                    "handed_over": self.replay.handed_over}
            if self.save and self.store is not None:
                state = self.store.record_replay(self.replay.task.name, success=result.success,
                                                 heals=len(self.replay.healed), handed_over=self.replay.handed_over,
                                                 run=str(record_dir or ""))
                info.update(replay=state.replays, trusted=state.trusted, set_aside=state.set_aside)
            return info
        if not self.save or self.store is None or result.plan is None or result.plan.source not in LEARNABLE_SOURCES:
            return {}
        module = acting_module(result, registry)
        compiled = compile_run(task, result, locator, stable_ids=module.stable_ids if module else stable_ids,
                               source_run=str(record_dir or ""))
        if compiled.task is not None and module is not None:
            compiled.meta.update(module=module.name, app=module.package)
        if compiled.task is None:
            return {"learned": None, "why_not": compiled.refused} if result.success else {}
        compiled.meta.update({k: v for k, v in extra.items() if v and k not in compiled.meta or k == "seconds"})
        try:
            saved = self.store.save(compiled.task, compiled.meta, compiled.crops)
        except (RemoteError, OSError) as exc:
            logger.warning("could not save the learned task: %s", exc)
            return {"learned": None, "why_not": f"could not save it: {exc}"}
        return {"learned": saved.name, "file": str(saved.path), "patterns": list(saved.template.patterns)}


def _literal(task: str, slots: dict[str, str]) -> int:
    """How many characters of ``task`` a pattern says itself (those not in its slots' values)."""
    return len(normalize_task(task)) - sum(len(v) for v in slots.values())


def acting_module(result: TaskResult, registry: ModuleRegistry) -> AppModule | None:
    """The module of the app the run worked in: the last app it launched that a module declares."""
    packages = [sr.step.args.package for sr in result.step_results
                if isinstance(sr.step.args, LaunchApp) and sr.step.args.package]
    by_package = {m.package: m for m in registry.modules.values() if m.package}
    return next((by_package[p] for p in reversed(packages) if p in by_package), None)
