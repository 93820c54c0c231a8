"""ADBController against a scripted adb server: command strings, quoting, IME lifecycle, errors.

The real adbutils client talks to tests/support/fake_adb_server.py over TCP, so
these tests cover the wire path too; the simulated phone tests (test_sim_*) add a
full phone behind the same protocol.
"""

from __future__ import annotations

import base64
import html
import shlex
import struct
import tempfile

import numpy as np
import pytest
from PIL import Image

from remote.core.device import ime as adb_ime
from remote.core.device.adb_controller import ADBController, keycode
from remote.core.device.capture import CaptureDecodeError, decode_png, decode_raw, frame_uniformity
from remote.errors import (
    ActionError,
    DeviceCommandError,
    DeviceDisconnected,
    DeviceNotFound,
    DumpFailed,
    InputMethodMissing,
    InputMethodPermission,
    SecureScreen,
)
from tests.support.fake_adb_server import FAIL_GONE, RESET, FakeAdbServer

ADBK = adb_ime.ADBKEYBOARD_IME
XML = ("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
       "<node index=\"0\" text=\"{text}\" resource-id=\"a:id/input\" class=\"android.widget.EditText\" "
       "package=\"a\" content-desc=\"\" checkable=\"false\" checked=\"false\" clickable=\"true\" enabled=\"true\" "
       "focusable=\"true\" focused=\"true\" scrollable=\"false\" long-clickable=\"true\" password=\"false\" "
       "selected=\"false\" bounds=\"[0,0][100,50]\" /></hierarchy>")


def raw_frame(w: int, h: int, rgba: tuple[int, int, int, int], header: int = 16) -> bytes:
    head = struct.pack("<4I", w, h, 1, 1) if header == 16 else struct.pack("<3I", w, h, 1)
    return head + bytes(rgba) * (w * h)


class Phone:
    """Scripted device shell: just enough state to check what the controller sends."""

    def __init__(self, *, adbkeyboard: bool = True, ime: str = "com.google.android/.LatinIME",
                 refuse_ime: bool = False, frame: bytes | None = None, props: dict[str, str] | None = None) -> None:
        self.adbkeyboard = adbkeyboard
        self.ime = ime
        self.refuse_ime = refuse_ime
        self.props = {"ro.product.model": "Pixel 7", "ro.build.version.release": "14", "ro.build.version.sdk": "34",
                      **(props or {})}
        self.field = ""
        self.resolved = ""          # what `cmd package resolve-activity --brief` answers
        self.started = ""           # what `am start -n` answers
        self.frame = frame
        self.faults: list[object] = []
        self.drop_broadcasts = 0

    def __call__(self, service: str) -> object:
        if self.faults:
            return self.faults.pop(0)
        kind, _, cmd = service.partition(":")
        if kind == "exec":
            if cmd == "screencap":
                return self.frame if self.frame is not None else raw_frame(4, 8, (10, 200, 30, 255))
            return b"not a png"
        if cmd.startswith("rm -f"):
            return XML.format(text=html.escape(self.field, quote=True))
        args = shlex.split(cmd)
        if args[:2] == ["wm", "size"]:
            return "Physical size: 1080x2400\n"
        if args[:1] == ["ime"] and self.refuse_ime:
            return ("Exception occurred while executing 'ime':\njava.lang.SecurityException: uid 2000 does not "
                    "have android.permission.WRITE_SECURE_SETTINGS.\n\tat android.app.ContextImpl.enforce(…)\n")
        if args[:3] == ["settings", "get", "secure"]:
            if args[3] == "enabled_input_methods":
                return "com.google.android/.LatinIME" + (f":{ADBK}" if self.adbkeyboard else "") + "\n"
            return self.ime + "\n"
        if args[:3] == ["dumpsys", "package", "com.android.adbkeyboard"]:
            return ("Packages:\n  Package [com.android.adbkeyboard] (1a2b):\n    versionCode=2 minSdk=21 "
                    "targetSdk=33\n    versionName=2.0\n") if self.adbkeyboard else ""
        if args[:2] == ["ime", "enable"]:
            return f"Input method {args[2]}: now enabled\n"
        if args[:2] == ["ime", "set"]:
            self.ime = args[2]
            return f"Input method {args[2]} selected for user #0\n"
        if args[:2] == ["am", "broadcast"]:
            action = args[3]
            args = [a for i, a in enumerate(args) if "-p" not in args[max(0, i - 1):i + 1]]  # drop `-p PKG`
            if self.drop_broadcasts and action == "ADB_INPUT_B64":
                self.drop_broadcasts -= 1
                return "Broadcasting: Intent { act=X }\nBroadcast completed: result=0\n"
            if action == "ADB_CLEAR_TEXT":
                self.field = ""
            elif action == "ADB_INPUT_B64":
                self.field += base64.b64decode(args[6]).decode("utf-8")
            elif action == "ADB_INPUT_TEXT":
                self.field += args[6]
            return f"Broadcasting: Intent {{ act={action} flg=0x400000 (has extras) }}\nBroadcast completed: result=0\n"
        if args[:2] == ["input", "text"]:
            self.field += args[2].replace("%s", " ")
            return ""
        if args[:3] == ["cmd", "package", "resolve-activity"]:
            return self.resolved
        if args[:2] == ["am", "start"] and "-n" in args:
            return self.started or f"Starting: Intent {{ cmp={args[-1]} }}\n"
        if args[:1] == ["monkey"]:
            if args[2] == "com.missing":
                return "** No activities found to run, monkey aborted."
            return "Events injected: 1"
        if args[:2] == ["dumpsys", "window"]:
            return "  mCurrentFocus=Window{2a8b4c1 u0 com.tencent.mm/com.tencent.mm.ui.LauncherUI}\n"
        if args == ["getprop"]:
            return "".join(f"[{k}]: [{v}]\n" for k, v in self.props.items())
        if args[:1] == ["getprop"]:
            return self.props.get(args[1], "") + "\n"
        return ""


