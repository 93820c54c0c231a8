"""A step with a target on the screen (tap, long press, typing into a field, a swipe on an element): aim, decide
whether it may be touched, touch it, judge the screen after it; again while nothing changed.

Each piece returns what it decided: :meth:`TargetedStep.run` is the loop of tries, :meth:`_aim` the screen and
what was located on it, :meth:`_before_touch` a reason not to touch (not found, the wrong screen, already in
the state the step would give, a dry run, nobody said yes), :meth:`_touch` the screen after and its verdict,
:meth:`_judged` what that verdict makes of the step. How the step ended is an :class:`Ended` value.
"""

from __future__ import annotations

from remote.core.locate.screen import Screen
from remote.core.locate.tree_facts import already_selected, switch_state
from remote.core.locate.ui_tree import UINode
from remote.core.plan import sensitivity
from remote.core.plan.actions import InputText, LongPress, Tap
from remote.core.plan.execution_strategy import wait_after_ms
from remote.core.records import (
    ExecutionLevel,
    FailureReason,
    LocateFailure,
    LocateResult,
    StepOutcome,
    StepPlan,
    StepResult,
    SuggestionAction,
    VerifyResult,
)
from remote.runner import readback
from remote.runner.aiming import Aimer, needs_tree
from remote.runner.frames import FrameBeside, needs_pixels_before
from remote.runner.outcome import Ended, StepEnd
from remote.runner.people import Consent
from remote.runner.tools import StepTools
from remote.runner.verdicts import Judge, timing

NO_CHANGE_LIMIT = 3


class Typist:
    """Typing with its read-back: the field's box and its text before travel as arguments."""

    def __init__(self, tools: StepTools) -> None:
        self.tools = tools

    def type_with_frame(self, step: StepPlan, level: ExecutionLevel, args: InputText,
                        field: UINode | None) -> tuple[bool, FrameBeside | None]:
        """Type: whether the text reads back, and the frame of the screen after, taken beside the read-back
        dump (`Capture.frame_beside_read_back`), for the caller to hand to the screen after."""
        return self.tools.capture.frame_beside_read_back(lambda: self._type(args, field),
                                                         wait_after_ms(step, level) / 1000)

    def _type(self, args: InputText, field: UINode | None = None) -> bool:
        """Type and read back; ``field``: the field's node in a tree at hand (its text before, its box). When the
        read-back's UI dump fails, the field is read by OCR in that box (else in the focused field's box of the
        last screen that came with a tree)."""
        device = self.tools.device
        reader = readback.ocr_reader(device, field.bounds if field is not None else None, self.tools.capture.last)
        self.tools.locator.note_typed(args.text)   # even if the read-back fails, some of it may be in the field
        return device.input_text(args.text, clear=args.clear, verify=True, before=readback.field_text(field),
                                 field_reader=reader)


