"""One step, from look to verdict: locate (through the ``Aimer``), act, verify.

The error policy (smolagents'): our bugs and device failures raise; the world's
surprises (target not found, ambiguous, nothing happened, a popup, an app that is
not installed) become facts on the StepResult (``status``, ``failure``, ``abort``),
which the task loop turns into retry / replan / failure.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from remote.core.locate.screen import Screen
from remote.core.locate.tree_facts import already_selected, switch_state
from remote.core.plan import sensitivity
from remote.core.plan.actions import (
    BackToHome,
    Finish,
    InputText,
    LaunchApp,
    LongPress,
    Swipe,
    TakeOver,
    Tap,
)
from remote.core.plan.execution_strategy import classify, wait_after_ms
from remote.core.records import (
    BlockerType,
    ExecutionLevel,
    FailureReason,
    LocateFailure,
    LocateResult,
    ModelUsage,
    StepOutcome,
    StepPlan,
    StepResult,
    StepStatus,
    SuggestionAction,
    VerifyResult,
)
from remote.errors import ActionError
from remote.runner.actions import BLIND, Actor
from remote.runner.aiming import BLOCKER_DISMISSALS, LOADING_POLL_S, LOADING_WAITS, Aimer, needs_tree
from remote.runner.navigation import Navigator
from remote.runner.tools import AppMissing, StepTools, fail

logger = logging.getLogger(__name__)
NO_CHANGE_LIMIT = 3
OPENED_BY_TAPS = (BlockerType.DIALOG, BlockerType.POPUP)   # what a tap itself may open (ads and spinners: never)
T = TypeVar("T")
LOCATE_FAILURES = {LocateFailure.AMBIGUOUS: FailureReason.AMBIGUOUS,
                   LocateFailure.NOT_INTERACTABLE: FailureReason.NOT_INTERACTABLE,
                   LocateFailure.UNAVAILABLE: FailureReason.CONFIG}


class StepRunner:
    def __init__(self, tools: StepTools) -> None:
        self.tools = tools
        self.actor = Actor(tools)
        self.aimer = Aimer(tools, self.actor)
        self.navigator = Navigator(tools, self.aimer)

    def capture(self, *, tree: bool = True) -> Screen:
        return self.tools.capture.screen(tree=tree)

    # ------------------------------------------------------------------ the step
    def run(self, step: StepPlan, screen: Screen | None, usage: ModelUsage) -> tuple[StepResult, Screen | None]:
        level = classify(step)
        sr = StepResult(step=step, status=StepStatus.RUNNING, start_time=time.time(), level=int(level))
        before_usage = usage.snapshot()
        try:
            if step.wait_before:
                self.tools.clock.sleep(step.wait_before / 1000)
            if step.sensitive and not self._confirm_sensitive(step, sr):
                return sr, screen
            screen = self._dispatch(step, level, sr, screen)
        except AppMissing as exc:
            # a package the phone lacks is final; a name not found on the launcher may be no app at all
            fail(sr, FailureReason.APP_MISSING, exc.message, abort=exc.final)
            sr.notes.append(exc.hint)
            screen = None
        except ActionError as exc:   # an impossible argument at run time (a point off this screen)
            fail(sr, FailureReason.INVALID_PLAN, exc.message)
            screen = None
        finally:
            sr.end_time = time.time()
            sr.model_usage = usage.since(before_usage)
        return sr, screen

    def _dispatch(self, step: StepPlan, level: ExecutionLevel, sr: StepResult,
                  screen: Screen | None) -> Screen | None:
        args = step.args
        if isinstance(args, TakeOver):
            return self._take_over(args, sr)
        if isinstance(args, BackToHome):
            return self.navigator.back_to_home(step, sr)
        if isinstance(args, Finish):
            if args.success:
                sr.status = StepStatus.SUCCESS
            else:
                fail(sr, FailureReason.GAVE_UP, f"the plan gives up: {args.message or 'no reason given'}",
                     abort=True)
            return screen
        if isinstance(args, LaunchApp):
            return self._launch(step, args, level, sr)
        if isinstance(args, BLIND) and not step.targets:
            if not self.tools.dry_run:
                self._timed(sr, "act", self.actor.act, step)
                self._wait(step, level, sr)
            sr.status = StepStatus.SUCCESS
            return None  # the screen is unknown now; the next step that looks captures
        if isinstance(args, Swipe) and not step.targets:
            return self._swipe(step, args, level, sr, screen)
        if isinstance(args, InputText) and not step.targets:
            if not self.tools.dry_run and not self._timed(sr, "act", self._type, args):
                fail(sr, FailureReason.TEXT_NOT_TYPED, "the text did not arrive in the field")
            else:
                sr.status = StepStatus.SUCCESS
            return None
        return self._targeted(step, level, sr, screen)

    # ------------------------------------------------------------------ untargeted actions
    def _wait(self, step: StepPlan, level: ExecutionLevel, sr: StepResult) -> None:
        ms = wait_after_ms(step, level)
        if ms:
            self.tools.clock.sleep(ms / 1000)
            sr.timings["wait"] = sr.timings.get("wait", 0) + ms

    def _type(self, args: InputText) -> bool:
        self.tools.locator.note_typed(args.text)   # even if the read-back fails, some of it may be in the field
        return self.tools.device.input_text(args.text, clear=args.clear, verify=True)

    @staticmethod
    def _timed(sr: StepResult, phase: str, fn: Callable[..., T], *args: object, **kwargs: object) -> T:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            sr.timings[phase] = round(sr.timings.get(phase, 0) + (time.perf_counter() - t0) * 1000, 1)

    def _launch(self, step: StepPlan, args: LaunchApp, level: ExecutionLevel, sr: StepResult) -> Screen | None:
        apps = self.tools.apps
        if self.tools.dry_run:
            package = args.package or (apps.package_for(args.name) if args.name else None)
            if package is not None:
                apps.require_installed(package, args.name)
                sr.notes.append(f"{package} is installed")
            else:
                sr.notes.append(f"{args.name} will be looked for on the launcher")
            sr.status = StepStatus.SUCCESS
            return None
        if self._timed(sr, "act", self.actor.launch, args) is None:
            return self.navigator.launch_from_launcher(args.name or "", sr)
        self._wait(step, level, sr)
        sr.status = StepStatus.SUCCESS
        return None

    def _swipe(self, step: StepPlan, args: Swipe, level: ExecutionLevel, sr: StepResult,
               screen: Screen | None) -> Screen | None:
        if self.tools.dry_run:
            sr.status = StepStatus.SUCCESS
            return screen
        before = screen or self._timed(sr, "capture", self.capture, tree=False)
        self._timed(sr, "act", self.actor.swipe, args)
        self._wait(step, level, sr)
        after = self._timed(sr, "capture", self.capture)
        ok, why = self.tools.checks.quick_check(before.pil, after.pil, step.success_condition or "")
        sr.verify_result = VerifyResult(ok, 0.8 if ok else 0.6, screen_changed=ok, change_description=why,
                                        outcome=StepOutcome.SUCCEEDED if ok else StepOutcome.NO_CHANGE,
                                        method="pixel")
        # A swipe at the end of a list changes nothing and is not an error.
        sr.status = StepStatus.SUCCESS
        sr.screenshot_before, sr.screenshot_after = before, after
        return after

    # ------------------------------------------------------------------ targeted actions
    def _targeted(self, step: StepPlan, level: ExecutionLevel, sr: StepResult,
                  screen: Screen | None) -> Screen | None:
        if self.tools.vision is None and all(t.startswith("dynamic:") for t in step.targets):
            fail(sr, FailureReason.CONFIG, f"{step.target_ref} is found only by a vision model, and none is "
                 "configured (set LLM_PROVIDER and its key: docs/models.md)", abort=True)
            return screen
        no_change = 0
        fallback_used = False
        for attempt in range(step.retry + 1):
            self.tools.clock.check()
            sr.retry_count = attempt
            before = screen or self._timed(sr, "capture", self.capture, tree=needs_tree(step))
            screen = None
            if attempt or needs_tree(step):
                # The tree is at hand (or a tap was swallowed): clear popups before aiming.
                before = self.aimer.clear_blockers(before, sr, keep=tuple(step.targets))
            loc, before = self._timed(sr, "locate", self.aimer.locate, step, before, sr)
            sr.locate_result, sr.screenshot_before = loc, before
            if not loc.success or loc.element is None:
                reason = LOCATE_FAILURES.get(loc.failure or LocateFailure.NOT_FOUND, FailureReason.NOT_FOUND)
                fail(sr, reason, loc.error or f"{step.target_ref} not found")
                return before
            if self.aimer.anchors_missing(step, before):
                fail(sr, FailureReason.WRONG_PAGE, f"{loc.matched_ref} is there, but not the screen this step "
                     f"expects: none of {', '.join(step.anchors)} is on it")
                return before
            point = loc.element.center
            sr.tap_point = point
            toggled = self._toggle_state(step, before, loc)
            if toggled is not None and isinstance(step.args, Tap) and toggled == step.args.toggle:
                sr.status = StepStatus.SUCCESS
                sr.notes.append(f"already {'on' if toggled else 'off'}: nothing to tap")
                return before
            if self.tools.dry_run:
                sr.status = StepStatus.SUCCESS
                sr.notes.append("dry run: located, not touched")
                return before
            if not self._confirm_found(step, before, point, sr):
                return before
            ok = self._timed(sr, "act", self._act_at, step, point)
            self._wait(step, level, sr)
            after = self._timed(sr, "capture", self.capture)
            after, verdict = self._timed(sr, "verify", self._settle, step, level, before, after, loc, ok, sr)
            sr.screenshot_after, sr.verify_result = after, verdict
            if verdict.verified or verdict.outcome is StepOutcome.UNKNOWN and verdict.suggestion is SuggestionAction.CONTINUE:
                sr.status = StepStatus.SUCCESS
                return after
            if verdict.outcome is StepOutcome.NO_CHANGE and already_selected(before, loc):
                sr.status = StepStatus.SUCCESS
                sr.notes.append("already selected: tapping it changes nothing")
                return after
            if verdict.outcome is not StepOutcome.NO_CHANGE:
                reason = FailureReason.TEXT_NOT_TYPED if isinstance(step.args, InputText) else FailureReason.WRONG_PAGE
                fail(sr, reason, verdict.suggestion_detail or verdict.change_description)
                return after
            no_change += 1
            if no_change >= NO_CHANGE_LIMIT or attempt == step.retry:
                if step.fallback is not None and not fallback_used:
                    fallback_used = True
                    self.aimer.run_fallback(step.fallback, sr)
                    continue
                fail(sr, FailureReason.NO_CHANGE, f"no visible change after {no_change} tries of {step.action.value}")
                if sr.verify_result is not None:
                    sr.verify_result.suggestion = SuggestionAction.REPLAN
                return after
            screen = after
        if sr.status is not StepStatus.FAILED:
            fail(sr, FailureReason.NO_CHANGE, sr.error_message or f"step did not succeed in {step.retry + 1} tries")
        return None

    def _settle(self, step: StepPlan, level: ExecutionLevel, before: Screen, after: Screen, loc: LocateResult,
                acted: bool, sr: StepResult) -> tuple[Screen, VerifyResult]:
        """Verify; something that came up over the result (a spinner, an ad) is settled, then judged again.

        A dialog that our own tap opened (none was there before it) is the step's result, not something in
        the way: dismissing it would undo the step ("turn on notification access" opens that dialog).
        """
        verdict = self._verify(step, level, before, after, loc, acted)
        for _ in range(BLOCKER_DISMISSALS + LOADING_WAITS):
            if verdict.blocker is None:
                break
            if verdict.blocker.type in OPENED_BY_TAPS and self._no_blocker(before):
                return after, VerifyResult(True, 0.6, screen_changed=True, outcome=StepOutcome.SUCCEEDED,
                                           method="tree", current_state=verdict.blocker.description,
                                           change_description=f"the tap opened a dialog: "
                                                              f"{verdict.blocker.description}"[:200])
            if verdict.blocker.type is BlockerType.LOADING:
                self.tools.clock.sleep(LOADING_POLL_S)
            elif not self.aimer.dismiss(verdict.blocker, after, sr):
                break
            after = self.capture()
            verdict = self._verify(step, level, before, after, loc, acted)
        return after, verdict

    def _no_blocker(self, screen: Screen) -> bool:
        tree = screen.tree()
        return tree is not None and self.tools.checks.detect_blocker(screen.pil, tree, use_model=False) is None

    def _act_at(self, step: StepPlan, point: tuple[int, int]) -> bool:
        device, args = self.tools.device, step.args
        if isinstance(args, LongPress):
            device.long_press(*point, args.duration_ms)
            return True
        device.tap(*point)
        if isinstance(args, InputText):
            self.tools.clock.sleep(0.15)  # let the field take focus before typing
            return self._type(args)
        return True

    def _verify(self, step: StepPlan, level: ExecutionLevel, before: Screen, after: Screen,
                loc: LocateResult, acted: bool) -> VerifyResult:
        args, checks = step.args, self.tools.checks
        if isinstance(args, InputText):
            return VerifyResult(acted, 0.95 if acted else 0.2, matches_expected=acted, screen_changed=True,
                                outcome=StepOutcome.SUCCEEDED if acted else StepOutcome.NO_CHANGE, method="readback",
                                change_description="the field reads back the typed text" if acted
                                else "the field does not show the typed text")
        if isinstance(args, Tap) and args.toggle is not None and loc.element is not None:
            tree = after.tree()
            state = switch_state(tree.nodes if tree is not None else (), loc.element.bbox)
            ok = state is not None and state == args.toggle
            return VerifyResult(ok, 0.95 if ok else 0.5, matches_expected=ok, screen_changed=True, method="tree",
                                outcome=StepOutcome.SUCCEEDED if ok else StepOutcome.NO_CHANGE,
                                change_description=f"the switch is {'on' if state else 'off'}")
        if step.verify_ref:
            found = self.tools.locator.locate(step.verify_ref, after)
            if found.success and found.element is not None:
                return VerifyResult(True, found.element.confidence, matches_expected=True, screen_changed=True,
                                    outcome=StepOutcome.SUCCEEDED, method=f"locate:{found.method_used}",
                                    change_description=f"{step.verify_ref} is on the new screen")
        stay = isinstance(args, Tap) and args.stay_in_app
        verdict = checks.classify(before.pil, after.pil, hierarchy_before=before.tree() if before.tree_taken else None,
                                  hierarchy_after=after.tree() if level >= ExecutionLevel.LOCATE_AND_EXECUTE
                                  else None, expected=step.success_condition,
                                  expected_package=self.tools.module_package if stay else None)
        if (level is ExecutionLevel.FULL_AI and step.success_condition and verdict.outcome is StepOutcome.UNKNOWN
                and checks.has_model):
            return checks.verify_with_description(after.pil, step.success_condition, before.pil,
                                                  hierarchy=after.tree())
        return verdict

    def _toggle_state(self, step: StepPlan, screen: Screen, loc: LocateResult) -> bool | None:
        if not isinstance(step.args, Tap) or step.args.toggle is None or loc.element is None:
            return None
        tree = screen.tree()
        return switch_state(tree.nodes if tree is not None else (), loc.element.bbox)

    # ------------------------------------------------------------------ people
    def _confirm_sensitive(self, step: StepPlan, sr: StepResult) -> bool:
        if self.tools.yes or self.tools.dry_run:
            return True
        what = f"{step.action.value} {step.target_ref or ''}".strip()
        why = step.sensitive_reason or "declared sensitive"
        question = f"Step {step.step} is sensitive ({what}: {why}). Go ahead?"
        if self.tools.person.confirm(question):
            sr.notes.append("confirmed by the person")
            return True
        fail(sr, FailureReason.NOT_CONFIRMED, f"sensitive step not confirmed ({why}); use --yes to allow it",
             abort=True)
        return False

    def _confirm_found(self, step: StepPlan, screen: Screen, point: tuple[int, int], sr: StepResult) -> bool:
        """A model's ``dynamic:`` target, now found: what it is decides whether a person must say yes."""
        tree = screen.tree()
        reason = sensitivity.found_reason(step, tree.label_at(point) if tree is not None else None,
                                          self.tools.sensitive_words)
        if not reason or step.sensitive:
            return True
        step.sensitive, step.sensitive_reason = True, reason
        return self._confirm_sensitive(step, sr)

    def _take_over(self, args: TakeOver, sr: StepResult) -> Screen | None:
        if self.tools.dry_run:
            sr.status = StepStatus.SUCCESS
            return None
        if self.tools.person.take_over(args.message):
            sr.status = StepStatus.SUCCESS
            sr.notes.append("the person took over and handed back")
        else:
            fail(sr, FailureReason.NO_PERSON, f"needs a person ({args.message}) and nobody took over", abort=True)
        return None
