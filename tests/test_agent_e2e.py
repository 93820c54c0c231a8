"""Phone-agent models driving whole tasks in their own protocols on the simulated phone.

The real openai client talks to the loopback server, which answers in AutoGLM-Phone's and
UI-TARS's own words (remote/sim/dialects.py): ``do(action="Tap", element=[x,y])`` on a 0-999
grid, ``click(start_box='<|box_start|>(x,y)<|box_end|>')`` in pixels of the frame it saw.
The scripted model looks at the phone (the widget it names, at its real place) like a model
that reads the screen right. ``remote`` keeps the rest: taps snapped to real elements, text
read back, the sensitivity gate, the budget, no-progress detection, and the final check,
which alone decides SUCCESS: a ``finish`` on an unfinished screen ends FAILED.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from remote.apps.learned import LearnedStore
from remote.core.records import FailureReason, TaskStatus
from remote.runner.learner import Learner
from remote.sim.phone import SimPhone
from remote.sim.widgets import Widget

pytestmark = pytest.mark.slow

AGENTS = {"autoglm-phone": "autoglm-phone-9b", "ui-tars-1.5": "ui-tars-1.5-7b"}


def widget(phone: SimPhone, *, text: str = "", desc: str = "", cls: str = "") -> Widget:
    """The widget a person would tap: the last one with this text / desc / class (a result row, not the field
    that shows the same text)."""
    hits = [w for w in phone.tree().walk() if (not text or w.text == text) and (not desc or w.desc == desc)
            and (not cls or cls in w.cls) and w.bounds[2] > w.bounds[0]]
    assert hits, f"nothing shows {text or desc or cls} on {phone.screen_name}"
    plain = [w for w in hits if "EditText" not in w.cls] if not cls else hits
    return (plain or hits)[-1]


class Look:
    """One scripted turn of an agent that reads the screen: a neutral action with the real box of what it names."""

    def __init__(self, phone: SimPhone, action: str, *, text: str = "", desc: str = "", cls: str = "",
                 **extra: Any) -> None:
        self.phone, self.action, self.extra = phone, action, extra
        self.target = {"text": text, "desc": desc, "cls": cls} if (text or desc or cls) else None

    def __call__(self, request: Any) -> dict[str, Any]:
        reply: dict[str, Any] = {"action": self.action, "thought": f"下一步：{self.action}", **self.extra}
        if self.target is not None:
            reply["box"] = list(widget(self.phone, **self.target).bounds)
        return reply


@pytest.fixture
def agent(model_server, llm_config):
    def configure(family: str, mode: str = "auto"):
        model_server.family, model_server.screen = family, (1080, 2400)
        return dataclasses.replace(llm_config, model=AGENTS[family], agent=mode, timeout=5.0)
    return configure


def record(result) -> dict:
    return json.loads((Path(result.record_dir) / "run.json").read_text(encoding="utf-8"))


def headline(phone: SimPhone, *, send: bool = True) -> list[Any]:
    turns = [{"action": "launch", "app": "微信", "thought": "先打开微信"}, Look(phone, "tap", text="张三")]
    if send:
        turns += [Look(phone, "tap", cls="EditText"), {"action": "type", "text": "你好"},
                  Look(phone, "tap", text="发送")]
    return [*turns, {"action": "finish", "message": "已经给张三发送了你好"}]


@pytest.mark.parametrize("family", sorted(AGENTS))
def test_the_headline_task_driven_by_the_agent_in_its_protocol(make_runner, sim_phone, model_server, agent, family):
    model_server.script("agent", *headline(sim_phone))
    result = make_runner(agent(family, "always")).run("给张三发微信消息说你好")
    assert result.status is TaskStatus.SUCCESS, result.error_message
    assert sim_phone.snapshot()["chats"] == {"张三": ["你好"]}            # the phone's state, not the model's word
    assert result.plan.source == "agent" and result.plan.analysis["final_check_from"] == "template"
    assert result.final_check.passed is True and result.model_usage.by_purpose["agent"]["calls"] == 6
    replies = [r.answer for r in model_server.requests_for("agent")]
    assert all(a == "scripted reply" for a in replies)
    first = model_server.requests_for("agent")[0]
    assert ("do(action=" in first.text) if family == "autoglm-phone" else ("MOBILE_USE" in first.text
                                                                            or "click(start_box=" in first.text)
    taps = [sr for sr in result.step_results if sr.step.action.value == "tap"]
    assert all("->" in " ".join(sr.notes) for sr in taps)                # every tap went to a real element
    assert record(result)["status"] == "success"


@pytest.mark.parametrize("family", sorted(AGENTS))
def test_a_finish_claim_on_an_unfinished_screen_is_a_failure(make_runner, sim_phone, model_server, agent, family):
    model_server.script("agent", *headline(sim_phone, send=False))
    result = make_runner(agent(family, "always")).run("给张三发微信消息说你好")
    assert result.status is TaskStatus.FAILED and result.failure is FailureReason.FINAL_CHECK
    assert "已经给张三发送了你好" in result.error_message and "'你好' on the screen: NO" in result.error_message
    assert sim_phone.snapshot()["chats"] == {}


def dark_mode(phone: SimPhone, *, twice: bool = False) -> list[Any]:
    turns: list[Any] = [{"action": "launch", "app": "设置"}, Look(phone, "tap", text="显示"),
                        Look(phone, "tap", text="深色主题")]
    if twice:
        turns.append(Look(phone, "tap", text="深色主题"))
    return [*turns, {"action": "finish", "message": "已打开深色模式"}]


@pytest.mark.parametrize("family", sorted(AGENTS))
def test_a_task_no_template_covers_is_taken_over_by_the_agent(make_runner, sim_phone, model_server, agent, family):
    # "打开{app}" fits the system module, and no app is called 深色模式: the launcher search fails, the agent takes over
    model_server.script("agent", *dark_mode(sim_phone))
    result = make_runner(agent(family)).run("打开深色模式")
    assert result.status is TaskStatus.SUCCESS, result.error_message
    assert sim_phone.snapshot()["settings"]["dark_theme"] is True
    assert result.plan.analysis["after"]["template"] == "open_app_by_name"
    assert result.final_check.items[0].what == "text:深色主题 switched on"


@pytest.mark.slow
def test_a_task_the_agent_solved_is_learned_and_replays_with_the_model_server_down(
        make_runner, sim_phone, model_server, agent, tmp_path):
    store = LearnedStore(tmp_path / "learned")
    model_server.script("agent", *dark_mode(sim_phone))
    first = make_runner(agent("ui-tars-1.5", "always"), learner=Learner(store)).run("打开深色模式")
    assert first.status is TaskStatus.SUCCESS and first.plan_source == "agent", first.error_message
    name = first.learning["learned"]
    text = (store.folder / f"{name}.yaml").read_text(encoding="utf-8")
    assert "the phone agent's run" in text and "xy:" not in text     # the agent's points became the elements' texts

    sim_phone.settings["dark_theme"] = False                          # the person turns it off again
    model_server.stop()                                               # any model call now fails
    again = make_runner(agent("ui-tars-1.5", "always"), learner=Learner(store)).run("打开深色模式")
    assert again.status is TaskStatus.SUCCESS and again.plan_source == "learned", again.error_message
    assert again.model_usage.calls == 0 and sim_phone.snapshot()["settings"]["dark_theme"] is True


def test_an_agent_that_turns_the_switch_back_off_and_claims_success_fails(make_runner, sim_phone, model_server,
                                                                          agent):
    model_server.script("agent", *dark_mode(sim_phone, twice=True))
    result = make_runner(agent("ui-tars-1.5")).run("打开深色模式")
    assert result.status is TaskStatus.FAILED and "switched on: NO" in result.error_message
    assert sim_phone.snapshot()["settings"]["dark_theme"] is False


def test_an_agent_that_stops_before_the_switch_cannot_succeed(make_runner, sim_phone, model_server, agent):
    model_server.script("agent", {"action": "launch", "app": "设置"}, Look(sim_phone, "tap", text="显示"),
                        {"action": "finish", "message": "已打开深色模式"})
    result = make_runner(agent("autoglm-phone", "always")).run("把手机调成深色模式")
    assert result.status is TaskStatus.FAILED and "alone is not a success" in result.error_message


def test_take_over_and_a_sensitive_tap_go_to_the_person(make_runner, sim_phone, model_server, agent):
    model_server.script("agent", {"action": "take_over", "message": "请先登录"})
    asked: list[str] = []
    result = make_runner(agent("autoglm-phone", "always"), take_over=lambda m: asked.append(m) or False).run(
        "把手机调成深色模式")
    assert result.status is TaskStatus.ABORTED and asked == ["请先登录"]
    model_server.script("agent", {"action": "launch", "app": "设置"},
                        Look(sim_phone, "tap", text="显示", sensitive="重要操作"))
    result = make_runner(agent("autoglm-phone", "always")).run("把手机调成深色模式")
    assert result.status is TaskStatus.ABORTED and result.failure is FailureReason.NOT_CONFIRMED
    assert sim_phone.snapshot()["foreground"]["screen"] != "display"      # the flagged tap was not made


def test_an_agent_that_goes_round_in_circles_is_stopped(make_runner, sim_phone, model_server, agent):
    model_server.script("agent", {"action": "launch", "app": "设置"}, *[{"action": "wait"}] * 6)
    result = make_runner(agent("ui-tars-1.5", "always")).run("把手机调成深色模式")
    assert result.status is TaskStatus.FAILED and result.failure is FailureReason.NO_CHANGE
    assert "no progress" in result.error_message and len(model_server.requests_for("agent")) <= 5


def test_a_point_outside_the_screen_is_asked_again_then_never_tapped(make_runner, sim_phone, model_server, agent):
    outside = '<think>点这里</think><answer>do(action="Tap", element=[1500,300])</answer>'
    model_server.script("agent", outside, outside)
    result = make_runner(agent("autoglm-phone", "always")).run("把手机调成深色模式")
    assert result.status is TaskStatus.FAILED and result.failure is FailureReason.MODEL
    assert "outside the screen" in model_server.requests_for("agent")[1].text
    assert not [c for c in sim_phone.snapshot()["commands"] if c.startswith("input tap")]


def test_the_budget_bounds_the_agent(make_runner, sim_phone, model_server, agent):
    model_server.script("agent", {"action": "launch", "app": "设置"}, Look(sim_phone, "tap", text="显示"),
                        Look(sim_phone, "tap", text="亮度"))
    result = make_runner(agent("ui-tars-1.5", "always"), max_model_calls=2).run("把手机调成深色模式")
    assert result.status is TaskStatus.BUDGET_EXCEEDED and len(model_server.requests_for("agent")) == 2


def test_qwen_mobile_use_drives_and_a_model_that_reads_json_checks_the_task(make_runner, sim_phone, model_server,
                                                                             llm_config):
    model_server.family, model_server.screen = "qwen2.5-vl", (1080, 2400)
    config = dataclasses.replace(llm_config, model="qwen2.5-vl-7b-instruct", agent="always", timeout=5.0)
    model_server.script("agent", *dark_mode(sim_phone))
    model_server.script("verify", {"verified": True, "confidence": 0.9, "current_state": "深色主题已开启",
                                   "matches_expected": True, "screen_changed": True})
    result = make_runner(config).run("打开深色模式")      # "打开{app}" guesses an app: its check is not used
    assert result.status is TaskStatus.SUCCESS, result.error_message
    assert sim_phone.snapshot()["settings"]["dark_theme"] is True
    assert result.final_check.items[0].what == "text:深色主题 switched on" and not model_server.requests_for("verify")
    first = model_server.requests_for("agent")[0]
    assert "mobile_use" in first.text and "The screen's resolution is" in first.text
