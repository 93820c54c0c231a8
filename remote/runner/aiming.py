"""Aiming: locate a step's target with popups cleared, the step's fallback, ambiguity resolved.

A mixin of StepRunner (it uses ``self.env``, ``self.capture`` and ``self.act_blind``):
these are the moves that make a locate succeed or honestly fail, kept apart from
the act-and-verify loop.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from remote.core.locate.target_ref import parse_target
from remote.records import ActionName, Blocker, BlockerType, LocateResult, StepPlan, StepResult
from remote.runner.live_screen import LiveScreen

logger = logging.getLogger(__name__)
FALLBACK_ATTEMPTS = 3
BLOCKER_DISMISSALS = 3
LOADING_WAITS = 10
LOADING_POLL_S = 0.3


class Aiming:
    env: Any

    def capture(self) -> LiveScreen:  # provided by StepRunner
        raise NotImplementedError

    def act_blind(self, step: StepPlan) -> None:  # provided by StepRunner
        raise NotImplementedError

    # ------------------------------------------------------------------ locating
    def locate(self, step: StepPlan, screen: LiveScreen, sr: StepResult) -> tuple[LocateResult, LiveScreen]:
        """Locate with blockers dismissed, loading waited out, and the step's fallback (up to 3 times).

        A step with a fallback says "it may be on another page": while the UI tree is
        healthy and shows no web content, pages are first searched by the tree alone,
        and the slow tiers (OCR, the model) run only on the last page.
        """
        quick = bool(step.fallback) and self._tree_is_authoritative(step, screen)
        loc = self._locate_once(step, screen, sr, quick=quick)
        if loc.success:
            return loc, screen
        cleared = self._clear_blockers(screen, sr)
        if cleared is not screen:
            screen = cleared
            loc = self._locate_once(step, screen, sr, quick=quick)
            if loc.success:
                return loc, screen
        if step.fallback:
            for i in range(FALLBACK_ATTEMPTS):
                if not self.run_fallback(step.fallback, sr):
                    break
                screen = self.capture()
                loc = self._locate_once(step, screen, sr, quick=quick)
                if loc.success:
                    sr.notes.append(f"found after fallback {i + 1}")
                    return loc, screen
        if quick:
            loc = self._locate_once(step, screen, sr)
        return loc, screen

    @staticmethod
    def _tree_is_authoritative(step: StepPlan, screen: LiveScreen) -> bool:
        if parse_target(step.target_ref or "")[0] not in ("text", "desc"):
            return False
        tree = screen.tree()
        return tree is not None and len(tree.nodes) > 3 and not any("WebView" in n.class_name for n in tree.nodes)

    def _clear_blockers(self, screen: LiveScreen, sr: StepResult, keep: str | None = None) -> LiveScreen:
        """Dismiss popups / wait out spinners found offline in the tree (no model call).

        ``keep``: the step's own target; a popup whose dismissing button is that target is what the
        step means to press, not something in its way.
        """
        for _ in range(BLOCKER_DISMISSALS + LOADING_WAITS):
            blocker = self.env.verifier.detect_blocker(screen.pil, screen.tree(), use_model=False)
            if blocker is None or _presses(blocker, keep):
                break
            if blocker.type is BlockerType.LOADING:
                time.sleep(LOADING_POLL_S)
            elif not self.dismiss(blocker, screen, sr):
                break
            screen = self.capture()
        return screen

    def _locate_once(self, step: StepPlan, screen: LiveScreen, sr: StepResult, *, quick: bool = False) -> LocateResult:
        kind, _ = parse_target(step.target_ref or "")
        if screen.secure and kind == "ref":
            return LocateResult(False, error="secure screen: images cannot be matched on a black frame")
        if quick:
            loc = self.env.locator.locate_with_fallback(step.target_ref, ["tree"], screen)
        else:
            loc = self.env.locator.locate(step.target_ref, screen)
        if loc.success and not loc.reliable:
            loc = self._choose(step, screen, loc, sr)
        learned = loc.element.metadata.get("learned") if loc.success and loc.element else None
        if learned:
            sr.notes.append(f"learned a new reference variant: {learned} (review: remote modules learned)")
        return loc

    def _choose(self, step: StepPlan, screen: LiveScreen, loc: LocateResult, sr: StepResult) -> LocateResult:
        """Competing candidates: the model chooses, else the person, else not found. Never a coin toss."""
        options = [loc.element, *[c for c in loc.candidates if c is not loc.element]]
        if self.env.vision is not None and not self.env.dry_run:
            picked = self.env.vision.find_element(screen.pil, step.description or step.target_ref or "",
                                                  candidates=options)
            if picked.success:
                sr.notes.append("the model chose among competing candidates")
                picked.method_used = f"{loc.method_used}+vision"
                return picked
        if self.env.confirm is not None:
            labels = [f"{c.bbox} ({c.description or c.element_type}, {c.confidence:.2f})" for c in options]
            choice = self.env.confirm(f"Several places match {step.target_ref}; which one?", labels)
            if isinstance(choice, int) and not isinstance(choice, bool) and 0 <= choice < len(options):
                sr.notes.append(f"the person chose candidate {choice + 1}")
                return LocateResult(True, options[choice], loc.method_used + "+person", [], reliable=True)
        return LocateResult(False, None, loc.method_used, options, reliable=False,
                            error=f"{step.target_ref} matches {len(options)} places equally well; "
                                  "not tapping a guess (configure a model or run interactively to choose)")

    # ------------------------------------------------------------------ blockers, fallback, toggles
    def dismiss(self, blocker: Blocker, screen: LiveScreen, sr: StepResult) -> bool:
        hint = blocker.dismiss_suggestion
        if hint is None or self.env.dry_run or blocker.type is BlockerType.KEYBOARD and hint.action != "press_key":
            return False
        if hint.action == "press_key":
            self.env.adb.input_keyevent(hint.keycode or "BACK")
        elif hint.bbox:
            x1, y1, x2, y2 = hint.bbox
            self.env.adb.tap((x1 + x2) // 2, (y1 + y2) // 2)
        elif hint.target_ref:
            found = self.env.locator.locate(hint.target_ref, screen)
            if not found.success:
                return False
            self.env.adb.tap(*found.element.center)
        else:
            return False
        sr.notes.append(f"dismissed {blocker.type.value}: {hint.description or blocker.description}")
        self.env.sleep(0.4)
        return True

    def run_fallback(self, fallback: dict[str, Any], sr: StepResult) -> bool:
        if self.env.dry_run:
            return False
        try:
            action = ActionName(fallback.get("action"))
        except ValueError:
            return False
        step = StepPlan(step=0, action=action, target_ref=fallback.get("target_ref"),
                        params=dict(fallback.get("params") or {}))
        if action in (ActionName.TAP, ActionName.LONG_PRESS) and step.target_ref:
            found = self.env.locator.locate(step.target_ref, self.capture())
            if not found.success:
                return False
            self.env.adb.tap(*found.element.center)
        else:
            self.act_blind(step)
        sr.notes.append(f"fallback: {action.value} {step.target_ref or ''} {step.params or ''}".strip())
        self.env.sleep(0.5)
        return True


def _presses(blocker: Blocker, target_ref: str | None) -> bool:
    """Does dismissing `blocker` tap `target_ref` itself (``text:OK`` on a dialog whose way out is OK)?"""
    hint = blocker.dismiss_suggestion
    if not target_ref or hint is None or not hint.target_ref:
        return False
    kind, value = parse_target(target_ref)
    return kind in ("text", "desc") and parse_target(hint.target_ref)[1].casefold() == value.casefold()
