"""One step, from look to verdict: locate (through the ``Aimer``), act, verify (through the ``Judge``).

The error policy (smolagents'): our bugs and device failures raise; the world's
surprises (target not found, ambiguous, nothing happened, a popup, an app that is
not installed) become facts on the StepResult (``status``, ``failure``, ``abort``),
which the task loop turns into retry / replan / failure.
"""

from __future__ import annotations

import logging
import time

from remote.core.locate.screen import Screen
from remote.core.locate.tree_facts import already_selected, switch_state
from remote.core.locate.ui_tree import UINode
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
from remote.errors import ActionError, DumpFailed
from remote.runner import readback
from remote.runner.actions import BLIND, Actor
from remote.runner.aiming import Aimer, needs_tree
from remote.runner.navigation import Navigator
from remote.runner.tools import AppMissing, StepTools, fail
from remote.runner.verdicts import Judge, timing

logger = logging.getLogger(__name__)
NO_CHANGE_LIMIT = 3
LOCATE_FAILURES = {LocateFailure.AMBIGUOUS: FailureReason.AMBIGUOUS,
                   LocateFailure.NOT_INTERACTABLE: FailureReason.NOT_INTERACTABLE,
                   LocateFailure.UNAVAILABLE: FailureReason.CONFIG}


class StepRunner:
    def __init__(self, tools: StepTools) -> None:
        self.tools = tools
        self.actor = Actor(tools)
        self.aimer = Aimer(tools, self.actor)
        self.navigator = Navigator(tools, self.aimer)
        self.judge = Judge(tools, self.aimer)
        self.upcoming: StepPlan | None = None   # the plan's next step, when the task loop knows it

    def _next_looks_at_the_tree(self) -> bool:
        step = self.upcoming
        return step is not None and (isinstance(step.args, BackToHome) or needs_tree(step))

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
            # decided here again, on the step as it runs (its values filled in), whatever door it came by
            sensitivity.mark(step, self.tools.sensitive_words)
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
        except DumpFailed as exc:    # no UI tree and no other way to read the field: this step, not the task
            reason = FailureReason.TEXT_NOT_TYPED if isinstance(step.args, InputText) else FailureReason.NOT_FOUND
            fail(sr, reason, f"{exc.message}; the step could not be checked without it")
            sr.notes.append(exc.hint)
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
                with timing(sr, "act"):
                    self.actor.act(step)
                self._wait(step, level, sr)
            sr.status = StepStatus.SUCCESS
            return None  # the screen is unknown now; the next step that looks captures
        if isinstance(args, Swipe) and not step.targets:
            return self._swipe(step, args, level, sr, screen)
        if isinstance(args, InputText) and not step.targets:
            node = readback.field_node(screen)   # the focused field, when the screen at hand has a tree
            if self.tools.dry_run:
                sr.status = StepStatus.SUCCESS
                return None
            with timing(sr, "act"):
                typed = self._type_beside(step, level, args, node)
            if not typed:
                fail(sr, FailureReason.TEXT_NOT_TYPED, "the text did not arrive in the field")
                return None
            sr.status = StepStatus.SUCCESS
            return self.tools.capture.after_typing()   # its read-back's tree and a frame beside it, else None
        return self._targeted(step, level, sr, screen)

    # ------------------------------------------------------------------ untargeted actions
    def _wait(self, step: StepPlan, level: ExecutionLevel, sr: StepResult) -> None:
        ms = wait_after_ms(step, level)
        if ms:
            self.tools.clock.sleep(ms / 1000)
            sr.timings["wait"] = sr.timings.get("wait", 0) + ms

    def _type_beside(self, step: StepPlan, level: ExecutionLevel, args: InputText, field: UINode | None) -> bool:
        """Type; the frame of the screen after is taken beside the read-back dump (`Capture.beside_read_back`)."""
        return self.tools.capture.beside_read_back(lambda: self._type(args, field), wait_after_ms(step, level) / 1000)

    def _type(self, args: InputText, field: UINode | None = None) -> bool:
        """Type and read back; ``field``: the field's node in a tree at hand (its text before, its box)."""
        self.tools.capture.field_box = field.bounds if field is not None else None
        self.tools.locator.note_typed(args.text)   # even if the read-back fails, some of it may be in the field
        return self.tools.device.input_text(args.text, clear=args.clear, verify=True,
                                            before=readback.field_text(field))

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
        with timing(sr, "act"):
            launched = self.actor.launch(args)
        if launched is None:
            return self.navigator.launch_from_launcher(args.name or "", sr)
        if self._next_looks_at_the_tree():
            self.tools.capture.prefetch()   # the app's first screen is dumped while the launch's wait runs
        self._wait(step, level, sr)
        sr.status = StepStatus.SUCCESS
        return None

    def _swipe(self, step: StepPlan, args: Swipe, level: ExecutionLevel, sr: StepResult,
               screen: Screen | None) -> Screen | None:
        if self.tools.dry_run:
            sr.status = StepStatus.SUCCESS
            return screen
        with timing(sr, "capture"):
            before = screen or self.capture(tree=False)
        with timing(sr, "act"):
            self.actor.swipe(args)
        after = self.judge.settled(step, level, sr)
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
            with timing(sr, "capture"):
                before = screen or self.capture(tree=needs_tree(step))
            screen = None
            if attempt or needs_tree(step):
                # The tree is at hand (or a tap was swallowed): clear popups before aiming.
                before = self.aimer.clear_blockers(before, sr, keep=tuple(step.targets))
            with timing(sr, "locate"):
                loc, before = self.aimer.locate(step, before, sr)
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
            keyboard = self.judge.keyboard_before(step, self.upcoming)
            with timing(sr, "act"):
                ok = self._act_at(step, level, point, readback.field_node(before, loc.element.bbox))
            after, verdict = self.judge.after_tap(step, level, before, loc, ok, sr, keyboard, self.upcoming)
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

    def _act_at(self, step: StepPlan, level: ExecutionLevel, point: tuple[int, int], field: UINode | None = None) -> bool:
        device, args = self.tools.device, step.args
        if isinstance(args, LongPress):
            device.long_press(*point, args.duration_ms)
            return True
        device.tap(*point)
        if isinstance(args, InputText):
            self.tools.clock.sleep(0.15)  # let the field take focus before typing
            return self._type_beside(step, level, args, field)
        return True

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
        """The target, now found: what it is (its label on the screen now) decides whether a person must say
        yes (:func:`remote.core.plan.sensitivity.touched_reason`)."""
        tree = screen.tree()
        reason = sensitivity.touched_reason(step, tree.label_at(point) if tree is not None else None,
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
