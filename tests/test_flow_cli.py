"""Every flow step kind through the CLI on the simulated phone (issue 28): the happy path, the bounded worst
case, a skipped `when`, an extract that says what it saw, `modules check` with file and line, `remote replay`.

A module of test templates comes in through REMOTE_MODULES; the phone's state is judged from the record's
``device_state`` (the simulated phone's own snapshot after the run).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from remote.cli import main
from remote.runner.flow_looks import POLL_S
from tests.test_apps import write_module

FLOWS = """\
    tasks:
      - name: happy
        patterns: ["流程演示{contact}"]
        steps:
          - {action: launch_app, params: {package: com.tencent.mm}, wait_after: 600}
          - {action: back_to_home}
          - assert_visible: "text:通讯录"
          - assert_not_visible: "text:没有找到"
          - wait_until: {visible: "text:{contact}", timeout_ms: 2000}
          - {action: tap, target_ref: "text:允许", when: {visible: "text:允许"}}
          - {action: press_key, params: {key: VOLUME_DOWN}, when: {app: com.tencent.mm, version: ">=8.0.30"}}
          - {action: press_key, params: {key: VOLUME_UP}, when: {version: "<8.0.30"}}
          - extract: {below: "text:{contact}", as: last}
          - repeat: {times: 2, steps: [{action: press_key, params: {key: VOLUME_UP}}]}
          - retry: {times: 2, steps: [{assert_visible: "text:微信"}]}
          - run: {steps: [{action: press_key, params: {key: VOLUME_DOWN}}]}
        answer: "{last}"
      - name: never
        patterns: [等一个不会来的]
        steps:
          - wait_until: {visible: "text:永远不会出现", timeout_ms: 1500}
        success_check: {text: 永远不会出现}
      - name: assert_fails
        patterns: [断言会失败]
        steps:
          - {action: launch_app, params: {package: com.tencent.mm}, wait_after: 600}
          - assert_visible: "text:永远不会出现"
        success_check: {app: com.tencent.mm}
      - name: bounded_repeat
        patterns: [重复到上限]
        steps:
          - repeat: {until_visible: "text:永远不会出现", max: 3, steps: [{action: press_key, params: {key: VOLUME_UP}}]}
        success_check: {volume: up}
      - name: retry_worst
        patterns: [重试到上限]
        steps:
          - retry: {times: 3, steps: [{action: press_key, params: {key: VOLUME_UP}}, {assert_visible: "text:永远不会出现"}]}
      - name: scroll_max
        patterns: [滚到上限]
        steps:
          - {action: launch_app, params: {package: com.android.settings}, wait_after: 500}
          - scroll_until_visible: {target: "text:永远不会出现", direction: down, max_swipes: 1}
        success_check: {text: 永远不会出现}
      - name: scroll_end
        patterns: [滚到底]
        steps:
          - {action: launch_app, params: {package: com.android.settings}, wait_after: 500}
          - scroll_until_visible: {target: "text:永远不会出现", direction: down, max_swipes: 6}
        success_check: {text: 永远不会出现}
      - name: read_number
        patterns: [读一个数]
        steps:
          - {action: launch_app, params: {package: com.tencent.mm}, wait_after: 600}
          - {action: back_to_home}
          - extract: {from: "text:通讯录", as: n, type: number}
        answer: "{n}"
      - name: read_absent
        patterns: [读一个不存在的]
        steps:
          - {action: launch_app, params: {package: com.tencent.mm}, wait_after: 600}
          - extract: {below: "text:永远不会出现", as: s}
        answer: "{s}"
      # the other forms: run of another module's task with slots, wait_until not_visible, extract bool / region
      # / focused, when checked / not_checked, repeat while_visible, scroll_until_visible found
      - name: tour
        patterns: ["流程巡游{setting}"]
        steps:
          - run: {task: open_page, module: settings, slots: {page: "{setting}"}}
          - wait_until: {not_visible: "editable:", timeout_ms: 2000}
          - extract: {from: "role:toggle:{setting}", as: switched, type: bool}
          - {action: press_key, params: {key: VOLUME_UP}, when: {checked: "role:toggle:{setting}"}}
          - {action: press_key, params: {key: VOLUME_DOWN}, when: {not_checked: "role:toggle:{setting}"}}
          - extract: {region: [0, 0, 1000, 80], as: title}
          - assert_visible: "text:{title}"
          - repeat:
              while_visible: "role:toggle:{setting}"
              max: 4
              steps: [{action: press_key, params: {key: BACK}, wait_after: 300}]
          - scroll_until_visible: {target: "text:关于手机", direction: down, max_swipes: 8}
        success_check: {text: 关于手机}
        answer: "{switched}"
      - name: morning
        patterns: [流程早安, "流程和{contact}的早安"]
        env: [contact]
        steps:
          - run: {task: open_chat, module: wechat, slots: {contact: "{contact}"}}
          - {action: input_text, target_ref: "editable:", params: {text: "早安{contact}"}}
          - extract: {focused: true, as: typed}
        success_check: {text: "早安{contact}"}
        answer: "{typed}"
