"""What an MCP session did that worked, kept so that the agent can save it as a learned task.

Each acting call that succeeded adds its steps here, as the runner would have
planned them (``launch_app``, ``tap`` at the element's point, ``input_text``,
``press_key``, ``swipe``), with the screen it decided on: the UI tree dumped for
the act (`Session.tree`), and the image only where the element shows no text
(then a reference crop is its target). A ``wait_for`` that found its target is
the check the sequence ended with. `remote.mcp.learn` turns the lot into a
candidate template through the same compiler as a model's run
(`remote.runner.learning.compile_run`).

Bounded: the last ``MAX_ACTS`` acts are kept; ``clear`` starts again (after a
save, and after ``run_task``, whose own runs are learned by the runner).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from remote.core.locate.screen import Screen
from remote.core.locate.ui_tree import UITree
from remote.core.plan.actions import ArgsError
from remote.core.plan.steps import StepPlan
from remote.core.records import ActionName
from remote.runner.learning import candidate_forms

MAX_ACTS = 50


@dataclass
class Act:
    step: StepPlan
    point: tuple[int, int] | None = None     # device pixels of a touch
    screen: Screen | None = None             # what the act decided on
    checked: bool = True                     # typing: the field read back as typed (so it is no password field)


@dataclass
class Journal:
    acts: list[Act] = field(default_factory=list)
    seen: str = ""               # the target a wait_for found after the last act: the check the sequence ends with
    dropped: int = 0             # acts that fell off the front (more than MAX_ACTS)

    def clear(self) -> None:
        self.acts.clear()
        self.seen, self.dropped = "", 0

    def _add(self, action: ActionName, description: str, params: dict[str, Any], *,
             point: tuple[int, int] | None = None, screen: Screen | None = None, target_ref: str | None = None,
             asked: str = "") -> None:
        """``asked``: the person was asked before this act (the gate's note): the saved step keeps that mark and
        asks again on every replay."""
        try:
            step = StepPlan(step=len(self.acts) + 1, action=action, description=description, target_ref=target_ref,
                            params=params, source="mcp", sensitive=bool(asked), sensitive_reason=asked)
        except ArgsError:   # a value no template can hold (a text too long ...): the sequence cannot be saved
            self.acts.clear()
            return
        self.acts.append(Act(step, point, screen))
        self.seen = ""
        if len(self.acts) > MAX_ACTS:
            del self.acts[0]
            self.dropped += 1

    # ------------------------------------------------------------------ what the tools report
    def touched(self, action: ActionName, point: tuple[int, int], what: str, screen: Screen | None, *,
                asked: str = "", **params: Any) -> None:
        self._add(action, f"{action.value} {what}".strip(), params, point=point, screen=screen,
                  target_ref=f"xy:{point[0]},{point[1]}", asked=asked)

    def launched(self, package: str) -> None:
        self._add(ActionName.LAUNCH_APP, f"open {package}", {"package": package})

    def typed(self, text: str, clear: bool, point: tuple[int, int] | None = None, screen: Screen | None = None,
              *, checked: bool = True) -> None:
        """Typing, into the focused field or into the field at ``point`` (tapped first, as one step); not
        ``checked``: sent without a read-back, so the field may have been a password field."""
        self._add(ActionName.INPUT_TEXT, "type the text", {"text": text, **({"clear": True} if clear else {})},
                  point=point, screen=screen, target_ref=f"xy:{point[0]},{point[1]}" if point else None)
        if self.acts and not checked:
            self.acts[-1].checked = False

    def key(self, code: int, times: int) -> None:
        self._add(ActionName.PRESS_KEY, f"press key {code}", {"key": code, **({"times": times} if times > 1 else {})})

    def opened(self, url: str) -> None:
        self._add(ActionName.OPEN_URL, "open the page", {"url": url})

    def unsaveable(self) -> None:
        """An act no template step does (a double tap, a force-stop) or one never stored (a password typed):
        what came before it cannot be replayed without it, so the sequence starts again after it."""
        self.clear()

    def swiped(self, start: tuple[int, int], end: tuple[int, int], duration_ms: int) -> None:
        self._add(ActionName.SWIPE, "swipe", {"start": list(start), "end": list(end), "duration_ms": duration_ms})

    def found(self, target_ref: str) -> None:
        self.seen = target_ref


def screen_for(tree: UITree | None, point: tuple[int, int], size: tuple[int, int], capture: Any) -> Screen | None:
    """The screen an act at ``point`` decided on: its tree, with the phone's image only when the element there
    shows no text (the learned step's target is then a crop of it: ``capture()`` is called before the act)."""
    if tree is None:
        return None
    blank = Screen(np.zeros((size[1], size[0], 3), dtype=np.uint8), tree)
    if candidate_forms(blank, point):
        return blank
    image, secure = capture()
    return None if secure else Screen(image, tree)
