"""What module authors, testers and command-line users expect (issue 13): checks, exit codes, help, validation.

Driven through ``cli.main`` as a user would; extra module folders come in through REMOTE_MODULES.
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from PIL import Image

from remote.cli import build_parser, main
from tests.test_apps import write_module

ROOT = Path(__file__).resolve().parent.parent
SEND = """\
    tasks:
      - name: send
        patterns: ["给{who}发{text}"]
        steps:
          - {action: launch_app, params: {package: com.tencent.mm}, wait_afer: 300}
          - {action: input_text, params: {text: "{text}"}}
        success_check: {txt: "{text}"}
"""


@pytest.fixture
def modules(tmp_path, monkeypatch):
    """An empty folder of extra modules, named in REMOTE_MODULES; the current directory is tmp_path."""
    folder = tmp_path / "mods"
    folder.mkdir()
    monkeypatch.setenv("REMOTE_MODULES", str(folder))
    monkeypatch.chdir(tmp_path)
    for var in ("LLM_PROVIDER", "CUSTOM_LLM_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "fast.yaml").write_text("uiautomator_delay_ms: 0\n", encoding="utf-8")
    return folder


def check_output(capsys) -> list[str]:
    assert main(["modules", "check"]) in (0, 1)
    return capsys.readouterr().out.splitlines()


# ---------------------------------------------------------------------------------------- module authoring
def test_misspelled_keys_anywhere_are_named_with_file_line_and_a_hint(modules, capsys):
    folder = write_module(modules, "chat", "name: chat\nkeywords: [发]\n", SEND)
    assert main(["modules", "check"]) == 1
    out = capsys.readouterr().out
    tasks = folder / "tasks.yaml"
    assert re.search(rf"{re.escape(str(tasks))}:5: .*unknown key 'wait_afer'.*did you mean 'wait_after'", out)
    assert re.search(rf"{re.escape(str(tasks))}:\d+: .*success_check: unknown key 'txt'.*did you mean 'text'", out)


def test_slots_used_and_declared_must_agree(modules, capsys):
    write_module(modules, "slots", "name: slots\nkeywords: [找]\n", """\
        tasks:
          - name: find
            patterns: ["找{who}和{extra}"]
            steps:
              - {action: launch_app, params: {package: com.tencent.mm}}
            success_check: {text: "{whom}"}
        """)
    out = "\n".join(check_output(capsys))
    assert "slot {whom} is used but no pattern declares it" in out
    assert "warning: task find: slot {extra} is declared but never used" in out
    assert "warning: task find: slot {who} is declared but never used" in out


def test_each_problem_is_reported_once(modules, capsys):
    folder = write_module(modules, "alias", "name: alias\nkeywords: [别名]\n")
    (folder / "images").mkdir()
    (folder / "images" / "aliases.yaml").write_text("好: ok\n坏: missing_image\n", encoding="utf-8")
    lines = check_output(capsys)
    hits = [line for line in lines if "missing_image" in line]
    assert len(hits) == 1 and re.search(r"aliases\.yaml:2: alias '坏'", hits[0])


def test_a_slot_inside_an_unquoted_flow_list_gets_a_hint(modules, capsys):
    write_module(modules, "weather", "name: weather\nkeywords: [天气]\n", """\
        tasks:
          - name: q
            patterns: [查{city}天气]
            steps:
              - {action: go_home}
        """)
    out = "\n".join(check_output(capsys))
    assert "invalid YAML" in out and "must be quoted" in out and "['查{city}天气']" in out


def test_one_broken_module_does_not_stop_the_tasks_of_the_others(modules, capsys):
    write_module(modules, "weather", "name: weather\nkeywords: [天气]\n",
                 "tasks:\n  - name: q\n    patterns: [查天气]\n   steps: []\n")   # a bad indent
    assert main(["run", "--device", "sim", "--scenario", "fast.yaml", "给张三发微信消息说你好"]) == 0
    err = capsys.readouterr().err
    assert "module weather skipped" in err
    assert main(["run", "--device", "sim", "--scenario", "fast.yaml", "查北京天气"]) == 2
    assert "module 'weather' cannot be loaded" in capsys.readouterr().out   # the task was its: said why
    assert main(["modules"]) == 0 and "not loadable: weather" in capsys.readouterr().out


def test_shipped_modules_check_clean(capsys, monkeypatch):
    monkeypatch.delenv("REMOTE_MODULES", raising=False)
    assert main(["modules", "check", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["problems"] == []


# ---------------------------------------------------------------------------------------- testing offline
WEBVIEW = """<hierarchy rotation="0">
<node index="0" text="" class="android.widget.FrameLayout" package="com.sina.weibo" bounds="[0,0][1080,1920]">
 <node index="0" text="隐私政策概要" class="android.webkit.WebView" package="com.sina.weibo" clickable="true"
       bounds="[0,100][1080,1800]">
  <node index="0" text="隐私政策概要" class="android.widget.TextView" package="com.sina.weibo"
        bounds="[300,150][780,220]"/>
  <node index="1" text="我们收集哪些信息" class="android.widget.TextView" package="com.sina.weibo"
        bounds="[40,300][700,360]"/>
 </node>
