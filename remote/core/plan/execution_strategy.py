"""How much looking each step needs (ExecutionLevel), its waits, and batching of steps that need none.

=====  ===================  ==========================================================  ==========
level  name                 steps                                                       wait after
=====  ===================  ==========================================================  ==========
0      FIRE_AND_FORGET      launch_app, open_url, call, go_home, wait, press_key,       100-2500 ms
                            finish: act directly, no screenshot, no verification
1      QUICK_VERIFY         swipe, input_text into the focused field: act, cheap check   200 ms
2      LOCATE_AND_EXECUTE   tap / long_press / input_text on a free target (reference   300 ms
                            name, text:, id:, desc:, xy:, fixed:), back_to_home
3      FULL_AI              anything aimed at a ``dynamic:`` target (model locate)       800 ms
=====  ===================  ==========================================================  ==========

Consecutive level-0 steps form one batch and run back to back without
screenshots: ``[launch_app, wait, open_url] -> one batch, 0 model calls``.
"""

from __future__ import annotations

from collections.abc import Sequence

from remote.core.records import ActionName, ExecutionLevel, StepPlan

LEVEL0_ACTIONS = frozenset({ActionName.LAUNCH_APP, ActionName.OPEN_URL, ActionName.CALL, ActionName.GO_HOME,
                            ActionName.WAIT, ActionName.PRESS_KEY, ActionName.FINISH})
TARGETED_ACTIONS = frozenset({ActionName.TAP, ActionName.LONG_PRESS, ActionName.INPUT_TEXT})

# Default wait after an action (ms), per the design card; a step's own wait_after wins when larger.
ACTION_WAITS_MS: dict[ActionName, int] = {
    ActionName.LAUNCH_APP: 500,
    ActionName.OPEN_URL: 2500,
    ActionName.CALL: 500,
    ActionName.GO_HOME: 100,
    ActionName.WAIT: 0,
    ActionName.PRESS_KEY: 100,
    ActionName.FINISH: 0,
    ActionName.SWIPE: 200,
    ActionName.BACK_TO_HOME: 300,
    ActionName.TAKE_OVER: 0,
}
LEVEL_WAITS_MS = {ExecutionLevel.FIRE_AND_FORGET: 100, ExecutionLevel.QUICK_VERIFY: 200,
                  ExecutionLevel.LOCATE_AND_EXECUTE: 300, ExecutionLevel.FULL_AI: 800}


def classify(step: StepPlan) -> ExecutionLevel:
    """The level of one step (see the module table)."""
    target = step.target_ref or ""
    if target.startswith("dynamic:"):
        return ExecutionLevel.FULL_AI
    if step.action in LEVEL0_ACTIONS:
        return ExecutionLevel.FIRE_AND_FORGET
    if step.action is ActionName.SWIPE and not target:
        return ExecutionLevel.QUICK_VERIFY
    if step.action is ActionName.INPUT_TEXT and not target:
        return ExecutionLevel.QUICK_VERIFY
    return ExecutionLevel.LOCATE_AND_EXECUTE


def wait_after_ms(step: StepPlan, level: ExecutionLevel | None = None) -> int:
    """Milliseconds to wait after the step: the action's own settle time, or the step's if larger."""
    level = classify(step) if level is None else level
    base = ACTION_WAITS_MS.get(step.action, LEVEL_WAITS_MS[level])
    if level is ExecutionLevel.FULL_AI:
        base = max(base, LEVEL_WAITS_MS[level])
    return max(base, step.wait_after if step.wait_after is not None else 0)


def batch_steps(steps: Sequence[StepPlan]) -> list[list[StepPlan]]:
    """Group consecutive level-0 steps; every other step is a batch of its own.

    >>> from remote.core.records import StepPlan, ActionName as A
    >>> s = [StepPlan(1, A.LAUNCH_APP), StepPlan(2, A.WAIT), StepPlan(3, A.TAP, "text:OK"), StepPlan(4, A.GO_HOME)]
    >>> [[x.step for x in b] for b in batch_steps(s)]
    [[1, 2], [3], [4]]
    """
    batches: list[list[StepPlan]] = []
    for step in steps:
        level0 = classify(step) is ExecutionLevel.FIRE_AND_FORGET
        if level0 and batches and classify(batches[-1][-1]) is ExecutionLevel.FIRE_AND_FORGET:
            batches[-1].append(step)
        else:
            batches.append([step])
    return batches
