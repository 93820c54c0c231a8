"""TaskRunner: route -> plan (template first, model when none fits) -> run each step -> final check -> record.

The loop is bounded (steps, seconds, model calls and tokens) and only
orchestrates: routing is ModuleRegistry's, planning the handler's or Planner's,
one step StepRunner's, the final check FinalChecker's, recording RunRecorder's.
A task is SUCCESS only when its final check passed; a dry run that found its plan
valid is PLANNED (nothing was done). Ctrl-C or SIGTERM stops the run within a
second (status ABORTED). The record exists from the start (status running, rewritten
as each step ends, so even ``kill -9`` leaves a truthful one) and is written
whatever happened; a disk that refuses it is reported on the result
(``record_error``), never in place of the outcome.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from remote.apps import AppModule, ModuleRegistry
from remote.core.device.protocol import CheapTree, Device
from remote.core.locate.assets import AssetsManager
from remote.core.locate.hybrid_locator import HybridLocator
from remote.core.locate.screen import Screen
from remote.core.plan.actions import Finish, InputText, LaunchApp, Wait
from remote.core.record.recorder import RunRecorder
from remote.core.records import (
    FailureReason,
    FinalCheckResult,
    LocateStrategy,
    ModelUsage,
    StepResult,
    StepStatus,
    TaskPlan,
    TaskResult,
    TaskStatus,
)
from remote.errors import (
    ModelError,
    RemoteError,
    TaskError,
)
from remote.runner.agent_loop import AgentLoop, AgentRun
from remote.runner.capture import wake
from remote.runner.clock import Clock, Interrupted, stopped_by
from remote.runner.final_check import FinalChecker, without_check
from remote.runner.flow import Flow, Hooks
from remote.runner.frames import needs_pixels_before
from remote.runner.learner import Learner
from remote.runner.models import Budget, Models, ModelSource
from remote.runner.planning import Planning
from remote.runner.protocols import Listener, NoPerson, Person, QuietListener
from remote.runner.run_record import DeviceState, RunRecord
from remote.runner.scope import Scope
from remote.runner.step_loop import LoopState, Queued, RunContext
from remote.runner.step_runner import StepRunner
from remote.runner.stop_signals import StopSignals
from remote.runner.tools import Apps, Capture, StepTools

logger = logging.getLogger(__name__)
FAILURE_SCREEN_AFTER = (FailureReason.NOT_FOUND, FailureReason.AMBIGUOUS, FailureReason.NO_CHANGE,
                        FailureReason.WRONG_PAGE)


@dataclass(frozen=True)
class Limits:
    max_steps: int = 30
    max_seconds: float = 300.0
    max_replans: int = 2
    budget: Budget = field(default_factory=Budget)


@dataclass(frozen=True)
class RunOptions:
    strategy: LocateStrategy = LocateStrategy.OPENCV_FIRST
    dry_run: bool = False
    yes: bool = False
    module: str | None = None
    runs_dir: Path | None = Path("runs")
    assets_dir: Path | None = None
    env: tuple[tuple[str, str], ...] = ()   # -e KEY=VALUE: slots the sentence does not give (the sentence wins)


class StepCapReached(TaskError):
    """The run reached its ``--max-steps``."""

    reason = FailureReason.STEP_CAP


class TaskRunner:
    """``build_runner(adb, llm=LLMConfig.from_env()).run("给张三发微信消息说你好") -> TaskResult``."""

    def __init__(self, device: Device, models: ModelSource, registry: ModuleRegistry, *, limits: Limits = Limits(),
                 options: RunOptions = RunOptions(), person: Person | None = None, listener: Listener | None = None,
                 device_state: DeviceState | None = None, clock: Clock | None = None,
                 learner: Learner | None = None) -> None:
        self.device, self.models, self.registry = device, models, registry
        self.learner = learner or Learner(None)
        self.limits, self.options = limits, options
        self.person = person or NoPerson()
        self.listener = listener or QuietListener()
        self.device_state = device_state
        self.clock = clock or Clock(limits.max_seconds)
        self.signals = StopSignals(self.clock)
        self.planning = Planning(registry, models, self.listener)
        self.record = self._record_of(None, {})   # the record of the run in progress (runner/run_record.py)

    # ------------------------------------------------------------------ public
    def run(self, task: str, plan: TaskPlan | None = None) -> TaskResult:
        """Route, plan and run ``task``; given a ``plan`` (the studio's steps), run that plan in its module
        instead of routing and planning, with the same gates, limits, final check and record."""
        self.clock.restart()
        usage = ModelUsage()
        result = TaskResult(status=TaskStatus.RUNNING, task=task, model_usage=usage)
        recorder = RunRecorder(self.options.runs_dir, task, scrub=self.models.scrub) if self.options.runs_dir else None
        if isinstance(self.device, CheapTree) and not self.options.dry_run:
            self.device.warm_session()   # the tree server starts, facts are asked, beside the record, wake, plan
        meta: dict[str, Any] = {}
        self.record = self._record_of(recorder, meta)
        self.signals.install()
        try:
            self.record.snapshot(result)   # run.json exists (status running) before the phone is touched
            self._run(task, result, usage, meta, recorder, plan)
        except Interrupted as exc:   # the clock says what stopped it (Ctrl-C, SIGTERM, the batch's stop)
            self._end(result, TaskStatus.ABORTED, FailureReason.INTERRUPTED, exc.message)
        except KeyboardInterrupt as exc:
            self._end(result, TaskStatus.ABORTED, FailureReason.INTERRUPTED,
                      self.signals.reason if self.signals.received else stopped_by(exc))
        except BaseException as exc:
            self._fail(result, exc, meta)
            if not isinstance(exc, RemoteError):
                raise   # our bug: the record is written below, then the CLI reports it
        finally:
            self.signals.hold()   # a second Ctrl-C must not cut the record short
            try:
                result.total_time = self.clock.elapsed()
                self.record.final(result)
            finally:
                self.signals.restore()
            self.listener.on_finish(result)
        return result

    def _record_of(self, recorder: RunRecorder | None, meta: dict[str, Any]) -> RunRecord:
        def facts() -> dict[str, Any]:
            return {"llm": self.models.redacted(), "strategy": self.options.strategy.value,
                    "dry_run": self.options.dry_run}
        return RunRecord(recorder, meta, device=self.device, clock=self.clock, facts=facts,
                         device_state=self.device_state)

    # ------------------------------------------------------------------ set-up
    def _run(self, task: str, result: TaskResult, usage: ModelUsage, meta: dict[str, Any],
             recorder: RunRecorder | None, given: TaskPlan | None = None) -> None:
        wake(self.device, self.listener.on_note)   # a sleeping or locked phone first (ScreenLocked: a PIN is set)
        module, score, learned = self._route(task, given)
        result.module, meta["route_score"] = module.name, score
        # The routed module's images first; the others' too, since a model plan may cross apps.
        assets = AssetsManager(self.options.assets_dir,
                               module_dirs=[module.path, *[m.path for m in self.registry.modules.values()
                                                           if m is not module], *self.learner.folders])
        models = self.models.start(usage, self.limits.budget, assets, self.options.strategy)
        tools = self._tools(module, models, assets)
        steps = StepRunner(tools)
        try:
            if models.agent is not None and learned is None and given is None and not self.options.dry_run:
                template = self.registry.handler(module).plan(task)   # runner/agent_loop.py
                if template is None or models.agent_always:
                    return self._drive(task, template, models, steps, FinalChecker(tools), result, recorder)
            plan = given or (self.learner.plan(*learned) if learned is not None
                             else self.planning.plan(task, module, models, steps.capture))
            result.plan = plan
            self.listener.on_plan(plan)
            self._expect(plan)
            self._execute(task, module, plan, steps, models, result, recorder, FinalChecker(tools))
        finally:   # a model's (or phone agent's) success is learned; a learned task's replay is counted
            learning = self.learner.finish(task, result, tools.locator, self.registry, stable_ids=module.stable_ids,
                                           record_dir=recorder.dir if recorder is not None else None,
                                           extra={"screen": list(self.device.window_size()), "app": module.package,
                                                  "seconds": round(self.clock.elapsed(), 2)})
            if learning:
                meta["learning"] = result.learning = learning

    def _expect(self, plan: TaskPlan) -> None:
        """Tell a phone that asks ahead what the plan will need (the apps it opens, the texts it types)."""
        if isinstance(self.device, CheapTree) and not self.options.dry_run:
            self.device.expect([s.args.package for s in plan.steps if isinstance(s.args, LaunchApp) and s.args.package],
                               [s.args.text for s in plan.steps if isinstance(s.args, InputText)])

    def _route(self, task: str, given: TaskPlan | None) -> tuple[AppModule, float, Any]:
        """The module that does the task (given, named by --module, or routed by the sentence), its score, and
        the learned task that replays it (None when none fits, in a dry run, or for a given plan)."""
        name = given.module if given is not None else self.options.module
        module, score = (self.registry.get(name), 1.0) if name else self.registry.route(task)
        for name, problems in self.registry.broken.items():
            self.listener.on_note(f"module {name} skipped: {problems[0]}")
        for problem in self.registry.load_warnings:
            self.listener.on_note(problem.said())   # the listener says "warning:" (once)
        learned = None if self.options.dry_run or given else self.learner.match(task, self.registry, module)
        if learned is None or (self.options.module and learned[0].name != self.options.module):
            return module, score, None
        return learned[0], score, learned

    def _tools(self, module: AppModule, models: Models, assets: AssetsManager) -> StepTools:
        locator = HybridLocator(self.device, assets=assets, vision=models.vision, strategy=self.options.strategy,
                                fixed_points=module.fixed_points, learn_from_vision=True)
        homes = {m.package: m.home_refs for m in self.registry.modules.values() if m.package and m.home_refs}
        apps = Apps(self.device, self.registry.app_packages(), homes)
        capture = Capture(self.device)
        self.record.capture = capture
        return StepTools(device=self.device, locator=locator, checks=models.checks, clock=self.clock,
                         person=self.person, capture=capture, apps=apps, vision=models.vision,
                         dry_run=self.options.dry_run, yes=self.options.yes, module_package=module.package,
                         home_refs=module.home_refs, sensitive_words=module.sensitive)

    # ------------------------------------------------------------------ the loop
    def _execute(self, task: str, module: AppModule, plan: TaskPlan, steps: StepRunner, models: Models,
                 result: TaskResult, recorder: RunRecorder | None, checker: FinalChecker) -> None:
        """The step loop: run the next step; after a failed one, recover (heal, failure screen, the phone agent,
        a new plan) or stop; at the end, the final check on the finished screen."""
        run = RunContext(task, module, plan, steps, models, result, recorder, checker,
                   self._flow(plan, module, steps, checker, result, recorder))
        loop = LoopState(deque(Queued(s, s.step if plan.source == "learned" else None) for s in plan.steps),
                     plan.success_check, plan.success_criteria)
        checker.begin(plan.success_check)   # a clause that compares with the phone as the task began (volume, changed)
        result.steps_planned = len(loop.queue)
        while loop.queue:
            queued, sr = self._next_step(run, loop)
            if queued.learned is not None:
                self.learner.after_step(queued.learned, queued.step, sr, steps.tools.locator)
            if sr.status is not StepStatus.FAILED or self.options.dry_run:
                loop.executed.append(sr)
                continue
            if not self._recover(run, loop, queued, sr):
                return
        self._finish(plan, run.flow.scope.check(plan, loop.check), loop.criteria, plan.failures, steps, checker,
                     result, loop.screen)
        run.flow.answer(result, plan)

    def _next_step(self, run: RunContext, loop: LoopState) -> tuple[Queued, StepResult]:
        """Run the queue's next step (through the flow runner when it looks, waits, branches or reads), record it."""
        result = run.result
        self._check_limits(len(result.step_results))
        queued = loop.queue.popleft()
        step = replace(queued.step, step=len(result.step_results) + 1)
        result.steps_planned = len(result.step_results) + len(loop.queue) + 1
        self.listener.on_step_start(step, result.steps_planned)
        if loop.changed_by:   # --dry-run: the screen after an earlier step is unknown
            sr = StepResult(step=step, status=StepStatus.NOT_CHECKED,
                            notes=[f"not checked (needs the screen after step {loop.changed_by})"])
        else:
            run.steps.upcoming = upcoming = loop.queue[0].step if loop.queue else None
            # the screen after this step is taken with its frame when the next step may compare it on pixels
            # (`remote.runner.frames`); a step of a flow, or before one, always (its looks read what they need)
            run.steps.tools.capture.pixels_wanted = run.flow.handles(step) or \
                (upcoming is not None and run.flow.handles(upcoming)) or needs_pixels_before(upcoming)
            sr, loop.screen = (run.flow.run if run.flow.handles(step) else run.steps.run)(step, loop.screen,
                                                                                       result.model_usage)
            if self.options.dry_run and not isinstance(step.args, Wait | Finish):
                loop.changed_by = step.step
        result.step_results.append(sr)
        self._record(sr, run.recorder, result)
        return queued, sr

    def _recover(self, run: RunContext, loop: LoopState, queued: Queued, sr: StepResult) -> bool:
        """After a failed step, in order: a learned step healed (it runs next), a failure screen the module knows,
        the phone agent, the end of the run, or a new plan. True: the loop goes on."""
        current = run.steps.capture()
        healed = None if queued.learned is None else self.learner.heal(
            queued.learned, queued.step, sr, current, run.models.vision, run.steps.tools.locator)
        if healed is not None:
            loop.queue.appendleft(Queued(healed, queued.learned))
            loop.screen = current
            return True
        if sr.failure in FAILURE_SCREEN_AFTER and self._failure_screen(run.checker, run.plan.failures, current,
                                                                        run.result):
            return False
        if run.models.agent is not None and not sr.abort:   # the phone agent takes over where the plan failed
            self._drive(run.task, None, run.models, run.steps, run.checker, run.result, run.recorder)
            return False
        if sr.abort or run.models.planner is None or loop.replans >= self.limits.max_replans:
            self._stopped_at(run, sr, learned=queued.learned is not None)
            return False
        self._replan(run, loop, sr, current)
        return True

    def _stopped_at(self, run: RunContext, sr: StepResult, *, learned: bool) -> None:
        stopped = sr.failure in (FailureReason.NOT_CONFIRMED, FailureReason.NO_PERSON)
        hint = " (a learned task; with a model configured it is healed or handed over to the planner)" \
            if learned and run.models.planner is None and not sr.abort else ""
        self._end(run.result, TaskStatus.ABORTED if stopped else TaskStatus.FAILED, sr.failure or FailureReason.INTERNAL,
                  f"step {sr.step.step} ({sr.step.label}) failed: {sr.error_message}{hint}")

    def _replan(self, run: RunContext, loop: LoopState, sr: StepResult, current: Screen) -> None:
        """A new plan from the model for the rest of the task, from the screen now; its steps replace the queue
        (and a model plan's final check, the old one)."""
        loop.replans += 1
        self.learner.handed_over()
        new_plan = self.planning.replan(run.task, run.module, run.models, sr, current, loop.executed)
        run.plan.analysis.setdefault("replans", []).append(
            {"after_step": sr.step.step, "reason": sr.error_message, "analysis": new_plan.analysis,
             "steps": [s.to_dict() for s in new_plan.steps], "success_check": new_plan.success_check.to_dict()})
        if run.plan.source != "template" and (new_plan.success_check or new_plan.success_criteria):
            loop.check, loop.criteria = new_plan.success_check, new_plan.success_criteria
        loop.queue, loop.screen = deque(Queued(s) for s in new_plan.steps), current
        run.result.steps_planned = len(run.result.step_results) + len(loop.queue)
        self.listener.on_note(f"replanned after step {sr.step.step} failed: {len(loop.queue)} new step(s), "
                              f"{run.result.steps_planned} in all")

    def _flow(self, plan: TaskPlan, module: AppModule, steps: StepRunner, checker: FinalChecker, result: TaskResult,
              recorder: RunRecorder | None) -> Flow:
        """What runs the steps that look, wait, branch, repeat and read (runner/flow.py), with the run's values."""
        hooks = Hooks.of(result, lambda sr: self._record(sr, recorder, result), self.listener, self._check_limits)
        return Flow(steps, self.registry, checker, Scope.for_plan(plan, env=dict(self.options.env),
                                                                  package=module.package), hooks)

    def _drive(self, task: str, template: TaskPlan | None, models: Models, steps: StepRunner, checker: FinalChecker,
               result: TaskResult, recorder: RunRecorder | None) -> None:
        assert models.agent is not None
        run = AgentRun(steps, checker, self.listener, self.limits.max_steps, recorder)
        AgentLoop(models.agent, run).run(task, template, result, result.model_usage)

    def _failure_screen(self, checker: FinalChecker, failures: Any, screen: Screen, result: TaskResult) -> bool:
        found = checker.failure_screen(failures, screen)
        if found is None:
            return False
        self._end(result, TaskStatus.FAILED, FailureReason.FAILURE_SCREEN, found.says)
        return True

    def _finish(self, plan: TaskPlan, check: Any, criteria: str, failures: Any, steps: StepRunner,
                checker: FinalChecker, result: TaskResult, last: Screen | None = None) -> None:
        if self.options.dry_run:   # nothing was done: the status says so, not "success"
            unchecked = sum(sr.status is StepStatus.NOT_CHECKED for sr in result.step_results)
            self._end(result, TaskStatus.PLANNED, None, "")
            result.final_check = FinalCheckResult(None, [], f"dry run: the plan is valid, nothing was done on the "
                                                  f"phone; {unchecked} step(s) need screens that only the earlier "
                                                  "steps would show", "none")
            return
        # The last step's screen serves when it is still the screen now and only its tree decides (its frame
        # was taken before that dump ended; with the tree server, a tree read now is its own to the letter and
        # is the one judged); otherwise the screen is captured again and judged afresh.
        still = None if any(f.target for f in failures) else steps.tools.capture.last_if_unchanged(last)
        screen = still or steps.capture()
        if self._failure_screen(checker, failures, screen, result):
            return
        final = checker.check(check, screen, criteria)
        if screen is still and not (final.passed and all(i.method in ("tree", "device") for i in final.items)):
            screen = steps.capture()
            if self._failure_screen(checker, failures, screen, result):
                return
            final = checker.check(check, screen, criteria)
        result.final_check = final
        if final.passed is True:
            self._end(result, TaskStatus.SUCCESS, None, "")
        elif final.passed is None and not check and not criteria and plan.source == "template":
            checked, final.summary = without_check(plan, result.step_results)
            self._end(result, TaskStatus.SUCCESS if checked else TaskStatus.UNCHECKED, None, "")
        else:
            self._end(result, TaskStatus.FAILED, FailureReason.FINAL_CHECK, f"final check failed: {final.summary}")

    def _check_limits(self, done: int) -> None:
        self.clock.check()
        if done >= self.limits.max_steps:
            raise StepCapReached(f"step cap reached ({self.limits.max_steps} steps)", hint="raise --max-steps")

    def _record(self, sr: StepResult, recorder: RunRecorder | None, result: TaskResult) -> None:
        if recorder is not None:
            recorder.record_step(sr, sr.screenshot_before, sr.screenshot_after)
            self.record.snapshot(result)   # what a killed run leaves: the steps that ended
        self.listener.on_step_end(sr)

    # ------------------------------------------------------------------ outcomes
    @staticmethod
    def _end(result: TaskResult, status: TaskStatus, failure: FailureReason | None, message: str) -> None:
        result.status, result.failure, result.error_message = status, failure, message

    def _fail(self, result: TaskResult, exc: BaseException, meta: dict[str, Any]) -> None:
        result.error_type = type(exc).__name__
        reason = exc.reason if isinstance(exc, RemoteError) else FailureReason.INTERNAL
        message = str(exc) if reason is not FailureReason.INTERNAL else \
            f"internal error ({type(exc).__name__}: {exc})"
        if isinstance(exc, ModelError) and exc.raw:
            meta["model_reply"] = exc.raw[:4000]
        status = TaskStatus.BUDGET_EXCEEDED if reason is FailureReason.BUDGET else TaskStatus.FAILED
        self._end(result, status, reason, message)