</node></hierarchy>"""


def test_a_container_repeating_a_title_does_not_win_over_the_leaf_that_draws_it(tmp_path, capsys):
    Image.new("RGB", (1080, 1920), "white").save(tmp_path / "wb.png")
    (tmp_path / "wb.xml").write_text(WEBVIEW, encoding="utf-8")
    assert main(["locate", str(tmp_path / "wb.png"), "text:隐私政策概要", "--xml", str(tmp_path / "wb.xml"),
                 "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["reliable"] and result["element"]["bbox"][1] < 300      # the TextView, not the WebView


def test_ambiguous_is_exit_1_and_messages_carry_no_raw_dicts(tmp_path, capsys):
    xml = ('<hierarchy><node text="昨天" bounds="[0,0][200,100]"/><node text="昨天" bounds="[0,500][200,600]"/>'
           '<node text="半个" bounds="[900,1850][1200,1990]"/></hierarchy>')
    Image.new("RGB", (1080, 1920), "white").save(tmp_path / "s.png")
    (tmp_path / "s.xml").write_text(xml, encoding="utf-8")
    assert main(["locate", str(tmp_path / "s.png"), "text:昨天", "--xml", str(tmp_path / "s.xml")]) == 1
    assert "AMBIGUOUS" in capsys.readouterr().out
    assert main(["locate", str(tmp_path / "s.png"), "text:半个", "--xml", str(tmp_path / "s.xml")]) == 1
    out = capsys.readouterr().out
    assert "not found" in out and "{" not in out and "can_interact" not in out


def test_annotate_draws_the_box_in_green(tmp_path, capsys):
    xml = '<hierarchy><node text="发送" bounds="[100,100][400,300]"/></hierarchy>'
    Image.new("RGB", (1080, 1920), "white").save(tmp_path / "s.png")
    (tmp_path / "s.xml").write_text(xml, encoding="utf-8")
    out_png = tmp_path / "a.png"
    assert main(["locate", str(tmp_path / "s.png"), "text:发送", "--xml", str(tmp_path / "s.xml"),
                 "--annotate", str(out_png)]) == 0
    r, g, b = Image.open(out_png).convert("RGB").getpixel((101, 200))
    assert g > 150 and r < 80 and b < 80


# ---------------------------------------------------------------------------------------- the command line
def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_command_and_option_has_help_and_an_example():
    parser = build_parser()
    for name, sub in _subparsers(parser).items():
        assert sub.description and "examples:" in (sub.epilog or ""), name
        assert "exit status" in sub.epilog, name
        formatter = sub._get_formatter()
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            assert action.help and action.help.strip(), f"{name} {action.dest} has no help"
            if action.option_strings and action.default not in (None, False):
                shown = formatter._get_help_string(action) or ""
                assert "default" in shown, f"{name} {action.dest}: its default is not shown"


def test_empty_tasks_and_negative_limits_are_usage_errors(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["run", ""]) == 2
    assert "the task is empty" in capsys.readouterr().err
    assert main(["run", "打开微信", "--max-steps", "-1"]) == 2
    assert "must be at least 1" in capsys.readouterr().err
    assert main(["run", "打开微信", "--max-seconds", "0"]) == 2
    assert not (tmp_path / "runs").exists()     # nothing ran, nothing recorded


def test_an_error_and_its_hint_print_on_separate_lines(tmp_path, capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    assert main(["devices", "--adb-port", str(free)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("error: no adb server answers") and err[1].strip().startswith("what to do:")


@pytest.mark.sim(reset_every_commands=9)
def test_reconnect_warnings_never_split_a_progress_line(tmp_path):
    (tmp_path / "flaky.yaml").write_text(yaml.safe_dump({"uiautomator_delay_ms": 0, "reset_every_commands": 9}),
                                         encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "remote", "run", "--device", "sim", "--scenario", "flaky.yaml",
                           "给张三发微信消息说你好"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)})
    lines = proc.stderr.splitlines()
    assert any("reconnecting" in line for line in lines), proc.stderr
    for line in lines:
        assert not ("WARNING" in line and "[" in line.split("WARNING")[0]), line


def test_sim_takes_the_next_free_port_when_5037_is_taken(tmp_path):
    holder = socket.socket()
    try:
        holder.bind(("127.0.0.1", 5037))
        holder.listen()
    except OSError:
        holder.close()
        holder = None   # something already serves 5037: just as good for this test
    proc = subprocess.Popen([sys.executable, "-m", "remote", "sim"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={"PATH": "/usr/bin:/bin",
                                                                     "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 60
        first = ""
        while time.monotonic() < deadline and "serving on" not in first:
            first += proc.stdout.readline()
        assert "port 5037 is taken" in first and re.search(r"serving on (\d+)", first)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if holder is not None:
            holder.close()


def test_modules_check_warns_on_an_id_target_in_a_module_without_stable_ids(modules, capsys):
    write_module(modules, "chatty", "name: chatty\nkeywords: [聊]\n", """\
        tasks:
          - name: say
            patterns: ["聊{text}"]
            steps:
              - {action: launch_app, params: {package: com.tencent.mm}}
              - {action: input_text, target_ref: "id:com.tencent.mm:id/bkk", params: {text: "{text}"}}
            success_check: {text: "{text}"}
        """)
    assert main(["modules", "check"]) == 0          # a warning, not an error
    out = capsys.readouterr().out
    assert re.search(r"chatty/tasks\.yaml:\d+: warning: task say: 'id:com\.tencent\.mm:id/bkk' names a resource id",
                     out)
    (modules / "chatty" / "config.yaml").write_text("name: chatty\nkeywords: [聊]\nstable_ids: true\n",
                                                    encoding="utf-8")
    assert main(["modules", "check"]) == 0 and "resource id" not in capsys.readouterr().out
