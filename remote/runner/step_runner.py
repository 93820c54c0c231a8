"""One step, from look to verdict: what the step does is decided in one place (``_dispatch``), each way through
returns how it ended (:class:`~remote.runner.outcome.Ended`), and ``run`` writes that onto the record once.

The error policy (smolagents'): our bugs and device failures raise; the world's
surprises (target not found, ambiguous, nothing happened, a popup, an app that is
not installed) are endings (``status``, ``failure``, ``abort``), which the task loop
turns into retry / replan / failure.

Collaborators: the ``Aimer`` (locating, popups, fallbacks), the ``Judge`` (the screen after an action and
its verdict), the ``Navigator`` (home, the launcher), ``TargetedStep`` (a step with a target on the screen),
the ``Typist`` (typing and its read-back) and ``Consent`` (the person's yes).
"""

from __future__ import annotations

import logging
import time
from typing import assert_never

from remote.core.locate.screen import Screen
from remote.core.plan import sensitivity
from remote.core.plan.actions import (
    BackToHome,
    Call,
    Finish,
    GoHome,
    InputText,
    LaunchApp,
    LongPress,
    OpenUrl,
    PressKey,
    Swipe,
    TakeOver,
    Tap,
    Wait,
)
from remote.core.plan.execution_strategy import classify, wait_after_ms
from remote.core.plan.flow import Assert, Extract, Repeat, Retry, RunTask, ScrollUntil, WaitUntil
from remote.core.records import (
    ExecutionLevel,
    FailureReason,
    ModelUsage,
    StepOutcome,
    StepPlan,
    StepResult,
    StepStatus,
    VerifyResult,
)
from remote.errors import ActionError, DumpFailed
from remote.runner import readback
from remote.runner.actions import Actor
from remote.runner.aiming import Aimer, needs_tree
from remote.runner.navigation import Navigator
from remote.runner.outcome import Ended, StepEnd
from remote.runner.people import Consent
from remote.runner.targeted import TargetedStep, Typist
from remote.runner.tools import AppMissing, StepTools
from remote.runner.verdicts import Judge, timing

logger = logging.getLogger(__name__)