class TargetedStep:
    def __init__(self, tools: StepTools, aimer: Aimer, judge: Judge, typist: Typist, consent: Consent) -> None:
        self.tools, self.aimer, self.judge, self.typist, self.consent = tools, aimer, judge, typist, consent

    def run(self, step: StepPlan, level: ExecutionLevel, sr: StepResult, screen: Screen | None,
            upcoming: StepPlan | None) -> StepEnd:
        """Up to ``step.retry + 1`` tries; a try that changed nothing is tried again (the step's fallback once,
        after ``NO_CHANGE_LIMIT`` such tries)."""
        if self.tools.vision is None and all(t.startswith("dynamic:") for t in step.targets):
            return Ended.failed(FailureReason.CONFIG, f"{step.target_ref} is found only by a vision model, and none "
                                "is configured (set LLM_PROVIDER and its key: docs/models.md)", abort=True), screen
        no_change, fallback_used = 0, False
        after: Screen | None = None
        for attempt in range(step.retry + 1):
            self.tools.clock.check()
            sr.retry_count = attempt
            before, loc = self._aim(step, sr, screen, attempt)
            stop = self._before_touch(step, sr, before, loc)
            if stop is not None:
                return stop, before
            assert loc.element is not None   # _before_touch returns an ending when nothing was located
            after, verdict = self._touch(step, level, sr, before, loc, upcoming)
            ended = self._judged(step, before, loc, verdict)
            if ended is not None:
                return ended, after
            no_change += 1
            if no_change >= NO_CHANGE_LIMIT or attempt == step.retry:
                if step.fallback is not None and not fallback_used:
                    fallback_used = True
                    self.aimer.run_fallback(step.fallback, sr)
                    continue
                if sr.verify_result is not None:
                    sr.verify_result.suggestion = SuggestionAction.REPLAN
                return Ended.failed(FailureReason.NO_CHANGE,
                                    f"no visible change after {no_change} tries of {step.action.value}"), after
            screen = after
        return Ended.failed(FailureReason.NO_CHANGE, f"step did not succeed in {step.retry + 1} tries"), None

    def _aim(self, step: StepPlan, sr: StepResult, screen: Screen | None, attempt: int) -> tuple[Screen, LocateResult]:
        """The screen to aim on (popups cleared when its tree is at hand) and what was located on it."""
        with timing(sr, "capture"):
            before = screen or self.tools.capture.screen(tree=needs_tree(step), pixels=needs_pixels_before(step))
        if attempt or needs_tree(step):
            # The tree is at hand (or a tap was swallowed): clear popups before aiming.
            before = self.aimer.clear_blockers(before, sr, keep=tuple(step.targets))
        with timing(sr, "locate"):
            loc, before = self.aimer.locate(step, before, sr)
        sr.locate_result, sr.screenshot_before = loc, before
        return before, loc

    def _before_touch(self, step: StepPlan, sr: StepResult, before: Screen, loc: LocateResult) -> Ended | None:
        """Why the step ends before anything is touched, or None: touch it."""
        if not loc.success or loc.element is None:
            return Ended.failed((loc.failure or LocateFailure.NOT_FOUND).reason, loc.error or f"{step.target_ref} not found")
        if self.aimer.anchors_missing(step, before):
            return Ended.failed(FailureReason.WRONG_PAGE, f"{loc.matched_ref} is there, but not the screen this "
                                f"step expects: none of {', '.join(step.anchors)} is on it")
        point = loc.element.center
        sr.tap_point = point
        toggled = self._toggle_state(step, before, loc)
        if toggled is not None and isinstance(step.args, Tap) and toggled == step.args.toggle:
            return Ended.ok(f"already {'on' if toggled else 'off'}: nothing to tap")
        if self.tools.dry_run:
            return Ended.ok("dry run: located, not touched")
        tree = before.tree()
        touched = sensitivity.touched_reason(step, tree.label_at(point) if tree is not None else None,
                                             self.tools.sensitive_words)
        if touched and not step.sensitive:   # what it touches, on the screen now, decides (once per step)
            step.sensitive, step.sensitive_reason = True, touched
            return self.consent.ask(step, sr)
        return None

    def _touch(self, step: StepPlan, level: ExecutionLevel, sr: StepResult, before: Screen, loc: LocateResult,
               upcoming: StepPlan | None) -> tuple[Screen | None, VerifyResult]:
        assert loc.element is not None
        keyboard = self.judge.keyboard_before(step, upcoming)
        if needs_pixels_before(step):
            with timing(sr, "capture"):
                before.take_frame()   # the verdict may compare it on pixels, after the screen changed
        with timing(sr, "act"):
            ok, beside = self._act_at(step, level, loc.element.center, readback.field_node(before, loc.element.bbox))
        after, verdict = self.judge.after_tap(step, level, before, loc, ok, sr, keyboard, upcoming, beside=beside)
        sr.screenshot_after, sr.verify_result = after, verdict
        return after, verdict

    @staticmethod
    def _judged(step: StepPlan, before: Screen, loc: LocateResult, verdict: VerifyResult) -> Ended | None:
        """What the verdict makes of the step; None: nothing changed, try again."""
        if verdict.verified or verdict.outcome is StepOutcome.UNKNOWN and verdict.suggestion is SuggestionAction.CONTINUE:
            return Ended.ok()
        if verdict.outcome is StepOutcome.NO_CHANGE and already_selected(before, loc):
            return Ended.ok("already selected: tapping it changes nothing")
        if verdict.outcome is not StepOutcome.NO_CHANGE:
            reason = FailureReason.TEXT_NOT_TYPED if isinstance(step.args, InputText) else FailureReason.WRONG_PAGE
            return Ended.failed(reason, verdict.suggestion_detail or verdict.change_description)
        return None

    def _act_at(self, step: StepPlan, level: ExecutionLevel, point: tuple[int, int],
                field: UINode | None = None) -> tuple[bool, FrameBeside | None]:
        """Touch ``point``: whether it acted (typing: the text reads back) and, for typing, the frame taken
        beside its read-back dump."""
        device, args = self.tools.device, step.args
        if isinstance(args, LongPress):
            device.long_press(*point, args.duration_ms)
            return True, None
        device.tap(*point)
        if isinstance(args, InputText):
            self.tools.clock.sleep(0.15)  # let the field take focus before typing
            return self.typist.type_with_frame(step, level, args, field)
        return True, None

    @staticmethod
    def _toggle_state(step: StepPlan, screen: Screen, loc: LocateResult) -> bool | None:
        if not isinstance(step.args, Tap) or step.args.toggle is None or loc.element is None:
            return None
        tree = screen.tree()
        return switch_state(tree.nodes if tree is not None else (), loc.element.bbox)
