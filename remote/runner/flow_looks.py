"""The flow steps that look and do nothing else: a step's ``when``, ``assert_visible`` / ``wait_until``,
``scroll_until_visible`` and ``extract`` (`Flow` hands them here; the blocks stay in ``flow.py``).

Each look is a screenshot and a UI dump decided by ``looking.py``, kept on the step (``StepResult.looks``,
the last ``KEPT_SCREENS`` screens) for ``remote replay``. How a step ended is the :class:`Ended` value each
method returns (with the screen it looked at last); `Flow.run` writes it onto the record once. Bounds: a
wait ends at its timeout plus one look, a scroll at ``max_swipes`` (or when the list stops moving).
"""

from __future__ import annotations

from collections.abc import Sequence

from remote.core.locate.screen import Screen
from remote.core.plan.flow import Assert, Condition, Extract, ScrollUntil, WaitUntil
from remote.core.plan.values import version_holds
from remote.core.records import FailureReason, Look, StepPlan, StepResult, StepStatus
from remote.errors import BudgetExceeded
from remote.runner.looking import OCR_TIERS, Reading, read, see, shows, switch, value_of
from remote.runner.outcome import Ended
from remote.runner.scope import Scope
from remote.runner.seeking import Eyes, holds, scroll_until_visible, wait_until
from remote.runner.step_runner import StepRunner

POLL_S = 0.3               # between two looks of a wait or an assert
SCROLL_SETTLE_S = 0.4      # after a swipe, before the next look
FINGER = {"down": "up", "up": "down", "left": "right", "right": "left"}   # the list goes down: the finger up
KEPT_SCREENS = 3           # a step keeps the screens of its last looks only (a repeat may look 50 times)


