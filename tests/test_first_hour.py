"""A newcomer's first hour (issue 24, items 20-24 and 26), through the command line as they met it.

Extra modules come in through REMOTE_MODULES (the ``modules`` fixture of test_authoring); runs go to the
in-process simulated phone and are judged on the phone's state as the run record keeps it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PIL import Image

from remote.apps import APPS_DIR
from remote.cli import main
from remote.commands._modules import registry as module_registry
from tests.test_apps import write_module
from tests.test_authoring import modules  # noqa: F401  (the fixture: an empty REMOTE_MODULES folder)

ROOT = Path(__file__).resolve().parents[1]
SIM = ["--device", "sim", "--scenario", "fast.yaml"]


def run_json(capsys, *args: str) -> tuple[int, dict, str]:
    """``remote run ... --json``: the exit status, the summary printed on stdout, and stderr."""
    code = main(["run", *args, "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def device_state(summary: dict) -> dict:
    return json.loads((Path(summary["record"]) / "run.json").read_text(encoding="utf-8"))["device_state"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ------------------------------------------------------------------------- 20: REMOTE_MODULES everywhere
def test_replay_of_a_run_of_an_external_module_uses_its_images(modules, capsys):  # noqa: F811
    folder = write_module(modules, "mychat", "name: mychat\nkeywords: [我的聊天]\n", """\
        tasks:
          - name: open
            patterns: [打开我的聊天]
            steps:
              - {action: go_home}
              - {action: tap, target_ref: my_icon}
            success_check: {app: com.tencent.mm}
        """)
    (folder / "images").mkdir()
    shutil.copy(APPS_DIR / "wechat" / "images" / "wechat.png", folder / "images" / "my_icon.png")
    code, summary, _ = run_json(capsys, *SIM, "打开我的聊天")
    assert code == 0 and device_state(summary)["foreground"]["package"] == "com.tencent.mm"
    assert main(["replay", summary["record"]]) == 0
    out = capsys.readouterr().out
    assert "CHANGED" not in out and "0 changed" in out


@pytest.mark.parametrize("rom,chose", [("aosp", "the icon above the label 'Chrome'"),
                                       ("miui", "the icon described 'Chrome' (ImageView)")])
def test_capture_ref_writes_into_an_external_module_the_icon_once(modules, capsys, rom, chose):  # noqa: F811
    folder = write_module(modules, "browser", "name: browser\nkeywords: [浏览]\n")
    (Path("rom.yaml")).write_text(f"uiautomator_delay_ms: 0\nrom: {rom}\n", encoding="utf-8")
    capture = ["capture-ref", "chrome_icon", "--module", "browser", "--text", "Chrome", "--device", "sim",
               "--scenario", "rom.yaml"]
    assert main(capture) == 0
    out = capsys.readouterr().out
    assert chose in out
    saved = folder / "images" / "chrome_icon.png"
    with Image.open(saved) as img:
        width, height = img.size
    # The launcher cell is 270x276 on this 1080x2400 screen (icon and label); the icon is the 168-px square.
    assert 150 <= width <= 180 and 150 <= height <= 180
    assert main(capture) == 0
    assert "the same image as" in capsys.readouterr().out
    assert sorted(p.name for p in (folder / "images").iterdir()) == ["chrome_icon.png"]   # no identical _v2
    # ... and the crop finds the icon on the home screen, where a tap opens Chrome
    home = Path("home.png")
    assert main(["screenshot", "-o", str(home), "--device", "sim", "--scenario", "rom.yaml"]) == 0
    capsys.readouterr()
    assert main(["locate", str(home), "chrome_icon", "--module", "browser", "--json"]) == 0
    box = json.loads(capsys.readouterr().out)["element"]["bbox"]
    assert box[0] >= 540 and box[2] <= 810 and box[3] <= 380     # inside Chrome's cell, above its label


# ------------------------------------------------------------------------- 21: a broken module keeps its task
@pytest.mark.parametrize("tasks", [
    "tasks:\n  - name: open\n    patterns: [打开百度]\n    steps:\n      - {action: clik}\n",   # a bad step
    "tasks:\n  - name: open\n    patterns: [打开百度]\n   steps: []\n",                        # bad YAML
], ids=["bad-step", "bad-yaml"])
def test_a_broken_module_fails_its_task_with_its_problems(modules, capsys, tasks):  # noqa: F811
    write_module(modules, "baidu", "name: baidu\npackage: com.baidu.searchbox\nkeywords: [百度]\n", tasks)
    code, summary, _ = run_json(capsys, *SIM, "打开百度")
    assert code == 2 and summary["status"] == "failed"
    assert "module 'baidu' cannot be loaded" in summary["error"] and "tasks.yaml" in summary["error"]
    assert "no app" not in summary["error"]
    state = device_state(summary)
    assert state["foreground"]["package"] == "com.android.launcher3"        # nothing was launched
    assert not any("monkey" in c or "am start" in c for c in state["commands"])


def test_two_modules_claiming_one_package_are_warned_about(modules, capsys):  # noqa: F811
    write_module(modules, "wechat_lite", "name: wechat_lite\npackage: com.tencent.mm\nkeywords: [微信小号]\n")
    assert main(["modules", "check"]) == 0            # a warning, not a problem
    out = capsys.readouterr().out
    assert re.search(r"wechat_lite/config\.yaml: warning: package com\.tencent\.mm is claimed by module 'wechat' "
                     r"too", out)
    assert main(["run", *SIM, "打开微信"]) == 0
    assert "warning: " in (err := capsys.readouterr().err) and "package com.tencent.mm is claimed by module 'wechat' " \
        "too" in err


# ------------------------------------------------------------------------- 22: exit codes, pipes, YAML errors
def test_an_unreachable_model_is_an_environment_failure(modules, capsys, monkeypatch):  # noqa: F811
    monkeypatch.setenv("CUSTOM_LLM_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    monkeypatch.setenv("CUSTOM_LLM_MODEL", "m")
    monkeypatch.setenv("CUSTOM_LLM_API_KEY", "sk-test-not-a-key")
    monkeypatch.setenv("LLM_MAX_RETRIES", "0")
    code, summary, _ = run_json(capsys, *SIM, "帮我订一张机票")
    assert code == 2 and summary["failure"] == "model_unreachable" and "cannot reach" in summary["error"]


def test_run_json_without_a_device_prints_a_json_object(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ADB_SERIAL", raising=False)
    assert main(["run", "打开微信", "--json", "--adb-port", str(free_port())]) == 2
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert doc["status"] == "error" and doc["exit_code"] == 2 and "no adb server answers" in doc["error"]
    assert "no adb server answers" in err


def test_a_runs_folder_that_is_a_file_is_said_in_words(tmp_path, capsys):
    (tmp_path / "runs").write_text("not a folder", encoding="utf-8")
    for where, which in ((tmp_path / "runs", "it is a file"), (tmp_path / "runs" / "day1", "a folder above it")):
        assert main(["run", "打开设置", "--device", "sim", "--runs-dir", str(where)]) == 2
        err = capsys.readouterr().err
        assert f"error: cannot use {where} as a folder: {which}" in err and "Errno" not in err


def test_modules_check_exit_status_is_the_readme_s(modules, capsys):  # noqa: F811
    write_module(modules, "weather", "name: weather\nkeywords: [天气]\n", "tasks:\n  - name: q\n    patterns: [查天气]\n")
    assert main(["modules", "check"]) == 1
    rows = dict(re.findall(r"^\| (\d+) \| (.*) \|$", (ROOT / "README.md").read_text(encoding="utf-8"), re.M))
    assert "`modules check` found a problem" in rows["1"]       # a failed check, as linters say it
    assert "module or file a command needs" in rows["2"]


def test_a_closed_pipe_ends_quietly(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "remote", "modules"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()       # the reader is gone before the first line (as `| head -3` is after three)
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141 and err == ""


def test_a_yaml_error_names_its_file_once(modules, capsys):  # noqa: F811
    write_module(modules, "weather", "name: weather\nkeywords: [天气]\n",
                 "tasks:\n  - name: q\n    patterns: [查天气]\n   steps: []\n")
    assert main(["modules", "check"]) == 1
    line = next(x for x in capsys.readouterr().out.splitlines() if "invalid YAML" in x)
    assert line.count("tasks.yaml") == 1 and re.match(r".*weather/tasks\.yaml:4: invalid YAML", line)


# ------------------------------------------------------------------------- 23: English and near misses
def test_english_patterns_route_to_the_shipped_templates():
    registry = module_registry()
    said = {"send hello to 张三 on wechat": ("wechat", "send_message", {"message": "hello", "contact": "张三"}),
            "send see you tomorrow to 李四": ("wechat", "send_message",
                                             {"message": "see you tomorrow", "contact": "李四"}),
            "open the chat with 王五": ("wechat", "open_chat", {"contact": "王五"}),
            "search wechat for 张三": ("wechat", "search_contact", {"contact": "张三"}),
            "switch on bluetooth": ("settings", "switch_on", {"setting": "蓝牙"}),
            "open display settings": ("settings", "open_page", {"page": "显示"}),
            "turn the volume up": ("system", "volume_up", {}),
            "search the web for weather": ("chrome", "search", {"query": "weather"}),
            "log in to weibo": ("weibo", "open_login", {})}
    for task, (module_name, template, slots) in said.items():
        module, _ = registry.route(task)
        found = registry.handler(module).match(task)
        assert found is not None and (module.name, found[0].name, found[1]) == (module_name, template, slots), task


@pytest.mark.slow
def test_send_hello_in_english_on_the_simulated_phone(modules, capsys):  # noqa: F811
    code, summary, _ = run_json(capsys, *SIM, "send hello to 张三 on wechat")
    assert code == 0 and summary["model_calls"] == 0
    assert device_state(summary)["chats"] == {"张三": ["hello"]}


@pytest.mark.parametrize("task,pattern", [("给张三发微新消息说你好", "给{contact}发微信消息说{message}"),
                                          ("给张三法消息说你好", "给{contact}发消息说{message}")])
def test_a_near_miss_gets_a_did_you_mean_and_nothing_is_sent(modules, capsys, task, pattern):  # noqa: F811
    code, summary, _ = run_json(capsys, *SIM, task)
    assert code == 2
    assert f"did you mean {pattern} (module wechat, template send_message)?" in summary["error"]
    state = device_state(summary)
    assert state["chats"] == {} and state["foreground"]["package"] == "com.android.launcher3"


# ------------------------------------------------------------------------- 24: configuration
def test_a_provider_without_its_key_is_named_by_run(modules, capsys, monkeypatch):  # noqa: F811
    monkeypatch.setenv("LLM_PROVIDER", "qwen")
    monkeypatch.delenv("DASHSCOPE_API_KEY", raising=False)
    code, summary, _ = run_json(capsys, *SIM, "帮我订一张机票")
    assert code == 2 and "DASHSCOPE_API_KEY" in summary["error"]


def test_a_misspelled_provider_warns_and_templates_still_run(modules, capsys, monkeypatch):  # noqa: F811
    monkeypatch.setenv("LLM_PROVIDER", "qwn")
    code, summary, err = run_json(capsys, *SIM, "打开微信")
    assert code == 0 and device_state(summary)["foreground"]["package"] == "com.tencent.mm"
    assert "warning: unknown LLM_PROVIDER 'qwn' (did you mean 'qwen'?)" in err
    code, summary, _ = run_json(capsys, *SIM, "帮我订一张机票")      # a model is needed: now it fails, naming it
    assert code == 2 and "unknown LLM_PROVIDER 'qwn'" in summary["error"]


def test_a_scenario_for_a_real_phone_is_refused(modules, capsys):  # noqa: F811
    assert main(["run", "打开微信", "--scenario", "fast.yaml", "--adb-port", str(free_port())]) == 2
    assert "--scenario sets up the simulated phone" in capsys.readouterr().err


def test_batch_and_scenario_files_say_every_problem_with_did_you_mean(modules, capsys):  # noqa: F811
    Path("b.yaml").write_text("- taks: 打开设置\n- task: 打开微信\n  repeat: 0\n- task: 打开微信\n  devce: any\n",
                              encoding="utf-8")
    assert main(["batch", "b.yaml", "--device", "sim"]) == 2
    err = capsys.readouterr().err
    assert "b.yaml:1: unknown key 'taks' in entry 1 (did you mean 'task'?)" in err
    assert "b.yaml:3: repeat must be a whole number" in err
    assert "b.yaml:5: unknown key 'devce' in entry 3 (did you mean 'device'?)" in err
    Path("s.yaml").write_text("resolutoin: 720x1600\nad_popup: sometimes\n", encoding="utf-8")
    assert main(["run", "--device", "sim", "--scenario", "s.yaml", "打开微信"]) == 2
    err = capsys.readouterr().err
    assert "s.yaml:1: unknown scenario key 'resolutoin' (did you mean 'resolution'?)" in err
    assert "s.yaml:2: ad_popup must be true or false" in err


def test_the_batch_table_says_why_a_task_failed(modules, capsys):  # noqa: F811
    Path("b.yaml").write_text("- task: 帮我订一张机票\n", encoding="utf-8")
    assert main(["batch", "b.yaml", "--device", "sim", "--scenario", "fast.yaml"]) == 2
    lines = capsys.readouterr().out.splitlines()
    head = next(x for x in lines if x.startswith("#"))
    row = next(x for x in lines if x.startswith("1 "))
    assert "reason" in head and "no task template of module 'system'" in row


@pytest.mark.slow
def test_a_batch_started_with_sigint_ignored_still_stops_on_sigint(tmp_path):
    (tmp_path / "b.yaml").write_text("- task: 打开设置\n  repeat: 40\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "CUSTOM_LLM"))}
    proc = subprocess.Popen([sys.executable, "-m", "remote", "batch", "b.yaml", "--device", "sim"], cwd=tmp_path,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))   # `remote batch &`
    assert proc.stderr is not None
    for line in proc.stderr:       # the first task has started on the phone
        if "steps" in line:
            break
    proc.send_signal(signal.SIGINT)
    started = time.monotonic()
    try:
        code = proc.wait(timeout=30)
    finally:
        proc.kill()
    assert code == 130 and time.monotonic() - started < 30
    doc = json.loads(next((tmp_path / "runs").glob("batch-*/batch.json")).read_text(encoding="utf-8"))
    assert sum(r["status"] == "success" for r in doc["rows"]) < 40


# ------------------------------------------------------------------------- 26: where things are
def test_the_trace_error_says_where_recordings_come_from(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--device", "sim", "--trace", "no-such-recording", "打开微信"]) == 2
    err = capsys.readouterr().err
    assert "droidbot -a app.apk -o DIR" in err and "Kqramazov/fdroid_utg" in err
    testing = (ROOT / "docs" / "testing.md").read_text(encoding="utf-8")
    assert "droidbot -a" in testing and "a fresh clone has none" in testing


def test_locate_names_the_module_that_holds_a_reference(tmp_path, capsys):
    shot = tmp_path / "s.png"
    Image.new("RGB", (1080, 2400), "white").save(shot)
    assert main(["locate", str(shot), "wechat"]) == 1
    assert "hint: 'wechat' is a reference image of module wechat: add --module wechat" in capsys.readouterr().out


def test_flow_says_why_a_step_is_not_found(tmp_path, capsys):
    shot, dump = tmp_path / "s.png", tmp_path / "s.xml"
    Image.new("RGB", (1080, 2400), "white").save(shot)
    dump.write_text('<hierarchy rotation="0"><node index="0" text="通讯录" class="android.widget.TextView" '
                    'package="com.tencent.mm" bounds="[0,100][300,200]"/></hierarchy>', encoding="utf-8")
    assert main(["flow", str(shot), "给张三发微信消息说你好", "--xml", str(dump)]) == 0
    out = capsys.readouterr().out
    assert "not found: not found" not in out
    assert "text:张三 is not on this screen: no node of the UI tree shows it" in out
