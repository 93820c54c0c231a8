"""The simulated device shell and Android commands, answered like a real phone."""

from __future__ import annotations

import base64

import pytest

from remote.errors import ConfigError
from remote.sim import SimPhone
from remote.sim.commands import run as shell_run
from remote.sim.scenario import Scenario


def run(phone: SimPhone, line: str) -> tuple[int, str, str]:
    out, err = bytearray(), bytearray()
    status = shell_run(phone, line, lambda fd, data: (out if fd == 1 else err).extend(data))
    return status, out.decode(), err.decode()


@pytest.fixture
def phone() -> SimPhone:
    return SimPhone(uiautomator_delay_ms=0)


@pytest.mark.parametrize(("line", "expected"), [
    ("echo hi", (0, "hi\n", "")),
    ("foo bar", (127, "", "/system/bin/sh: foo: not found\n")),
    ("false; echo $?", (0, "1\n", "")),
    ("true && echo a || echo b", (0, "a\n", "")),
    ("false && echo a || echo b", (0, "b\n", "")),
    ("echo 'a;b' \"c d\" e\\ f", (0, "a;b c d e f\n", "")),
    ("echo '$?' \"$?\"", (0, "$? 0\n", "")),
    ("echo x >&2", (0, "", "x\n")),
    ("ls /nope 2>/dev/null; exit 3", (3, "", "")),
    ("echo one; exit 4; echo never", (4, "one\n", "")),
    ("echo abc | grep b", (0, "abc\n", "")),
    ("echo 'unterminated", (1, "", "/system/bin/sh: syntax error: unterminated quoted string\n")),
    ("getprop ro.product.model", (0, "SimPhone\n", "")),
    ("wm size", (0, "Physical size: 1080x2400\n", "")),
    ("settings get secure default_input_method", (0, "com.android.inputmethod.latin/.LatinIME\n", "")),
])
def test_shell_lines(phone, line, expected):
    assert run(phone, line) == expected


def test_redirection_to_files(phone):
    assert run(phone, "echo hello > /sdcard/a.txt; echo more >> /sdcard/a.txt; cat /sdcard/a.txt") == \
        (0, "hello\nmore\n", "")
    assert run(phone, "rm /sdcard/a.txt && cat /sdcard/a.txt")[0] == 1
    assert run(phone, "echo x > /nodir/f")[0] == 1


def test_quoted_text_is_typed_not_run(phone):
    phone.launch("com.tencent.mm")
    phone.tap(*phone.find(desc="搜索").center)
    status, _, _ = run(phone, """input text '"; reboot; echo "'""")
    assert status == 0 and phone.snapshot()["focused_text"] == '"; reboot; echo "'
    assert phone.reboots == 0


def test_input_text_ascii_only_and_percent_s(phone):
    phone.launch("com.tencent.mm")
    phone.tap(*phone.find(desc="搜索").center)
    assert run(phone, "input text a%sb")[0] == 0
    status, _, err = run(phone, "input text 你好")
    assert status == 255 and "NullPointerException" in err
    assert phone.snapshot()["focused_text"] == "a b"


def test_adbkeyboard_needs_to_be_the_current_ime(phone):
    phone.launch("com.tencent.mm")
    phone.tap(*phone.find(desc="搜索").center)
    msg = base64.b64encode("张三".encode()).decode()
    status, out, _ = run(phone, f"am broadcast -a ADB_INPUT_B64 --es msg {msg}")
    assert out == ("Broadcasting: Intent { act=ADB_INPUT_B64 flg=0x400000 (has extras) }\n"
                   "Broadcast completed: result=0\n")
    assert phone.snapshot()["focused_text"] == ""  # not the current IME: nobody received it
    assert run(phone, "ime enable com.android.adbkeyboard/.AdbIME")[1] == \
        "Input method com.android.adbkeyboard/.AdbIME: now enabled for user #0\n"
    assert run(phone, "ime set com.android.adbkeyboard/.AdbIME")[0] == 0
    run(phone, f"am broadcast -a ADB_INPUT_B64 --es msg {msg}")
    assert phone.snapshot()["focused_text"] == "张三"
    run(phone, "am broadcast -a ADB_CLEAR_TEXT")
    assert phone.snapshot()["focused_text"] == ""


def test_ime_absent_without_adbkeyboard():
    phone = SimPhone(adbkeyboard=False)
    assert run(phone, "ime list -a -s")[1] == "com.android.inputmethod.latin/.LatinIME\n"
    status, _, err = run(phone, "ime enable com.android.adbkeyboard/.AdbIME")
    assert "Unknown input method com.android.adbkeyboard/.AdbIME" in err


def test_activity_commands(phone):
    assert run(phone, "monkey -p com.tencent.mm -c android.intent.category.LAUNCHER 1")[1].endswith(
        "Events injected: 1\n## Network stats: elapsed time=18ms (0ms mobile, 0ms wifi, 18ms not connected)\n")
    assert "mCurrentFocus=Window{4f2a9c1 u0 com.tencent.mm/com.tencent.mm.ui.LauncherUI}" in \
        run(phone, "dumpsys window windows")[1]
    assert run(phone, "monkey -p no.such.app 1")[1].endswith("** No activities found to run, monkey aborted.\n")
    assert run(phone, "am start -n com.android.settings/.Settings")[0] == 0
    assert phone.snapshot()["foreground"]["package"] == "com.android.settings"
    assert run(phone, "input keyevent KEYCODE_HOME")[0] == 0
    assert phone.snapshot()["foreground"]["package"] == "com.android.launcher3"
    assert "orientation=0" in run(phone, "dumpsys display")[1]


def test_uiautomator_dump_to_file_and_tty(phone):
    status, out, _ = run(phone, "uiautomator dump")
    assert (status, out) == (0, "UI hierchary dumped to: /sdcard/window_dump.xml\n")
    assert phone.fs.read("/sdcard/window_dump.xml").startswith(b"<?xml version='1.0'")
    assert run(phone, "uiautomator dump /dev/tty")[1].startswith("<?xml")


def test_scenario_keys_are_checked(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("resolution: 720x1600\nad_popup: true\ncontacts: [甲, 乙]\n", encoding="utf-8")
    scenario = Scenario.load(path)
    assert (scenario.size, scenario.ad_popup, scenario.contacts) == ((720, 1600), True, ("甲", "乙"))
    path.write_text("resolutoin: 720x1600\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"s\.yaml:1: unknown scenario key 'resolutoin' \(did you mean 'resolution'\?\)"):
        Scenario.load(path)
    with pytest.raises(ConfigError, match="resolution"):
        SimPhone(resolution="big")
    with pytest.raises(ConfigError, match="drop_after_commands"):
        Scenario(drop_after_commands=0)
