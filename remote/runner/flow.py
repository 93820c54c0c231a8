"""Steps that look, wait, branch, repeat and read (``core/plan/flow.py``), and the ``when`` of any step.

The task runner hands a step here when it is one of those kinds, has a ``when``, or names a value only
the run knows (``scope.py``); every other step goes straight to the StepRunner. A block's steps (repeat,
retry, run) come back through :meth:`Flow.run` one by one: each is recorded as a step of its own under
its block (``parent``), numbered after it, and counts against ``--max-steps`` and the run's clock. The
steps that only look (a ``when``, waits, scrolls, reads) are ``flow_looks.Looks``'s. Each kind returns how
it ended (an :class:`Ended` value and the screen after it), which :meth:`Flow.run` writes onto the step's
record once, as ``StepRunner.run`` does. Bounds here: a repeat at max, a retry at times, sub-tasks at
``MAX_DEPTH``.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import assert_never

from remote.apps import ModuleRegistry
from remote.apps.base import build_plan
from remote.core.locate.screen import Screen
from remote.core.plan.actions import ArgsError
from remote.core.plan.flow import (
    MAX_DEPTH,
    Assert,
    Extract,
    FlowArgs,
    Repeat,
    Retry,
    RunTask,
    ScrollUntil,
    WaitUntil,
    is_flow,
)
from remote.core.records import (
    FailureReason,
    Look,
    ModelUsage,
    StepPlan,
    StepResult,
    StepStatus,
    TaskPlan,
    TaskResult,
    TaskStatus,
)
from remote.errors import ConfigError
from remote.runner.final_check import FinalChecker
from remote.runner.flow_looks import Looks
from remote.runner.looking import see
from remote.runner.outcome import Ended, StepEnd
from remote.runner.protocols import Listener
from remote.runner.scope import Scope
from remote.runner.step_runner import StepRunner

# Failures another try cannot mend: nobody allowed it, nobody is there, the plan gave up, the setup is wrong.
FINAL = (FailureReason.NOT_CONFIRMED, FailureReason.NO_PERSON, FailureReason.GAVE_UP, FailureReason.CONFIG,
         FailureReason.APP_MISSING, FailureReason.INVALID_PLAN)


@dataclass
class Hooks:
    """What the task runner lends a block: announce a step, record a finished one, check the run's caps."""

    start: Callable[[StepPlan], None]
    emit: Callable[[StepResult], None]
    check: Callable[[], None]

    @classmethod
    def of(cls, result: TaskResult, record: Callable[[StepResult], None], listener: Listener,
           check_limits: Callable[[int], None]) -> Hooks:
        """A block's step is one of the run's steps: counted among those planned, recorded, announced."""
        def emit(sr: StepResult) -> None:
            result.step_results.append(sr)
            result.steps_planned += 1
            record(sr)

        return cls(start=lambda step: listener.on_step_start(step, result.steps_planned), emit=emit,
                   check=lambda: check_limits(len(result.step_results)))


