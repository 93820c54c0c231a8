"""Learn once, replay free (docs/learning.md): a task the model solved runs again with no model.

Whole tasks on the simulated phone through the real adbutils client, the model through the real openai client
against the loopback server; the learned folder is each test's own. The phone's state is the judge.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from remote import cli
from remote.apps import APPS_DIR, ModuleRegistry
from remote.apps.learned import LearnedStore
from remote.core.device.adb_controller import ADBController
from remote.core.records import FailureReason, TaskStatus
from remote.runner.learn_slots import patterns_for, slot_values
from remote.runner.learner import Learner
from remote.sim import serve
from tests.support.model_fixtures import SECRET_KEY
from tests.support.runner_fixtures import no_sleep, runner_for


def plan(*steps: dict, check: dict, slots: dict | None = None) -> dict:
    analysis = {"current_screen": "home", **({"slots": slots} if slots else {})}
    return {"analysis": analysis, "steps": [{"step": i, **s} for i, s in enumerate(steps, 1)],
            "success_check": check, "success_criteria": "done"}


def send(contact: str, message: str, *, slots: bool = True, home: bool = True) -> dict:
    # back_to_home needs the wechat module's home markers; a model planning without the module leaves it out
    return plan({"action": "launch_app", "params": {"package": "com.tencent.mm"}},
                *([{"action": "back_to_home"}] if home else []),
                {"action": "tap", "target_ref": "desc:搜索", "description": "点搜索"},
                {"action": "input_text", "params": {"text": contact}},
                {"action": "tap", "target_ref": f"text:{contact}", "description": f"点联系人{contact}"},
                {"action": "input_text", "target_ref": "editable:", "params": {"text": message}},
                {"action": "tap", "target_ref": "text:发送"},
                check={"text": message}, slots={"contact": contact, "message": message} if slots else None)


BLUETOOTH = plan({"action": "launch_app", "params": {"package": "com.android.settings"}},
                 {"action": "tap", "target_ref": "text:已关联的设备"},
                 {"action": "tap", "target_ref": "text:蓝牙", "params": {"toggle": "on"}},
                 check={"toggle": {"target": "text:蓝牙", "state": "on"}})
BLUETOOTH_TASK = "我想用蓝牙耳机"


@pytest.fixture
def store(tmp_path: Path) -> LearnedStore:
    return LearnedStore(tmp_path / "learned")


# ---------------------------------------------------------------------- slots and patterns (pure)
def test_values_the_model_names_become_slots_and_both_sentence_forms_are_patterns():
    slots = slot_values("麻烦帮我跟王五讲一声明天见", {"contact": "王五", "message": "明天见"}, ["王五", "明天见"])
    assert slots == {"contact": "王五", "message": "明天见"}
    assert patterns_for("麻烦帮我跟王五讲一声明天见", slots) == ["麻烦帮我跟{contact}讲一声{message}",
                                                           "跟{contact}讲一声{message}"]


def test_typed_values_become_slots_without_names_and_a_value_said_twice_does_not():
    assert slot_values("给王五发消息说明天见", None, ["王五", "明天见", "发送"]) == {"text1": "王五", "text2": "明天见"}
    assert slot_values("王五王五", None, ["王五"]) == {}


def test_a_sentence_that_is_all_value_gives_no_pattern():
    assert patterns_for("王五", {"text1": "王五"}) == []


# ---------------------------------------------------------------------- learn, then replay free
@pytest.mark.slow
def test_a_model_solved_task_replays_free_for_other_values_even_with_the_model_server_down(
        make_runner, sim_phone, model_server, llm_config, store):
    model_server.script("plan", send("王五", "明天见"))
    first = make_runner(llm_config, learner=Learner(store)).run("麻烦帮我跟王五讲一声明天见")
    assert first.status is TaskStatus.SUCCESS, first.error_message
    assert first.plan_source == "model" and first.model_usage.calls == 1
    learned = first.learning["learned"]
    text = (store.folder / f"{learned}.yaml").read_text(encoding="utf-8")
    assert "{contact}" in text and "{message}" in text and "王五" not in text.split("steps:")[1]
    assert "com.tencent.mm:id/" not in text            # WeChat renames its ids: never learned

    model_server.stop()                                   # the replays need no model at all
    for sentence, contact, message in (("跟李四讲一声周末去爬山", "李四", "周末去爬山"),
                                       ("麻烦帮我跟张三讲一声好的", "张三", "好的")):
        again = make_runner(llm_config, learner=Learner(store)).run(sentence)
        assert again.status is TaskStatus.SUCCESS, again.error_message
        assert again.plan_source == "learned" and again.model_usage.calls == 0
        assert sim_phone.snapshot()["chats"][contact][-1] == message
    state = store.get(learned).state
    assert (state.replays, state.clean_replays, state.trusted) == (2, 2, True)


@pytest.mark.slow
@pytest.mark.parametrize("version", ["8.0.1", "8.0.32"])
def test_learned_on_one_wechat_release_it_replays_on_another_with_at_most_one_heal_call(
        make_runner, model_server, llm_config, store, tmp_path, version):
    model_server.script("plan", send("王五", "明天见"))
    assert make_runner(llm_config, learner=Learner(store)).run("麻烦帮我跟王五讲一声明天见").success
    with serve({"versions": {"wechat": version}, "uiautomator_delay_ms": 0}) as other:
        adb = ADBController(other.serial, port=other.port, state_dir=str(tmp_path / "ime2"), sleep=no_sleep)
        try:
            result = runner_for(adb.connect(), tmp_path, llm_config, learner=Learner(store)).run("跟李四讲一声周末见")
        finally:
            adb.close()
        chats = other.phone.snapshot()["chats"]
    assert result.status is TaskStatus.SUCCESS and result.plan_source == "learned", result.error_message
    assert result.model_usage.calls <= 1 and chats["李四"][-1] == "周末见"


@pytest.mark.slow
def test_with_the_wechat_module_moved_away_the_headline_task_is_learned_and_replayed(
        make_runner, sim_phone, model_server, llm_config, store, tmp_path):
    modules = tmp_path / "modules"
    for name in ("system", "settings", "chrome"):
        shutil.copytree(APPS_DIR / name, modules / name)
    registry = ModuleRegistry([modules])
    model_server.script("plan", send("王五", "明天见", slots=False, home=False))
    first = make_runner(llm_config, learner=Learner(store), registry=registry).run("给王五发微信消息说明天见")
    assert first.status is TaskStatus.SUCCESS and first.learning.get("learned"), first.error_message
    assert store.get(first.learning["learned"]).template.patterns[0] == "给{text1}发微信消息说{text2}"
    again = make_runner(llm_config, learner=Learner(store), registry=registry).run("给李四发微信消息说下午开会")
    assert again.status is TaskStatus.SUCCESS and again.model_usage.calls == 0, again.error_message
    assert sim_phone.snapshot()["chats"]["李四"][-1] == "下午开会"
    assert [(r.purpose, r.answer) for r in model_server.requests] == [("plan", "scripted reply")]


@pytest.mark.slow
def test_a_learned_settings_task_replays_and_leaves_the_switch_on(make_runner, sim_phone, model_server, llm_config,
                                                                  store):
    model_server.script("plan", BLUETOOTH)
    first = make_runner(llm_config, learner=Learner(store)).run(BLUETOOTH_TASK)
    assert first.status is TaskStatus.SUCCESS and first.learning.get("learned"), first.error_message
    assert store.get(first.learning["learned"]).module == "settings"
    sim_phone.settings["bluetooth"] = False          # off again, as a person would leave it
    sim_phone.home()
    again = make_runner(llm_config, learner=Learner(store)).run(BLUETOOTH_TASK)
    assert again.status is TaskStatus.SUCCESS and again.model_usage.calls == 0, again.error_message
    assert sim_phone.snapshot()["settings"]["bluetooth"] is True


# ---------------------------------------------------------------------- guards
def write_learned(store: LearnedStore, steps: list[dict], *, module: str = "wechat", check: dict | None = None) -> str:
    name = "learned_guard"
    store.save({"name": name, "patterns": ["看看{contact}"], "steps": steps,
                "success_check": check or {"app": "com.tencent.mm", "text": "{contact}"}},
               {"module": module, "task": "看看张三"}, {})
    return name


@pytest.mark.slow
def test_a_replay_on_another_screen_never_taps_there_without_a_model(make_runner, sim_phone, store):
    # learned on the chat list (its tabs say so); replayed where 张三 shows but the tabs do not: search results
    name = write_learned(store, [{"action": "tap", "target_ref": "text:{contact}", "anchors": ["text:通讯录"]}])
    assert make_runner().run("在微信搜索张三").status is TaskStatus.SUCCESS
    before = sim_phone.snapshot()["foreground"]
    result = make_runner(learner=Learner(store)).run("看看张三")
    assert result.status is TaskStatus.FAILED and result.failure is FailureReason.WRONG_PAGE
    assert "not the screen this step expects" in result.error_message and "learned task" in result.error_message
    assert sim_phone.snapshot()["foreground"] == before           # nothing was tapped
    assert store.get(name).state.failures_in_row == 1


@pytest.mark.slow
def test_a_step_on_a_changed_screen_is_healed_with_one_model_call_and_written_back(
        make_runner, sim_phone, model_server, llm_config, store):
    # the learned name of the search entry is gone (as if the release renamed its label): one call finds it
    name = write_learned(store, [{"action": "launch_app", "params": {"package": "com.tencent.mm"}},
                                 {"action": "back_to_home"},
                                 {"action": "tap", "target_ref": "desc:查找", "description": "右上角的搜索按钮"},
                                 {"action": "input_text", "params": {"text": "{contact}"}},
                                 {"action": "tap", "target_ref": "text:{contact}"}])
    # the search icon, [804,78][936,210] on the 1080x2400 screen, in the 0-1000 boxes this config reads
    model_server.script("locate", {"found": True, "bbox": [745, 33, 866, 87], "confidence": 0.9})
    result = make_runner(llm_config, learner=Learner(store)).run("看看张三")
    assert result.status is TaskStatus.SUCCESS, result.error_message
    assert result.model_usage.calls == 1 and result.learning["healed_steps"] == [3]
    assert sim_phone.snapshot()["foreground"]["screen"] == "chat:张三"
    step = store.get(name).template.steps[2]
    assert step["target_ref"][0] in ("desc:搜索", "text:搜索") and "desc:查找" in step["target_ref"]
    model_server.stop()
    again = make_runner(llm_config, learner=Learner(store)).run("看看李四")
    assert again.status is TaskStatus.SUCCESS and again.model_usage.calls == 0, again.error_message


@pytest.mark.slow
def test_a_sensitive_learned_step_still_asks_on_every_replay(make_runner, sim_phone, store):
    write_learned(store, [{"action": "launch_app", "params": {"package": "com.tencent.mm"}},
                          {"action": "tap", "target_ref": "text:{contact}", "sensitive": True}])
    asked: list[str] = []
    result = make_runner(learner=Learner(store), confirm=lambda q: asked.append(q) or False).run("看看张三")
    assert result.status is TaskStatus.ABORTED and result.failure is FailureReason.NOT_CONFIRMED
    assert len(asked) == 1 and sim_phone.snapshot()["foreground"]["screen"] != "chat"


def test_two_failures_in_a_row_set_a_candidate_aside(store):
    name = write_learned(store, [{"action": "tap", "target_ref": "text:{contact}"}])
    store.record_replay(name, success=False, heals=0, handed_over=False)
    assert store.match("看看张三") is not None
    store.record_replay(name, success=False, heals=0, handed_over=False)
    assert store.get(name).state.set_aside and store.match("看看张三") is None
    store.promote(name)
    assert store.match("看看张三") is not None and store.get(name).state.trusted


# ---------------------------------------------------------------------- the CLI: --json, review, adopt
@pytest.mark.slow
def test_the_cli_learns_lists_promotes_and_adopts(model_server, tmp_path, monkeypatch, capsys):
    for key, value in {"CUSTOM_LLM_BASE_URL": model_server.url, "CUSTOM_LLM_API_KEY": SECRET_KEY,
                       "CUSTOM_LLM_MODEL": "test-vl", "LLM_PROVIDER": "custom"}.items():
        monkeypatch.setenv(key, value)
    learned_dir = tmp_path / "learned"
    model_server.script("plan", BLUETOOTH)
    args = ["--device", "sim", "--json", "--runs-dir", str(tmp_path / "runs"), "--learned-dir", str(learned_dir)]
    assert cli.main(["run", *args, BLUETOOTH_TASK]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["plan_source"] == "model" and first["learned"]
    assert cli.main(["run", *args, BLUETOOTH_TASK]) == 0
    second = json.loads(capsys.readouterr().out)
    assert (second["plan_source"], second["model_calls"], second["learned"]) == ("learned", 0, first["learned"])
    record = json.loads((Path(second["record"]) / "run.json").read_text(encoding="utf-8"))
    assert record["learning"]["replayed"] == first["learned"] and SECRET_KEY not in json.dumps(record)
    assert record["device_state"]["settings"]["bluetooth"] is True

    assert cli.main(["modules", "learned", "--learned-dir", str(learned_dir), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["tasks"]
    assert [(t["name"], t["replays"], t["module"]) for t in listed] == [(first["learned"], 1, "settings")]
    assert cli.main(["modules", "promote", first["learned"], "--learned-dir", str(learned_dir)]) == 0
    assert "trusted" in capsys.readouterr().out

    modules = tmp_path / "modules"
    shutil.copytree(APPS_DIR / "settings", modules / "settings2")
    config = modules / "settings2" / "config.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("name: settings", "name: settings2"),
                      encoding="utf-8")
    original = (modules / "settings2" / "tasks.yaml").read_text(encoding="utf-8")
    monkeypatch.setenv("REMOTE_MODULES", str(modules))
    assert cli.main(["modules", "adopt", first["learned"], "--module", "settings2",
                     "--learned-dir", str(learned_dir)]) == 0
    capsys.readouterr()
    adopted = (modules / "settings2" / "tasks.yaml").read_text(encoding="utf-8")
    assert adopted.startswith(original) and f"name: {first['learned']}" in adopted   # comments and tasks kept
    assert not list(learned_dir.glob("*.yaml"))
    assert first["learned"] in [t.name for t in ModuleRegistry([modules]).get("settings2").templates]


def test_modules_check_names_a_broken_learned_file_with_its_line(tmp_path, capsys):
    folder = tmp_path / "learned"
    folder.mkdir()
    (folder / "learned_bad.yaml").write_text("learned: {module: wechat, task: x}\ntasks:\n  - name: learned_bad\n"
                                             "    patterns: ['看看{contact}']\n    steps:\n      - {action: tapp}\n",
                                             encoding="utf-8")
    code = cli.main(["modules", "check", "--learned-dir", str(folder)])
    out = capsys.readouterr().out
    assert code == 1 and f"{folder / 'learned_bad.yaml'}:6" in out and "tapp" in out


# ---------------------------------------------------------------------- what is never learned (the compiler)
LOGIN_XML = """<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">
<node index="0" text="" class="android.widget.FrameLayout" package="com.example.bank" bounds="[0,0][1080,2400]">
<node index="0" text="登录" class="android.widget.TextView" package="com.example.bank" bounds="[40,100][400,200]"/>
<node index="1" text="" class="android.widget.EditText" package="com.example.bank" clickable="true" focusable="true"
 focused="true" password="true" bounds="[40,600][1040,720]"/>
