"""A phone agent's turn -> the steps remote runs (pure): taps on real elements, the gate, the final check."""

from __future__ import annotations

import pytest

from remote.ai.agent_model import AgentTurn
from remote.ai.answers import Verb
from remote.core.records import ActionName
from remote.runner.agent_steps import steps_for, toggle_check
from tests.support import dialect_cases as dc

SIZE = (1080, 2400)
SCREEN = dc.screen(SIZE)
BOXES = dc.layout(SIZE)


def test_a_tap_goes_to_the_centre_of_the_element_under_the_point():
    x1, y1, x2, y2 = BOXES["设置"]
    out = steps_for(AgentTurn(Verb.TAP, point=(x1 + 5, y2 - 5)), SCREEN)
    step = out.steps[0]
    assert step.action is ActionName.TAP and step.target_ref == f"xy:{(x1 + x2) // 2},{(y1 + y2) // 2}"
    assert not step.sensitive and step.retry == 0 and step.source == "agent" and "设置" in out.note


@pytest.mark.parametrize("turn, reason", [
    (AgentTurn(Verb.TAP, point=(5, 5)), "raw coordinates"),                       # no element there
    (AgentTurn(Verb.TAP, point=dc.centre(BOXES["我"]), sensitive="重要操作"), "重要操作"),   # the agent flags it
])
def test_what_needs_a_person_is_marked(turn, reason):
    turn = AgentTurn(turn.verb, point=tuple(int(v) for v in turn.point), sensitive=turn.sensitive)
    step = steps_for(turn, SCREEN).steps[0]
    assert step.sensitive and reason in step.sensitive_reason


@pytest.mark.parametrize("turn, action, params", [
    (AgentTurn(Verb.TYPE, text="你好\n"), ActionName.INPUT_TEXT, {"text": "你好", "clear": True}),
    (AgentTurn(Verb.LAUNCH, text="微信"), ActionName.LAUNCH_APP, {"app": "微信"}),
    (AgentTurn(Verb.BACK), ActionName.PRESS_KEY, {"key": "BACK"}),
    (AgentTurn(Verb.WAIT, seconds=99), ActionName.WAIT, {"ms": 10_000}),
    (AgentTurn(Verb.SWIPE, point=(500, 1800), end=(500, 600)), ActionName.SWIPE, {"start": [500, 1800], "end": [500, 600]}),
    (AgentTurn(Verb.SWIPE, point=(500, 1800), direction="down"), ActionName.SWIPE, {"direction": "up"}),
    (AgentTurn(Verb.TAKE_OVER, text="请登录"), ActionName.TAKE_OVER, {"message": "请登录"}),
])
def test_other_turns(turn, action, params):
    out = steps_for(turn, SCREEN)
    assert out.steps[0].action is action and out.steps[0].params == params
    if turn.text.endswith("\n"):
        assert out.steps[1].params == {"key": "ENTER"}


def test_a_turn_the_step_grammar_refuses_is_fed_back_not_run():
    out = steps_for(AgentTurn(Verb.TYPE, text="x" * 100_000), SCREEN)
    assert not out.steps and "refused" in out.problem
    assert "not run" in steps_for(AgentTurn(Verb.FINISH), SCREEN).problem


@pytest.mark.parametrize("task, switches, expected", [
    ("打开深色模式", ["深色主题"], ("text:深色主题", True)),
    ("关掉蓝牙", ["WLAN", "蓝牙"], ("text:蓝牙", False)),
    ("turn on bluetooth", ["Bluetooth"], ("text:Bluetooth", True)),
    ("打开深色模式", ["蓝牙"], None),            # the switch it turned has nothing to do with the task
    ("给张三发消息", ["深色主题"], None),          # not a switch task
])
def test_the_final_check_of_a_switch_task(task, switches, expected):
    check = toggle_check(task, switches)
    assert ((check.toggle[0].target, check.toggle[0].on) if check.toggle else None) == expected