"""


@pytest.fixture
def flows(tmp_path, monkeypatch):
    folder = tmp_path / "mods"
    write_module(folder, "flows", "name: flows\npackage: com.tencent.mm\nkeywords: [流程]\n", FLOWS)
    monkeypatch.setenv("REMOTE_MODULES", str(folder))
    monkeypatch.chdir(tmp_path)
    for var in ("LLM_PROVIDER", "CUSTOM_LLM_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "fast.yaml").write_text("uiautomator_delay_ms: 0\n", encoding="utf-8")
    (tmp_path / "old.yaml").write_text('uiautomator_delay_ms: 0\nversions: {wechat: "8.0.1"}\n', encoding="utf-8")
    return tmp_path


def run(capsys, task: str, scenario: str = "fast.yaml", *extra: str) -> tuple[int, dict, dict]:
    code = main(["run", "--device", "sim", "--scenario", scenario, task, "--json", "--runs-dir", "runs", *extra])
    out = json.loads(capsys.readouterr().out)
    return code, out, json.loads((Path(out["record"]) / "run.json").read_text(encoding="utf-8"))


def keys(record: dict) -> list[str]:
    """The volume keys the phone received, in order."""
    return [c.split()[-1] for c in record["device_state"]["commands"] if c.removeprefix("cmd ") in ("input keyevent 24",
                                                                           "input keyevent 25")]


def step(record: dict, action: str) -> dict:
    return next(s for s in record["steps"] if s["step"]["action"] == action)


@pytest.mark.slow
@pytest.mark.parametrize(("scenario", "version_key"), [("fast.yaml", "25"), ("old.yaml", "24")])
def test_every_kind_on_the_happy_path(flows, capsys, scenario, version_key):
    code, out, record = run(capsys, "流程演示张三", scenario)
    assert code == 0 and out["status"] == "success", out["error"]
    assert out["answer"] == "明天见" and out["model_calls"] == 0
    # the phone got: the version's key (the other when skipped), two rounds of VOLUME_UP, the block's VOLUME_DOWN
    assert keys(record) == [version_key, "24", "24", "25"]
    statuses = {s["step"]["step"]: (s["step"]["action"], s["status"], s["step"]["parent"]) for s in record["steps"]}
    assert [a for a, st, parent in statuses.values() if st == "skipped"] == ["tap", "press_key"]
    allow = next(s for s in record["steps"] if s["step"]["target_ref"] == "text:允许")
    assert allow["notes"] == ["skipped: when visible: text:允许 does not hold (text:允许 not on the screen)"]
    repeat = step(record, "repeat")
    children = [a for a, st, parent in statuses.values() if parent == repeat["step"]["step"]]
    assert children == ["press_key", "press_key"] and "2 rounds" in repeat["notes"][0]
    assert step(record, "extract")["looks"][0]["value"] == "明天见"
    assert all(st in ("success", "skipped") for _, st, _ in statuses.values())


@pytest.mark.slow
@pytest.mark.parametrize(("setting", "on", "key", "title"), [("WLAN", True, "24", "网络和互联网"),
                                                            ("蓝牙", False, "25", "已关联的设备")])
def test_the_other_forms_of_each_kind_on_the_happy_path(flows, capsys, setting, on, key, title):
    code, out, record = run(capsys, f"流程巡游{setting}")
    assert code == 0 and out["answer"] is on and out["model_calls"] == 0, out["error"]
    assert keys(record) == [key]                                # only the press whose `when` held
    sub = [s["step"]["action"] for s in record["steps"] if s["step"]["parent"] == step(record, "run")["step"]["step"]]
    assert sub == ["launch_app", "tap", "input_text", "tap"]   # settings.open_page's steps, under the run step
    assert [s["value"] for s in record["steps"] if s["step"]["action"] == "extract" for s in s["looks"]] == [on, title]
    assert step(record, "assert_visible")["step"]["target_ref"] == f"text:{title}"       # {title} bound at run time
    assert step(record, "repeat")["notes"][0].startswith("1 round: role:toggle:")
    assert step(record, "scroll_until_visible")["notes"][0].startswith("found after 1 swipe")
    assert record["device_state"]["settings"]["wlan"] is True and record["device_state"]["settings"]["bluetooth"] is False
    assert record["final_check"]["passed"] is True
    assert main(["replay", out["record"]]) == 0           # the switch's looks say what they saw, offline too
    state = f"checked role:toggle:{setting}: switch {'on' if on else 'off'}"
    assert f"recorded: {state}  replayed: {state}" in capsys.readouterr().out


@pytest.mark.slow
def test_minus_e_fills_a_slot_the_sentence_does_not_say_and_the_sentence_wins(flows, capsys):
    code, out, record = run(capsys, "流程早安", "fast.yaml", "-e", "contact=王五", "-e", "unused=1")
    assert code == 0 and out["answer"] == "早安王五", out["error"]
    assert record["device_state"]["foreground"]["screen"] == "chat:王五"
    assert record["device_state"]["focused_text"] == "早安王五"
    code, out, record = run(capsys, "流程和李四的早安", "fast.yaml", "-e", "contact=王五")
    assert code == 0 and out["answer"] == "早安李四" and record["device_state"]["foreground"]["screen"] == "chat:李四"
    code, out, record = run(capsys, "流程早安")                  # nobody gives {contact}: nothing is done
    assert code == 2 and "needs {contact}" in out["error"] and "-e contact=VALUE" in out["error"]
    assert not [c for c in record["device_state"]["commands"] if c.removeprefix("cmd ").startswith("input")]
    assert main(["run", "--device", "sim", "流程早安", "-e", "bad key=x"]) == 2
    assert "'bad key' is not a slot name" in capsys.readouterr().err


@pytest.mark.slow
def test_a_shipped_question_answers_in_json_through_the_cli(flows, capsys):
    code, out, record = run(capsys, "WLAN开着吗")
    assert code == 0 and out["answer"] is True and out["model_calls"] == 0
    assert record["answer"] is True and record["device_state"]["settings"]["wlan"] is True


@pytest.mark.slow
def test_a_wait_that_never_comes_true_ends_at_its_timeout_plus_one_look(flows, capsys):
    code, out, record = run(capsys, "等一个不会来的")
    wait = step(record, "wait_until")
    assert code == 1 and out["failure"] == "timeout" and wait["status"] == "failed"
    assert "never came true: timeout 1500 ms" in wait["error_message"] and "the screen shows" in wait["error_message"]
    assert 1.5 <= wait["elapsed"] <= 1.5 + POLL_S + 1.5        # one more look after the timeout; slack for a busy box
    assert out["final_check"] is None                          # the run ended at the failed wait


@pytest.mark.slow
def test_a_failed_assert_ends_the_task_with_what_was_there_instead(flows, capsys):
    code, out, record = run(capsys, "断言会失败")
    assert code == 1 and out["failure"] == "assertion"
    assert re.search(r"assert_visible: text:永远不会出现 not on the screen; the screen shows: .*'张三'.*\(after \d+ ms, \d+ looks\)", out["error"])
    assert step(record, "assert_visible")["abort"] is True


@pytest.mark.slow
def test_a_repeat_stops_at_max_and_a_retry_at_times(flows, capsys):
    code, out, record = run(capsys, "重复到上限")
    assert code == 0 and keys(record) == ["24"] * 3
    assert step(record, "repeat")["notes"] == ["3 rounds: stopped at max: 3 rounds; text:永远不会出现 is not on the screen"]
    code, out, record = run(capsys, "重试到上限")
    assert code == 1 and keys(record) == ["24"] * 3 and out["failure"] == "assertion"
    assert "on each of 3 tries" in out["error"]


@pytest.mark.slow
def test_a_scroll_for_an_absent_item_stops_at_max_swipes_or_at_the_lists_end(flows, capsys):
    code, out, record = run(capsys, "滚到上限")
    swipes = [c for c in record["device_state"]["commands"] if c.removeprefix("cmd ").startswith("input swipe")]
    assert code == 1 and out["failure"] == "not_found" and len(swipes) == 1
    assert "not found after 1 swipes down (max_swipes 1)" in out["error"]
    code, out, record = run(capsys, "滚到底")
    swipes = [c for c in record["device_state"]["commands"] if c.removeprefix("cmd ").startswith("input swipe")]
    assert code == 1 and len(swipes) == 2                      # the second swipe moved nothing: the end
    assert "the list stopped moving after 1 swipe down (its end)" in out["error"], out["error"]


@pytest.mark.slow
def test_an_extract_that_fails_says_what_it_saw(flows, capsys):
    code, out, _ = run(capsys, "读一个数")
    assert code == 1 and out["failure"] == "not_read" and out["answer"] is None
    assert "extract n from text:通讯录: no number in '通讯录' (read by tree)" in out["error"]
    code, out, _ = run(capsys, "读一个不存在的")
    assert code == 1 and "text:永远不会出现 not found" in out["error"] and "the screen shows" in out["error"]


@pytest.mark.slow
def test_replay_decides_every_look_again_and_sees_a_changed_one(flows, capsys):
    _, out, record = run(capsys, "流程演示张三")
    assert main(["replay", out["record"]]) == 0
    said = capsys.readouterr().out
    assert "look   recorded: extract text:张三: read '明天见'  replayed: extract text:张三: read '明天见'" in said
    assert "look   recorded: visible text:允许: not on the screen  replayed: visible text:允许: not on the screen" in said
    assert "decided by the phone" in said and ", 0 changed" in said
    path = Path(out["record"]) / "run.json"
    extract = step(record, "extract")
    extract["looks"][0]["value"] = "后天见"
    path.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    assert main(["replay", out["record"]]) == 1
    assert "CHANGED step" in capsys.readouterr().out


def test_a_dry_run_of_a_question_is_valid_and_answers_nothing(flows, capsys):
    code, out, record = run(capsys, "流程演示李四", "fast.yaml", "--dry-run")
    assert code == 0 and out["answer"] is None and (out["steps_not_checked"], out["steps"]) == (11, 12)
    assert [c.removeprefix("cmd ") for c in record["device_state"]["commands"]].count("input keyevent 24") == 0


def test_modules_check_names_flow_mistakes_with_file_and_line(flows, capsys):
    folder = write_module(flows / "mods", "broken", "name: broken\nkeywords: [坏]\n", """\
        tasks:
          - name: loop
            patterns: [坏循环]
            steps:
              - wait_until: {visible: "text:好", timout_ms: 500}
              - repeat:
                  while_visible: "text:加载更多"
                  steps:
                    - {action: swipe, params: {direction: up}}
              - extract: {from: "text:余额", as: balance, type: number}
              - run: {task: opne}
              - run: {task: open_page, module: settings}
            success_check: {text: 好}
          - name: open
            patterns: [打开坏]
            steps:
              - {action: go_home}
        """)
    assert main(["modules", "check"]) == 1
    out = capsys.readouterr().out
    tasks = re.escape(str(folder / "tasks.yaml"))
    assert re.search(rf"{tasks}:5: task loop step 1: wait_until does not take timout_ms \(did you mean 'timeout_ms'", out)
    assert re.search(rf"{tasks}:6: task loop: step 2: repeat is an unbounded loop: while_visible needs max: N", out)
    assert re.search(rf"{tasks}:10: warning: task loop: extract as: balance is never used", out)
    assert re.search(rf"{tasks}:11: task loop: run broken.opne: no such task \(did you mean 'open'", out)
    assert re.search(rf"{tasks}:12: task loop: run settings.open_page: \{{page\}} of open_page not given", out)