class StepRunner:
    def __init__(self, tools: StepTools) -> None:
        self.tools = tools
        self.actor = Actor(tools)
        self.aimer = Aimer(tools, self.actor)
        self.navigator = Navigator(tools, self.aimer)
        self.judge = Judge(tools, self.aimer)
        self.typist = Typist(tools)
        self.consent = Consent(tools)
        self.targeted = TargetedStep(tools, self.aimer, self.judge, self.typist, self.consent)
        self.upcoming: StepPlan | None = None   # the plan's next step, when the task loop knows it

    def _next_looks_at_the_tree(self) -> bool:
        step = self.upcoming
        return step is not None and (isinstance(step.args, BackToHome) or needs_tree(step))

    def capture(self, *, tree: bool = True) -> Screen:
        return self.tools.capture.screen(tree=tree)

    # ------------------------------------------------------------------ the step
    def run(self, step: StepPlan, screen: Screen | None, usage: ModelUsage) -> tuple[StepResult, Screen | None]:
        """Run one step; its record, with how it ended written once, and the screen after it when known."""
        level = classify(step)
        sr = StepResult(step=step, status=StepStatus.RUNNING, start_time=time.time(), level=int(level))
        before_usage = usage.snapshot()
        try:
            ended, screen = self._guarded(step, level, sr, screen)
        finally:
            sr.end_time = time.time()
            sr.model_usage = usage.since(before_usage)
        ended.record(sr)
        return sr, screen

    def _guarded(self, step: StepPlan, level: ExecutionLevel, sr: StepResult, screen: Screen | None) -> StepEnd:
        """The step's wait, its yes, then what it does; the world's refusals as endings."""
        try:
            if step.wait_before:
                self.tools.clock.sleep(step.wait_before / 1000)
            # decided here again, on the step as it runs (its values filled in), whatever door it came by
            sensitivity.mark(step, self.tools.sensitive_words)
            refused = self.consent.ask(step, sr) if step.sensitive else None
            if refused is not None:
                return refused, screen
            return self._dispatch(step, level, sr, screen)
        except AppMissing as exc:
            # a package the phone lacks is final; a name not found on the launcher may be no app at all
            return Ended.failed(FailureReason.APP_MISSING, exc.message, abort=exc.final, note=exc.hint), None
        except ActionError as exc:   # an impossible argument at run time (a point off this screen)
            return Ended.failed(FailureReason.INVALID_PLAN, exc.message), None
        except DumpFailed as exc:    # no UI tree and no other way to read the field: this step, not the task
            reason = FailureReason.TEXT_NOT_TYPED if isinstance(step.args, InputText) else FailureReason.NOT_FOUND
            return Ended.failed(reason, f"{exc.message}; the step could not be checked without it",
                                note=exc.hint), None

    def _dispatch(self, step: StepPlan, level: ExecutionLevel, sr: StepResult, screen: Screen | None) -> StepEnd:
        """What a step does, decided in one place: one case per kind of step (mypy's ``assert_never`` names a
        kind added to ``StepArgs`` without its case here)."""
        args = step.args
        match args:
            case TakeOver():
                return self.consent.take_over(args), None
            case BackToHome():
                return self.navigator.back_to_home(step, sr)
            case Finish():
                return (Ended.ok() if args.success else Ended.failed(
                    FailureReason.GAVE_UP, f"the plan gives up: {args.message or 'no reason given'}", abort=True)), screen
            case LaunchApp():
                return self._launch(step, args, level, sr)
            case OpenUrl() | Call() | GoHome() | Wait() | PressKey():
                return self._targeted(step, level, sr, screen) if step.targets else self._blind(step, level, sr)
            case Swipe():
                return self._targeted(step, level, sr, screen) if step.targets else \
                    self._swipe(step, args, level, sr, screen)
            case InputText():
                return self._targeted(step, level, sr, screen) if step.targets else \
                    self._type_focused(step, args, level, sr, screen)
            case Tap() | LongPress():
                return self._targeted(step, level, sr, screen)
            case Assert() | WaitUntil() | ScrollUntil() | Extract() | RunTask() | Repeat() | Retry():
                # the flow kinds run in the FlowRunner (runner/flow.py), which hands their actions back here
                return Ended.failed(FailureReason.INVALID_PLAN,
                                    f"{step.action.value} is a flow step: the flow runner runs it"), screen
            case _:
                assert_never(args)

    # ------------------------------------------------------------------ steps that need no look
    def _blind(self, step: StepPlan, level: ExecutionLevel, sr: StepResult) -> StepEnd:
        """A link, a call, a key, a wait, home: the screen after it is unknown (the next step that looks
        captures)."""
        if not self.tools.dry_run:
            with timing(sr, "act"):
                self.actor.act(step)
            self._wait(step, level, sr)
        return Ended.ok(), None

    def _wait(self, step: StepPlan, level: ExecutionLevel, sr: StepResult, *, app: str | None = None) -> None:
        """The step's wait; after an app's launch (``app``), ended once its window shows when trees are cheap
        (`Capture.await_drawn`). The time spent is the step's ``wait``."""
        ms = wait_after_ms(step, level)
        if ms:
            started = time.perf_counter()
            if app is not None:
                self.tools.capture.await_drawn(ms / 1000, self.tools.clock.sleep, app=app,
                                               keep=self._next_looks_at_the_tree())
            else:
                self.tools.clock.sleep(ms / 1000)
            sr.timings["wait"] = sr.timings.get("wait", 0) + round((time.perf_counter() - started) * 1000, 1)

    def _type_focused(self, step: StepPlan, args: InputText, level: ExecutionLevel, sr: StepResult,
                      screen: Screen | None) -> StepEnd:
        """Typing into the focused field: read back, and the screen beside the read-back when there is one."""
        node = readback.field_node(screen)   # the focused field, when the screen at hand has a tree
        if self.tools.dry_run:
            return Ended.ok(), None
        with timing(sr, "act"):
            typed, beside = self.typist.type_with_frame(step, level, args, node)
        if not typed:
            return Ended.failed(FailureReason.TEXT_NOT_TYPED, "the text did not arrive in the field"), None
        return Ended.ok(), self.tools.capture.screen_after_typing(beside)   # its read-back's tree and that frame

    def _launch(self, step: StepPlan, args: LaunchApp, level: ExecutionLevel, sr: StepResult) -> StepEnd:
        apps = self.tools.apps
        if self.tools.dry_run:
            package = args.package or (apps.package_for(args.name) if args.name else None)
            if package is None:
                return Ended.ok(f"{args.name} will be looked for on the launcher"), None
            apps.require_installed(package, args.name)
            return Ended.ok(f"{package} is installed"), None
        with timing(sr, "act"):
            launched = self.actor.launch(args)
        if launched is None:
            return self.navigator.launch_from_launcher(args.name or "", sr)
        if self._next_looks_at_the_tree():
            self.tools.capture.prefetch()   # the app's first screen is dumped while the launch's wait runs
        self._wait(step, level, sr, app=launched)
        return Ended.ok(), None

    def _swipe(self, step: StepPlan, args: Swipe, level: ExecutionLevel, sr: StepResult,
               screen: Screen | None) -> StepEnd:
        if self.tools.dry_run:
            return Ended.ok(), screen
        with timing(sr, "capture"):
            before = screen or self.capture(tree=False)
            before.take_frame()   # compared on pixels with the screen after (a frame taken when read: now)
        with timing(sr, "act"):
            self.actor.swipe(args)
        after = self.judge.screen_after(step, level, sr)
        ok, why = self.tools.checks.quick_check(before.pil, after.pil, step.success_condition or "")
        sr.verify_result = VerifyResult(ok, 0.8 if ok else 0.6, screen_changed=ok, change_description=why,
                                        outcome=StepOutcome.SUCCEEDED if ok else StepOutcome.NO_CHANGE,
                                        method="pixel")
        sr.screenshot_before, sr.screenshot_after = before, after
        return Ended.ok(), after   # a swipe at the end of a list changes nothing and is not an error

    # ------------------------------------------------------------------ steps with a target
    def _targeted(self, step: StepPlan, level: ExecutionLevel, sr: StepResult, screen: Screen | None) -> StepEnd:
        return self.targeted.run(step, level, sr, screen, self.upcoming)
