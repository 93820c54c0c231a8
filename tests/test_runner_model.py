"""Whole tasks with a model: the real openai client talks to the loopback chat server (scripted replies),
the real adbutils client to the simulated phone. Free tiers first; model calls are counted and recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from remote.config import LLMConfig
from remote.core.records import TaskStatus
from tests.support.model_fixtures import SECRET_KEY


def plan(*steps: dict, analysis: str = "test plan", check: dict | None = None) -> dict:
    return {"analysis": {"current_screen": analysis}, "steps": [{"step": i, **s} for i, s in enumerate(steps, 1)],
            "success_check": check or {}, "success_criteria": "done", "potential_issues": []}


SEND_TO_WANGWU = plan(
    {"action": "launch_app", "params": {"package": "com.tencent.mm"}},
    {"action": "back_to_home"},
    {"action": "tap", "target_ref": "desc:搜索"},
    {"action": "input_text", "params": {"text": "王五"}},
    {"action": "tap", "target_ref": "text:王五"},
    {"action": "input_text", "target_ref": "editable:", "params": {"text": "收到了"}},
    {"action": "tap", "target_ref": "send_button"},
    {"action": "wait", "params": {"ms": 100}},
    check={"text": "收到了"},
)


@pytest.fixture
def model(llm_config: LLMConfig) -> LLMConfig:
    # Tests never wait for real backoff; the runner uses the config as a user would.
    return llm_config


def record(result) -> dict:
    return json.loads((Path(result.record_dir) / "run.json").read_text(encoding="utf-8"))


def test_a_task_no_template_covers_is_planned_by_the_model(make_runner, sim_phone, model_server, model):
    model_server.script("plan", plan({"action": "launch_app", "params": {"package": "com.android.settings"}},
                                     {"action": "tap", "target_ref": "text:显示"},
                                     check={"app": "com.android.settings"}))
    result = make_runner(model).run("看看屏幕亮度在哪里调")
    assert result.status is TaskStatus.SUCCESS, result.error_message
    assert result.plan.source == "model" and result.module == "system"
    assert sim_phone.snapshot()["foreground"] == {"package": "com.android.settings", "screen": "display"}
    assert result.model_usage.calls == 1 and result.model_usage.by_purpose["plan"]["calls"] == 1
    assert [sr.locate_result.method_used for sr in result.step_results if sr.locate_result] == ["tree"]
    assert record(result)["model_usage"]["calls"] == 1


def test_an_eight_step_plan_on_free_targets_costs_one_model_call(make_runner, sim_phone, model_server, model):
    model_server.script("plan", SEND_TO_WANGWU)
    result = make_runner(model).run("麻烦帮我跟王五讲一声收到了")
    assert result.status is TaskStatus.SUCCESS, result.error_message
    assert sim_phone.snapshot()["chats"] == {"王五": ["收到了"]}
    assert result.model_usage.calls <= 3 and len(model_server.requests) == result.model_usage.calls == 1
    tiers = [sr.locate_result.method_used for sr in result.step_results if sr.locate_result]
    assert tiers == ["tree", "tree", "tree", "template"]


def test_a_failing_step_triggers_a_replan(make_runner, sim_phone, model_server, model):
    model_server.script("plan",
                        plan({"action": "launch_app", "params": {"package": "com.android.settings"}},
                             {"action": "tap", "target_ref": "text:蓝牙和设备"}),
                        plan({"action": "tap", "target_ref": "text:蓝牙", "params": {"toggle": "on"}},
                             check={"toggle": {"target": "text:蓝牙", "state": "on"}}))
    # tree and OCR miss "蓝牙和设备"; the last tier asks the vision model, which does not see it either
    model_server.script("locate", {"found": False, "reason": "没有这一项", "suggestion": "换个入口"})
    result = make_runner(model).run("我想用蓝牙耳机")
    assert result.status is TaskStatus.SUCCESS, result.error_message
    assert sim_phone.snapshot()["settings"]["bluetooth"] is True
    plans = model_server.requests_for("plan")
    assert len(plans) == 2 and "蓝牙和设备" in plans[1].text
    replans = record(result)["plan"]["analysis"]["replans"]
    assert replans[0]["after_step"] == 2 and "没有这一项" in replans[0]["reason"]
    assert result.model_usage.calls == 3 and set(result.model_usage.by_purpose) == {"plan", "locate"}


@pytest.mark.sim(ad_popup=True)
def test_a_popup_that_appears_mid_task_is_dismissed(make_runner, sim_phone, model_server, model):
    model_server.script("plan", SEND_TO_WANGWU)
    result = make_runner(model).run("麻烦帮我跟王五讲一声收到了")
    assert result.status is TaskStatus.SUCCESS, result.error_message
    assert sim_phone.snapshot()["chats"] == {"王五": ["收到了"]}
    assert any("dismissed ad" in n for sr in result.step_results for n in sr.notes)
    assert result.model_usage.calls == 1  # the ad was handled offline, from the UI tree


def test_budget_stops_the_task_with_a_clear_status(make_runner, model_server, model):
    model_server.script("plan", plan({"action": "tap", "target_ref": "text:没有这个按钮"}),
                        plan({"action": "tap", "target_ref": "text:也没有这个"}))
    result = make_runner(model, max_model_calls=1).run("点一个不存在的按钮")
    assert result.status is TaskStatus.BUDGET_EXCEEDED
    assert "budget of 1 model calls" in result.error_message
    assert len(model_server.requests) == 1 and record(result)["status"] == "budget_exceeded"


def test_an_unusable_model_reply_is_a_recorded_failure(make_runner, model_server, model):
    model_server.script("plan", "I think you should tap somewhere nice", {"steps": "none"})
    result = make_runner(model).run("做点什么")
    assert result.status is TaskStatus.FAILED and "unusable" in result.error_message
    data = record(result)
    assert data["error_type"] == "ModelError" and data["model_reply"]


def test_ambiguous_targets_are_chosen_by_the_model_never_guessed(make_runner, sim_phone, model_server, model):
    # Two identical "昨天" labels in the chat list compete: the model picks one by number (set-of-mark).
    model_server.script("plan", plan({"action": "launch_app", "params": {"package": "com.tencent.mm"}},
                                     {"action": "tap", "target_ref": "text:昨天", "description": "李四那一行的时间"},
                                     check={"app": "com.tencent.mm"}))
    model_server.script("locate", {"found": True, "mark": 2, "confidence": 0.9, "reason": "second row"})
    result = make_runner(model).run("点开第二个昨天")
    step = result.step_results[1]
    assert "chose among competing candidates" in " ".join(step.notes)
    assert len(model_server.requests_for("locate")) == 1
    assert sim_phone.snapshot()["foreground"]["screen"] == "chat:李四"


def test_without_a_model_ambiguous_targets_are_not_tapped(make_runner, sim_phone, tmp_path):
    from remote.apps import ModuleRegistry
    from tests.test_apps import write_module

    write_module(tmp_path / "mods", "m", "name: m\n", """\
        tasks:
          - name: t
            patterns: [点昨天]
            steps:
              - {action: launch_app, params: {package: com.tencent.mm}}
              - {action: tap, target_ref: "text:昨天"}
        """)
    runner = make_runner()
    runner.registry = ModuleRegistry([tmp_path / "mods"])
    result = runner.run("点昨天")
    assert result.status is TaskStatus.FAILED and "not tapping a guess" in result.error_message
    assert len(result.step_results[1].locate_result.candidates) >= 2
    assert not [c for c in sim_phone.snapshot()["commands"] if c.removeprefix("cmd ").startswith("input tap")]


def test_take_over_pauses_for_the_person_and_resumes(make_runner, sim_phone, model_server, model):
    login = plan({"action": "take_over", "description": "请在手机上完成登录"},
                 {"action": "launch_app", "params": {"package": "com.android.settings"}},
                 check={"app": "com.android.settings"})
    model_server.script("plan", login, login)
    asked: list[str] = []
    result = make_runner(model, take_over=lambda msg: asked.append(msg) or True).run("登录后打开设置")
    assert result.status is TaskStatus.SUCCESS and asked == ["请在手机上完成登录"]
    result2 = make_runner(model, take_over=lambda msg: False).run("登录后打开设置")
    assert result2.status is TaskStatus.ABORTED


def test_the_api_key_never_reaches_the_record_or_logs(make_runner, model_server, model, caplog):
    caplog.set_level("DEBUG")
    model_server.script("plan", "garbage", "more garbage")
    result = make_runner(model).run("做点什么")
    text = "\n".join(p.read_text(encoding="utf-8") for p in Path(result.record_dir).iterdir()
                     if p.suffix in (".json", ".html"))
    assert SECRET_KEY not in text and SECRET_KEY not in caplog.text
    assert "sk-…456" in text  # the record shows which key, masked


def test_a_dynamic_target_is_located_by_the_vision_model(make_runner, sim_phone, model_server, model):
    model_server.script("plan", plan({"action": "launch_app", "params": {"package": "com.tencent.mm"}},
                                     {"action": "tap", "target_ref": "dynamic:右上角的放大镜图标"},
                                     check={"app": "com.tencent.mm"}))
    # the search icon is at [804, 78, 936, 210] on 1080x2400: on the 0-1000 scale of the image sent
    model_server.script("locate", {"found": True, "xmin": 745, "ymin": 33, "xmax": 866, "ymax": 87,
                                   "confidence": 0.9})
    result = make_runner(model).run("点右上角那个放大镜")
    assert result.status is TaskStatus.SUCCESS, result.error_message
    step = result.step_results[1]
    assert step.locate_result.method_used == "vision" and step.level == 3
    x, y = step.tap_point
    assert 804 <= x < 936 and 78 <= y < 210
    assert sim_phone.snapshot()["foreground"]["screen"] == "search"
    assert result.model_usage.by_purpose["locate"]["calls"] == 1
    # run.json names what the model was sent and how its numbers became device pixels (docs/models.md)
    call = record(result)["steps"][1]["locate_result"]["element"]["metadata"]["model_calls"][0]
    sent = model_server.requests_for("locate")[0].image_sizes()[-1]
    assert call["sent"] == list(sent) and call["family"] == "unknown" and call["scale"] == "norm1000"
    assert call["frame"]["source"] == [1080, 2400] and call["to_device"]["per_unit"] == [1.08, 2.4]


def test_what_the_model_finds_for_a_reference_is_learned_and_the_next_run_is_free(
        fast_adb, sim_phone, model_server, model, tmp_path):
    import numpy as np
    from PIL import Image

    from remote.apps import ModuleRegistry
    from tests.support.runner_fixtures import runner_for
    from tests.test_apps import write_module

    folder = write_module(tmp_path / "mods", "m", "name: m\n", """\
        tasks:
          - name: t
            patterns: [点放大镜]
            steps:
              - {action: launch_app, params: {package: com.tencent.mm}}
              - {action: tap, target_ref: 放大镜}
            success_check: {app: com.tencent.mm}
        """)
    (folder / "images").mkdir()
    # an outdated reference: nothing like today's icon, so every free tier misses it
    noise = np.random.default_rng(7).integers(0, 255, (90, 90, 3), dtype=np.uint8)
    Image.fromarray(noise).save(folder / "images" / "search_icon.png")
    (folder / "images" / "aliases.yaml").write_text("放大镜: search_icon\n", encoding="utf-8")
    model_server.script("locate", {"found": True, "xmin": 745, "ymin": 33, "xmax": 866, "ymax": 87, "confidence": 0.9})

    def runner():
        return runner_for(fast_adb, tmp_path, model, assets_dir=tmp_path / "assets",
                          registry=ModuleRegistry([tmp_path / "mods"]))

    first = runner().run("点放大镜")
    assert first.status is TaskStatus.SUCCESS, first.error_message
    assert first.step_results[1].locate_result.method_used == "vision"
    learned = list((tmp_path / "assets" / "custom").glob("search_icon__1080x2400.png"))
    assert learned and "learned a new reference variant" in " ".join(first.step_results[1].notes)
    fast_adb.press_back()
    second = runner().run("点放大镜")
    assert second.status is TaskStatus.SUCCESS, second.error_message
    assert second.step_results[1].locate_result.method_used == "template"
    assert len(model_server.requests_for("locate")) == 1   # the second run cost no model call
