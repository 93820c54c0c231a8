"""A phone agent's turn -> the steps ``remote`` runs for it, and what the finished screen must show (pure).

A tap goes to the real element under the agent's point (the UI tree's tap target,
``snapping``), at that element's centre; with no element under it, it is a tap at
raw coordinates, which needs a person's yes, as does an element that says "支付" or
has no label, or a step the agent itself marks (AutoGLM's ``message="重要操作"``).
Text is typed into the focused field and read back; a launch goes by the app's
name; ``Take_over`` asks the person. Every step has ``retry=0``: the agent decides
what comes next.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from remote.ai.agent_model import AgentTurn
from remote.ai.answers import Verb
from remote.core.locate.screen import Screen
from remote.core.locate.snapping import holding, screen_elements
from remote.core.locate.tree_facts import switch_state
from remote.core.plan import sensitivity
from remote.core.plan.actions import ArgsError
from remote.core.plan.checks import SuccessCheck, ToggleCheck
from remote.core.plan.steps import StepPlan
from remote.core.records import ActionName

MAX_WAIT_S = 10.0
SCROLL_TO_FINGER = {"down": "up", "up": "down", "left": "right", "right": "left"}   # content moves, finger opposes
SWITCH_ON = ("打开", "开启", "启用", "turn on", "enable", "switch on")
SWITCH_OFF = ("关闭", "关掉", "停用", "turn off", "disable", "switch off")


@dataclass
class Translated:
    """The steps for one turn (empty when nothing can be run: ``problem`` says why, and is fed back)."""

    steps: list[StepPlan] = field(default_factory=list)
    note: str = ""
    problem: str = ""
    switch: str = ""          # the title of a switch row the turn taps (for the final check of "打开X" tasks)


def _step(action: ActionName, description: str, **kw: object) -> StepPlan:
    return StepPlan(step=0, action=action, description=description, source="agent", retry=0, **kw)  # type: ignore[arg-type]


def _tap(turn: AgentTurn, screen: Screen, words: tuple[str, ...]) -> Translated:
    assert turn.point is not None
    action = ActionName.LONG_PRESS if turn.verb is Verb.LONG_PRESS else ActionName.TAP
    tree = screen.tree()
    hits = holding(turn.point, screen_elements(tree))
    if hits:
        element = hits[0]
        (x, y), label = element.center, element.description
        reason = sensitivity.label_reason(action.value, label, words)
        note = f"{turn.verb.value} {list(turn.point)} -> {label[:40] or 'an element'} at {list(element.bbox)}"
        switch = label.split(" / ")[0] if tree is not None and switch_state(tree.nodes, element.bbox) is not None else ""
    else:
        (x, y), label, switch = turn.point, "", ""
        reason = f"a {action.value} at raw coordinates {list(turn.point)} the model chose, with no element under it"
        note = f"{turn.verb.value} {list(turn.point)} (no element of the screen there)"
    if turn.sensitive:
        reason = f"the agent marks it {turn.sensitive!r}" + (f"; {reason}" if reason else "")
    step = _step(action, f"agent: {label[:60] or 'a point'}", target_ref=f"xy:{x},{y}", sensitive=bool(reason),
                 sensitive_reason=reason)
    return Translated([step], note, switch=switch)


def steps_for(turn: AgentTurn, screen: Screen, words: tuple[str, ...] = ()) -> Translated:
    """The steps that carry out ``turn`` on ``screen`` (``FINISH`` has none: the caller ends the loop)."""
    try:
        return _steps_for(turn, screen, words)
    except ArgsError as exc:   # a value the step grammar refuses (a text too long ...): fed back, not run
        return Translated(problem=f"{turn.verb.value} refused: {exc}")


def _steps_for(turn: AgentTurn, screen: Screen, words: tuple[str, ...]) -> Translated:
    verb = turn.verb
    if verb in (Verb.TAP, Verb.DOUBLE_TAP, Verb.LONG_PRESS):
        return _tap(turn, screen, words)
    if verb is Verb.TYPE:
        text = turn.text.rstrip("\n")
        steps = [_step(ActionName.INPUT_TEXT, "agent: type", params={"text": text, "clear": True})]
        if turn.point is not None:   # GLM-V's input_text and ShowUI's INPUT name the field: it is tapped first
            steps[:0] = _tap(replace(turn, verb=Verb.TAP), screen, words).steps
        if turn.text.endswith("\n"):   # UI-TARS: a trailing newline submits
            steps.append(_step(ActionName.PRESS_KEY, "agent: submit", params={"key": "ENTER"}))
        return Translated(steps, f"type {text[:40]!r}")
    if verb is Verb.SWIPE:
        if turn.point is not None and turn.end is not None:
            params: dict[str, object] = {"start": list(turn.point), "end": list(turn.end)}
        else:
            finger = SCROLL_TO_FINGER.get(turn.direction.lower())
            if finger is None:
                return Translated(problem=f"a swipe needs two points or a direction, not {turn.direction!r}")
            params = {"direction": finger}
        return Translated([_step(ActionName.SWIPE, "agent: swipe", params=params)], f"swipe {params}")
    simple = {Verb.LAUNCH: (ActionName.LAUNCH_APP, {"app": turn.text}), Verb.BACK: (ActionName.PRESS_KEY, {"key": "BACK"}),
              Verb.HOME: (ActionName.GO_HOME, {}), Verb.ENTER: (ActionName.PRESS_KEY, {"key": "ENTER"}),
              Verb.WAIT: (ActionName.WAIT, {"ms": int(min(turn.seconds or 1.0, MAX_WAIT_S) * 1000)}),
              Verb.TAKE_OVER: (ActionName.TAKE_OVER, {"message": turn.text or "the agent asks a person to act"})}
    if verb in simple:
        action, values = simple[verb]
        return Translated([_step(action, f"agent: {verb.value}", params=values)], f"{verb.value} {turn.text[:40]}".strip())
    return Translated(problem=f"{verb.value} is not run by remote")


def _shares(a: str, b: str, n: int = 2) -> bool:
    a, b = sensitivity.normalize(a), sensitivity.normalize(b)
    return any(a[i:i + n] in b for i in range(len(a) - n + 1))


def toggle_check(task: str, switches: list[str]) -> SuccessCheck:
    """For "打开X" / "关闭X" ("turn on X") tasks: the switch the agent operated whose title shares two characters
    with X must end in that state. Empty when the task is no such task or no such switch was touched."""
    lowered = task.lower()
    on = next((True for w in SWITCH_ON if w in lowered), None)
    off = next((False for w in SWITCH_OFF if w in lowered), None)
    state = on if on is not None else off
    if state is None:
        return SuccessCheck()
    subject = re.sub("|".join(re.escape(w) for w in (*SWITCH_ON, *SWITCH_OFF)), "", lowered)
    for title in reversed(switches):
        if title and _shares(title, subject):
            return SuccessCheck(toggle=(ToggleCheck(f"text:{title}", state),))
    return SuccessCheck()
