"""Acting on the phone from the page: steps run through the runner, with every gate a run has.

"run step", "run from here", ``POST /api/act`` and each recorded action become a
plan of the module (``draft.plan_of`` / ``Draft.plan``) that ``TaskRunner.run``
runs as given: the same locating, acting, verifying, popups cleared, limits
(steps, seconds, model calls), final check (when the plan runs to the end) and
run record as ``remote run``. Sensitive steps (the module's words, calls, deep
links, deletions: ``build_plan`` marks them) need a yes on the page first: an act
that holds one is refused with the question, and the page asks and sends it
again with ``"confirm": true``. When the studio serves beyond loopback the
phone is the allow list's ``GatedDevice``. One act at a time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from remote.apps import ModuleRegistry
from remote.apps.learned import LearnedStore
from remote.apps.tasks_file import save_crop
from remote.config import LLMConfig
from remote.core.records import StepResult, TaskPlan, TaskResult, TaskStatus
from remote.errors import ConfigError, TaskError
from remote.runner import Limits, RunOptions, build_runner
from remote.runner.learner import Learner
from remote.studio.screens import ScreenSource


class NeedsYes(TaskError):
    """A sensitive step, and the page has not said yes to it."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__("sensitive: " + "; ".join(reasons),
                         hint="confirm on the page (or send the same request with \"confirm\": true)")
        self.reasons = reasons


class Busy(TaskError):
    """Another act is running on the phone."""


class NoPhone(ConfigError):
    """The studio shows a file: there is no phone to act on."""


class PagePerson:
    """The person at the page: the yes they gave for this act, nothing else (no take-over from a page)."""

    def __init__(self, yes: bool) -> None:
        self.yes = yes

    def confirm(self, question: str) -> bool:
        return self.yes

    def choose(self, question: str, options: Sequence[str]) -> int | None:
        return None

    def take_over(self, message: str) -> bool:
        return False


@dataclass
class ActSettings:
    limits: Limits = field(default_factory=Limits)
    runs_dir: Path | None = Path("runs")
    llm: LLMConfig | None = None
    work_dir: Path = Path("studio-work")           # the draft's crops, where the runner's locator finds them
    device_state: Callable[[], dict[str, Any]] | None = None


class Acts:
    """Runs plans on the studio's phone, one at a time."""

    def __init__(self, source: ScreenSource, registry: ModuleRegistry, settings: ActSettings) -> None:
        self.source = source
        self.registry = registry
        self.settings = settings
        self._busy = threading.Lock()

    def run(self, plan: TaskPlan, label: str, *, confirmed: bool = False,
            crops: dict[str, tuple[Image.Image, tuple[int, int]]] | None = None) -> dict[str, Any]:
        """Run ``plan``; its result as the page shows it. NeedsYes / Busy / NoPhone before anything is done."""
        if self.source.device is None:
            raise NoPhone("this studio shows a screenshot file: there is no phone to act on",
                          hint="start it with --device SERIAL or --device sim")
        reasons = [f"step {s.step} ({s.label}): {s.sensitive_reason or 'sensitive'}" for s in plan.steps if s.sensitive]
        if reasons and not confirmed:
            raise NeedsYes(reasons)
        if not self._busy.acquire(blocking=False):
            raise Busy("the phone is busy with another act", hint="wait for it to end")
        try:
            self._stage(crops or {})
            store = LearnedStore(self.settings.work_dir)
            runner = build_runner(self.source.device, llm=self.settings.llm, limits=self.settings.limits,
                                  options=RunOptions(runs_dir=self.settings.runs_dir, module=plan.module),
                                  person=PagePerson(confirmed), registry=self.registry,
                                  device_state=self.settings.device_state, learner=Learner(store, save=False))
            result = runner.run(label, plan=plan)
        finally:
            self.source.acted()
            self._busy.release()
        return outcome(result)

    def _stage(self, crops: dict[str, tuple[Image.Image, tuple[int, int]]]) -> None:
        images = self.settings.work_dir / "images"
        images.mkdir(parents=True, exist_ok=True)
        for name, (image, size) in crops.items():
            if not (images / f"{name}.png").exists():
                save_crop(image, images / f"{name}.png", list(size))


def outcome(result: TaskResult) -> dict[str, Any]:
    """A run's result for the page: status, each step (tier, box, tap point, verdict), the record."""
    final = result.final_check
    # The page runs steps (one act, a recorded step, a range of the draft): steps that all ran and were verified
    # are "success" for it, while the run itself ends `unchecked` when the draft declares no final check (said
    # in "checked": false and the final check's summary, so the author sees the template still needs one).
    stepped = result.status is TaskStatus.UNCHECKED
    return {"status": TaskStatus.SUCCESS.value if stepped else result.status.value, "checked": not stepped,
            "exit_code": 0 if stepped else int(result.exit_code), "error": result.error_message,
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
