"""Steps that look, wait, branch, repeat and read (``core/plan/flow.py``), and the ``when`` of any step.

The task runner hands a step here when it is one of those kinds, has a ``when``, or names a value only
the run knows (``scope.py``); every other step goes straight to the StepRunner. A block's steps (repeat,
retry, run) come back through :meth:`Flow.run` one by one: each is recorded as a step of its own under
its block (``parent``), numbered after it, and counts against ``--max-steps`` and the run's clock. A
look never touches the phone (a screenshot and a UI dump, decided by ``looking.py``) and is kept in the
record (``StepResult.looks``) for ``remote replay``. Bounds: a wait ends at its timeout plus one look, a
scroll at max_swipes (or when the list stops moving), a repeat at max, a retry at times, sub-tasks at
``MAX_DEPTH``.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from remote.apps import ModuleRegistry
from remote.apps.base import build_plan
from remote.core.locate.screen import Screen
from remote.core.plan.actions import ArgsError
from remote.core.plan.flow import (
    MAX_DEPTH,
    Assert,
    Condition,
    Extract,
    Repeat,
    Retry,
    RunTask,
    ScrollUntil,
    WaitUntil,
    is_flow,
)
from remote.core.plan.values import version_holds
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
from remote.errors import BudgetExceeded, ConfigError
from remote.runner.final_check import FinalChecker
from remote.runner.looking import OCR_TIERS, Reading, page_of, read, see, shows, switch, value_of
from remote.runner.protocols import Listener
from remote.runner.scope import Scope
from remote.runner.step_runner import StepRunner
from remote.runner.tools import fail

POLL_S = 0.3               # between two looks of a wait or an assert
SCROLL_SETTLE_S = 0.4      # after a swipe, before the next look
FINGER = {"down": "up", "up": "down", "left": "right", "right": "left"}   # the list goes down: the finger up
KEPT_SCREENS = 3           # a step keeps the screens of its last looks only (a repeat may look 50 times)
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
                sr.status = StepStatus.NOT_CHECKED
                sr.notes.append("not run in a dry run: it looks at the live screen")
            else:
                sr.step = step = self.scope.bind(step)
                go, screen = self._when(step, screen, sr)
                if go and not is_flow(step.action.value):
                    return self._act(step, screen, usage, sr)
                if go:
                    screen = self._kind(step, screen, usage, sr)
        except ArgsError as exc:
            fail(sr, FailureReason.INVALID_PLAN, f"step {step.step}: {'; '.join(exc.problems)}"[:400])
        except ConfigError as exc:
            fail(sr, FailureReason.CONFIG, exc.message + (f" ({exc.hint})" if exc.hint else ""), abort=True)
        sr.end_time = time.time()
        sr.model_usage = usage.since(before)
        return sr, screen

    def _act(self, step: StepPlan, screen: Screen | None, usage: ModelUsage,
             sr: StepResult) -> tuple[StepResult, Screen | None]:
        inner, screen = self.steps.run(step, screen, usage)
        inner.start_time = sr.start_time
        inner.notes[:0], inner.looks[:0], inner.look_screens[:0] = sr.notes, sr.looks, sr.look_screens
        return inner, screen

    def _kind(self, step: StepPlan, screen: Screen | None, usage: ModelUsage, sr: StepResult) -> Screen | None:
        args = step.args
        if step.wait_before:
            self.tools.clock.sleep(step.wait_before / 1000)
        if isinstance(args, Assert | WaitUntil):
            return self._poll(step, args, screen, sr)
        if isinstance(args, ScrollUntil):
            return self._scroll(step, args, screen, sr)
        if isinstance(args, Extract):
            return self._extract(step, args, screen, sr)
        if isinstance(args, RunTask):
            return self._run_task(step, args, screen, usage, sr)
        if isinstance(args, Repeat):
            return self._repeat(step, args, screen, usage, sr)
        if isinstance(args, Retry):
            return self._retry(step, args, screen, usage, sr)
        raise TypeError(f"no flow for {type(args).__name__}")

    # ------------------------------------------------------------------ looking
    def _fresh(self, screen: Screen | None) -> Screen:
        """The screen the last step left (when it was taken with its tree), else a new look."""
        return screen if screen is not None and screen.tree_taken else self.steps.capture()

    @staticmethod
    def _look(sr: StepResult, look: Look, screen: Screen | None) -> None:
        sr.looks.append(look)
        sr.look_screens.append(screen if screen is None or screen not in sr.look_screens else None)
        for i in range(max(0, len(sr.look_screens) - KEPT_SCREENS)):
            sr.look_screens[i] = None

    def _when(self, step: StepPlan, screen: Screen | None, sr: StepResult) -> tuple[bool, Screen | None]:
        if step.when is None:
            return True, screen
        held = []
        for condition in step.when.conditions:
            if condition.kind in ("visible", "not_visible", "checked", "not_checked"):
                screen = self._fresh(screen)
            holds, why = self._condition(condition, screen, sr)
            if holds is None:
                fail(sr, FailureReason.NOT_FOUND, f"cannot tell whether {condition.describe()}: {why}")
                return False, screen
            if not holds:
                sr.status = StepStatus.SKIPPED
                sr.notes.append(f"skipped: when {condition.kind}: {condition.value} does not hold ({why})")
                return False, screen
            held.append(f"{condition.kind}: {condition.value} ({why[:80]})")
        sr.notes.append("when " + "; ".join(held))
        return True, screen

    def _condition(self, c: Condition, screen: Screen | None, sr: StepResult) -> tuple[bool | None, str]:
        locator, device = self.tools.locator, self.tools.device
        if screen is not None and c.kind in ("visible", "not_visible", "checked", "not_checked"):
            seen = see(locator, screen, [c.value]) if c.kind.endswith("visible") else switch(locator, screen, [c.value])
            self._look(sr, Look(c.kind, c.value, seen.found, seen.evidence, seen.method), screen)
            wanted = c.kind in ("visible", "checked")
            return (None if seen.found is None else seen.found == wanted), seen.evidence
        if c.kind == "app":
            front = device.current_app().get("package", "")
            holds = front == (self.tools.apps.package_for(c.value) or c.value)
            self._look(sr, Look("app", c.value, holds, f"in front: {front or 'nothing'}", "device"), None)
            return holds, f"in front: {front or 'nothing'}"
        package = self.scope.package or self.tools.module_package
        actual = device.app_version(package) if package else None
        result = version_holds(actual, c.value) if actual else None
        evidence = f"{package} {actual}" if actual else f"the version of {package or 'the app'} could not be read"
        self._look(sr, Look("version", c.value, result, evidence, "device"), None)
        return result, evidence

    def _poll(self, step: StepPlan, args: Assert | WaitUntil, screen: Screen | None, sr: StepResult) -> Screen:
        """Look until the target is (or is not) there, at most ``timeout_ms`` and one more look."""
        clock, kind = self.tools.clock, "visible" if args.visible else "not_visible"
        start, looks = clock.elapsed(), 0
        while True:
            shot = self._fresh(screen) if looks == 0 else self.steps.capture()
            looks += 1
            seen = see(self.tools.locator, shot, step.targets)
            waited = int((clock.elapsed() - start) * 1000)
            if seen.found is args.visible or waited >= args.timeout_ms:
                break
            clock.sleep(min(POLL_S, (args.timeout_ms - waited) / 1000))
        self._look(sr, Look(kind, " | ".join(step.targets), seen.found, seen.evidence, seen.method), shot)
        sr.screenshot_before = shot
        said = f"after {waited} ms, {looks} look{'s' if looks > 1 else ''}"
        if seen.found is args.visible:
            sr.status = StepStatus.SUCCESS
            sr.notes.append(f"{kind} {said}: {seen.evidence}"[:300])
        elif isinstance(args, Assert):
            instead = f"; {shows(shot)}" if args.visible else ", still there"
            fail(sr, FailureReason.ASSERTION, f"{step.action.value}: {seen.evidence}{instead} ({said})"[:500],
                 abort=True)
        else:
            fail(sr, FailureReason.TIMEOUT, f"wait_until {kind} {' | '.join(step.targets)} never came true: "
                 f"timeout {args.timeout_ms} ms, {said}; {seen.evidence}; {shows(shot)}"[:500])
        return shot

    def _scroll(self, step: StepPlan, args: ScrollUntil, screen: Screen | None, sr: StepResult) -> Screen:
        """Swipe until the target shows, at most ``max_swipes`` times, or until the list stops moving."""
        previous: Any = None
        for swipes in range(args.max_swipes + 1):
            shot = self._fresh(screen) if swipes == 0 else self.steps.capture()
            seen = see(self.tools.locator, shot, step.targets)
            page = page_of(shot)
            ended = previous is not None and page == previous
            if seen.found or ended or swipes == args.max_swipes:
                break
            previous = page
            self.tools.device.swipe_direction(FINGER[args.direction], 0.5, 300)
            self.tools.clock.sleep(SCROLL_SETTLE_S)
        self._look(sr, Look("visible", " | ".join(step.targets), seen.found, seen.evidence, seen.method), shot)
        sr.screenshot_before = shot
        what = " | ".join(step.targets)
        if seen.found:
            sr.status = StepStatus.SUCCESS
            sr.notes.append(f"found after {swipes} swipe{'s' if swipes != 1 else ''}: {seen.evidence}"[:300])
        elif ended:
            fail(sr, FailureReason.NOT_FOUND, f"{what} not found: the list stopped moving after {swipes - 1} "
                 f"swipe{'s' if swipes != 2 else ''} {args.direction} (its end); {shows(shot)}"[:500])
        else:
            fail(sr, FailureReason.NOT_FOUND, f"{what} not found after {swipes} swipes {args.direction} "
                 f"(max_swipes {args.max_swipes}); {shows(shot)}"[:500])
        return shot

    def _extract(self, step: StepPlan, args: Extract, screen: Screen | None, sr: StepResult) -> Screen:
        shot = self._fresh(screen)
        reading = read(self.tools.locator, shot, args, step.targets)
        if not reading.texts and reading.checked is None and self.tools.vision is not None \
                and args.source in ("from", "below", "right_of"):
            reading = self._read_with_model(shot, args, step, reading)
        value, error = value_of(reading, args)
        target = " | ".join(step.targets) or args.source
        sr.screenshot_before = shot
        if value is None:
            self._look(sr, Look("extract", target, False, error, reading.method), shot)
            fail(sr, FailureReason.NOT_READ, f"extract {args.name} from {target}: {error}"[:500])
            return shot
        self.scope.variables[args.name] = value
        said = f"the switch is {'on' if value else 'off'}" if reading.checked is not None and args.kind == "bool" \
            else f"read {reading.texts!r}"
        self._look(sr, Look("extract", target, True, said[:200], reading.method, value), shot)
        sr.status = StepStatus.SUCCESS
        sr.notes.append(f"{args.name} = {value!r} (read by {reading.method})"[:300])
        return shot

    def _read_with_model(self, shot: Screen, args: Extract, step: StepPlan, before: Reading) -> Reading:
        """Neither the tree nor OCR found the target: the vision model may find it, and its box is read."""
        try:
            again = read(self.tools.locator, shot, args, step.targets, (*OCR_TIERS, "vision"))
        except BudgetExceeded as exc:
            return Reading(evidence=f"{before.evidence}; the model was not asked: {exc.message}")
        return again if again.texts or again.checked is not None else before

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
    def _failed(sr: StepResult, failed: StepResult, where: str = "") -> None:
        fail(sr, failed.failure or FailureReason.INTERNAL, f"step {failed.step.step} ({failed.step.label}) "
             f"failed{where}: {failed.error_message}"[:500], abort=failed.abort)

    def _run_task(self, step: StepPlan, args: RunTask, screen: Screen | None, usage: ModelUsage,
                  sr: StepResult) -> Screen | None:
        if args.task is None:
            failed, screen = self._block(step, step.steps, screen, usage)
            return self._done(sr, failed, screen, f"{len(step.steps)} steps")
        if self.scope.depth + 1 >= MAX_DEPTH:
            fail(sr, FailureReason.INVALID_PLAN, f"sub-tasks nest deeper than {MAX_DEPTH} (run {args.task})",
                 abort=True)
            return screen
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
            return self._done(sr, failed, screen, f"{plan.module}.{args.task}: {len(plan.steps)} steps")
        shot = self.steps.capture()
        verdict = self.checker.check(check, shot)
        sr.screenshot_before = shot
        if verdict.passed is not True:
            fail(sr, FailureReason.ASSERTION, f"{plan.module}.{args.task} ran, but its success_check did not hold: "
                 f"{verdict.summary}"[:500])
            return shot
        return self._done(sr, None, shot, f"{plan.module}.{args.task}: its check passed ({verdict.summary})")

    def _plan(self, args: RunTask) -> tuple[TaskPlan, str]:
        module = self.registry.get(args.module or self.scope.module)
        template = next((t for t in module.templates if t.name == args.task), None)
        if template is None:
            names = [t.name for t in module.templates]
            close = difflib.get_close_matches(args.task or "", names, n=1)
            raise ConfigError(f"run: module {module.name} has no task {args.task!r}",
                              hint=f"did you mean {close[0]!r}?" if close else f"its tasks: {', '.join(names)}")
        return build_plan(module, template, dict(args.slots)), module.package

    def _done(self, sr: StepResult, failed: StepResult | None, screen: Screen | None, what: str) -> Screen | None:
        if failed is not None:
            self._failed(sr, failed)
        else:
            sr.status = StepStatus.SUCCESS
            sr.notes.append(what[:300])
        return screen

    def _repeat(self, step: StepPlan, args: Repeat, screen: Screen | None, usage: ModelUsage,
                sr: StepResult) -> Screen | None:
        targets = args.while_visible or args.until_visible
        watched = " | ".join(targets)
        rounds, why = 0, ""
        while rounds < args.max:
            if watched:
                screen = self._fresh(screen)
                seen = see(self.tools.locator, screen, targets)
                self._look(sr, Look("visible", watched, seen.found, seen.evidence, seen.method), screen)
                if bool(seen.found) != bool(args.while_visible):
                    why = f"{watched} {'is no longer' if args.while_visible else 'is'} on the screen"
                    break
            failed, screen = self._block(step, step.steps, screen, usage)
            if failed is not None:
                self._failed(sr, failed, f" in round {rounds + 1}")
                return screen
            rounds += 1
        else:
            why = f"{args.times} times, as asked" if args.times else f"stopped at max: {args.max} rounds"
            if watched:
                screen = self._fresh(None)
                seen = see(self.tools.locator, screen, targets)
                self._look(sr, Look("visible", watched, seen.found, seen.evidence, seen.method), screen)
                why += f"; {watched} {'is' if seen.found else 'is not'} on the screen"
        return self._done(sr, None, screen, f"{rounds} round{'s' if rounds != 1 else ''}: {why}")

    def _retry(self, step: StepPlan, args: Retry, screen: Screen | None, usage: ModelUsage,
               sr: StepResult) -> Screen | None:
        failed: StepResult | None = None
        for attempt in range(1, args.times + 1):
            failed, screen = self._block(step, step.steps, screen, usage)
            if failed is None:
                return self._done(sr, None, screen, f"succeeded on try {attempt} of {args.times}")
            sr.notes.append(f"try {attempt} failed: step {failed.step.step}: {failed.error_message}"[:300])
            if failed.failure in FINAL:
                break
            screen = None
        assert failed is not None
        self._failed(sr, failed, f" on each of {attempt} tries")
        return screen

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