<node index="2" text="进入" class="android.widget.Button" package="com.example.bank" clickable="true"
 bounds="[40,800][1040,920]"/>
</node></hierarchy>"""


def test_a_run_that_typed_into_a_password_field_is_not_learned_and_the_password_is_nowhere(store):
    from PIL import Image

    from remote.core.locate.hybrid_locator import HybridLocator
    from remote.core.locate.screen import Screen
    from remote.core.plan.schema import parse_plan
    from remote.core.records import FinalCheckResult, StepResult, StepStatus, TaskPlan, TaskResult
    from remote.runner.learning import compile_run

    screen = Screen(Image.new("RGB", (1080, 2400), "white"), LOGIN_XML)
    parsed: TaskPlan = parse_plan({"analysis": {}, "steps": [
        {"action": "input_text", "target_ref": "editable:", "params": {"text": "hunter2-secret"}},
        {"action": "tap", "target_ref": "text:进入"}], "success_check": {"text": "欢迎"}})
    steps = [StepResult(step=parsed.steps[0], status=StepStatus.SUCCESS, screenshot_before=screen,
                        tap_point=(540, 660)),
             StepResult(step=parsed.steps[1], status=StepStatus.SUCCESS, screenshot_before=screen,
                        tap_point=(540, 860))]
    result = TaskResult(status=TaskStatus.SUCCESS, plan=parsed, step_results=steps, task="用密码hunter2-secret登录",
                        final_check=FinalCheckResult(True, [], "欢迎 on the screen"))
    compiled = compile_run(result.task, result, HybridLocator())
    assert compiled.task is None and "password" in compiled.refused and "step 1" in compiled.refused
    assert "hunter2" not in compiled.refused
    learner = Learner(store)
    info = learner.finish(result.task, result, HybridLocator(), ModuleRegistry(), stable_ids=False, record_dir=None,
                          extra={})
    assert info["learned"] is None and "password" in info["why_not"]
    assert not store.folder.exists() or not any("hunter2" in p.read_text(encoding="utf-8", errors="replace")
                                                for p in store.folder.rglob("*") if p.is_file())
