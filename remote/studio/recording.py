"""Record mode: the author acts on the page, each action goes to the phone and becomes a step.

A tap or long press is named as the learning compiler names what a run touched
(``learning.target_forms``: the element's text, desc, role and label or
``editable:``, kept only where they find that element alone on this screen; a
reference crop where it shows no text; coordinates only where no element is).
The step then runs through the runner (``Acts``), so what is recorded is what a
run does; a step that fails there is not recorded. A swipe is recorded by its
direction and length, typing as ``input_text`` (a value may be marked as a slot).
A recording started inside an app first records (and runs) the launch that gets
there: the app launched and, where a module knows its home page, back to it, as
"launch this app" builds it; so the recording and every replay of it start from
the same place. BACK and HOME of the panel are recorded as ``press_key`` steps.
Stopping proposes final checks from the last screen (``learning.anchors_of``: the
labels it shows that the first screen did not, and the app in front), which the
page offers as choices.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from remote.core.locate.hybrid_locator import HybridLocator
from remote.core.locate.screen import Screen
from remote.errors import BadInput
from remote.mcp.access import SYSTEM_PACKAGES
from remote.runner.learning import anchors_of, crop_at, labels_of, target_forms
from remote.studio.acting import Acts
from remote.studio.draft import Draft, add_kind, plan_of
from remote.studio.screens import ScreenSource

ACTIONS = ("tap", "long_press", "swipe", "type", "key")
RECORDED_KEYS = ("BACK", "HOME")
MIN_SWIPE_PX = 20


@dataclass
class Recorder:
    source: ScreenSource
    draft: Draft
    acts: Acts
    locator: HybridLocator
    first_labels: set[str] = field(default_factory=set)
    on: bool = False

    def start(self, home_of: Callable[[str], tuple[str, ...]]) -> dict[str, Any]:
        """Recording starts; inside an app, with the launch that gets there (run now, so the phone is where a
        replay will be)."""
        front = self.source.front()
        launched = None
        if front and front not in SYSTEM_PACKAGES and not self.draft.steps:
            probe = Draft(self.draft.module)
            add_kind(probe, "launch", "", text=front, home=home_of(front))
            launched = self.acts.run(plan_of(self.draft.module, {"name": "launch", "patterns": ["launch"],
                                                                 "steps": probe.steps}, {}),
                                     f"studio record: launch {front}")
            if launched["status"] == "success":
                for step in probe.steps:
                    self.draft.add_step(step)
                self.draft.notes += probe.notes
        self.first_labels = labels_of(self.source.screen(fresh=True))
        self.on = True
        return {"recording": True, "launch": launched}

    def act(self, body: dict[str, Any]) -> dict[str, Any]:
        """One action of the author: the step it becomes, run on the phone, appended when it worked."""
        if not self.on:
            raise BadInput("not recording", hint="POST /api/record/start first")
        step = self.step_for(body)
        plan = plan_of(self.draft.module, {"name": "recorded", "patterns": ["recorded step"], "steps": [step]},
                       self.draft.examples)
        result = self.acts.run(plan, f"studio record: {plan.steps[0].label}", crops=self.draft.shelf.images)
        if result["status"] == "success":
            self.draft.add_step(step)
        return {"step": step, "result": result, "recorded": result["status"] == "success"}

    def step_for(self, body: dict[str, Any]) -> dict[str, Any]:
        action = body.get("action")
        if action not in ACTIONS:
            raise BadInput(f"record action {str(action)[:20]!r}", hint=f"one of {', '.join(ACTIONS)}")
        if action == "type":      # into the field at x, y (tapped first: one step, as templates say it), else the focused one
            field = self._names(_point(body, "x", "y")) if "x" in body else []
            probe = Draft(self.draft.module)
            typed = add_kind(probe, "type", field[0] if field else "", text=str(body.get("text") or ""),
                             slot=str(body.get("slot") or ""))
            self.draft.examples.update(probe.examples)
            return typed
        if action == "key":
            key = str(body.get("key", "")).upper()
            if key not in RECORDED_KEYS:
                raise BadInput(f"a recorded key is {' or '.join(RECORDED_KEYS)}, not {key[:20]!r}")
            return {"action": "press_key", "params": {"key": key}}
        x, y = _point(body, "x", "y")
        if action == "swipe":
            return self._swipe((x, y), _point(body, "x2", "y2"))
        refs = self._names((x, y))
        step: dict[str, Any] = {"action": action, "target_ref": refs[0] if len(refs) == 1 else refs}
        if action == "long_press":
            step["params"] = {"duration": int(body.get("duration") or 800)}
        return step

    def _names(self, point: tuple[int, int]) -> list[str]:
        """The compiler's names for the element at ``point``; else a crop of it; else the point itself."""
        screen = self.source.screen(fresh=True)
        refs = target_forms(screen, point, self.locator, stable_ids=self.draft.module.stable_ids)
        if refs:
            return refs
        crop = crop_at(screen, point)
        return [self.draft.shelf.add(crop, screen.size)] if crop is not None else [f"xy:{point[0]},{point[1]}"]

    def _swipe(self, start: tuple[int, int], end: tuple[int, int]) -> dict[str, Any]:
        w, h = self.source.screen().size
        dx, dy = end[0] - start[0], end[1] - start[1]
        if max(abs(dx), abs(dy)) < MIN_SWIPE_PX:
            raise BadInput("that swipe is a tap: move further", hint=f"at least {MIN_SWIPE_PX} px")
        if abs(dy) >= abs(dx):
            direction, share = ("up" if dy < 0 else "down"), abs(dy) / h
        else:
            direction, share = ("left" if dx < 0 else "right"), abs(dx) / w
        return {"action": "swipe", "params": {"direction": direction, "distance": round(min(max(share, 0.1), 0.9), 2)}}

    def stop(self) -> dict[str, Any]:
        """Recording ends; final checks proposed from the last screen, as choices (the first ones chosen)."""
        self.on = False
        screen = self.source.screen(fresh=True)
        found = anchors_of(screen, (-1, -1), avoid=set(self.draft.examples.values()), elsewhere=self.first_labels,
                           limit=3)
        found = list(dict.fromkeys(found + _titles(screen)))   # the compiler's anchors (chosen), then the title
        choices: list[dict[str, Any]] = [{"kind": "check", "label": f"the screen shows {ref}",
                                          "success_check": {"target": ref}, "chosen": i == 0}
                                         for i, ref in enumerate(found)]
        app = self.source.front() or self.draft.module.package
        if app and app not in SYSTEM_PACKAGES:
            choices.append({"kind": "app", "label": f"{app} is in front", "success_check": {"app": app},
                            "chosen": True})
        proposed: dict[str, Any] = {}
        for choice in choices:
            if choice["chosen"]:
                proposed.update(choice["success_check"])
        return {"recording": False, "proposed_check": proposed, "choices": choices, "steps": len(self.draft.steps)}


def _titles(screen: Screen) -> list[str]:
    """The page's title: a text in the top bar (the top tenth of the screen, below the status bar), which names the
    page even where the first screen showed the same words as a row (anchors_of leaves those out, rightly: such a
    check also holds on the first screen), offered as a choice the person may tick."""
    tree = screen.tree()
    height = screen.size[1]
    return [f"text:{n.text.strip()}" for n in (tree.visible_nodes() if tree is not None else [])
            if n.text.strip() and not n.clickable and 0.02 * height < n.bounds[1] < 0.1 * height][:1]


def _point(body: dict[str, Any], kx: str, ky: str) -> tuple[int, int]:
    x, y = body.get(kx), body.get(ky)
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (x, y)):
        raise BadInput(f"{kx} and {ky} must be numbers (device pixels)")
    return int(x), int(y)  # type: ignore[arg-type]