@pytest.fixture
def phone_server():
    servers, controllers = [], []

    def start(phone: Phone, **kwargs) -> tuple[FakeAdbServer, ADBController]:
        server = FakeAdbServer(phone, **kwargs).__enter__()
        servers.append(server)
        adb = ADBController(port=server.port, socket_timeout=3, reconnect_attempts=2, reconnect_delay=0.01,
                            state_dir=None, sleep=lambda s: None)
        controllers.append(adb)
        return server, adb

    yield start
    for adb in controllers:
        adb._ime_switched = False  # tests that simulate a crash must not restore at teardown
        adb.close()
    for server in servers:
        server.__exit__(None, None, None)


@pytest.fixture(autouse=True)
def _ime_state(tmp_path, monkeypatch):
    # The IME state goes to this user's private folder under the temp folder: this test's own.
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


def shells(server: FakeAdbServer) -> list[str]:
    return [c.removeprefix("shell:") for c in server.commands if c.startswith("shell:")]


def test_connect_picks_the_only_device_and_reads_its_size(phone_server):
    server, adb = phone_server(Phone())
    adb.connect()
    assert adb.serial == "fake-1"
    assert adb.window_size() == (1080, 2400)
    from remote.commands.devices import device_info

    assert device_info(adb) == {"serial": "fake-1", "state": "device", "model": "Pixel 7", "android": "14",
                          "rom": "Android", "resolution": "1080x2400", "adbkeyboard": True, "keyboard": "enabled"}


def test_connect_errors_name_the_problem(phone_server):
    server, adb = phone_server(Phone(), devices=[])
    with pytest.raises(DeviceNotFound, match="no device connected"):
        adb.connect()
    server2, adb2 = phone_server(Phone(), devices=["a", "b"])
    with pytest.raises(DeviceNotFound, match="2 devices"):
        adb2.connect()
    adb3 = ADBController("nope", port=server2.port, socket_timeout=3, reconnect_attempts=0)
    with pytest.raises(DeviceNotFound, match="'nope' not found"):
        adb3.connect()


