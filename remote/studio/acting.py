"""Acting on the phone from the page: steps run through the runner, with every gate a run has.

"run step", "run from here", ``POST /api/act`` and each recorded action become a
plan of the module (``draft.plan_of`` / ``Draft.plan``) that ``TaskRunner.run``
runs as given: the same locating, acting, verifying, popups cleared, limits
(steps, seconds, model calls), final check (when the plan runs to the end) and
run record as ``remote run``. Sensitive steps (the module's words, calls, deep
links, deletions: the runner decides them on the step as it runs) are asked of
the person **on the terminal where the studio runs** (`ActSettings.person`), never
on the page: a yes the page sends is a yes any script of the page's origin can
send too (issue 34: a record's text once ran as a script there), while nothing
in a browser reaches the terminal. Without a terminal to ask, an act holding a
sensitive step is refused before anything is done. When the studio serves beyond
loopback the phone is the allow list's ``GatedDevice``. One act at a time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from remote.apps import ModuleRegistry
from remote.apps.learned import LearnedStore
from remote.apps.tasks_file import save_crop
from remote.config import LLMConfig
from remote.core.records import StepResult, StepStatus, TaskPlan, TaskResult, TaskStatus
from remote.errors import ConfigError, TaskError
from remote.runner import Limits, RunOptions, build_runner
from remote.runner.learner import Learner
from remote.runner.protocols import NoPerson, Person
from remote.studio.screens import ScreenSource


class NeedsYes(TaskError):
    """A sensitive step, and no terminal where the studio runs to ask the person."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__("sensitive: " + "; ".join(reasons),
                         hint="the yes is asked on the terminal where `remote studio` runs, and this studio has "
                              "none: start it in a terminal to do sensitive steps from the page")
        self.reasons = reasons


class Busy(TaskError):
    """Another act is running on the phone."""


class NoPhone(ConfigError):
    """The studio shows a file: there is no phone to act on."""


@dataclass
class ActSettings:
    limits: Limits = field(default_factory=Limits)
    runs_dir: Path | None = Path("runs")
    llm: LLMConfig | None = None
    work_dir: Path = Path("studio-work")           # the draft's crops, where the runner's locator finds them
    device_state: Callable[[], dict[str, Any]] | None = None
    person: Person | None = None       # who answers a sensitive step: the terminal's person; None: nobody can


class Acts:
    """Runs plans on the studio's phone, one at a time."""

    def __init__(self, source: ScreenSource, registry: ModuleRegistry, settings: ActSettings) -> None:
        self.source = source
        self.registry = registry
        self.settings = settings
        self._busy = threading.Lock()

    def run(self, plan: TaskPlan, label: str, *,
            crops: dict[str, tuple[Image.Image, tuple[int, int]]] | None = None) -> dict[str, Any]:
        """Run ``plan``; its result as the page shows it. NeedsYes (a sensitive step and nobody on the
        terminal to ask) / Busy / NoPhone before anything is done."""
        if self.source.device is None:
            raise NoPhone("this studio shows a screenshot file: there is no phone to act on",
                          hint="start it with --device SERIAL or --device sim")
        reasons = [f"step {s.step} ({s.label}): {s.sensitive_reason or 'sensitive'}" for s in plan.steps if s.sensitive]
        if reasons and self.settings.person is None:
            raise NeedsYes(reasons)
        if not self._busy.acquire(blocking=False):
            raise Busy("the phone is busy with another act", hint="wait for it to end")
        try:
            self._stage(crops or {})
            store = LearnedStore(self.settings.work_dir)
            runner = build_runner(self.source.device, llm=self.settings.llm, limits=self.settings.limits,
                                  options=RunOptions(runs_dir=self.settings.runs_dir, module=plan.module),
                                  person=self.settings.person or NoPerson(), registry=self.registry,
                                  device_state=self.settings.device_state, learner=Learner(store, save=False))
            result = runner.run(label, plan=plan)
        finally:
            self.source.acted()
            self._busy.release()
        return outcome(result, part=not plan.success_check and not plan.check_template)

    def direct(self, doing: Callable[[Any], None]) -> None:
        """A key or a swipe of the phone panel, straight to the phone (the gated one beyond loopback), one act at a
        time like the others; the page's screens are stale after it."""
        if self.source.device is None:
            raise NoPhone("this studio shows a file: there is no phone to act on")
        if not self._busy.acquire(blocking=False):
            raise Busy("the phone is busy with another act", hint="wait for it to end")
        try:
            doing(self.source.device)
        finally:
            self.source.acted()
            self._busy.release()

    def _stage(self, crops: dict[str, tuple[Image.Image, tuple[int, int]]]) -> None:
        images = self.settings.work_dir / "images"
        images.mkdir(parents=True, exist_ok=True)
        for name, (image, size) in crops.items():
            if not (images / f"{name}.png").exists():
                save_crop(image, images / f"{name}.png", list(size))


def outcome(result: TaskResult, *, part: bool = False) -> dict[str, Any]:
    """A run's result for the page: status, each step (tier, box, tap point, verdict), the record. A ``part`` of
    a template (a step, steps up to one before the end: no final check to decide) is judged by its steps: done
    when every step succeeded, whatever the runner says of a task without a final check."""
    final = result.final_check
    status = result.status.value
    if part:
        done = bool(result.step_results) and all(sr.status in (StepStatus.SUCCESS, StepStatus.SKIPPED)
                                                        for sr in result.step_results)
        status = TaskStatus.SUCCESS.value if done else status if status != TaskStatus.SUCCESS.value else \
            TaskStatus.FAILED.value
        final = None
    return {"status": status, "part": part, "exit_code": int(result.exit_code), "error": result.error_message,
            "steps": [step_outcome(sr) for sr in result.step_results],
            "final_check": final.to_dict() if final is not None else None, "record": result.record_dir,
            "seconds": round(result.total_time, 2), "model_calls": result.model_usage.calls}


def step_outcome(sr: StepResult) -> dict[str, Any]:
    loc, verdict = sr.locate_result, sr.verify_result
    el = loc.element if loc is not None else None
    return {"step": sr.step.step, "label": sr.step.label, "status": sr.status.value,
            "failure": sr.failure.value if sr.failure else None, "error": sr.error_message,
            "tier": loc.method_used if loc is not None and loc.success else "",
            "target": loc.matched_ref if loc is not None else "", "box": list(el.bbox) if el else None,
            "tap": list(sr.tap_point) if sr.tap_point else None,
            "verdict": verdict.outcome.value if verdict is not None else None,
            "changed": verdict.screen_changed if verdict is not None else None, "notes": list(sr.notes)}
