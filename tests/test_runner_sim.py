"""Whole tasks on the simulated phone, driven through the real ADB protocol: every shipped template,
three resolutions, popups, secure screens, dropped cables, Ctrl-C, dry runs and the run record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from remote.apps import APPS_DIR, ModuleRegistry
from remote.core.records import StepStatus, TaskStatus
from remote.runner.protocols import QuietListener

RESOLUTIONS = ["720x1600", "1080x2400", "1440x3200"]

# task -> what the phone must show afterwards (checked on SimPhone.snapshot()). "返回" needs a screen to go
# back from: tests/test_final_checks.py runs it after opening a chat, and on the launcher (not a success).
TEMPLATE_TASKS = {
    "给张三发微信消息说你好": lambda s: s["chats"] == {"张三": ["你好"]},
    "打开和王五的聊天": lambda s: s["foreground"] == {"package": "com.tencent.mm", "screen": "chat:王五"},
    "微信搜索李四": lambda s: s["foreground"]["screen"] == "search" and s["focused_text"] == "李四",
    "返回微信首页": lambda s: s["foreground"] == {"package": "com.tencent.mm", "screen": "chats"},
    "打开微信": lambda s: s["foreground"]["package"] == "com.tencent.mm",
    "返回桌面": lambda s: s["foreground"]["screen"] == "launcher",
    "打开相机": lambda s: s["foreground"]["package"] == "com.android.camera2",
    "打开地图": lambda s: s["foreground"]["package"] == "com.remote.maps",          # page 2: swipe fallback
    "调大音量": lambda s: _inputs(s)[-1] == "input keyevent 24" and s["volume"] == 8,
    "调小音量": lambda s: _inputs(s)[-1] == "input keyevent 25" and s["volume"] == 6,
    "关闭WLAN": lambda s: s["settings"]["wlan"] is False,
    "打开蓝牙": lambda s: s["settings"]["bluetooth"] is True,
    "打开飞行模式": lambda s: s["settings"]["airplane"] is True,
    "打开声音设置": lambda s: s["foreground"] == {"package": "com.android.settings", "screen": "sound"},
    "打开网页 example.com": lambda s: s["browser_url"] == "https://example.com",
    "在浏览器搜索天气": lambda s: "q=%E5%A4%A9%E6%B0%94" in (s["browser_url"] or ""),
}


def _inputs(snapshot: dict) -> list[str]:
    return [c.removeprefix("cmd ") for c in snapshot["commands"] if c.removeprefix("cmd ").startswith("input")]


def _taps(snapshot: dict) -> list[str]:
    return [c for c in snapshot["commands"] if c.removeprefix("cmd ").startswith(("input tap", "input swipe"))]


@pytest.mark.slow
@pytest.mark.parametrize("sim_scenario", [{"resolution": r} for r in RESOLUTIONS], indirect=True, ids=RESOLUTIONS)
def test_send_wechat_message_at_every_resolution(make_runner, sim_phone):
    result = make_runner().run("给张三发微信消息说你好")
    assert result.status is TaskStatus.SUCCESS, result.error_message
    assert sim_phone.snapshot()["chats"] == {"张三": ["你好"]}
    assert result.model_usage.calls == 0 and result.plan.source == "template"
    assert all(sr.status is StepStatus.SUCCESS for sr in result.step_results)


@pytest.mark.slow
@pytest.mark.parametrize("sim_scenario", [{"resolution": r} for r in RESOLUTIONS], indirect=True, ids=RESOLUTIONS)
@pytest.mark.parametrize("task", list(TEMPLATE_TASKS))
def test_every_shipped_template(make_runner, sim_phone, task):
    result = make_runner().run(task)
    assert result.status is TaskStatus.SUCCESS, f"{task}: {result.error_message}"
    assert result.model_usage.calls == 0
    assert TEMPLATE_TASKS[task](sim_phone.snapshot()), sim_phone.snapshot()


@pytest.mark.slow
def test_message_with_spaces_punctuation_and_emoji(make_runner, sim_phone):
    message = "Hello, world! 明天 10:30 见 😀 \"; reboot; echo \""
    result = make_runner().run(f"给李四发消息说{message}")
    assert result.status is TaskStatus.SUCCESS, result.error_message
    assert sim_phone.snapshot()["chats"] == {"李四": [message]}
    assert sim_phone.reboots == 0


@pytest.mark.sim(wechat_permission_dialog=True, ad_popup=True)
def test_permission_dialog_and_ad_are_dismissed_without_a_model(make_runner, sim_phone):
    result = make_runner().run("给王五发消息说好的")
    assert result.status is TaskStatus.SUCCESS, result.error_message
    assert sim_phone.snapshot()["chats"] == {"王五": ["好的"]}
    notes = " ".join(n for sr in result.step_results for n in sr.notes)
    assert "dismissed permission" in notes and "dismissed ad" in notes
    assert result.model_usage.calls == 0


@pytest.mark.sim(secure_screen=True)
def test_secure_screen_falls_back_to_the_ui_tree(make_runner, sim_phone):
    result = make_runner().run("给张三发消息说在吗")
    assert result.status is TaskStatus.SUCCESS, result.error_message
    assert sim_phone.snapshot()["chats"] == {"张三": ["在吗"]}
    # the icon template cannot be matched on a black frame: reported, never tapped blind
    result2 = make_runner().run("打开微信")
    assert result2.status is TaskStatus.FAILED and "secure screen" in result2.error_message


@pytest.mark.sim(loading_ms=400)
def test_loading_screens_are_waited_out(make_runner, sim_phone):
    import time

    result = make_runner(sleep=time.sleep).run("给张三发消息说到了")   # the spinner's 400 ms are real time
    assert result.status is TaskStatus.SUCCESS, result.error_message
    assert sim_phone.snapshot()["chats"] == {"张三": ["到了"]}


class StepEnds(QuietListener):
    """How many shell commands the phone had run when each step ended."""

    def __init__(self, phone) -> None:
        self.phone, self.at = phone, []

    def on_step_end(self, sr) -> None:
        self.at.append(len(self.phone.snapshot()["commands"]))


def probe_runner(make_runner, tmp_path, keyword: str, tasks: str, **kwargs):
    """A runner with a module ``probe`` (its ``tasks.yaml``) ahead of the shipped ones."""
    from tests.test_apps import write_module

    write_module(tmp_path / "mods", "probe", f"name: probe\nkeywords: [{keyword}]\n", tasks)
    runner = make_runner(**kwargs)
    runner.registry = ModuleRegistry([tmp_path / "mods", APPS_DIR])
    return runner


def test_a_tap_that_brings_no_keyboard_before_typing_is_judged_on_its_dump(make_runner, sim_phone, tmp_path):
    ends = StepEnds(sim_phone)
    runner = probe_runner(make_runner, tmp_path, "通讯录", """\
        tasks:
          - name: type_on_contacts
            patterns: [在通讯录里打字]
            steps:
              - {action: launch_app, params: {package: com.tencent.mm}, wait_after: 600}
              - {action: back_to_home}
              - {action: tap, target_ref: "text:通讯录"}
              - {action: input_text, params: {text: "张三"}}
            success_check: {app: com.tencent.mm}
        """, listener=ends)
    result = runner.run("在通讯录里打字")
    tab, typing = result.step_results[2:]
    assert tab.status is StepStatus.SUCCESS and tab.verify_result.method != "focus"   # judged on its UI dump
    assert tab.screenshot_after is not None and tab.screenshot_after.tree() is not None
    during = sim_phone.snapshot()["commands"][ends.at[1]:ends.at[2]]     # the tap's step: its one frame is dumped for
    assert sum(c.startswith("screencap") for c in during) == 1            # (not taken a second time with the dump)
    assert sum("uiautomator dump" in c for c in during) == 1
    assert typing.status is StepStatus.FAILED and "no text field has the focus" in typing.error_message
    assert result.status is TaskStatus.FAILED


def test_a_tap_that_the_next_step_types_after_is_checked_by_the_keyboard_not_a_dump(make_runner, sim_phone):
    ends = StepEnds(sim_phone)
    result = make_runner(listener=ends).run("给张三发微信消息说你好")
    assert result.status is TaskStatus.SUCCESS, result.error_message
    assert sim_phone.snapshot()["chats"] == {"张三": ["你好"]}
    search = result.step_results[2]
    assert search.step.target_ref == "text:搜索" and search.verify_result.method == "focus"
    assert "keyboard came up" in search.verify_result.change_description
    commands = [c.removeprefix("cmd ") for c in sim_phone.snapshot()["commands"]]
    tap = next(i for i, c in enumerate(commands) if c.startswith("input tap"))
    typed = next(i for i, c in enumerate(commands) if "ADB_INPUT_B64" in c)
    between = commands[tap:typed]
    assert not any("uiautomator dump" in c for c in between)             # no dump of the search page ...
    assert between.count("dumpsys input_method") == 1                    # ... its keyboard was asked instead
    assert sum("uiautomator dump" in c for c in commands) == 5           # 7 steps and the final check, 5 dumps
    # the final check read the last step's screen: its tree was the phone's latest dump, nothing ran since
    assert not [c for c in commands[ends.at[-1]:] if c.startswith(("screencap", "uiautomator"))]
    assert result.final_check.passed and {i.method for i in result.final_check.items} == {"tree"}


def test_a_final_check_that_the_last_screen_does_not_pass_looks_again(make_runner, sim_phone, tmp_path):
    ends = StepEnds(sim_phone)
    runner = probe_runner(make_runner, tmp_path, "首页", """\
        tasks:
          - name: home_with_a_missing_text
            patterns: [看首页]
            steps:
              - {action: launch_app, params: {package: com.tencent.mm}, wait_after: 600}
              - {action: back_to_home}
            success_check: {text: "这句话不在屏幕上"}
        """, listener=ends)
    result = runner.run("看首页")
    assert result.status is TaskStatus.FAILED and result.final_check.passed is False
    after = [c for c in sim_phone.snapshot()["commands"][ends.at[-1]:] if c.startswith("screencap")]
    assert len(after) == 1                                              # a fresh frame was taken and judged


@pytest.mark.sim(drop_after_commands=8)
def test_pulled_cable_fails_cleanly_with_a_record(make_runner):
    result = make_runner().run("给张三发消息说你好")
    assert result.status is TaskStatus.FAILED
    assert "lost the connection" in result.error_message
    data = json.loads((Path(result.record_dir) / "run.json").read_text(encoding="utf-8"))
    assert data["status"] == "failed" and data["error_type"] == "DeviceDisconnected"


def test_unknown_task_without_a_model_says_what_to_configure(make_runner):
    result = make_runner().run("帮我订一张明天去上海的机票")
    assert result.status is TaskStatus.FAILED and not result.step_results
    assert "LLM_PROVIDER" in result.error_message
    assert (Path(result.record_dir) / "run.json").is_file()


def test_dry_run_locates_but_never_touches_the_phone(make_runner, sim_phone, tmp_path):
    from tests.test_apps import write_module

    write_module(tmp_path / "mods", "icons", "name: icons\nkeywords: [图标]\n", """\
        tasks:
          - name: tap_icon
            patterns: [点微信图标]
            steps:
              - {action: tap, target_ref: wechat}
              - {action: tap, target_ref: "desc:搜索"}
            success_check: {app: com.tencent.mm}
        """)
    before = len(sim_phone.snapshot()["commands"])
    runner = make_runner(dry_run=True)
    runner.registry = ModuleRegistry([tmp_path / "mods", APPS_DIR])
    result = runner.run("点微信图标")
    assert result.status is TaskStatus.PLANNED and result.exit_code == 0
    tap_step, later = result.step_results
    assert tap_step.locate_result.success and tap_step.locate_result.method_used == "template"
    assert later.status is StepStatus.NOT_CHECKED and "needs the screen after step 1" in later.notes[0]
    new = sim_phone.snapshot()["commands"][before:]
    assert not [c for c in new if c.removeprefix("cmd ").startswith(("input", "am ", "monkey", "ime set"))]
    assert sim_phone.snapshot()["foreground"]["screen"] == "launcher"


def test_dry_run_of_the_readme_example_is_valid_and_says_what_it_could_not_check(make_runner, sim_phone):
    result = make_runner(dry_run=True).run("给张三发微信消息说你好")
    assert result.status is TaskStatus.PLANNED and result.exit_code == 0
    first, *rest = result.step_results
    assert first.status is StepStatus.SUCCESS and "com.tencent.mm is installed" in first.notes
    assert rest and all(sr.status is StepStatus.NOT_CHECKED for sr in rest)
    assert sim_phone.snapshot()["foreground"]["screen"] == "launcher"


class StopAfter(QuietListener):
    """A listener that presses Ctrl-C (sets the runner's stop flag) after N steps."""

    def __init__(self, runner_ref: list, n: int) -> None:
        self.ref, self.n = runner_ref, n

    def on_step_end(self, sr) -> None:
        if sr.step.step == self.n:
            self.ref[0].clock.stop.set()


def test_ctrl_c_stops_between_actions_and_writes_the_record(make_runner, sim_phone):
    ref: list = []
    runner = make_runner(listener=StopAfter(ref, 2))
    ref.append(runner)
    result = runner.run("给张三发消息说你好")
    assert result.status is TaskStatus.ABORTED and len(result.step_results) == 2
    assert sim_phone.snapshot()["chats"] == {}
    data = json.loads((Path(result.record_dir) / "run.json").read_text(encoding="utf-8"))
    assert data["status"] == "aborted" and len(data["steps"]) == 2


def test_run_record_and_report_show_every_step(make_runner, sim_phone):
    result = make_runner().run("给张三发微信消息说你好")
    record = Path(result.record_dir)
    data = json.loads((record / "run.json").read_text(encoding="utf-8"))
    assert data["task"] == "给张三发微信消息说你好" and data["module"] == "wechat" and data["status"] == "success"
    assert data["device_state"]["chats"] == {"张三": ["你好"]}
    assert len(data["steps"]) == len(data["plan"]["steps"]) == 7
    located = [s for s in data["steps"] if s["step"]["target_ref"]]
    for s in located:
        assert s["tier"] == "tree" and s["bbox"] and s["tap_point"] and (record / s["artifacts"]["before"]).is_file()
    html = (record / "report.html").read_text(encoding="utf-8")
    assert html.count("<details id='step-") == 7 and "data:image/jpeg;base64," in html
    assert "text:发送" in html and "0 (0 + 0 tokens)" in html


def test_replay_reproduces_every_decision(make_runner, capsys):
    from remote.cli import main

    result = make_runner().run("给张三发微信消息说你好")
    assert main(["replay", result.record_dir]) == 0
    out = capsys.readouterr().out
    assert "0 changed" in out and out.count("same") >= 4


def test_replay_reports_a_changed_decision(make_runner, capsys):
    from remote.cli import main

    result = make_runner().run("给张三发微信消息说你好")
    record = Path(result.record_dir)
    xml = next(record.glob("s07-before.xml"))
    xml.write_text(xml.read_text(encoding="utf-8").replace("发送", "取消"), encoding="utf-8")
    assert main(["replay", str(record)]) == 1
    assert "CHANGED step  7 locate" in capsys.readouterr().out


def test_sensitive_step_asks_and_a_no_stops_before_touching(make_runner, sim_phone, tmp_path):
    from remote.apps import ModuleRegistry
    from tests.test_apps import write_module

    write_module(tmp_path / "mods", "pay", "name: pay\nkeywords: [转账]\n", """\
        tasks:
          - name: pay
            patterns: ["给{who}转账"]
            steps:
              - {action: launch_app, params: {package: com.tencent.mm}}
              - {action: tap, target_ref: "text:通讯录", description: 转账入口}
            success_check: {app: com.tencent.mm}
        """)
    asked: list[str] = []

    def confirm(question, choices=None):
        asked.append(question)
        return False

    runner = make_runner(confirm=confirm)
    runner.registry = ModuleRegistry([tmp_path / "mods"])
    result = runner.run("给张三转账")
    assert result.status is TaskStatus.ABORTED and len(asked) == 1 and "sensitive" in asked[0]
    assert not _taps(sim_phone.snapshot())
    runner2 = make_runner(confirm=confirm, yes=True)
    runner2.registry = ModuleRegistry([tmp_path / "mods"])
    assert runner2.run("给张三转账").status is TaskStatus.SUCCESS and len(asked) == 1