def test_actions_send_exact_commands(phone_server):
    server, adb = phone_server(Phone())
    adb.tap(10.4, 20.6)
    adb.long_press(5, 6, 900)
    adb.swipe(1, 2, 3, 4, 250)
    adb.input_keyevent("enter")
    adb.input_keyevent("KEYCODE_VOLUME_UP")
    adb.go_home()
    adb.launch_app("com.tencent.mm")
    adb.open_url("https://example.com/?q=a b&x=$(id)")
    adb.call("+86 10086")
    assert shells(server) == [   # the size (turned by `dumpsys display`'s rotation); `cmd input` from Android 11 (the fake says 13)
        "wm size", "dumpsys display", "getprop", "cmd input tap 10 21", "cmd input swipe 5 6 5 6 900",
        "cmd input swipe 1 2 3 4 250",
        "cmd input keyevent 66", "cmd input keyevent 24", "cmd input keyevent 3", "cmd input keyevent 3",
        "cmd package resolve-activity --brief -a android.intent.action.MAIN -c android.intent.category.LAUNCHER "
        "com.tencent.mm",                                  # this phone names no launcher activity: monkey it is
        "monkey -p com.tencent.mm -c android.intent.category.LAUNCHER 1",
        "am start -a android.intent.action.VIEW -d 'https://example.com/?q=a b&x=$(id)'",
        "am start -a android.intent.action.CALL -d tel:+8610086",
    ]


def test_an_app_is_started_by_its_launcher_activity_asked_once_and_by_monkey_when_that_fails(phone_server):
    phone = Phone()
    server, adb = phone_server(phone)
    phone.resolved = "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\n" \
                     "com.tencent.mm/.ui.LauncherUI\n"
    adb.launch_app("com.tencent.mm")
    adb.launch_app("com.tencent.mm")
    start = ("am start -a android.intent.action.MAIN -c android.intent.category.LAUNCHER -f 0x10200000 "
             "-n com.tencent.mm/.ui.LauncherUI")
    sent = shells(server)
    assert sent.count(start) == 2 and sum("resolve-activity" in c for c in sent) == 1 and "monkey" not in str(sent)
    phone.resolved = "No activity found\n"       # no launcher activity known: monkey, whose answer is read
    with pytest.raises(DeviceCommandError, match="not installed or has no launcher activity"):
        adb.launch_app("com.missing")
    phone.resolved, phone.started = "com.other/.Main\n", "Error: Activity class {com.other/.Main} does not exist.\n"
    adb.launch_app("com.other")                    # the start failed: monkey launches it
    assert shells(server)[-1] == "monkey -p com.other -c android.intent.category.LAUNCHER 1"


def test_swipe_direction_moves_the_finger_that_way(phone_server):
    server, adb = phone_server(Phone())
    adb.swipe_direction("left")
    adb.swipe_direction("up", distance=0.4, duration_ms=200)
    assert shells(server)[3:] == ["cmd input swipe 810 1200 270 1200 300", "cmd input swipe 540 1680 540 720 200"]
    with pytest.raises(ActionError, match="direction"):
        adb.swipe_direction("sideways")


@pytest.mark.parametrize("x,y", [(-1, 5), (1080, 5), (5, 2400), (float("nan"), 1)])
def test_off_screen_points_are_refused_before_reaching_the_phone(phone_server, x, y):
    server, adb = phone_server(Phone())
    with pytest.raises(ActionError):
        adb.tap(x, y)
    assert not any(c.removeprefix("cmd ").startswith("input") for c in shells(server))


def test_keycode_names_numbers_and_errors():
    assert keycode("home") == 3 and keycode("KEYCODE_DEL") == 67 and keycode(24) == 24 and keycode("66") == 66
    with pytest.raises(ActionError, match="unknown key"):
        keycode("TELEPORT")
    with pytest.raises(ActionError):
        keycode(100000)


def test_bad_app_url_and_number_are_action_errors(phone_server):
    server, adb = phone_server(Phone())
    with pytest.raises(DeviceCommandError, match="not installed"):
        adb.launch_app("com.missing")
    for call in (lambda: adb.launch_app("; reboot"), lambda: adb.open_url(""), lambda: adb.call("12; rm")):
        with pytest.raises(ActionError):
            call()


def test_chinese_text_goes_through_adbkeyboard_base64_and_ime_is_restored(phone_server):
    phone = Phone()
    server, adb = phone_server(phone)
    assert adb.input_text("你好, 世界 😀", clear=True) is True
    assert phone.field == "你好, 世界 😀"
    sent = shells(server)
    assert f"ime set {ADBK}" in sent
    b64_cmds = [c for c in sent if "ADB_INPUT_B64" in c]
    assert b64_cmds == ["am broadcast -a ADB_INPUT_B64 -p com.android.adbkeyboard --es msg "
                        + adb_ime.b64("你好, 世界 😀")]
    assert sent.index("am broadcast -a ADB_CLEAR_TEXT -p com.android.adbkeyboard") < sent.index(b64_cmds[0])
    assert phone.ime == ADBK
    adb.close()
    assert phone.ime == "com.google.android/.LatinIME"


