"""The shipped templates that answer, branch and scroll (issue 28), judged by the simulated phone's state:
typed answers on every simulated WeChat release and both ROMs with 0 model calls, 打开蓝牙 twice leaves
Bluetooth on, a dialog dismissed only when it is there; answers in --json, batch.json and MCP; -e in batch
files; a model's plan that uses the same step kinds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from remote.cli import main
from remote.core.records import StepStatus, TaskResult, TaskStatus
from remote.sim.apps import wechat
from remote.sim.versions import RANDOM, WECHAT_VERSIONS
from tests.test_apps import write_module
from tests.test_runner_model import plan

ROMS = ("aosp", "miui")
WECHAT = [{"versions": {"wechat": v}, "rom": rom} for v in (*WECHAT_VERSIONS, RANDOM) for rom in ROMS]
CONTACTS = ("张三", "李四", "王五", "文件传输助手")
MORNING = """\
    tasks:
      - name: morning_chat
        patterns: [打开早安聊天]
        env: [contact]              # given with -e contact=..., or a batch entry's env:
        steps:
          - run: {task: open_chat, module: wechat, slots: {contact: "{contact}"}}
        success_check: {text: "{contact}"}
"""


def answered(result: TaskResult) -> object:
    from remote.commands._run_task import summary

    assert result.status is TaskStatus.SUCCESS, result.error_message
    assert result.model_usage.calls == 0 and result.plan.source == "template"
    return json.loads(json.dumps(summary(result), ensure_ascii=False))["answer"]   # as --json prints it


@pytest.mark.slow
@pytest.mark.parametrize("sim_scenario", WECHAT, indirect=True, ids=[f"{s['versions']['wechat']}-{s['rom']}"
                                                                     for s in WECHAT])
def test_last_message_on_every_wechat_release_and_rom(make_runner, sim_phone, sim_scenario):
    key = (sim_scenario["versions"]["wechat"], sim_scenario["rom"])
    contact = CONTACTS[[(s["versions"]["wechat"], s["rom"]) for s in WECHAT].index(key) % len(CONTACTS)]
    assert answered(make_runner().run(f"微信里{contact}最后一条消息是什么")) == wechat.last_message(sim_phone, contact)


@pytest.mark.slow
def test_the_last_message_is_the_one_just_sent(make_runner, sim_phone):
    assert make_runner().run("给张三发消息说下午三点开会").status is TaskStatus.SUCCESS
    assert answered(make_runner().run("微信里张三最后一条消息是什么")) == "下午三点开会"
    assert sim_phone.snapshot()["chats"] == {"张三": ["下午三点开会"]}


@pytest.mark.slow
@pytest.mark.parametrize("sim_scenario", [{"rom": r} for r in ROMS], indirect=True, ids=ROMS)
def test_switch_questions_answer_the_phones_state_on_both_roms(make_runner, sim_phone):
    assert sim_phone.settings["bluetooth"] is False and sim_phone.settings["wlan"] is True
    assert answered(make_runner().run("蓝牙是否打开")) is False
    sim_phone.settings["bluetooth"] = True
    sim_phone.changed()
    assert answered(make_runner().run("蓝牙是否打开")) is True
    assert answered(make_runner().run("WLAN开着吗")) is True
    assert sim_phone.settings == {**sim_phone.settings, "bluetooth": True, "wlan": True}   # asking changed nothing


@pytest.mark.slow
@pytest.mark.parametrize("sim_scenario", [{"rom": r} for r in ROMS], indirect=True, ids=ROMS)
def test_android_version_is_read_from_about_phone_reached_by_scrolling(make_runner, sim_phone, sim_scenario):
    result = make_runner().run("安卓版本是多少")
    assert answered(result) == "13"
    scroll = next(sr for sr in result.step_results if sr.step.action.value == "scroll_until_visible")
    swipes = [c for c in sim_phone.snapshot()["commands"] if c.removeprefix("cmd ").startswith("input swipe")]
    # AOSP's 关于手机 is below the fold; MIUI's 我的设备 is the first row
    assert len(swipes) == (1 if sim_scenario["rom"] == "aosp" else 0), scroll.notes
    assert sim_phone.snapshot()["foreground"] == {"package": "com.android.settings", "screen": "about"}


@pytest.mark.slow
@pytest.mark.parametrize("sim_scenario", [{"rom": r} for r in ROMS], indirect=True, ids=ROMS)
def test_turning_bluetooth_on_twice_leaves_it_on(make_runner, sim_phone):
    first, second = make_runner().run("打开蓝牙"), None
    assert first.status is TaskStatus.SUCCESS and sim_phone.settings["bluetooth"] is True
    second = make_runner().run("打开蓝牙")
    assert second.status is TaskStatus.SUCCESS and sim_phone.settings["bluetooth"] is True
    toggles = [sr for sr in (first.step_results[-1], second.step_results[-1])]
    assert [sr.status for sr in toggles] == [StepStatus.SUCCESS, StepStatus.SKIPPED]
    assert "does not hold (the switch is on)" in toggles[1].notes[0]


@pytest.mark.slow
def test_good_morning_takes_its_contact_from_minus_e_and_the_sentence_wins(make_runner, sim_phone):
    env = (("contact", "张三"),)
    assert make_runner(env=env).run("发早安消息").status is TaskStatus.SUCCESS
    assert make_runner(env=env).run("给王五发早安消息").status is TaskStatus.SUCCESS
    assert sim_phone.snapshot()["chats"] == {"张三": ["早安"], "王五": ["早安"]}


@pytest.mark.slow
@pytest.mark.sim(wechat_permission_dialog=True)
def test_the_permission_dialog_is_answered_only_when_it_is_there(make_runner, sim_phone):
    first = make_runner().run("微信里王五最后一条消息是什么")
    assert answered(first) == "好的，收到" and not sim_phone.permission_pending
    allow = first.step_results[1]
    assert allow.step.target_ref == "text:允许" and allow.status is StepStatus.SUCCESS
    assert allow.notes[0].startswith("when visible: text:允许")
    again = make_runner().run("微信里王五最后一条消息是什么")     # no dialog now: the step is skipped, said why
    assert answered(again) == "好的，收到"
    assert again.step_results[1].status is StepStatus.SKIPPED
    assert again.step_results[1].notes == ["skipped: when visible: text:允许 does not hold (text:允许 not on the screen)"]


@pytest.mark.slow
def test_answers_in_batch_rows_and_env_from_batch_files(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_module(tmp_path / "mods", "morning", "name: morning\nkeywords: [早安]\n", MORNING)
    monkeypatch.setenv("REMOTE_MODULES", str(tmp_path / "mods"))
    (tmp_path / "fast.yaml").write_text("uiautomator_delay_ms: 0\nrom: miui\n", encoding="utf-8")
    (tmp_path / "b.yaml").write_text("- task: 蓝牙是否打开\n- task: 打开早安聊天\n  env: {contact: 王五}\n"
                                     "- task: 微信里李四最后一条消息是什么\n", encoding="utf-8")
    code = main(["batch", "b.yaml", "--device", "sim", "--scenario", "fast.yaml", "--json", "--runs-dir", "runs"])
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["answer"] for r in rows] == [False, None, "[图片]"] and code == 0, rows
    record = json.loads((Path(rows[1]["record"]) / "run.json").read_text(encoding="utf-8"))
    assert any(s["step"]["target_ref"] == "text:王五" and s["status"] == "success" for s in record["steps"])
    assert record["final_check"]["passed"] is True and "'王五' on the screen" in record["final_check"]["summary"]
    doc = json.loads(next((tmp_path / "runs").glob("batch-*/batch.json")).read_text(encoding="utf-8"))
    assert doc["rows"][0]["answer"] is False


def test_mcp_run_task_says_the_answer():
    from remote.mcp.tasks import summary

    result = TaskResult(status=TaskStatus.SUCCESS, task="蓝牙是否打开", answer=False)
    assert summary(result).splitlines()[1] == "answer: false"


@pytest.mark.slow
def test_a_models_plan_may_check_read_and_answer(make_runner, sim_phone, model_server, llm_config):
    model_server.script("plan", {**plan({"action": "launch_app", "params": {"package": "com.tencent.mm"}},
                                        {"action": "back_to_home"},
                                        {"action": "wait_until", "params": {"visible": "text:王五", "timeout_ms": 2000}},
                                        {"action": "extract", "params": {"right_of": "text:王五", "as": "when"}},
                                        check={"app": "com.tencent.mm"}), "answer": "王五: {when}"})
    result = make_runner(llm_config).run("王五的消息是什么时候发的")
    assert result.status is TaskStatus.SUCCESS, result.error_message
    assert result.answer == "王五: 昨天" and result.model_usage.calls == 1 and result.plan.source == "model"


@pytest.mark.slow
@pytest.mark.sim(wechat_permission_dialog=True)
def test_a_learned_task_keeps_its_flow_steps_and_replays_them_free(make_runner, sim_phone, model_server, llm_config,
                                                                   tmp_path):
    """The model's plan answers the dialog only when it is there and checks the list mid-way; learned (issue 27),
    the task keeps both, as written, and replays with no model: the `when` skips on a phone with no dialog."""
    from remote.apps.learned import LearnedStore
    from remote.runner.learner import Learner

    store = LearnedStore(tmp_path / "learned")
    model_server.script("plan", plan({"action": "launch_app", "params": {"package": "com.tencent.mm"}},
                                     {"action": "tap", "target_ref": "text:允许", "when": {"visible": "text:允许"}},
                                     {"action": "assert_visible", "target_ref": "text:通讯录"},
                                     {"action": "tap", "target_ref": "role:RelativeLayout:通讯录"},
                                     check={"text": "新的朋友"}))
    first = make_runner(llm_config, learner=Learner(store)).run("看看微信的联系人列表")
    assert first.status is TaskStatus.SUCCESS and first.learning.get("learned"), first.error_message
    written = store.get(first.learning["learned"]).template.steps
    assert {"assert_visible": {"target": "text:通讯录"}} in written
    assert any(s.get("when") == {"visible": "text:允许"} for s in written)
    sim_phone.home()
    again = make_runner(llm_config, learner=Learner(store)).run("看看微信的联系人列表")
    assert again.status is TaskStatus.SUCCESS and again.model_usage.calls == 0, again.error_message
    assert again.plan.source == "learned" and StepStatus.SKIPPED in [sr.status for sr in again.step_results]
