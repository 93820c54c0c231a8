"""TaskRunner: route -> plan (template first, model when none fits) -> run each step -> check -> record.

The loop is bounded (steps, seconds, model calls and tokens) and only
orchestrates: routing is ModuleRegistry's, planning the handler's or Planner's,
one step StepRunner's, recording RunRecorder's. Ctrl-C stops between actions
with status ABORTED, and the record is written whatever happened.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from remote.apps import AppModule, ModuleRegistry
from remote.config import LLMConfig
from remote.core.locate.assets import AssetsManager
from remote.core.locate.hybrid_locator import HybridLocator
from remote.core.record.recorder import RunRecorder
from remote.errors import (
    BudgetExceeded,
    ConfigError,
    DeviceError,
    LocateError,
    ModelError,
    RemoteError,
    TaskError,
)
from remote.records import (
    LocateStrategy,
    ModelUsage,
    StepResult,
    StepStatus,
    TaskPlan,
    TaskResult,
    TaskStatus,
)
from remote.runner.live_screen import LiveScreen
from remote.runner.step_runner import StepEnv, StepRunner

logger = logging.getLogger(__name__)
MAX_REPLANS = 2


class Interrupted(TaskError):
    """Ctrl-C: the task stops between actions."""


@dataclass
class RunOptions:
    max_model_calls: int = 20
    max_tokens: int = 200_000
    dry_run: bool = False
    yes: bool = False
    module: str | None = None
    runs_dir: str | Path | None = "runs"
    record: bool = True


class TaskRunner:
    """``TaskRunner(adb, LLMConfig.from_env()).run("给张三发微信消息说你好") -> TaskResult``."""

    def __init__(self, adb: Any, llm_config: LLMConfig | None = None, assets_dir: str | Path | None = None,
                 temp_dir: str | Path | None = None, strategy: LocateStrategy | str = LocateStrategy.OPENCV_FIRST,
                 max_steps: int = 30, max_seconds: float = 300, confirm: Callable[..., Any] | None = None, *,
                 options: RunOptions | None = None, registry: ModuleRegistry | None = None,
                 take_over: Callable[[str], bool] | None = None, listener: Any = None,
                 device_state: Callable[[], dict] | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        self.adb = adb
        self.llm_config = llm_config if llm_config is not None and llm_config.configured else None
        self.assets_dir = assets_dir
        self.temp_dir = temp_dir
        self.strategy = LocateStrategy(strategy)
        self.max_steps, self.max_seconds = max_steps, max_seconds
        self.confirm, self.take_over = confirm, take_over
        self.options = options or RunOptions()
        self.registry = registry or ModuleRegistry()
        self.listener = listener
        self.device_state = device_state
        self.sleep = sleep
        self.usage = ModelUsage()
        self._stop = threading.Event()
        self._model: Any = None

    # ------------------------------------------------------------------ public
    def run_simple(self, task: str) -> bool:
        return self.run(task).success

    def run(self, task: str) -> TaskResult:
        started = time.monotonic()
        self.usage = ModelUsage()
        self._stop.clear()
        result = TaskResult(status=TaskStatus.RUNNING, task=task, model_usage=self.usage)
        recorder = self._recorder(task)
        meta: dict[str, Any] = {}
        previous = self._install_sigint()
        try:
            module, score = self._route(task)
            result.module = module.name
            meta["route_score"] = score
            steps = self._build(module)
            plan = self._plan(task, module, steps)
            result.plan = plan
            self._notify("on_plan", plan)
            self._execute(task, plan, steps, result, recorder, started)
        except Interrupted as exc:
            result.status, result.error_message = TaskStatus.ABORTED, str(exc)
        except KeyboardInterrupt:
            result.status, result.error_message = TaskStatus.ABORTED, "interrupted (Ctrl-C)"
        except BudgetExceeded as exc:
            result.status, result.error_message, result.error_type = TaskStatus.BUDGET_EXCEEDED, str(exc), \
                type(exc).__name__
        except (TaskError, ConfigError, DeviceError, ModelError, LocateError, RemoteError) as exc:
            result.status, result.error_message, result.error_type = TaskStatus.FAILED, str(exc), type(exc).__name__
            if isinstance(exc, ModelError) and exc.raw:
                meta["model_reply"] = exc.raw[:4000]
        finally:
            self._restore_sigint(previous)
            result.total_time = time.monotonic() - started
            result.model_usage = self.usage
            if recorder is not None:
                result.record_dir = str(self._write(recorder, result, meta))
            self._notify("on_finish", result)
        return result

    # ------------------------------------------------------------------ set-up
    def _route(self, task: str) -> tuple[AppModule, float]:
        if self.options.module:
            return self.registry.get(self.options.module), 1.0
        return self.registry.route(task)

    def _build(self, module: AppModule) -> StepRunner:
        # The routed module's images first; the others' too, since a model plan may cross apps.
        others = [m.path for m in self.registry.modules.values() if m is not module]
        assets = AssetsManager(self.assets_dir, module_dirs=[module.path, *others])
        vision, planner_model = None, None
        if self.llm_config is not None and self.strategy is not LocateStrategy.OPENCV_ONLY:
            from remote.ai.budget import BudgetedModel
            from remote.ai.llm import LLMClient
            from remote.ai.vision_agent import VisionAgent

            self._model = BudgetedModel(LLMClient(self.llm_config, self.usage),
                                        max_calls=self.options.max_model_calls, max_tokens=self.options.max_tokens)
            planner_model = self._model
            if self.llm_config.supports_vision:
                vision = VisionAgent(self.llm_config, client=self._model, assets=assets)
        from remote.ai.verifier import Verifier

        verifier = Verifier(self.llm_config, client=self._model, usage=self.usage)
        locator = HybridLocator(adb=self.adb, assets=assets, vision=vision, strategy=self.strategy,
                                fixed_points=module.fixed_points, learn_from_vision=True)
        self._assets = assets
        self._planner_model = planner_model
        env = StepEnv(adb=self.adb, locator=locator, verifier=verifier, vision=vision, module=module,
                      confirm=self.confirm, take_over=self.take_over, sleep=self.sleep,
                      dry_run=self.options.dry_run, yes=self.options.yes,
                      modules_by_package={m.package: m for m in self.registry.modules.values() if m.package})
        return StepRunner(env)

    def _planner(self) -> Any:
        if self._planner_model is None:
            return None
        from remote.ai.planner import Planner

        return Planner(self.llm_config, client=self._planner_model, assets=self._assets)

    def _plan(self, task: str, module: AppModule, steps: StepRunner) -> TaskPlan:
        plan = self.registry.handler(module).plan(task)
        if plan is not None:
            return plan
        planner = self._planner()
        if planner is None:
            if self.llm_config is None:
                raise ConfigError(f"no task template of module {module.name!r} fits {task!r} and no model is "
                                  "configured to plan it",
                                  hint="see `python -m remote modules` for the templates, or set LLM_PROVIDER and "
                                       "its key (README: using a model)")
            raise ConfigError("planning needs a model but --strategy opencv_only forbids model calls")
        screen = steps.capture()
        plan = planner.plan(task, screen.pil, history=None, module=module, hierarchy=self._xml_for_text_model(screen))
        plan.module = module.name
        return _mark_sensitive(plan, module)

    # ------------------------------------------------------------------ the loop
    def _execute(self, task: str, plan: TaskPlan, runner: StepRunner, result: TaskResult,
                 recorder: RunRecorder | None, started: float) -> None:
        queue = deque(plan.steps)
        screen: LiveScreen | None = None
        replans = 0
        executed: list[StepResult] = []
        while queue:
            self._check_limits(len(result.step_results), started)
            step = queue.popleft()
            step = replace(step, step=len(result.step_results) + 1)
            self._notify("on_step_start", step, len(result.step_results) + len(queue) + 1)
            sr, screen = runner.run(step, screen, self.usage)
            result.step_results.append(sr)
            if recorder is not None:
                recorder.record_step(sr, sr.screenshot_before, sr.screenshot_after)
            self._notify("on_step_end", sr)
            if sr.status is not StepStatus.FAILED:
                executed.append(sr)
                continue
            if "abort" in sr.notes:
                raise Interrupted(sr.error_message)
            planner = self._planner() if not self.options.dry_run else None
            if planner is None or replans >= MAX_REPLANS:
                result.status = TaskStatus.FAILED
                result.error_message = f"step {sr.step.step} ({sr.step.action.value} {sr.step.target_ref or ''}) " \
                                       f"failed: {sr.error_message}"
                return
            replans += 1
            current = runner.capture()
            new_plan = _mark_sensitive(planner.replan(task, current.pil, sr.step, sr.error_message, executed,
                                                      module=runner.env.module,
                                                      hierarchy=self._xml_for_text_model(current)), runner.env.module)
            plan.analysis.setdefault("replans", []).append({"after_step": sr.step.step, "reason": sr.error_message,
                                                           "steps": [s.to_dict() for s in new_plan.steps]})
            queue = deque(new_plan.steps)
            screen = current
        result.status, result.error_message = self._final_check(plan, runner, screen)

    def _xml_for_text_model(self, screen: LiveScreen) -> str | None:
        """A text-only model plans from the UI tree's texts; a vision model gets the screenshot instead."""
        if self.llm_config is None or self.llm_config.supports_vision and not screen.secure:
            return None
        return screen.xml if screen.tree() is not None else None

    def _final_check(self, plan: TaskPlan, runner: StepRunner, screen: LiveScreen | None) -> tuple[TaskStatus, str]:
        check = plan.success_check or {}
        if not check or self.options.dry_run:
            return TaskStatus.SUCCESS, ""
        if "app" in check:
            package = self.adb.current_app().get("package", "")
            if package != check["app"]:
                return TaskStatus.FAILED, f"expected {check['app']} in front, found {package or 'nothing'}"
        if "text" in check:
            screen = screen if screen is not None and not screen.secure else runner.capture()
            tree = screen.tree()
            if tree is None or not tree.find_by_text(str(check["text"])):
                return TaskStatus.FAILED, f"{check['text']!r} is not on the final screen"
        return TaskStatus.SUCCESS, ""

    def _check_limits(self, done: int, started: float) -> None:
        if self._stop.is_set():
            raise Interrupted("interrupted (Ctrl-C) between actions")
        if done >= self.max_steps:
            raise TaskError(f"step cap reached ({self.max_steps} steps)", hint="raise --max-steps")
        if time.monotonic() - started > self.max_seconds:
            raise TaskError(f"time cap reached ({self.max_seconds:.0f} s)", hint="raise --max-seconds")

    # ------------------------------------------------------------------ plumbing
    def _notify(self, name: str, *args: Any) -> None:
        fn = getattr(self.listener, name, None)
        if fn is not None:
            fn(*args)

    def _recorder(self, task: str) -> RunRecorder | None:
        if not self.options.record or not self.options.runs_dir:
            return None
        scrub = self._scrub
        return RunRecorder(self.options.runs_dir, task, scrub=scrub)

    def _scrub(self, text: str) -> str:
        key = self.llm_config.api_key if self.llm_config is not None else ""
        return text.replace(key, "***") if key and text else text

    def _write(self, recorder: RunRecorder, result: TaskResult, meta: dict[str, Any]) -> Path:
        meta = dict(meta)
        if result.error_type:
            meta["error_type"] = result.error_type
        meta["llm"] = self.llm_config.redacted() if self.llm_config is not None else None
        meta["strategy"] = self.strategy.value
        meta["dry_run"] = self.options.dry_run
        try:
            meta["device"] = {"serial": getattr(self.adb, "serial", ""), "size": list(self.adb.window_size())}
        except RemoteError as exc:
            meta["device"] = {"serial": getattr(self.adb, "serial", ""), "error": str(exc)}
        if self.device_state is not None:
            meta["device_state"] = self.device_state()
        return recorder.write(result, meta)

    def _install_sigint(self) -> Any:
        if threading.current_thread() is not threading.main_thread():
            return None

        def handler(signum: int, frame: Any) -> None:
            if self._stop.is_set():
                raise KeyboardInterrupt  # a second Ctrl-C stops at once
            self._stop.set()
            logger.warning("Ctrl-C: stopping after the current action (press again to stop now)")

        return signal.signal(signal.SIGINT, handler)

    @staticmethod
    def _restore_sigint(previous: Any) -> None:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _mark_sensitive(plan: TaskPlan, module: AppModule) -> TaskPlan:
    """A model's steps get the module's sensitivity rules: the model cannot opt a payment out of confirmation."""
    for step in plan.steps:
        step.sensitive = step.sensitive or module.is_sensitive(step)
    return plan
