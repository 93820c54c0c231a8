"""A step's verdict after its action: the screen after it, and what that screen says of the step.

`Judge.screen_after` takes the screen after an action with its wait run beside the UI dump
(`Capture.after_action`); `Judge.verdict_clearing_blockers` verifies it, waiting out a spinner or closing
what came up over the result; `Judge.verify` is the verdict itself (a typing read-back, a switch's
state, the step's own check, else what the before/after comparison says).

A plain tap that the next step types after (a search entry, a compose box) is judged on a fresh
tree of the screen after it when trees are cheap (a resident tree server: `focus.focus_on_tree`, the
focused field must be the tapped one or one the tap brought; the keyboard, read beside that tree, is only a
further sign). With ``uiautomator dump`` it is checked
without a UI dump when the phone can tell (`Judge.after_tap`): the soft keyboard came up
(``dumpsys input_method``), or the screen changed and the keyboard is up. That is what
the next step needs, and its typing's read-back dump then shows the whole screen; the
wait after the tap is spent getting the keyboard ready for that text. When the phone
cannot tell, the screen is dumped and judged as after any tap.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

from remote.core.device.protocol import CheapTree, KeyboardState
from remote.core.locate.screen import Screen
from remote.core.locate.tree_facts import switch_state
from remote.core.plan.actions import InputText, Tap
from remote.core.plan.execution_strategy import wait_after_ms
from remote.core.records import (
    BlockerType,
    ExecutionLevel,
    LocateResult,
    StepOutcome,
    StepPlan,
    StepResult,
    SuggestionAction,
    VerifyResult,
)
from remote.runner.aiming import BLOCKER_DISMISSALS, LOADING_POLL_S, LOADING_WAITS, Aimer
from remote.runner.focus import focus_on_tree
from remote.runner.frames import FrameBeside
from remote.runner.tools import StepTools

OPENED_BY_TAPS = (BlockerType.DIALOG, BlockerType.POPUP)   # what a tap itself may open (ads and spinners: never)


@contextmanager
def timing(sr: StepResult, phase: str) -> Iterator[None]:
    """``with timing(sr, "act"): ...``: the block's time is added to the step's ``phase`` (milliseconds)."""
    t0 = time.perf_counter()
    try:
        yield
    finally:
        sr.timings[phase] = round(sr.timings.get(phase, 0) + (time.perf_counter() - t0) * 1000, 1)


class Judge:
    def __init__(self, tools: StepTools, aimer: Aimer) -> None:
        self.tools = tools
        self.aimer = aimer

    def screen_after(self, step: StepPlan, level: ExecutionLevel, sr: StepResult, *, tree: bool = True,
                     beside: FrameBeside | None = None) -> Screen:
        """The screen after the step's action: its wait and the frame run beside the UI dump (``tree``);
        ``beside``: the frame typing took beside its read-back dump (`Capture.after_action`)."""
        ms = wait_after_ms(step, level)
        stats = self.tools.capture.stats
        started, waited_before = time.perf_counter(), stats.waited_ms
        screen = self.tools.capture.after_action(ms / 1000, self.tools.clock.sleep, tree=tree, beside=beside)
        # with cheap trees the wait ends once the screen shows the effect (`Capture.await_drawn`): what it took
        waited = (stats.waited_ms - waited_before) or ms
        if waited:
            sr.timings["wait"] = round(sr.timings.get("wait", 0) + waited, 1)
        spent = (time.perf_counter() - started) * 1000
        sr.timings["capture"] = round(sr.timings.get("capture", 0) + max(0.0, spent - waited), 1)
        return screen

    # ------------------------------------------------------------------ a tap the next step types after
    def keyboard_before(self, step: StepPlan, following: StepPlan | None) -> bool | None:
        """Is the soft keyboard up before a plain tap whose next step (``following``) types into the focused
        field? None for any other step, or when the phone does not say."""
        device = self.tools.device
        if not self._types_next(step, following) or not isinstance(device, KeyboardState) or self._tree_is_cheap():
            return None    # with cheap trees the tree judges such a tap (`_tap_by_tree`): the keyboard before is moot
        return device.keyboard_shown()

    @staticmethod
    def _types_next(step: StepPlan, following: StepPlan | None) -> bool:
        """A plain tap whose next step types into the focused field (no target of its own)."""
        args = step.args
        return (type(args) is Tap and args.toggle is None and not args.stay_in_app and not step.verify_ref
                and not step.success_condition and following is not None and isinstance(following.args, InputText)
                and not following.targets)

    def after_tap(self, step: StepPlan, level: ExecutionLevel, before: Screen, loc: LocateResult, acted: bool,
                  sr: StepResult, keyboard: bool | None, following: StepPlan | None, *,
                  beside: FrameBeside | None = None) -> tuple[Screen | None, VerifyResult]:
        """The screen after the action and the step's verdict; ``keyboard`` from `keyboard_before` (the module
        docstring says when no UI dump is needed), ``beside`` the frame typing took beside its read-back."""
        if self._types_next(step, following) and self._tree_is_cheap():
            return self._tap_by_tree(step, level, before, loc, acted, sr, following)
        if keyboard is False:
            self._ready_to_type(step, level, sr, following)
            if self._keyboard_up():
                return None, VerifyResult(True, 0.8, matches_expected=True, screen_changed=True, method="focus",
                                          outcome=StepOutcome.SUCCEEDED, suggestion=SuggestionAction.CONTINUE,
                                          change_description="the soft keyboard came up: a text field has the "
                                                             "focus for the next step's typing")
        if keyboard is None:
            after = self.screen_after(step, level, sr, beside=beside)
        else:
            after = self.screen_after(step, level, sr, tree=False) if keyboard else \
                self.tools.capture.screen(tree=False)
            with timing(sr, "verify"):
                verdict = self._focus_verdict(before, after)
            if verdict is not None:
                return after, verdict
            with timing(sr, "capture"):
                after = self.tools.capture.with_fresh_tree(after)
        with timing(sr, "verify"):
            return self.verdict_clearing_blockers(step, level, before, after, loc, acted, sr)

    def _tree_is_cheap(self) -> bool:
        device = self.tools.device
        return isinstance(device, CheapTree) and device.tree_is_cheap()

    def _tap_by_tree(self, step: StepPlan, level: ExecutionLevel, before: Screen, loc: LocateResult, acted: bool,
                     sr: StepResult, following: StepPlan | None) -> tuple[Screen, VerifyResult]:
        """A tap the next step types after, judged on a fresh tree of the screen after it (`focus_on_tree`);
        the keyboard is only a further sign. A tree that shows no focused field is judged as after any tap."""
        self._ready_to_type(step, level, sr, following)
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="keyboard-read") as pool:
            keyboard = pool.submit(self._keyboard_up)    # a further sign, read beside the tree (a read each)
            with timing(sr, "capture"):
                after = self.tools.capture.screen(tree=True, fresh=True)
            keyboard_up = keyboard.result()
        with timing(sr, "verify"):
            verdict = focus_on_tree(before, after, loc, keyboard_up)
            if verdict is not None:
                return after, verdict
            return self.verdict_clearing_blockers(step, level, before, after, loc, acted, sr)

    def _ready_to_type(self, step: StepPlan, level: ExecutionLevel, sr: StepResult,
                       following: StepPlan | None) -> None:
        """The wait after the tap, spent getting the keyboard ready for the next step's text."""
        started = time.perf_counter()
        device = self.tools.device
        if following is not None and isinstance(following.args, InputText) and isinstance(device, KeyboardState):
            device.prepare_typing(following.args.text)
        ms = wait_after_ms(step, level)
        self.tools.capture.await_drawn(max(0.0, ms / 1000 - (time.perf_counter() - started)), self.tools.clock.sleep,
                                       keep=True)   # the tree after the tap judges it next (`_tap_by_tree`)
        sr.timings["wait"] = round(sr.timings.get("wait", 0) + (time.perf_counter() - started) * 1000, 1)

    def _keyboard_up(self) -> bool:
        device = self.tools.device
        return isinstance(device, KeyboardState) and device.keyboard_shown() is True

    def _focus_verdict(self, before: Screen, after: Screen) -> VerifyResult | None:
        """The tap changed the screen and the soft keyboard is up; None when the pixels did not change or the
        keyboard is not up (the caller dumps and judges by the tree)."""
        if before.secure or after.secure:
            return None
        pixels = self.tools.checks.classify(before.pil, after.pil)
        if not pixels.screen_changed or not self._keyboard_up():
            return None
        return VerifyResult(True, 0.8, matches_expected=True, screen_changed=True, outcome=StepOutcome.SUCCEEDED,
                            suggestion=SuggestionAction.CONTINUE, method="focus",
                            change_description=f"{pixels.change_description}; a text field has the focus "
                                               "(the keyboard is up) for the next step's typing")

    # ------------------------------------------------------------------ any step
    def verdict_clearing_blockers(self, step: StepPlan, level: ExecutionLevel, before: Screen, after: Screen,
                                  loc: LocateResult, acted: bool, sr: StepResult) -> tuple[Screen, VerifyResult]:
        """Verify; something that came up over the result (a spinner, an ad) is settled, then judged again.

        A dialog that our own tap opened (none was there before it) is the step's result, not something in
        the way: dismissing it would undo the step ("turn on notification access" opens that dialog).
        """
        verdict = self.verify(step, level, before, after, loc, acted)
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
            after = self.tools.capture.screen(tree=True)
            verdict = self.verify(step, level, before, after, loc, acted)
        return after, verdict

    def _no_blocker(self, screen: Screen) -> bool:
        tree = screen.tree()
        return tree is not None and self.tools.checks.detect_blocker(screen.pil_if_taken(), tree, use_model=False) is None

    def verify(self, step: StepPlan, level: ExecutionLevel, before: Screen, after: Screen,
               loc: LocateResult, acted: bool) -> VerifyResult:
        """The step's verdict on the screen after it, by the first judge that applies: typing's read-back, a
        switch's state, the step's own ``verify_ref``, else the two screens compared (and, for a model's step
        with words only, the model)."""
        args = step.args
        if isinstance(args, InputText):
            return _read_back(acted)
        if isinstance(args, Tap) and args.toggle is not None and loc.element is not None:
            return _switched(after, loc.element.bbox, args.toggle)
        shown = self._shown(step.verify_ref, after) if step.verify_ref else None
        return shown or self._compared(step, level, before, after)

    def _shown(self, ref: str, after: Screen) -> VerifyResult | None:
        found = self.tools.locator.locate(ref, after)
        if not found.success or found.element is None:
            return None
        return VerifyResult(True, found.element.confidence, matches_expected=True, screen_changed=True,
                            outcome=StepOutcome.SUCCEEDED, method=f"locate:{found.method_used}",
                            change_description=f"{ref} is on the new screen")

    def _compared(self, step: StepPlan, level: ExecutionLevel, before: Screen, after: Screen) -> VerifyResult:
        checks = self.tools.checks
        stay = isinstance(step.args, Tap) and step.args.stay_in_app
        # the pictures only when the trees do not tell: a screen read as a tree takes its frame when first read
        verdict = checks.classify(lambda: before.pil, lambda: after.pil,
                                  hierarchy_before=before.tree() if before.tree_taken else None,
                                  hierarchy_after=after.tree() if level >= ExecutionLevel.LOCATE_AND_EXECUTE
                                  else None, expected=step.success_condition,
                                  expected_package=self.tools.module_package if stay else None)
        worded = level is ExecutionLevel.FULL_AI and bool(step.success_condition) and checks.has_model
        if worded and verdict.outcome is StepOutcome.UNKNOWN and step.success_condition:
            return checks.verify_with_description(after.pil, step.success_condition, before.pil,
                                                  hierarchy=after.tree())
        return verdict


def _read_back(acted: bool) -> VerifyResult:
    """Typing is judged by its read-back (the field shows the text typed), not by a change of screen."""
    return VerifyResult(acted, 0.95 if acted else 0.2, matches_expected=acted, screen_changed=True,
                        outcome=StepOutcome.SUCCEEDED if acted else StepOutcome.NO_CHANGE, method="readback",
                        change_description="the field reads back the typed text" if acted
                        else "the field does not show the typed text")


def _switched(after: Screen, bbox: tuple[int, int, int, int], wanted: bool) -> VerifyResult:
    """A switch the step leaves on or off is judged by its state in the tree after the tap."""
    tree = after.tree()
    state = switch_state(tree.nodes if tree is not None else (), bbox)
    ok = state is not None and state == wanted
    return VerifyResult(ok, 0.95 if ok else 0.5, matches_expected=ok, screen_changed=True, method="tree",
                        outcome=StepOutcome.SUCCEEDED if ok else StepOutcome.NO_CHANGE,
                        change_description=f"the switch is {'on' if state else 'off'}")