class Flow:
    def __init__(self, steps: StepRunner, registry: ModuleRegistry, checker: FinalChecker, scope: Scope,
                 hooks: Hooks) -> None:
        self.steps, self.tools = steps, steps.tools
        self.registry, self.checker, self.scope, self.hooks = registry, checker, scope, hooks
        self.looks = Looks(steps)
        self._next = 0

    def handles(self, step: StepPlan) -> bool:
        return is_flow(step.action.value) or step.when is not None or self.scope.needs_binding(step)

    # ------------------------------------------------------------------ one step
    def run(self, step: StepPlan, screen: Screen | None, usage: ModelUsage) -> tuple[StepResult, Screen | None]:
        """Bind the step's values, decide its ``when``, then run it (an action through the StepRunner)."""
        if step.parent == 0:
            self._next = step.step + 1
        sr = StepResult(step=step, status=StepStatus.RUNNING, start_time=time.time())
        before = usage.snapshot()
        try:
            if self.tools.dry_run:
                ended = Ended(StepStatus.NOT_CHECKED, note="not run in a dry run: it looks at the live screen")
            else:
                sr.step = step = self.scope.bind(step)
                stop, screen = self.looks.when(step, screen, sr, self.scope)
                if stop is None and not is_flow(step.action.value):
                    return self._act(step, screen, usage, sr)
                ended, screen = (stop, screen) if stop is not None else self._kind(step, screen, usage, sr)
        except ArgsError as exc:
            ended = Ended.failed(FailureReason.INVALID_PLAN, f"step {step.step}: {'; '.join(exc.problems)}"[:400])
        except ConfigError as exc:
            ended = Ended.failed(FailureReason.CONFIG, exc.message + (f" ({exc.hint})" if exc.hint else ""),
                                 abort=True)
        ended.record(sr)
        sr.end_time = time.time()
        sr.model_usage = usage.since(before)
        return sr, screen

    def _act(self, step: StepPlan, screen: Screen | None, usage: ModelUsage,
             sr: StepResult) -> tuple[StepResult, Screen | None]:
        inner, screen = self.steps.run(step, screen, usage)
        inner.start_time = sr.start_time
        inner.notes[:0], inner.looks[:0], inner.look_screens[:0] = sr.notes, sr.looks, sr.look_screens
        return inner, screen

    def _kind(self, step: StepPlan, screen: Screen | None, usage: ModelUsage, sr: StepResult) -> StepEnd:
        args = step.args
        if step.wait_before:
            self.tools.clock.sleep(step.wait_before / 1000)
        if not isinstance(args, FlowArgs):
            raise TypeError(f"{step.action.value} is an action: the step runner runs it")
        match args:   # one case per flow kind (mypy's assert_never names a kind added without one)
            case Assert() | WaitUntil():
                return self.looks.poll(step, args, screen, sr)
            case ScrollUntil():
                return self.looks.scroll(step, args, screen, sr)
            case Extract():
                return self.looks.extract(step, args, screen, sr, self.scope)
            case RunTask():
                return self._run_task(step, args, screen, usage, sr)
            case Repeat():
                return self._repeat(step, args, screen, usage, sr)
            case Retry():
                return self._retry(step, args, screen, usage, sr)
            case _:
                assert_never(args)

    # ------------------------------------------------------------------ blocks
    def _block(self, parent: StepPlan, children: Sequence[StepPlan], screen: Screen | None,
               usage: ModelUsage) -> tuple[StepResult | None, Screen | None]:
        """Run a block's steps in order; the first that fails ends it (and is returned)."""
        for child in children:
            self.hooks.check()
            child = replace(child, step=self._next, parent=parent.step)
            self._next += 1
            self.hooks.start(child)
            sr, screen = self.run(child, screen, usage) if self.handles(child) else \
                self.steps.run(child, screen, usage)
            self.hooks.emit(sr)
            if sr.status is StepStatus.FAILED:
                return sr, screen
        return None, screen

    @staticmethod
    def _failed(failed: StepResult, where: str = "") -> Ended:
        """A block ends as its first failed step did (its reason, its abort), saying which step and why."""
        return Ended.failed(failed.failure or FailureReason.INTERNAL, f"step {failed.step.step} ({failed.step.label}) "
                            f"failed{where}: {failed.error_message}"[:500], abort=failed.abort)

    def _run_task(self, step: StepPlan, args: RunTask, screen: Screen | None, usage: ModelUsage,
                  sr: StepResult) -> StepEnd:
        if args.task is None:
            failed, screen = self._block(step, step.steps, screen, usage)
            return self._done(failed, screen, f"{len(step.steps)} steps")
        if self.scope.depth + 1 >= MAX_DEPTH:
            return Ended.failed(FailureReason.INVALID_PLAN, f"sub-tasks nest deeper than {MAX_DEPTH} "
                                f"(run {args.task})", abort=True), screen
        plan, package = self._plan(args)
        outer = self.scope
        self.scope = outer.child(plan)
        self.scope.package = package
        try:
            failed, screen = self._block(step, tuple(plan.steps), screen, usage)
            check = self.scope.check(plan, plan.success_check)
        finally:
            self.scope = outer
        if failed is not None or not check:
            return self._done(failed, screen, f"{plan.module}.{args.task}: {len(plan.steps)} steps")
        shot = self.steps.capture()
        verdict = self.checker.check(check, shot)
        sr.screenshot_before = shot
        if verdict.passed is not True:
            return Ended.failed(FailureReason.ASSERTION, f"{plan.module}.{args.task} ran, but its success_check "
                                f"did not hold: {verdict.summary}"[:500]), shot
        return self._done(None, shot, f"{plan.module}.{args.task}: its check passed ({verdict.summary})")

    def _plan(self, args: RunTask) -> tuple[TaskPlan, str]:
        module = self.registry.get(args.module or self.scope.module)
        template = next((t for t in module.templates if t.name == args.task), None)
        if template is None:
            names = [t.name for t in module.templates]
            close = difflib.get_close_matches(args.task or "", names, n=1)
            raise ConfigError(f"run: module {module.name} has no task {args.task!r}",
                              hint=f"did you mean {close[0]!r}?" if close else f"its tasks: {', '.join(names)}")
        return build_plan(module, template, dict(args.slots)), module.package

    def _done(self, failed: StepResult | None, screen: Screen | None, what: str) -> StepEnd:
        """A block's ending: as its failed step, else done (``what`` it did, for the record)."""
        return (self._failed(failed) if failed is not None else Ended.ok(what[:300])), screen

    def _repeat(self, step: StepPlan, args: Repeat, screen: Screen | None, usage: ModelUsage,
                sr: StepResult) -> StepEnd:
        targets = args.while_visible or args.until_visible
        watched = " | ".join(targets)
        rounds, why = 0, ""
        while rounds < args.max:
            if watched:
                screen = self.looks.screen_with_tree(screen)
                seen = see(self.tools.locator, screen, targets)
                self.looks.look(sr, Look("visible", watched, seen.found, seen.evidence, seen.method), screen)
                if bool(seen.found) != bool(args.while_visible):
                    why = f"{watched} {'is no longer' if args.while_visible else 'is'} on the screen"
                    break
            failed, screen = self._block(step, step.steps, screen, usage)
            if failed is not None:
                return self._failed(failed, f" in round {rounds + 1}"), screen
            rounds += 1
        else:
            why = f"{args.times} times, as asked" if args.times else f"stopped at max: {args.max} rounds"
            if watched:
                screen = self.looks.screen_with_tree(None)
                seen = see(self.tools.locator, screen, targets)
                self.looks.look(sr, Look("visible", watched, seen.found, seen.evidence, seen.method), screen)
                why += f"; {watched} {'is' if seen.found else 'is not'} on the screen"
        return self._done(None, screen, f"{rounds} round{'s' if rounds != 1 else ''}: {why}")

    def _retry(self, step: StepPlan, args: Retry, screen: Screen | None, usage: ModelUsage,
               sr: StepResult) -> StepEnd:
        failed: StepResult | None = None
        for attempt in range(1, args.times + 1):
            failed, screen = self._block(step, step.steps, screen, usage)
            if failed is None:
                return self._done(None, screen, f"succeeded on try {attempt} of {args.times}")
            sr.notes.append(f"try {attempt} failed: step {failed.step.step}: {failed.error_message}"[:300])
            if failed.failure in FINAL:
                break
            screen = None
        assert failed is not None
        return self._failed(failed, f" on each of {attempt} tries"), screen

    # ------------------------------------------------------------------ the answer
    def answer(self, result: TaskResult, plan: TaskPlan) -> None:
        """A question task's answer, once its final check passed: typed, or the run fails saying what is missing."""
        if result.status is not TaskStatus.SUCCESS or not plan.answer or self.tools.dry_run:
            return
        try:
            result.answer = self.scope.answer(plan.answer)
        except ConfigError as exc:
            result.status, result.failure, result.error_message = TaskStatus.FAILED, FailureReason.NOT_READ, \
                exc.message