@pytest.mark.parametrize("hostile", ['"; reboot; echo "', "$(rm -rf /sdcard)", "`id` && ls | cat > /x", "a'b\"c\\d"])
def test_hostile_text_is_typed_literally(phone_server, hostile):
    phone = Phone()
    server, adb = phone_server(phone)
    adb.input_text(hostile)
    assert phone.field == hostile
    phone2 = Phone(adbkeyboard=False)
    server2, adb2 = phone_server(phone2)
    adb2.input_text(hostile)
    assert phone2.field == hostile
    typed = [c for c in shells(server2) if c.startswith("input text")][0]
    assert shlex.split(typed)[2] == hostile.replace(" ", "%s")  # one argument, quoted for the device shell


def test_long_text_is_sent_in_chunks_that_keep_characters_whole(phone_server):
    phone = Phone()
    server, adb = phone_server(phone)
    text = "长" * 700
    adb.input_text(text)
    assert phone.field == text
    assert len([c for c in shells(server) if "ADB_INPUT_B64" in c]) == 4  # 2100 bytes / 600


def test_without_adbkeyboard_ascii_works_and_chinese_says_how_to_install(phone_server):
    phone = Phone(adbkeyboard=False)
    server, adb = phone_server(phone)
    adb.input_text("hello world")
    assert phone.field == "hello world"
    assert "input text hello%sworld" in shells(server)
    with pytest.raises(InputMethodMissing, match="ADBKeyboard") as err:
        adb.input_text("你好")
    assert "adb install" in str(err.value)


def test_permission_error_says_which_setting_to_enable(phone_server):
    server, adb = phone_server(Phone(refuse_ime=True, props={"ro.miui.ui.version.name": "V140"}))
    with pytest.raises(InputMethodPermission) as err:
        adb.input_text("你好")
    assert "USB debugging (Security settings)" in str(err.value) and "MIUI V140" in str(err.value)
    assert "remote doctor" in err.value.hint and err.value.rom == "miui"
    adb.input_text("ok")      # ASCII still types: through `input text`, no keyboard switch needed
    assert server.handler.field == "ok" and "input text ok" in shells(server)


def test_verify_reads_the_field_back_and_retypes_once(phone_server):
    phone = Phone()
    server, adb = phone_server(phone)
    phone.drop_broadcasts = 1  # the first B64 broadcast "completes" but nothing arrives
    assert adb.input_text("你好", clear=True, verify=True) is True
    assert phone.field == "你好"
    assert sum("ADB_INPUT_B64" in c for c in shells(server)) == 2


@pytest.mark.parametrize("dropped", [0, 1])
def test_a_field_of_unknown_text_is_not_dumped_before_typing_the_warm_up_reads_it(phone_server, dropped):
    phone = Phone()
    server, adb = phone_server(phone)
    phone.field = "abc"           # text the caller does not know of (no UI tree was at hand)
    phone.drop_broadcasts = dropped
    assert adb.input_text("你好", verify=True) is True
    assert phone.field == "abc你好"   # appended once, even when the first broadcast after the switch was lost
    sent = shells(server)
    first_dump = next(i for i, c in enumerate(sent) if c.startswith("rm -f"))
    assert "ADB_INPUT_B64" in sent[first_dump - 1]          # no dump before the first text went out
    assert sum("ADB_INPUT_B64" in c for c in sent) == 1 + dropped


def test_a_field_of_unknown_text_that_never_receives_is_an_error_not_typed(phone_server):
    phone = Phone()
    server, adb = phone_server(phone)
    phone.field = "abc"
    phone.drop_broadcasts = 3
    with pytest.raises(DeviceCommandError, match="received nothing"):
        adb.input_text("你好", verify=True)
    assert phone.field == "abc"


def test_a_crashed_run_left_adbkeyboard_active_and_the_next_start_restores_it(phone_server):
    phone = Phone()
    server, adb = phone_server(phone)
    adb.input_text("x")
    assert phone.ime == ADBK  # no close(): as if the process died
    server2 = FakeAdbServer(phone).__enter__()
    try:
        ADBController(port=server2.port, socket_timeout=3).connect()
        assert phone.ime == "com.google.android/.LatinIME"
    finally:
        server2.__exit__(None, None, None)


