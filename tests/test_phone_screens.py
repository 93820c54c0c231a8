"""Real phones' screens and UI dumps (issue 25 items 3, 4, 6): each behaviour switched on in the simulated
phone, driven through the CLI or `ADBController` with the real adbutils client over the ADB protocol.

Each test judges the phone's state (its snapshot, the commands it received), not only what `remote` says.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from remote.cli import main
from remote.core.device.adb_controller import ADBController
from remote.errors import DumpFailed, SecureScreen
from remote.runner.capture import Capture
from remote.sim import real_screen, serve

HEADLINE = "给张三发微信消息说你好"


def run_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], scenario: str, task: str) -> tuple[int, dict, dict]:
    """``remote run --device sim --scenario FILE --json TASK``: (exit status, the summary, the run record)."""
    path = tmp_path / "scenario.yaml"
    path.write_text("uiautomator_delay_ms: 0\n" + scenario, encoding="utf-8")
    started = time.monotonic()
    code = main(["run", "--device", "sim", "--scenario", str(path), "--runs-dir", str(tmp_path / "runs"), "--json",
                 task])
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert time.monotonic() - started < 90, "a bounded time to the outcome"
    record = json.loads((Path(summary["record"]) / "run.json").read_text(encoding="utf-8"))
    return code, summary, record


def commands(record: dict) -> list[str]:
    return record["device_state"]["commands"]


# ---------------------------------------------------------------- item 3: the UI dump


@pytest.mark.slow
def test_null_root_dumps_are_retried_and_the_task_is_done(tmp_path, capsys):
    code, summary, record = run_cli(tmp_path, capsys, "dump_failures: [null_root, null_root]\n", HEADLINE)
    assert code == 0 and summary["status"] == "success"
    assert record["device_state"]["chats"] == {"张三": ["你好"]}
    assert record["device"]["dumps"]["kinds"] == {"null_root": 2}


@pytest.mark.slow
def test_a_failed_read_back_dump_reads_the_field_by_ocr_and_the_task_goes_on(tmp_path, capsys):
    # the fourth dump is the read-back of 你好 in the chat's field (its box known from the chat's tree): it fails
    # five times (past its retries), so the field is read by OCR
    code, summary, record = run_cli(tmp_path, capsys, "dump_failures: [ok, ok, ok" + ", null_root" * 5 + "]\n",
                                    HEADLINE)
    assert code == 0 and summary["status"] == "success"
    assert record["device_state"]["chats"] == {"张三": ["你好"]}
    assert record["device"]["dumps"]["failed"] == 1


def test_a_failed_read_back_of_a_field_no_tree_showed_yet_is_dumped_once_more(tmp_path, capsys):
    # the second dump is the read-back of 张三 in the search field, which the tap on 搜索 focused without a dump
    # (the keyboard came up): OCR cannot know where the field is, so the phone is dumped once more
    code, summary, record = run_cli(tmp_path, capsys, "dump_failures: [ok" + ", null_root" * 5 + "]\n", HEADLINE)
    assert code == 0 and summary["status"] == "success"
    assert record["device_state"]["chats"] == {"张三": ["你好"]}
    assert record["device"]["dumps"]["failed"] == 1


@pytest.mark.slow
def test_another_automation_tool_is_named_and_the_task_is_not_called_done(tmp_path, capsys):
    code, summary, record = run_cli(tmp_path, capsys, "automation_holder: appium\n", HEADLINE)
    assert code == 1 and summary["status"] == "failed"
    assert "Appium's UiAutomator2 server" in summary["error"] and "already registered" in summary["error"]
    assert record["device_state"]["chats"] == {}
    assert any(c.startswith("ps") for c in commands(record))


@pytest.mark.slow
def test_a_failed_dump_degrades_the_step_to_the_screenshot_and_the_task_goes_on(tmp_path, capsys):
    # dumps 4 and 5 (the read-back of 你好 and the screen after it) fail past their retries: 发送 is found by OCR
    code, summary, record = run_cli(tmp_path, capsys, "dump_failures: [ok, ok, ok" + ", null_root" * 10 + "]\n",
                                    HEADLINE)
    assert code == 0 and summary["status"] == "success"
    assert record["device_state"]["chats"] == {"张三": ["你好"]}
    assert record["steps"][-1]["locate_result"]["element"]["metadata"]["tier"] == "ocr"
    assert record["device"]["dumps"]["failed"] == 2


def test_a_field_that_cannot_be_read_back_is_not_called_unfocused(tmp_path, capsys):
    # every dump killed, no holder to name: the typed text cannot be checked (its place is unknown to OCR)
    code, summary, record = run_cli(tmp_path, capsys, "dump_failures: [" + ", ".join(["killed"] * 40) + "]\n",
                                    "打开蓝牙")
    assert code == 1 and summary["status"] == "failed"
    assert "uiautomator dump failed (killed)" in summary["error"] and "no text field" not in summary["error"]
    assert record["device_state"]["settings"]["bluetooth"] is False


@pytest.mark.sim(dump_failures=["idle"], idle_timeout_ms=50)
def test_an_idle_failure_is_retried_compressed(adb, sim_phone):
    assert "<hierarchy" in adb.dump_hierarchy()
    dumps = [c for c in sim_phone.commands if "uiautomator dump" in c]
    assert len(dumps) == 2 and "--compressed" in dumps[1]


@pytest.mark.sim(dump_failures=["idle", "idle", "null_root"], idle_timeout_ms=50)
def test_a_dump_that_stays_broken_is_a_clear_error_within_its_retries(adb, sim_phone):
    with pytest.raises(DumpFailed) as err:
        adb.dump_hierarchy()
    assert err.value.kind == "idle" and "never went idle" in err.value.hint
    assert sum("uiautomator dump" in c for c in sim_phone.commands) == 2
    assert "<hierarchy" in adb.dump_hierarchy()   # null root once, then a tree


def test_the_headline_task_dumps_at_most_once_and_a_half_per_step(make_runner, sim_phone):
    result = make_runner().run(HEADLINE)
    assert result.status.value == "success" and sim_phone.snapshot()["chats"] == {"张三": ["你好"]}
    dumps = sum("uiautomator dump" in c for c in sim_phone.commands)
    assert dumps <= 1.5 * len(result.step_results), f"{dumps} dumps for {len(result.step_results)} steps"


@pytest.mark.slow
def test_an_apps_first_screen_is_dumped_during_the_launch_wait(tmp_path, capsys):
    code, summary, record = run_cli(tmp_path, capsys, "", HEADLINE)
    assert code == 0 and record["device_state"]["chats"] == {"张三": ["你好"]}
    sent = commands(record)
    launch = next(i for i, c in enumerate(sent) if c.startswith("am start") and "LAUNCHER" in c)
    assert not [c for c in sent if c.startswith("monkey")]           # no app_process to open an app
    after = [c for c in sent[launch + 1:] if not c.startswith(("dumpsys", "ps"))]
    assert "uiautomator dump" in after[0]          # before the next step's frame: it ran beside the launch's wait
    assert sum("uiautomator dump" in c for c in sent) == 5               # and it is the tree the next step used


def test_a_read_back_dump_longer_than_the_settle_time_is_not_waited_after(fast_adb, sim_phone):
    capture = Capture(fast_adb)
    fast_adb.tap(540, 1200)
    fast_adb.dump_hierarchy()          # typing's read-back, after the action
    time.sleep(0.2)                    # a real dump lasts over a second: the settle time has passed in it
    slept: list[float] = []
    screen = capture.after_action(0.15, slept.append)
    assert screen.tree_reused and slept == [0.0]
    assert sum("uiautomator dump" in c for c in sim_phone.commands) == 1


@pytest.mark.sim(uiautomator_delay_ms=300)
def test_typings_frame_is_taken_beside_its_read_back_dump(fast_adb, sim_phone):
    capture = Capture(fast_adb)

    def typing() -> str:
        fast_adb.tap(540, 1200)                  # what typing sends, then its read-back dump
        return fast_adb.dump_hierarchy()

    xml, beside = capture.frame_beside_read_back(typing, 0.05)
    assert capture.stats.frames == 1 and beside is not None             # taken while the dump ran
    screen = capture.screen_after_typing(beside)
    assert screen is not None and screen.xml == xml and capture.stats.frames == 1
    assert sum("uiautomator dump" in c for c in sim_phone.commands) == 1


@pytest.mark.sim(uiautomator_delay_ms=300)
def test_a_frame_beside_a_read_back_is_dropped_when_the_screen_changed_after(fast_adb, sim_phone):
    capture = Capture(fast_adb)

    def typing_then_a_tap() -> None:
        fast_adb.dump_hierarchy()
        fast_adb.tap(540, 1200)

    _, beside = capture.frame_beside_read_back(typing_then_a_tap, 0.05)
    assert capture.stats.frames == 1 and capture.screen_after_typing(beside) is None
    after = capture.after_action(0.0, lambda s: None, beside=beside)     # the usual way: dumped anew
    assert not after.tree_reused and capture.stats.frames == 2


def test_a_screen_that_did_not_change_is_not_dumped_again(fast_adb, sim_phone):
    capture = Capture(fast_adb)
    first = capture.screen(tree=True)
    again = capture.screen(tree=True)
    assert sum("uiautomator dump" in c for c in sim_phone.commands) == 1
    assert again.tree_reused and again.xml == first.xml
    fast_adb.tap(*first.tree().find_by_desc("微信")[0].center)   # the launcher's WeChat icon: a new screen
    assert capture.screen(tree=True).tree().find_by_text("通讯录")
    assert sum("uiautomator dump" in c for c in sim_phone.commands) == 2


def test_a_new_capture_does_not_take_a_dump_from_before_it_began(fast_adb, sim_phone):
    fast_adb.dump_hierarchy()                       # someone else's dump (an MCP call, a studio click)
    Capture(fast_adb).screen(tree=True)              # the phone may have moved on its own since: dumped anew
    assert sum("uiautomator dump" in c for c in sim_phone.commands) == 2


def test_a_frame_is_decoded_once_into_the_array_the_locator_uses(fast_adb):
    screen = Capture(fast_adb).screen(tree=False)
    assert screen.bgr.shape == (2400, 1080, 3) and screen._pil is None   # no PIL image made on the way
    assert screen.pil.size == (1080, 2400)


# ---------------------------------------------------------------- item 4: displays, locks, rotation, secure layers


@pytest.mark.slow
def test_two_displays_capture_the_default_one_with_its_id(tmp_path, capsys):
    code, summary, record = run_cli(tmp_path, capsys, "displays: 2\n", "打开微信")
    assert code == 0 and record["device_state"]["foreground"]["package"] == "com.tencent.mm"
    shots = [c for c in commands(record) if c.startswith("screencap")]
    assert shots and all(c.startswith(f"screencap -d {real_screen.MAIN_ID}") for c in shots)


@pytest.mark.sim(displays=2)
def test_the_front_app_is_read_on_the_default_display_not_the_cover(adb, sim_phone):
    sim_phone.launch("com.tencent.mm")
    out = adb.shell(["dumpsys", "window"])
    assert out.index("SubHomeActivity") < out.index("com.tencent.mm")   # the cover screen's focus comes first
    assert adb.current_app()["package"] == "com.tencent.mm"
    raw = adb.link.service("exec:screencap -p")
    assert raw.startswith(b"[Warning] Multiple displays")            # what a bare screencap gives
    assert adb.frame().shape == (2400, 1080, 3)                        # ours asks for the display by id


@pytest.mark.slow
def test_a_sleeping_phone_with_a_swipe_lock_is_woken_and_unlocked(tmp_path, capsys):
    code, summary, record = run_cli(tmp_path, capsys, "screen_off: true\nkeyguard: swipe\n", "返回桌面")
    assert code == 0 and summary["status"] == "success"
    assert record["device_state"]["hardware"]["awake"] and not record["device_state"]["hardware"]["locked"]
    assert "input keyevent 224" in commands(record)


def test_a_pin_lock_stops_the_run_with_exit_2_and_nothing_typed(tmp_path, capsys):
    code, summary, record = run_cli(tmp_path, capsys, "keyguard: pin\n", HEADLINE)
    assert code == 2 and summary["failure"] == "device"
    assert "PIN, pattern or password" in summary["error"] and "never types" in summary["error"]
    assert record["device_state"]["hardware"]["locked"]
    assert not [c for c in commands(record) if re.match(r"(cmd )?input (text|tap|swipe)", c)]


@pytest.mark.sim(keyguard="swipe")
def test_the_lock_screen_reads_as_systemui_until_swiped(adb, sim_phone):
    assert adb.current_app()["package"] == "com.android.systemui"
    assert adb.wake_and_unlock() == ["swiped away the lock screen (no PIN is set)"]
    assert adb.current_app()["package"] == "com.android.launcher3"


@pytest.mark.sim(secure_layer=True)
def test_a_secure_layer_under_a_visible_status_bar_is_seen(adb, fast_adb):
    with pytest.raises(SecureScreen, match="secure layer"):
        adb.screenshot()
    frame = adb.frame(allow_uniform=True)
    assert frame[:40].max() > 16 and frame[300:2200].max() < 16    # the status bar shows, the app is black
    screen = Capture(fast_adb).screen(tree=False)
    assert screen.secure and screen.tree() is not None                  # the tree still locates on it


@pytest.mark.sim(rotation=1)
def test_landscape_taps_and_frames_use_the_turned_size(adb, sim_phone):
    assert adb.shell(["wm", "size"]).strip() == "Physical size: 1080x2400"   # wm size stays portrait (R9)
    assert adb.window_size() == (2400, 1080)
    adb.tap(2000, 500)                                                       # valid in landscape
    assert sim_phone.commands[-1].endswith("tap 2000 500")
    assert adb.frame().shape == (1080, 2400, 3)


def test_the_settings_a_phone_is_turned_with_turn_it_at_run_time(adb_client, sim_phone):
    """``settings put system accelerometer_rotation 0`` and ``user_rotation N`` (Settings.System; SettingsProvider's
    validators) turn the display as Android does; the frames, ``dumpsys display`` and the dump follow."""
    device = adb_client.device(sim_phone.serial)
    portrait = device.screenshot()
    assert portrait.size == (1080, 2400) and device.rotation() == 0
    assert device.shell("settings get system user_rotation").strip() == "0"
    device.shell("settings put system accelerometer_rotation 0")
    device.shell("settings put system user_rotation 1")
    assert device.shell("settings get system user_rotation").strip() == "1"
    assert device.shell("settings get system accelerometer_rotation").strip() == "0"
    turned = device.screenshot()
    assert turned.size == (2400, 1080) and device.rotation() == 1                 # adbutils reads dumpsys display
    assert turned.tobytes() == portrait.rotate(90, expand=True).tobytes()     # the same picture, turned
    display = device.shell("dumpsys display")
    assert "orientation=1" in display and "real 2400 x 1080, rotation 1" in display
    assert device.shell("wm size").strip() == "Physical size: 1080x2400"         # wm size stays portrait (R9)
    assert 'rotation="1"' in device.dump_hierarchy() and device.window_size() == (2400, 1080)
    device.shell("settings put system user_rotation 3")
    assert device.rotation() == 3 and sim_phone.snapshot()["hardware"]["rotation"] == 3
    refused = device.shell2("settings put system user_rotation 4")              # USER_ROTATION is 0-3
    assert refused.returncode == 255 and "Invalid value: 4 for setting: user_rotation" in refused.output
    device.shell("settings put system accelerometer_rotation 1")                 # the sensor: the phone lies upright
    assert device.rotation() == 0 and device.screenshot().size == (1080, 2400)
    device.shell("settings put system user_rotation 2")                          # no effect while auto-rotating
    assert device.rotation() == 0 and device.shell("settings get system user_rotation").strip() == "2"
    device.shell("settings put system accelerometer_rotation 0")
    assert device.rotation() == 2 and device.screenshot().size == (1080, 2400)


@pytest.mark.slow
def test_a_task_in_landscape_taps_in_the_turned_space(tmp_path, capsys):
    code, summary, record = run_cli(tmp_path, capsys, "rotation: 1\n", "打开蓝牙")
    assert code == 0 and record["device_state"]["settings"]["bluetooth"] is True
    taps = [tuple(map(int, c.split()[-2:])) for c in commands(record) if re.match(r"(cmd )?input tap", c)]
    assert taps and all(x < 2400 and y < 1080 for x, y in taps) and record["device"]["size"] == [2400, 1080]


@pytest.mark.slow
def test_a_secure_layer_task_is_done_by_the_tree_and_checked_on_the_phone(tmp_path, capsys):
    code, summary, record = run_cli(tmp_path, capsys, "secure_layer: true\n", HEADLINE)
    assert code == 0 and record["device_state"]["chats"] == {"张三": ["你好"]}
    tiers = {s["locate_result"]["element"]["metadata"]["tier"] for s in record["steps"] if s.get("locate_result")}
    assert tiers == {"tree"}                       # nothing was matched on the black app area


# ---------------------------------------------------------------- item 6: the link, cmd input, double tap


@pytest.mark.parametrize(("speed", "wire"), [(200.0, "raw"), (2.0, "png")])   # far from the 23 MB/s threshold
def test_the_wire_format_is_chosen_by_the_link_speed(speed, wire, tmp_path):
    with serve(link_mb_s=speed, png_ms=450, uiautomator_delay_ms=0) as server:
        adb = ADBController(server.serial, port=server.port, state_dir=str(tmp_path)).connect()
        adb.frame()
        report = adb.link_report()
        assert report.wire == wire, report
        assert report.mb_s is not None and report.mb_s < speed * 1.5     # the paced link bounds what was measured
        kinds = [c for c in server.phone.commands if c.startswith("screencap")]
        assert ("screencap -p" in kinds) == (wire == "png")


@pytest.mark.slow
def test_a_task_over_a_slow_link_takes_png_frames(tmp_path, capsys):
    code, summary, record = run_cli(tmp_path, capsys, "link_mb_s: 2.0\npng_ms: 450\n", "打开微信")
    assert code == 0 and record["device_state"]["foreground"]["package"] == "com.tencent.mm"
    link = record["device"]["link"]
    assert link["wire"] == "png" and link["mb_s"] < 3.0
    assert "screencap -p" in commands(record)


@pytest.mark.parametrize(("release", "prefix"), [("13", "cmd input"), ("10", "input")])
def test_cmd_input_from_android_11(release, prefix, tmp_path):
    with serve(android=int(release), uiautomator_delay_ms=0) as server:
        adb = ADBController(server.serial, port=server.port, state_dir=str(tmp_path)).connect()
        adb.tap(540, 1200)
        adb.input_keyevent("BACK")
        assert server.phone.commands[-2:] == [f"{prefix} tap 540 1200", f"{prefix} keyevent 4"]


@pytest.mark.parametrize(("release", "double"), [("13", True), ("10", False)])
def test_a_double_tap_is_one_command_inside_the_double_tap_window(release, double, tmp_path):
    with serve(android=int(release), input_ms=250, cmd_ms=30, uiautomator_delay_ms=0) as server:
        adb = ADBController(server.serial, port=server.port, state_dir=str(tmp_path)).connect()
        assert adb.double_tap(540, 1200) is double
        assert server.phone.hw.double_taps == int(double)   # two `input` app_processes land 250 ms+ apart
        assert len([c for c in server.phone.commands if "tap 540 1200" in c]) == 1


@pytest.mark.sim(cmd_ms=30, input_ms=250)
def test_the_mcp_double_tap_is_a_real_double_tap(adb, sim_phone, tmp_path):
    from remote.apps import ModuleRegistry
    from remote.mcp import gestures
    from remote.mcp.access import AccessGate
    from remote.mcp.asking import Asker
    from remote.mcp.session import Session, SessionOptions

    session = Session(adb, registry=ModuleRegistry(), gate=AccessGate(["com.tencent.mm"]), phone=sim_phone,
                      options=SessionOptions(runs_dir=None, work_dir=tmp_path, busy_wait=5))
    sim_phone.launch("com.tencent.mm")
    session.screenshot(max_side=2400)                  # image pixels = device pixels
    report = gestures.double_tap(session, Asker(None), target_ref="desc:搜索")   # an element (MCP gates: no blind
    assert report.startswith("double-tapped") and sim_phone.hw.double_taps == 1    # touches without a person)
    assert len([c for c in sim_phone.commands if c.startswith("cmd input tap") and "; sleep 0.06; cmd input tap" in c]) == 1


# ---------------------------------------------------------------- the screen's lines of `remote doctor`


def doctor(tmp_path: Path, capsys: pytest.CaptureFixture[str], scenario: str) -> tuple[int, dict[str, dict]]:
    path = tmp_path / "phone.yaml"
    path.write_text("uiautomator_delay_ms: 0\n" + scenario, encoding="utf-8")
    code = main(["doctor", "--device", "sim", "--scenario", str(path), "--json"])
    return code, {c["check"]: c for c in json.loads(capsys.readouterr().out)["checks"]}


def test_doctor_on_the_default_simulated_phone_ticks_the_screens_lines(tmp_path, capsys):
    code, lines = doctor(tmp_path, capsys, "")
    assert code == 0 and all(line["ok"] for line in lines.values()), lines
    assert lines["displays"]["measured"] == "one display" and lines["rotation"]["measured"].startswith("portrait")
    assert "RAW" in lines["screenshot"]["measured"] and lines["UI dump"]["measured"].endswith(" s")


@pytest.mark.parametrize(("scenario", "name", "says"), [
    ("automation_holder: uiautomator2\n", "UI dump", "uiautomator2"),
    ("automation_holder: appium\n", "UI dump", "Appium's UiAutomator2 server"),
    ("dump_failures: [killed, killed]\n", "UI dump", "another UiAutomation client"),
    ("dump_failures: [idle, idle]\nidle_timeout_ms: 50\n", "UI dump", "never went idle"),
    ("keyguard: pin\n", "lock and screen", "PIN, pattern or password"),
])
def test_doctor_names_what_is_wrong_with_the_screen_and_what_to_do(tmp_path, capsys, scenario, name, says):
    code, lines = doctor(tmp_path, capsys, scenario)
    line = lines[name]
    assert code == 1 and not line["ok"] and line["steps"]
    assert says in line["measured"] + " ".join(line["steps"])
    assert [n for n, c in lines.items() if not c["ok"]] == [name]      # the other lines stay ticked


def test_doctor_describes_displays_rotation_and_a_slow_link(tmp_path, capsys):
    code, lines = doctor(tmp_path, capsys, "displays: 2\nrotation: 1\nlink_mb_s: 2.0\npng_ms: 300\n")
    assert lines["displays"]["measured"].startswith("2 displays")
    assert str(real_screen.MAIN_ID) in lines["displays"]["measured"]
    assert lines["rotation"]["measured"].startswith("landscape") and "2400x1080" in lines["rotation"]["measured"]
    assert "PNG" in lines["screenshot"]["measured"]


@pytest.mark.parametrize(("scenario", "name", "says"), [
    ("screen_off: true\nkeyguard: swipe\n", "lock and screen", "a run wakes it and swipes the lock screen away"),
    ("secure_layer: true\n", "screenshot", "a secure layer"),
])
def test_doctor_ticks_what_a_run_copes_with_and_says_so(tmp_path, capsys, scenario, name, says):
    code, lines = doctor(tmp_path, capsys, scenario)
    assert code == 0 and all(line["ok"] for line in lines.values()), lines
    assert says in lines[name]["measured"]


@pytest.mark.slow
def test_doctor_crosses_a_screenshot_slower_than_a_second(tmp_path, capsys):
    code, lines = doctor(tmp_path, capsys, "link_mb_s: 1.0\npng_ms: 1500\n")   # raw ~10 s, PNG ~1.6 s
    line = lines["screenshot"]
    assert code == 1 and not line["ok"] and "connect the phone over USB" in line["steps"][0]
    assert [n for n, c in lines.items() if not c["ok"]] == ["screenshot"]
