"""One step, from look to verdict: locate (with blockers dismissed and the step's fallback), act, verify.

The error policy (smolagents'): our bugs and device failures raise; the world's
surprises (target not found, ambiguous, nothing happened, a popup) become facts
on the StepResult, which the task loop turns into retry / replan / failure.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from remote.core.locate.target_ref import parse_target
from remote.core.locate.tree_facts import already_selected, switch_state, wanted_toggle
from remote.core.plan.execution_strategy import classify, wait_after_ms
from remote.errors import SecureScreen
from remote.records import (
    ActionName,
    BlockerType,
    ExecutionLevel,
    LocateResult,
    StepOutcome,
    StepPlan,
    StepResult,
    StepStatus,
    SuggestionAction,
    VerifyResult,
)
from remote.runner.aiming import BLOCKER_DISMISSALS, LOADING_POLL_S, LOADING_WAITS, Aiming
from remote.runner.live_screen import LiveScreen

logger = logging.getLogger(__name__)
NO_CHANGE_LIMIT = 3
TREE_KINDS = ("text", "id", "desc")

Confirm = Callable[..., Any]


@dataclass
class StepEnv:
    """What a step needs; built once per task by the TaskRunner."""

    adb: Any
    locator: Any
    verifier: Any
    vision: Any = None
    module: Any = None
    confirm: Confirm | None = None
    take_over: Callable[[str], bool] | None = None
    sleep: Callable[[float], None] = time.sleep
    dry_run: bool = False
    yes: bool = False
    modules_by_package: dict[str, Any] = field(default_factory=dict)


class StepRunner(Aiming):
    def __init__(self, env: StepEnv) -> None:
        self.env = env

    # ------------------------------------------------------------------ screens
    def capture(self) -> LiveScreen:
        adb = self.env.adb
        try:
            return LiveScreen(adb.screenshot(), adb)
        except SecureScreen:
            # FLAG_SECURE screens still have a UI tree: locate text:/id: targets there.
            logger.warning("secure (black) screen: locating by the UI tree only")
            return LiveScreen(Image.new("RGB", adb.window_size(), (0, 0, 0)), adb, secure=True)

    # ------------------------------------------------------------------ the step
    def run(self, step: StepPlan, screen: LiveScreen | None, usage: Any = None) -> tuple[StepResult, LiveScreen | None]:
        level = classify(step)
        sr = StepResult(step=step, status=StepStatus.RUNNING, start_time=time.time(), level=int(level))
        before_usage = usage.snapshot() if usage is not None else None
        try:
            if step.wait_before:
                self.env.sleep(step.wait_before / 1000)
            if step.sensitive and not self._confirm_sensitive(step, sr):
                return sr, screen
            screen = self._dispatch(step, level, sr, screen)
        finally:
            sr.end_time = time.time()
            if usage is not None and before_usage is not None:
                sr.model_usage = usage.since(before_usage)
        return sr, screen

    def _dispatch(self, step: StepPlan, level: ExecutionLevel, sr: StepResult,
                  screen: LiveScreen | None) -> LiveScreen | None:
        a = step.action
        if a is ActionName.TAKE_OVER:
            return self._take_over(step, sr)
        if a is ActionName.BACK_TO_HOME:
            return self._back_to_home(step, sr)
        if level is ExecutionLevel.FIRE_AND_FORGET:
            if not self.env.dry_run:
                self._timed(sr, "act", lambda: self.act_blind(step))
                self._wait(step, level, sr)
            sr.status = StepStatus.SUCCESS
            return None  # the screen is unknown now; the next step that looks captures
        if a is ActionName.SWIPE and not step.target_ref:
            return self._swipe(step, level, sr, screen)
        if a is ActionName.INPUT_TEXT and not step.target_ref:
            if not self.env.dry_run:
                ok = self._timed(sr, "act", lambda: self._type(step))
                sr.status = StepStatus.SUCCESS if ok else StepStatus.FAILED
                sr.error_message = "" if ok else "the text did not arrive in the field"
            else:
                sr.status = StepStatus.SUCCESS
            return None
        return self._targeted(step, level, sr, screen)

    # ------------------------------------------------------------------ blind actions
    def act_blind(self, step: StepPlan) -> None:
        adb, p, a = self.env.adb, step.params, step.action
        if a is ActionName.LAUNCH_APP:
            adb.launch_app(p.get("package") or p.get("app") or "")
        elif a is ActionName.OPEN_URL:
            adb.open_url(p.get("url") or "")
        elif a is ActionName.CALL:
            adb.call(str(p.get("number") or p.get("phone") or ""))
        elif a is ActionName.GO_HOME:
            adb.go_home()
        elif a is ActionName.PRESS_KEY:
            for _ in range(max(1, int(p.get("times", 1)))):
                adb.input_keyevent(p.get("key") or p.get("keycode") or "BACK")
        elif a is ActionName.WAIT:
            self.env.sleep(float(p.get("ms", p.get("duration", 1000))) / 1000)
        elif a is ActionName.SWIPE:
            if "direction" in p:
                adb.swipe_direction(p["direction"], float(p.get("distance", 0.5)), int(p.get("duration", 300)))
            else:
                adb.swipe(p["x1"], p["y1"], p["x2"], p["y2"], int(p.get("duration", 300)))
        elif a is ActionName.FINISH:
            pass

    def _wait(self, step: StepPlan, level: ExecutionLevel, sr: StepResult) -> None:
        ms = wait_after_ms(step, level)
        if ms:
            self.env.sleep(ms / 1000)
            sr.timings["wait"] = sr.timings.get("wait", 0) + ms

    def _type(self, step: StepPlan) -> bool:
        return self.env.adb.input_text(str(step.params.get("text", "")), clear=bool(step.params.get("clear", False)),
                                       verify=True)

    @staticmethod
    def _timed(sr: StepResult, phase: str, fn: Callable[..., Any], *args: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args)
        finally:
            sr.timings[phase] = round(sr.timings.get(phase, 0) + (time.perf_counter() - t0) * 1000, 1)

    def _swipe(self, step: StepPlan, level: ExecutionLevel, sr: StepResult,
               screen: LiveScreen | None) -> LiveScreen | None:
        if self.env.dry_run:
            sr.status = StepStatus.SUCCESS
            return screen
        before = screen or self._timed(sr, "capture", self.capture)
        self._timed(sr, "act", lambda: self.act_blind(step))
        self._wait(step, level, sr)
        after = self._timed(sr, "capture", self.capture)
        ok, why = self.env.verifier.quick_check(before.pil, after.pil, step.success_condition or "")
        sr.verify_result = VerifyResult(ok, 0.8 if ok else 0.6, screen_changed=ok, change_description=why,
                                        outcome=StepOutcome.SUCCEEDED if ok else StepOutcome.NO_CHANGE,
                                        method="pixel")
        # A swipe at the end of a list changes nothing and is not an error.
        sr.status = StepStatus.SUCCESS
        sr.screenshot_before, sr.screenshot_after = before, after
        return after

    # ------------------------------------------------------------------ targeted actions
    def _targeted(self, step: StepPlan, level: ExecutionLevel, sr: StepResult,
                  screen: LiveScreen | None) -> LiveScreen | None:
        no_change = 0
        fallback_used = False
        for attempt in range(step.retry + 1):
            sr.retry_count = attempt
            before = screen or self._timed(sr, "capture", self.capture)
            screen = None
            if attempt or parse_target(step.target_ref or "")[0] in TREE_KINDS:
                # The tree is at hand (or a tap was swallowed): clear popups before aiming.
                before = self._clear_blockers(before, sr, keep=step.target_ref)
            loc, before = self._timed(sr, "locate", self.locate, step, before, sr)
            sr.locate_result, sr.screenshot_before = loc, before
            if not loc.success:
                sr.status, sr.error_message = StepStatus.FAILED, loc.error or f"{step.target_ref} not found"
                return before
            point = loc.element.center
            sr.tap_point = point
            toggled = self._toggle_state(step, before, loc)
            if toggled is not None and toggled == wanted_toggle(step):
                sr.status = StepStatus.SUCCESS
                sr.notes.append(f"already {'on' if toggled else 'off'}: nothing to tap")
                return before
            if self.env.dry_run:
                sr.status = StepStatus.SUCCESS
                sr.notes.append("dry run: located, not touched")
                return before
            ok = self._timed(sr, "act", self._act_at, step, point)
            before.stale = True
            self._wait(step, level, sr)
            after = self._timed(sr, "capture", self.capture)
            verdict = self._timed(sr, "verify", self._verify, step, level, before, after, loc, ok)
            for _ in range(BLOCKER_DISMISSALS + LOADING_WAITS):
                # Something came up over the result (a spinner, a popup): settle it, then judge again.
                if verdict.blocker is None:
                    break
                if verdict.blocker.type is BlockerType.LOADING:
                    time.sleep(LOADING_POLL_S)
                elif not self.dismiss(verdict.blocker, after, sr):
                    break
                after = self._timed(sr, "capture", self.capture)
                verdict = self._timed(sr, "verify", self._verify, step, level, before, after, loc, ok)
            sr.screenshot_after, sr.verify_result = after, verdict
            if verdict.verified or verdict.outcome is StepOutcome.UNKNOWN and verdict.suggestion is SuggestionAction.CONTINUE:
                sr.status = StepStatus.SUCCESS
                return after
            if verdict.outcome is StepOutcome.NO_CHANGE and already_selected(before, loc):
                sr.status = StepStatus.SUCCESS
                sr.notes.append("already selected: tapping it changes nothing")
                return after
            if verdict.outcome is StepOutcome.NO_CHANGE:
                no_change += 1
                if no_change >= NO_CHANGE_LIMIT or attempt == step.retry:
                    if step.fallback and not fallback_used:
                        fallback_used = True
                        self.run_fallback(step.fallback, sr)
                        continue
                    sr.status = StepStatus.FAILED
                    sr.error_message = f"no visible change after {no_change} tries of {step.action.value}"
                    sr.verify_result.suggestion = SuggestionAction.REPLAN
                    return after
                screen = after
                continue
            sr.status, sr.error_message = StepStatus.FAILED, verdict.suggestion_detail or verdict.change_description
            return after
        sr.status = StepStatus.FAILED
        sr.error_message = sr.error_message or f"step did not succeed in {step.retry + 1} tries"
        return None

    def _act_at(self, step: StepPlan, point: tuple[int, int]) -> bool:
        adb = self.env.adb
        if step.action is ActionName.LONG_PRESS:
            adb.long_press(*point, int(step.params.get("duration", 800)))
            return True
        adb.tap(*point)
        if step.action is ActionName.INPUT_TEXT:
            self.env.sleep(0.15)  # let the field take focus before typing
            return self._type(step)
        return True

    def _verify(self, step: StepPlan, level: ExecutionLevel, before: LiveScreen, after: LiveScreen,
                loc: LocateResult, acted: bool) -> VerifyResult:
        if step.action is ActionName.INPUT_TEXT:
            return VerifyResult(acted, 0.95 if acted else 0.2, matches_expected=acted, screen_changed=True,
                                outcome=StepOutcome.SUCCEEDED if acted else StepOutcome.NO_CHANGE, method="readback",
                                change_description="the field reads back the typed text" if acted
                                else "the field does not show the typed text")
        if "toggle" in step.params:
            tree = after.tree()
            state = switch_state(tree.nodes if tree is not None else (), loc.element.bbox)
            ok = state is not None and state == wanted_toggle(step)
            return VerifyResult(ok, 0.95 if ok else 0.5, matches_expected=ok, screen_changed=True, method="tree",
                                outcome=StepOutcome.SUCCEEDED if ok else StepOutcome.NO_CHANGE,
                                change_description=f"switch is {'on' if state else 'off'}")
        if step.verify_ref:
            found = self.env.locator.locate(step.verify_ref, after)
            if found.success:
                return VerifyResult(True, found.element.confidence, matches_expected=True, screen_changed=True,
                                    outcome=StepOutcome.SUCCEEDED, method=f"locate:{found.method_used}",
                                    change_description=f"{step.verify_ref} is on the new screen")
        expected_pkg = getattr(self.env.module, "package", None) if step.params.get("stay_in_app") else None
        verdict = self.env.verifier.classify(before.pil, after.pil, hierarchy_before=before._tree,
                                             hierarchy_after=after.tree() if level >= ExecutionLevel.LOCATE_AND_EXECUTE
                                             else None, expected=step.success_condition,
                                             expected_package=expected_pkg)
        if (level is ExecutionLevel.FULL_AI and step.success_condition and verdict.outcome is StepOutcome.UNKNOWN
                and getattr(self.env.verifier, "model", None) is not None):
            return self.env.verifier.verify_with_description(after.pil, step.success_condition, before.pil,
                                                             hierarchy=after.tree())
        return verdict

    # ------------------------------------------------------------------ toggles and people
    def _toggle_state(self, step: StepPlan, screen: LiveScreen, loc: LocateResult) -> bool | None:
        if "toggle" not in step.params or loc.element is None:
            return None
        tree = screen.tree()
        return switch_state(tree.nodes if tree is not None else (), loc.element.bbox)

    # ------------------------------------------------------------------ people
    def _confirm_sensitive(self, step: StepPlan, sr: StepResult) -> bool:
        if self.env.yes or self.env.dry_run:
            return True
        question = f"Step {step.step} is sensitive ({step.action.value} {step.target_ref or ''}: {step.description}). Go ahead?"
        if self.env.confirm is not None and self.env.confirm(question, None) is True:
            sr.notes.append("confirmed by the person")
            return True
        sr.status = StepStatus.FAILED
        sr.error_message = "sensitive step not confirmed (use --yes to allow it)"
        sr.notes.append("abort")
        return False

    def _take_over(self, step: StepPlan, sr: StepResult) -> LiveScreen | None:
        message = step.description or step.params.get("message") or "please act on the phone"
        if self.env.dry_run:
            sr.status = StepStatus.SUCCESS
            return None
        if self.env.take_over is not None and self.env.take_over(message):
            sr.status = StepStatus.SUCCESS
            sr.notes.append("the person took over and handed back")
        else:
            sr.status = StepStatus.FAILED
            sr.error_message = f"needs a person ({message}) and nobody took over"
            sr.notes.append("abort")
        return None

    def _back_to_home(self, step: StepPlan, sr: StepResult) -> LiveScreen | None:
        """BACK until the module's home reference is on screen (at most 10 presses)."""
        # The home of the app in front (a model plan may open another app than the routed module's).
        front = self.env.adb.current_app().get("package", "")
        module = self.env.modules_by_package.get(front) or self.env.module
        home = step.target_ref or getattr(module, "home_ref", None)
        package = getattr(module, "package", "")
        if not home:
            sr.status, sr.error_message = StepStatus.FAILED, "the module declares no home_ref"
            return None
        for presses in range(11):
            screen = self._clear_blockers(self.capture(), sr)
            if self.env.locator.locate(home, screen).success:
                sr.status = StepStatus.SUCCESS
                sr.notes.append(f"home after {presses} BACK presses")
                sr.screenshot_after = screen
                return screen
            if self.env.dry_run or presses == 10:
                break
            if package and self.env.adb.current_app().get("package") not in ("", package):
                self.env.adb.launch_app(package)   # BACK left the app: come back in
                self.env.sleep(0.5)
                continue
            self.env.adb.press_back()
            self.env.sleep(0.3)
        sr.status, sr.error_message = StepStatus.FAILED, f"{home} not seen after 10 BACK presses"
        return None
