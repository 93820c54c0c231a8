"""Plan validation (table-style, pure) and the Planner through the loopback server."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import pytest
from PIL import Image

from remote.ai import prompting
from remote.ai.planner import Planner
from remote.core.locate.assets import AssetsManager
from remote.core.plan.schema import PlanError, parse_plan
from remote.core.records import ActionName, StepPlan, TargetType
from remote.errors import ModelError

GOOD = {
    "analysis": {"current_screen": "桌面", "target_state": "聊天", "estimated_steps": 3},
    "steps": [
        {"step": 1, "action": "tap", "target_ref": "wechat", "target_type": "icon", "description": "打开微信",
         "fallback": {"action": "swipe", "params": {"direction": "left"}}},
        {"step": 2, "action": "input_text", "target_ref": "dynamic:底部消息输入框", "params": {"text": "你好"}},
        {"step": 3, "action": "tap", "target_ref": "send_button", "success_condition": "消息出现"},
    ],
    "success_check": {"text": "你好"}, "success_criteria": "消息已发送", "potential_issues": ["需要登录"],
}
CHECK = {"app": "com.tencent.mm"}


def test_good_plan_parses_with_defaults():
    plan = parse_plan(GOOD)
    assert [s.action for s in plan.steps] == [ActionName.TAP, ActionName.INPUT_TEXT, ActionName.TAP]
    assert plan.steps[1].target_type is TargetType.DYNAMIC and plan.steps[1].params == {"text": "你好"}
    fallback = plan.steps[0].fallback
    assert fallback is not None and fallback.action is ActionName.SWIPE and fallback.params == {"direction": "left"}
    assert plan.success_check.text == ("你好",)
    assert (plan.steps[2].timeout, plan.steps[2].retry, plan.steps[2].wait_after) == (3000, 2, 300)
    assert plan.potential_issues == ["需要登录"] and "repairs" not in plan.analysis


@pytest.mark.parametrize("step, check", [
    ({"action": "Click", "target_ref": "text:微信"}, lambda s: s.action is ActionName.TAP),
    ({"action": "type", "text": "hi"}, lambda s: s.action is ActionName.INPUT_TEXT and s.params["text"] == "hi"),
    ({"action": "scroll", "direction": "UP"}, lambda s: s.params["direction"] == "up"),
    ({"action": "back"}, lambda s: s.action is ActionName.PRESS_KEY and s.params["key"] == "BACK"),
    ({"action": "tap", "params": {"x": 540, "y": 2280}}, lambda s: s.target_ref == "xy:540,2280"),
    ({"action": "tap", "target_ref": "text:好", "timeout": "5000", "retry": "3"},
     lambda s: (s.timeout, s.retry) == (5000, 3)),
    ({"action": "tap", "target_ref": "text:好", "retry": 9}, lambda s: s.retry == 5),
    ({"action": "tap", "target_ref": "text:好", "target_type": "button"}, lambda s: s.target_type is TargetType.TEXT),
    ({"action": "wait"}, lambda s: s.params["ms"] == 1000),
    ({"action": "tap", "target_ref": "wechat", "fallback": {"action": "fly"}}, lambda s: s.fallback is None),
])
def test_safe_repairs_are_made_and_listed(step, check):
    plan = parse_plan({"steps": [step], "success_check": CHECK}, screen_size=(1080, 2400))
    assert check(plan.steps[0])
    assert plan.analysis["repairs"]


@pytest.mark.parametrize("step, problem", [
    ({"action": "teleport"}, "unknown action 'teleport'"),
    ({"action": "tap"}, "tap needs a target_ref"),
    ({"action": "input_text"}, "input_text needs params.text"),
    ({"action": "swipe"}, "swipe needs params.direction"),
    ({"action": "swipe", "params": {"direction": "sideways"}}, "swipe direction must be one of up, down, left"),
    ({"action": "tap", "target_ref": "text:x", "wait_after": -100}, "wait_after -100 is outside"),
    ({"action": "tap", "target_ref": "text:x", "wait_before": "soon"}, "wait_before must be a finite number"),
    ({"action": "tap", "target_ref": "xy:5000,100"}, "outside the screen"),
    ({"action": "tap", "target_ref": "xy:abc"}, "must be 'xy:X,Y'"),
    ({"action": "tap", "target_ref": "text:"}, "names nothing"),
    ({"action": "press_key"}, "press_key needs"),
    ({"action": "open_url"}, "open_url needs params.url"),
    ("tap", "must be an object"),
])
def test_unusable_steps_are_rejected_with_a_message(step, problem):
    with pytest.raises(PlanError) as err:
        parse_plan({"steps": [{"action": "go_home"}, step], "success_check": CHECK}, screen_size=(1080, 2400))
    assert problem in str(err.value) and str(err.value).count("step 2") == 1


def test_all_problems_are_listed_at_once():
    with pytest.raises(PlanError) as err:
        parse_plan({"steps": [{"action": "fly"}, {"action": "input_text"}], "success_check": CHECK})
    assert len(err.value.problems) == 2


@pytest.mark.parametrize("data", [{}, {"steps": []}, "steps", {"steps": "tap"}])
def test_plans_without_steps_are_rejected(data):
    with pytest.raises(PlanError, match="no steps|must be a JSON object"):
        parse_plan(data)


def test_every_prompt_renders_strictly():
    names = prompting.available()
    assert {"planner", "plan_task", "replan", "correction"} <= set(names)
    for name in names:
        template = prompting.load_template(name)
        needed = prompting.placeholders(template)
        text = prompting.render(name, {k: f"<{k}>" for k in needed})
        assert "$" not in text.replace("$$", "")
        if name == "planner" or (name.startswith(("locate", "verify", "blocker", "quick")) and "note" not in name):
            assert text.startswith("purpose: ")
        if needed:
            with pytest.raises(prompting.PromptError, match="missing values"):
                prompting.render(name, {k: k for k in sorted(needed)[1:]})
    with pytest.raises(prompting.PromptError, match="not used"):
        prompting.render("correction", {"problem": "x", "typo": 1})


@pytest.fixture
def assets(tmp_path: Path) -> AssetsManager:
    (tmp_path / "icons").mkdir()
    Image.new("RGB", (40, 40), "green").save(tmp_path / "icons" / "wechat.png")
    (tmp_path / "index.json").write_text('{"icons": {"wechat": {"path": "icons/wechat.png", "aliases": ["微信"]}}}',
                                         encoding="utf-8")
    return AssetsManager(tmp_path)


def test_plan_through_the_server_lists_references_and_sends_the_screenshot(model_server, llm_client, assets):
    model_server.script("plan", GOOD)
    planner = Planner(llm_client.config, client=llm_client, assets=assets)
    plan = planner.plan("给张三发微信消息说你好", Image.new("RGB", (1080, 2400), "white"))
    assert plan.source == "model" and len(plan.steps) == 3
    request = model_server.requests[0]
    assert "wechat" in request.text and "微信 -> wechat" in request.text and "dynamic:" in request.text
    assert "给张三发微信消息说你好" in request.text and len(request.image_urls) == 1
    assert llm_client.usage.by_purpose["plan"]["calls"] == 1


def test_module_prompt_extends_the_planner(model_server, llm_client, tmp_path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "planner.txt").write_text("WeChat rule: the send button is $$send_button.\n",
                                                       encoding="utf-8")
    module = SimpleNamespace(name="wechat", package="com.tencent.mm", prompt_path=tmp_path / "prompts" / "planner.txt")
    model_server.script("plan", GOOD)
    plan = Planner(llm_client.config, client=llm_client).plan("发消息", None, module=module)
    assert plan.module == "wechat"
    assert "WeChat rule: the send button is $send_button." in model_server.requests[0].messages[0]["content"]


def test_text_only_model_plans_from_the_ui_tree(model_server, llm_config):
    from remote.ai.llm import LLMClient
    from tests.support.model_fixtures import FAST_RETRY
    client = LLMClient(dataclasses.replace(llm_config, supports_vision=False), retry=FAST_RETRY)
    xml = ('<hierarchy><node text="微信" bounds="[0,0][100,100]" clickable="true"/>'
           '<node text="设置" bounds="[100,0][200,100]"/></hierarchy>')
    model_server.script("plan", GOOD)
    Planner(client.config, client=client).plan("打开微信", Image.new("RGB", (1080, 2400)), hierarchy=xml)
    request = model_server.requests[0]
    assert request.image_urls == [] and "微信\n设置" in request.text


def test_bad_plan_gets_a_corrective_reask_with_the_problems(model_server, llm_client):
    bad = {"steps": [{"action": "teleport"}]}
    model_server.script("plan", bad, GOOD)
    plan = Planner(llm_client.config, client=llm_client).plan("t", None)
    assert len(plan.steps) == 3
    assert "unknown action 'teleport'" in model_server.requests[1].text


@pytest.mark.parametrize("replies", [
    ["no plan today", "still no plan"],
    [{"steps": [{"action": "input_text"}]}, {"steps": [{"action": "input_text"}]}],
    [{"analysis": {}}, {"analysis": {}}],
])
def test_unusable_plan_twice_is_a_model_error_with_raw(model_server, llm_client, replies):
    model_server.script("plan", *replies)
    with pytest.raises(ModelError) as err:
        Planner(llm_client.config, client=llm_client).plan("t", None)
    assert err.value.raw and err.value.purpose == "plan"
    assert len(model_server.requests) == 2


def test_replan_describes_the_failure(model_server, llm_client):
    model_server.script("plan", GOOD)
    failed = StepPlan(step=2, action=ActionName.TAP, target_ref="text:张三", description="点联系人")
    done = [StepPlan(step=1, action=ActionName.TAP, target_ref="wechat")]
    plan = Planner(llm_client.config, client=llm_client).replan(
        "给张三发消息", Image.new("RGB", (720, 1600)), failed, "target not found", done)
    assert plan.source == "replan"
    text = model_server.requests[0].text
    assert "2. tap text:张三 (点联系人)" in text and "target not found" in text and "1. tap wechat" in text


def test_planner_without_model_fails_clearly_on_use():
    from remote.config import LLMConfig
    from remote.errors import ModelNotConfigured
    planner = Planner(LLMConfig.none())
    with pytest.raises(ModelNotConfigured):
        planner.plan("t", None)


@pytest.mark.parametrize(("params", "success"), [
    ({"message": "没有找到这个联系人，无法完成"}, True),          # words, no status: the protocol says done
    ({"success": False, "message": "done"}, False),               # the flag decides, whatever the words
    ({"status": "failed", "message": "已完成"}, False),
    ({"status": "completed", "message": "failed to find it, used search instead"}, True),
])
def test_a_planned_finish_is_judged_by_its_status_never_by_its_words(model_server, llm_client, params, success):
    model_server.script("plan", {"steps": [{"action": "launch_app", "params": {"package": "com.tencent.mm"}},
                                           {"action": "finish", "params": params}],
                                 "success_check": CHECK})
    plan = Planner(llm_client.config, client=llm_client).plan("t", None)
    finish = plan.steps[-1].args
    assert finish.success is success and finish.message == params["message"]
