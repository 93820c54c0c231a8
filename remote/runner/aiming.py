"""Aiming: locate a step's target with popups cleared, its alternatives and fallback, ambiguity resolved.

The moves that make a locate succeed or honestly fail, kept apart from the
act-and-verify loop. An ``Aimer`` is handed what it uses (the step tools, and the
``Actor`` that runs a fallback); it calls nothing back in the step runner.
"""

from __future__ import annotations

import logging

from remote.core.locate.screen import Screen
from remote.core.locate.target_ref import parse_target
from remote.core.records import (
    Blocker,
    BlockerType,
    LocateFailure,
    LocateResult,
    StepPlan,
    StepResult,
    UIElement,
)
from remote.runner.actions import Actor, NoLook
from remote.runner.tools import StepTools

logger = logging.getLogger(__name__)
FALLBACK_ATTEMPTS = 3
BLOCKER_DISMISSALS = 3
LOADING_WAITS = 10
LOADING_POLL_S = 0.3
TREE_KINDS = ("text", "id", "desc", "editable", "role", "dynamic")   # dynamic: the label of what the model picks


def needs_tree(step: StepPlan) -> bool:
    """The step's targets are found in the UI tree (so its screen should be dumped with it)."""
    return any(parse_target(t)[0] in TREE_KINDS for t in step.targets)