def test_screenshot_decodes_raw_frames_with_either_header(phone_server):
    phone = Phone()
    server, adb = phone_server(phone)
    img = adb.screenshot(allow_uniform=True)
    assert img.size == (4, 8) and img.getpixel((0, 0)) == (10, 200, 30)
    assert server.commands[-1] == "exec:screencap"
    # 12-byte header (Android <= 8): derived from the length, same pixels
    frame = raw_frame(4, 8, (10, 200, 30, 255), header=12)
    frame = frame[:12] + bytes([0, 0, 0, 255]) + frame[16:]
    assert decode_raw(frame).getpixel((0, 0)) == (0, 0, 0)


def test_black_frame_is_reported_as_secure_screen_not_passed_on(phone_server):
    server, adb = phone_server(Phone(frame=raw_frame(64, 64, (0, 0, 0, 255))))
    with pytest.raises(SecureScreen, match="black"):
        adb.screenshot()
    assert adb.screenshot(allow_uniform=True).size == (64, 64)


def test_undecodable_capture_is_an_error_not_a_black_image(phone_server):
    server, adb = phone_server(Phone(frame=b"garbage that is no frame"))
    with pytest.raises(DeviceCommandError, match="screen capture failed"):
        adb.screenshot()
    assert server.commands[-1] == "exec:screencap -p"


def test_decoders_and_uniformity():
    with pytest.raises(CaptureDecodeError):
        decode_raw(b"short")
    with pytest.raises(CaptureDecodeError, match="format"):
        decode_raw(struct.pack("<4I", 1, 1, 99, 1) + b"\0" * 4)
    with pytest.raises(CaptureDecodeError):
        decode_raw(struct.pack("<4I", 2, 2, 1, 1) + b"\0" * 5)
    bgra = struct.pack("<3I", 1, 1, 5) + bytes([1, 2, 3, 255])
    assert decode_raw(bgra).getpixel((0, 0)) == (3, 2, 1)
    img = Image.fromarray(np.random.default_rng(0).integers(0, 255, (80, 80, 3), dtype=np.uint8))
    import io
    buf = io.BytesIO()
    img.save(buf, "PNG")
    assert decode_png(buf.getvalue()).size == (80, 80)
    assert frame_uniformity(img)[0] is False
    assert frame_uniformity(Image.new("RGB", (80, 80), (255, 255, 255))) == (True, (255, 255, 255))


def test_dump_hierarchy_in_one_call_and_errors_are_clear(phone_server):
    phone = Phone()
    server, adb = phone_server(phone)
    phone.field = "abc"
    assert adb.focused_text() == "abc"
    phone.faults = ["ERROR: could not get idle state.\n"]      # once: retried with --compressed
    assert "<hierarchy" in adb.dump_hierarchy()
    assert "uiautomator dump --compressed" in shells(server)[-1]
    phone.faults = ["ERROR: could not get idle state.\n"] * 2   # the retry fails too: a clear error
    with pytest.raises(DumpFailed, match="idle") as err:
        adb.dump_hierarchy()
    assert err.value.kind == "idle" and "never went idle" in err.value.hint


def test_a_reset_connection_is_retried_and_recovers(phone_server):
    phone = Phone()
    server, adb = phone_server(phone)
    adb.connect()
    phone.faults = [RESET]
    adb.tap(1, 1)
    assert shells(server).count("cmd input tap 1 1") == 1  # the reset request never reached the phone


def test_a_device_that_goes_away_becomes_device_disconnected(phone_server):
    phone = Phone()
    server, adb = phone_server(phone)
    adb.connect()
    server.gone = True
    phone.faults = [FAIL_GONE]
    with pytest.raises(DeviceDisconnected, match="lost the connection") as err:
        adb.tap(1, 1)
    assert "adb connect" in str(err.value)


def test_current_app_parses_the_focus_line(phone_server):
    server, adb = phone_server(Phone())
    assert adb.current_app() == {"package": "com.tencent.mm", "activity": "com.tencent.mm.ui.LauncherUI"}


def test_no_server_is_a_device_error():
    with pytest.raises(Exception) as err:
        ADBController.list_serials(port=1)
    assert "no adb server" in str(err.value)
