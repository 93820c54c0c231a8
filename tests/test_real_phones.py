"""Real phones' refusals and states, end to end: the CLI, the real adbutils client, the simulated phone.

Each test switches one behaviour of docs/adb.md#real-phones-behaviours-r1-r11 on in a scenario (remote.sim.roms holds the texts)
and runs the headline task through ``python -m remote run``. It checks the outcome (SUCCESS where a
real phone allows the task, else the named cause and the switch to flip), the time to it (a refused
tap stops at once, long before the time budget), the record, and the phone's own state: no SUCCESS
without the message in the chat, no failure that left a message half sent.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from remote.cli import main
from remote.core.device.adb_controller import ADBController
from remote.mcp import gestures, keys
from remote.mcp.access import AccessGate
from remote.mcp.asking import Asker
from remote.mcp.session import Session, SessionOptions
from remote.sim import serve

TASK = "给张三发微信消息说你好"
B64 = "ADB_INPUT_B64"


def run_task(tmp_path: Path, capsys: Any, scenario: dict[str, Any], task: str = TASK) -> dict[str, Any]:
    """Run ``task`` through the CLI on a simulated phone with these scenario keys; what it printed and recorded."""
    path = tmp_path / "phone.yaml"
    path.write_text(yaml.safe_dump({"uiautomator_delay_ms": 0, **scenario}, allow_unicode=True), encoding="utf-8")
    started = time.monotonic()
    code = main(["run", "--device", "sim", "--scenario", str(path), "--runs-dir", str(tmp_path / "runs"),
                 "--max-seconds", "120", "--json", task])
    seconds = time.monotonic() - started
    out = capsys.readouterr()
    result: dict[str, Any] = {"code": code, "seconds": seconds, "stderr": out.err}
    printed = json.loads(out.out) if out.out.strip() else {}
    if printed.get("status") == "error":      # the run could not start: --json's error object
        result["error"] = printed
    elif printed:
        result["summary"] = summary = printed
        record = json.loads((Path(summary["record"]) / "run.json").read_text(encoding="utf-8"))
        result["record"], result["phone"] = record, record["device_state"]
    return result


def sent(result: dict[str, Any], prefix: str) -> list[str]:
    """Commands starting with ``prefix`` (`cmd input` read as `input`: taps go through it from Android 11)."""
    return [c for c in result["phone"]["commands"] if c.removeprefix("cmd ").startswith(prefix)]


# ---------------------------------------------------------------- taps refused: stop at once, name the switch

@pytest.mark.parametrize(("scenario", "rom", "switch"), [
    ({"rom": "miui", "input_refused": True, "ime_refused": True}, "MIUI V140", "「USB调试（安全设置）」"),
    ({"rom": "hyperos", "input_refused": True, "ime_refused": True}, "HyperOS OS2.0", "「USB调试（安全设置）」"),
    ({"rom": "originos", "input_refused": True}, "vivo OriginOS/Funtouch 14.0", "「USB模拟点击」"),
])
def test_a_refused_tap_stops_the_run_at_once_and_names_the_switch(tmp_path, capsys, scenario, rom, switch):
    result = run_task(tmp_path, capsys, scenario)
    summary, phone = result["summary"], result["phone"]
    assert result["code"] == 2 and summary["status"] == "failed" and summary["failure"] == "device"
    assert "INJECT_EVENTS" in summary["error"] and rom in summary["error"] and switch in summary["error"]
    assert "remote doctor" in summary["error"]
    assert result["seconds"] < 40 and summary["seconds"] < 30          # the time budget was 120 s
    assert len(sent(result, "input ")) == 1                              # the first tap, and no retry
    assert summary["steps_ok"] == summary["steps"] < 7 and not summary["steps_failed"]   # the refused one: not done
    assert phone["foreground"]["package"] == "com.tencent.mm"            # `monkey` still opened the app
    assert phone["chats"] == {} and result["record"]["failure"] == "device"


def test_vivo_refusing_taps_is_named_also_for_key_presses(sim_server, tmp_path):
    """Any injected event meets the same refusal: HOME is refused like a tap (uiautomator2#520: a key on MIUI)."""
    sim_server.close()
    with serve({"rom": "originos", "input_refused": True}) as server:
        adb = ADBController(server.serial, port=server.port, state_dir=str(tmp_path))
        adb.connect()
        with pytest.raises(Exception) as err:
            adb.press_home()
        assert type(err.value).__name__ == "InputInjectionRefused" and "「USB模拟点击」" in str(err.value)
        adb.launch_app("com.tencent.mm")                                 # opening apps still works
        assert server.phone.snapshot()["foreground"]["package"] == "com.tencent.mm"


# ---------------------------------------------------------------- keyboard switching refused (ColorOS)

@pytest.mark.slow
def test_coloros_with_adbkeyboard_already_current_types_chinese_without_switching(tmp_path, capsys):
    result = run_task(tmp_path, capsys, {"rom": "coloros", "ime_refused": True, "keyboard": "adbkeyboard"})
    assert result["code"] == 0 and result["summary"]["status"] == "success"
    assert result["phone"]["chats"] == {"张三": ["你好"]}
    assert not sent(result, "ime ")                                      # never asked: it would be refused
    assert all("-p com.android.adbkeyboard" in c for c in sent(result, "am broadcast"))


@pytest.mark.sim(rom="coloros", ime_refused=True, contacts=["Alice", "张三"])
def test_coloros_refusing_the_keyboard_switch_still_types_ascii_through_input_text(make_runner, sim_phone):
    result = make_runner().run("给Alice发微信消息说hello")      # the runner the CLI builds, waits skipped
    phone = sim_phone.snapshot()
    assert result.status.value == "success" and result.exit_code == 0 and phone["chats"] == {"Alice": ["hello"]}
    assert "input text Alice" in phone["commands"] and "input text hello" in phone["commands"]
    assert phone["ime"] == "com.android.inputmethod.latin/.LatinIME" and Path(result.record_dir, "run.json").exists()


def test_coloros_refusing_the_keyboard_switch_names_its_switch_for_chinese(tmp_path, capsys):
    result = run_task(tmp_path, capsys, {"rom": "coloros", "ime_refused": True})
    summary = result["summary"]
    assert result["code"] == 2 and summary["failure"] == "device" and summary["seconds"] < 30
    assert "WRITE_SECURE_SETTINGS" in summary["error"] and "「禁止权限监控」" in summary["error"]
    assert "make ADB Keyboard the phone's keyboard yourself" in summary["error"]
    assert result["phone"]["chats"] == {} and result["phone"]["focused_text"] == ""   # nothing half typed


def test_devices_lists_a_phone_that_refuses_ime_as_a_phone(capsys):
    with serve({"rom": "coloros", "ime_refused": True}) as server:
        assert main(["devices", "--adb-port", str(server.port), "--json"]) == 0
        row = json.loads(capsys.readouterr().out)[0]
    assert row["state"] == "device" and row["rom"].startswith("ColorOS") and row["keyboard"] == "installed, not enabled"
    assert not any(c.startswith("ime") for c in server.phone.commands)


# ---------------------------------------------------------------- ADBKeyboard builds

@pytest.mark.slow
def test_an_old_adbkeyboard_that_loses_the_first_text_after_the_switch_still_types_it_once(tmp_path, capsys):
    result = run_task(tmp_path, capsys, {"adbkeyboard_build": "v2.4-dev"})
    assert result["code"] == 0 and result["phone"]["chats"] == {"张三": ["你好"]}   # not lost, not doubled
    first = sent(result, "am broadcast -a ADB_INPUT_B64")[0]
    assert sent(result, "am broadcast -a ADB_INPUT_B64").count(first) == 2       # the warm-up sent it again


def test_android_16_with_the_2023_adbkeyboard_names_the_release_to_install(tmp_path, capsys):
    result = run_task(tmp_path, capsys, {"android": 16, "adbkeyboard_build": "root-2023"})
    summary = result["summary"]
    assert result["code"] == 2 and summary["seconds"] < 30
    assert "receives nothing" in summary["error"] and "v2.5-dev" in summary["error"]
    assert "releases/download/v2.5-dev" in summary["error"]
    assert not sent(result, "am broadcast -a ADB_INPUT_B64")           # known before sending anything
    assert result["phone"]["chats"] == {}


def test_android_16_with_an_unfixed_2026_build_is_found_out_by_the_read_back(tmp_path, capsys):
    result = run_task(tmp_path, capsys, {"android": 16, "adbkeyboard_build": "v2.4-dev"})
    summary = result["summary"]
    assert result["code"] == 2 and "received nothing" in summary["error"] and "v2.5-dev" in summary["error"]
    assert len(sent(result, "am broadcast -a ADB_INPUT_B64")) == 3     # bounded: three sends, then it stops
    assert result["phone"]["chats"] == {} and summary["seconds"] < 40


@pytest.mark.sim(android=16, adbkeyboard_build="v2.5-dev")
def test_android_16_with_the_fixed_release_succeeds(make_runner, sim_phone):
    result = make_runner().run(TASK)
    phone = sim_phone.snapshot()
    assert result.status.value == "success" and phone["chats"] == {"张三": ["你好"]}
    assert sum(c.startswith("am broadcast -a ADB_INPUT_B64") for c in phone["commands"]) == 2   # none lost


# ---------------------------------------------------------------- device states on the adb server

@pytest.mark.parametrize(("state", "words"), [
    ("unauthorized", "accept the USB debugging prompt on the phone (and tick 'always allow'"),
    ("no permissions", "plugdev"),
    ("offline", "adb connect IP:PORT"),
])
def test_a_phone_that_is_not_ready_is_named_with_what_to_do(tmp_path, capsys, state, words):
    result = run_task(tmp_path, capsys, {"device_state": state})
    assert result["code"] == 2 and "summary" not in result               # no run starts on such a phone
    assert result["error"]["error_type"] == "DeviceNotReady" and words in result["error"]["hint"]
    assert state in result["stderr"] and words in result["stderr"] and "no device connected" not in result["stderr"]
    assert result["seconds"] < 30                                        # offline: waited 4 s at most, then named


def test_an_offline_phone_that_comes_back_is_waited_for(tmp_path):
    """Offline right after `adb connect` (two device-list reads here), then ready: retried, not refused."""
    path = tmp_path / "phone.yaml"
    path.write_text("device_state: offline\ndevice_state_polls: 2\n", encoding="utf-8")
    started = time.monotonic()
    assert main(["screenshot", "--device", "sim", "--scenario", str(path), "-o", str(tmp_path / "s.png")]) == 0
    assert (tmp_path / "s.png").stat().st_size > 0 and time.monotonic() - started < 10


def test_devices_shows_every_state_with_its_note(capsys):
    with serve({"device_state": "unauthorized"}) as server:
        assert main(["devices", "--adb-port", str(server.port)]) == 0
        out = capsys.readouterr().out
        assert "unauthorized" in out and "accept the USB debugging prompt" in out
    with serve({"device_state": "no permissions"}) as server:
        assert main(["devices", "--adb-port", str(server.port), "--json"]) == 0
        row = json.loads(capsys.readouterr().out)[0]
        assert row["state"] == "no permissions" and "udev" in row["note"]


# ---------------------------------------------------------------- MCP: unverified text is not "typed"

def test_mcp_type_without_verify_says_not_verified(adb, sim_phone, tmp_path):
    session = Session(adb, gate=AccessGate(["com.tencent.mm"]), phone=sim_phone,
                      options=SessionOptions(runs_dir=None, work_dir=tmp_path, busy_wait=5))
    sim_phone.launch("com.tencent.mm")
    gestures.tap(session, Asker(None), target_ref="desc:搜索")
    report = keys.type_text(session, Asker(None), "张三", verify=False)
    assert "not verified" in report and "typed" not in report
    assert sim_phone.snapshot()["focused_text"] == "张三"