class Looks:
    def __init__(self, steps: StepRunner) -> None:
        self.steps, self.tools = steps, steps.tools

    def screen_with_tree(self, screen: Screen | None) -> Screen:
        """``screen`` (the one the last step left) when it was taken with its tree, else a new look with one."""
        return screen if screen is not None and screen.tree_taken else self.steps.capture()

    @staticmethod
    def look(sr: StepResult, look: Look, screen: Screen | None) -> None:
        sr.looks.append(look)
        sr.look_screens.append(screen if screen is None or screen not in sr.look_screens else None)
        for i in range(max(0, len(sr.look_screens) - KEPT_SCREENS)):
            sr.look_screens[i] = None

    def when(self, step: StepPlan, screen: Screen | None, sr: StepResult,
             scope: Scope) -> tuple[Ended | None, Screen | None]:
        """Whether the step's ``when`` holds: None (run the step; its conditions noted), else how the step ends
        without running (skipped, or failed: the condition could not be told); and the screen looked at."""
        if step.when is None:
            return None, screen
        held = []
        for condition in step.when.conditions:
            if condition.kind in ("visible", "not_visible", "checked", "not_checked"):
                screen = self.screen_with_tree(screen)
            holds, why = self._condition(condition, screen, sr, scope)
            if holds is None:
                return Ended.failed(FailureReason.NOT_FOUND, f"cannot tell whether {condition.describe()}: {why}"), \
                    screen
            if not holds:
                return Ended(StepStatus.SKIPPED, note=f"skipped: when {condition.kind}: {condition.value} does not "
                             f"hold ({why})"), screen
            held.append(f"{condition.kind}: {condition.value} ({why[:80]})")
        sr.notes.append("when " + "; ".join(held))
        return None, screen

    def _condition(self, c: Condition, screen: Screen | None, sr: StepResult, scope: Scope) -> tuple[bool | None, str]:
        locator, device = self.tools.locator, self.tools.device
        if screen is not None and c.kind in ("visible", "not_visible", "checked", "not_checked"):
            seen = see(locator, screen, [c.value]) if c.kind.endswith("visible") else switch(locator, screen, [c.value])
            self.look(sr, Look(c.kind, c.value, seen.found, seen.evidence, seen.method), screen)
            wanted = c.kind in ("visible", "checked")
            return (None if seen.found is None else seen.found == wanted), seen.evidence
        if c.kind == "app":
            front = device.current_app().get("package", "")
            holds = front == (self.tools.apps.package_for(c.value) or c.value)
            self.look(sr, Look("app", c.value, holds, f"in front: {front or 'nothing'}", "device"), None)
            return holds, f"in front: {front or 'nothing'}"
        package = scope.package or self.tools.module_package
        actual = device.app_version(package) if package else None
        result = version_holds(actual, c.value) if actual else None
        evidence = f"{package} {actual}" if actual else f"the version of {package or 'the app'} could not be read"
        self.look(sr, Look("version", c.value, result, evidence, "device"), None)
        return result, evidence

    def eyes(self, screen: Screen | None, targets: Sequence[str]) -> Eyes:
        """The first look takes the screen the last step left (when it has its tree), later ones a new one."""
        return Eyes(lambda n: self.screen_with_tree(screen) if n == 0 else self.steps.capture(),
                    lambda shot: see(self.tools.locator, shot, targets))

    def poll(self, step: StepPlan, args: Assert | WaitUntil, screen: Screen | None,
             sr: StepResult) -> tuple[Ended, Screen]:
        """Look until the target is (or is not) there, at most ``timeout_ms`` and one more look."""
        kind = "visible" if args.visible else "not_visible"
        got = wait_until(self.eyes(screen, step.targets), args.visible, args.timeout_ms, self.tools.clock, POLL_S)
        seen, shot, looks = got.seen, got.screen, got.looks
        self.look(sr, Look(kind, " | ".join(step.targets), seen.found, seen.evidence, seen.method), shot)
        sr.screenshot_before = shot
        said = f"after {got.waited_ms} ms, {looks} look{'s' if looks > 1 else ''}"
        if holds(seen, args.visible):
            return Ended.ok(f"{kind} {said}: {seen.evidence}"[:300]), shot
        if isinstance(args, Assert):
            instead = f"; {shows(shot)}" if args.visible else ", still there"
            return Ended.failed(FailureReason.ASSERTION, f"{step.action.value}: {seen.evidence}{instead} "
                                f"({said})"[:500], abort=True), shot
        return Ended.failed(FailureReason.TIMEOUT, f"wait_until {kind} {' | '.join(step.targets)} never came true: "
                            f"timeout {args.timeout_ms} ms, {said}; {seen.evidence}; {shows(shot)}"[:500]), shot

    def scroll(self, step: StepPlan, args: ScrollUntil, screen: Screen | None,
               sr: StepResult) -> tuple[Ended, Screen]:
        """Swipe until the target shows, at most ``max_swipes`` times, or until the list stops moving."""
        def swipe() -> None:
            self.tools.device.swipe_direction(FINGER[args.direction], 0.5, 300)
            # ended once the list shows the swipe and stops moving, when trees are cheap (`Capture.await_drawn`)
            self.tools.capture.await_drawn(SCROLL_SETTLE_S, self.tools.clock.sleep, keep=True)

        got = scroll_until_visible(self.eyes(screen, step.targets), swipe, args.max_swipes)
        seen, shot, swipes = got.seen, got.screen, got.swipes
        self.look(sr, Look("visible", " | ".join(step.targets), seen.found, seen.evidence, seen.method), shot)
        sr.screenshot_before = shot
        what = " | ".join(step.targets)
        if seen.found:
            return Ended.ok(f"found after {swipes} swipe{'s' if swipes != 1 else ''}: {seen.evidence}"[:300]), shot
        if got.ended:
            return Ended.failed(FailureReason.NOT_FOUND, f"{what} not found: the list stopped moving after "
                                f"{swipes - 1} swipe{'s' if swipes != 2 else ''} {args.direction} (its end); "
                                f"{shows(shot)}"[:500]), shot
        return Ended.failed(FailureReason.NOT_FOUND, f"{what} not found after {swipes} swipes {args.direction} "
                            f"(max_swipes {args.max_swipes}); {shows(shot)}"[:500]), shot

    def extract(self, step: StepPlan, args: Extract, screen: Screen | None, sr: StepResult,
                scope: Scope) -> tuple[Ended, Screen]:
        shot = self.screen_with_tree(screen)
        reading = read(self.tools.locator, shot, args, step.targets)
        if not reading.texts and reading.checked is None and self.tools.vision is not None \
                and args.source in ("from", "below", "right_of"):
            reading = self._read_with_model(shot, args, step, reading)
        value, error = value_of(reading, args)
        target = " | ".join(step.targets) or args.source
        sr.screenshot_before = shot
        if value is None:
            self.look(sr, Look("extract", target, False, error, reading.method), shot)
            return Ended.failed(FailureReason.NOT_READ, f"extract {args.name} from {target}: {error}"[:500]), shot
        scope.variables[args.name] = value
        said = f"the switch is {'on' if value else 'off'}" if reading.checked is not None and args.kind == "bool" \
            else f"read {reading.texts!r}"
        self.look(sr, Look("extract", target, True, said[:200], reading.method, value), shot)
        return Ended.ok(f"{args.name} = {value!r} (read by {reading.method})"[:300]), shot

    def _read_with_model(self, shot: Screen, args: Extract, step: StepPlan, before: Reading) -> Reading:
        """Neither the tree nor OCR found the target: the vision model may find it, and its box is read."""
        try:
            again = read(self.tools.locator, shot, args, step.targets, (*OCR_TIERS, "vision"))
        except BudgetExceeded as exc:
            return Reading(evidence=f"{before.evidence}; the model was not asked: {exc.message}")
        return again if again.texts or again.checked is not None else before