class Aimer:
    def __init__(self, tools: StepTools, actor: Actor) -> None:
        self.tools = tools
        self.actor = actor

    # ------------------------------------------------------------------ locating
    def locate(self, step: StepPlan, screen: Screen, sr: StepResult) -> tuple[LocateResult, Screen]:
        """Locate with blockers dismissed, loading waited out, and the step's fallback (up to 3 times).

        A step with a fallback says "it may be on another page": while the UI tree is
        healthy and shows no web content, pages are first searched by the tree alone,
        and the slow tiers (OCR, the model) run only on the last page.
        """
        quick = step.fallback is not None and self._tree_is_authoritative(step, screen)
        loc = self._locate_once(step, screen, sr, quick=quick)
        if loc.success:
            return loc, screen
        cleared = self.clear_blockers(screen, sr)
        if cleared is not screen:
            screen = cleared
            loc = self._locate_once(step, screen, sr, quick=quick)
            if loc.success:
                return loc, screen
        if step.fallback is not None:
            for i in range(FALLBACK_ATTEMPTS):
                if not self.run_fallback(step.fallback, sr):
                    break
                screen = self.tools.capture.screen(tree=screen.tree_taken)
                loc = self._locate_once(step, screen, sr, quick=quick)
                if loc.success:
                    sr.notes.append(f"found after fallback {i + 1}")
                    return loc, screen
        if quick:
            loc = self._locate_once(step, screen, sr)
        if not loc.success and screen.tree_reused:   # the reused tree may be older than the screen: dump it anew
            screen = self.tools.capture.screen(tree=True, fresh=True)
            loc = self._locate_once(step, screen, sr)
        return loc, screen

    def anchors_missing(self, step: StepPlan, screen: Screen) -> bool:
        """A step with ``anchors`` (a learned step) is on the wrong screen when none of them is there.

        Free tiers only: the tree when the screen has one, OCR when it has none (a failed dump, a WebView).
        """
        if not step.anchors:
            return False
        tiers = ["tree"] if screen.tree() is not None else ["ocr"]
        return not any(self.tools.locator.locate_with_fallback(a, tiers, screen).success for a in step.anchors)

    @staticmethod
    def _tree_is_authoritative(step: StepPlan, screen: Screen) -> bool:
        if not step.targets or not all(parse_target(t)[0] in ("text", "desc") for t in step.targets):
            return False
        tree = screen.tree()
        return tree is not None and len(tree.nodes) > 3 and not any("WebView" in n.class_name for n in tree.nodes)

    def clear_blockers(self, screen: Screen, sr: StepResult, keep: tuple[str, ...] = ()) -> Screen:
        """Dismiss popups / wait out spinners found offline in the tree (no model call).

        ``keep``: the step's own targets; a popup whose way out is one of them (``text:OK`` on a dialog
        whose button is OK) is what the step means to press, not something in its way.
        """
        for _ in range(BLOCKER_DISMISSALS + LOADING_WAITS):
            if not screen.tree_taken:
                screen = self.tools.capture.screen(tree=True)
            blocker = self.tools.checks.detect_blocker(screen.pil_if_taken(), screen.tree(), use_model=False)
            if blocker is None or _presses(blocker, keep):
                break
            loading = blocker.type is BlockerType.LOADING
            if loading:
                self.tools.clock.sleep(LOADING_POLL_S)
            elif not self.dismiss(blocker, screen, sr):
                break
            # a spinner ends in the tree before the frame looks different enough: a wait looks at a fresh dump
            screen = self.tools.capture.screen(tree=True, fresh=loading)
        return screen

    def _locate_once(self, step: StepPlan, screen: Screen, sr: StepResult, *, quick: bool = False) -> LocateResult:
        """Each of the step's targets in order; the first found reliably wins, then a resolved look-alike."""
        first: LocateResult | None = None
        ambiguous: tuple[str, LocateResult] | None = None
        for target in step.targets:
            self.tools.clock.check()
            if parse_target(target)[0] == "ref" and screen.secure:
                loc = LocateResult(False, error="secure screen: images cannot be matched on a black frame",
                                   failure=LocateFailure.NOT_FOUND)
            elif quick:
                loc = self.tools.locator.locate_with_fallback(target, ["tree"], screen)
            else:
                loc = self.tools.locator.locate(target, screen)
            loc.matched_ref = target
            if loc.success and loc.reliable:
                self._note_learned(loc, sr)
                if target != step.target_ref:
                    sr.notes.append(f"found by the alternative {target}")
                return loc
            if loc.success and ambiguous is None:
                ambiguous = (target, loc)
            first = first or loc
        if ambiguous is not None:
            return self._choose(step, screen, ambiguous[1], sr)
        assert first is not None
        if len(step.targets) > 1:
            first.error = "; ".join(f"{t}: not found" for t in step.targets) + f" ({first.error})"
        return first

    @staticmethod
    def _note_learned(loc: LocateResult, sr: StepResult) -> None:
        learned = loc.element.metadata.get("learned") if loc.element is not None else None
        if learned:
            sr.notes.append(f"learned a new reference variant: {learned} (review: remote modules learned)")

    def _choose(self, step: StepPlan, screen: Screen, loc: LocateResult, sr: StepResult) -> LocateResult:
        """Competing candidates: the model chooses, else the person, else not found. Never a coin toss."""
        assert loc.element is not None
        options: list[UIElement] = [loc.element, *[c for c in loc.candidates if c is not loc.element]]
        vision = self.tools.vision
        if vision is not None and not self.tools.dry_run:
            picked = vision.find_element(screen.pil, step.description or loc.matched_ref, candidates=options)
            if picked.success:
                sr.notes.append("the model chose among competing candidates")
                picked.method_used = f"{loc.method_used}+vision"
                picked.matched_ref = loc.matched_ref
                return picked
        labels = [f"{c.bbox} ({c.description or c.element_type}, {c.confidence:.2f})" for c in options]
        choice = self.tools.person.choose(f"Several places match {loc.matched_ref}; which one?", labels)
        if choice is not None and 0 <= choice < len(options):
            sr.notes.append(f"the person chose candidate {choice + 1}")
            return LocateResult(True, options[choice], loc.method_used + "+person", [], reliable=True,
                                matched_ref=loc.matched_ref)
        return LocateResult(False, None, loc.method_used, options, reliable=False, failure=LocateFailure.AMBIGUOUS,
                            matched_ref=loc.matched_ref,
                            error=f"{loc.matched_ref} matches {len(options)} places equally well; "
                                  "not tapping a guess (configure a model or run interactively to choose)")

    # ------------------------------------------------------------------ blockers, fallback
    def dismiss(self, blocker: Blocker, screen: Screen, sr: StepResult) -> bool:
        hint = blocker.dismiss_suggestion
        if hint is None or self.tools.dry_run or blocker.type is BlockerType.KEYBOARD and hint.action != "press_key":
            return False
        device = self.tools.device
        if hint.action == "press_key":
            device.input_keyevent(hint.keycode or "BACK")
        elif hint.bbox:
            x1, y1, x2, y2 = hint.bbox
            device.tap((x1 + x2) // 2, (y1 + y2) // 2)
        elif hint.target_ref:
            found = self.tools.locator.locate(hint.target_ref, screen)
            if not found.success or found.element is None:
                return False
            device.tap(*found.element.center)
        else:
            return False
        description = hint.description or blocker.description
        sr.notes.append(f"dismissed {blocker.type.value}: {description}")
        sr.popups.append({"type": blocker.type.value, "description": description})
        sr.popup_screens.append(screen)
        self.tools.clock.sleep(0.4)
        return True

    def run_fallback(self, fallback: StepPlan, sr: StepResult) -> bool:
        """Carry out a step's fallback (a tap on another target, or a blind action such as a swipe)."""
        if self.tools.dry_run:
            return False
        if fallback.targets:
            found = self.tools.locator.locate(fallback.targets[0], self.tools.capture.screen(tree=needs_tree(fallback)))
            if not found.success or found.element is None:
                return False
            self.tools.device.tap(*found.element.center)
        elif isinstance(fallback.args, NoLook):
            self.actor.act(fallback)
        else:   # a fallback that needs a target but names none: nothing to do
            return False
        sr.notes.append(f"fallback: {fallback.action.value} {fallback.target_ref or ''} {fallback.params or ''}".strip())
        self.tools.clock.sleep(0.5)
        return True


def _presses(blocker: Blocker, targets: tuple[str, ...]) -> bool:
    """Does dismissing `blocker` tap one of `targets` itself?"""
    hint = blocker.dismiss_suggestion
    if hint is None or not hint.target_ref:
        return False
    way_out = parse_target(hint.target_ref)[1].casefold()
    return any(kind in ("text", "desc") and value.casefold() == way_out
               for kind, value in (parse_target(t) for t in targets))
