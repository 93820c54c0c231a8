"""End to end through `ADBController` only: the agent's executor drives the simulated phone over adb."""

from __future__ import annotations

import time
from xml.etree import ElementTree

import pytest

from remote.errors import DeviceDisconnected, SecureScreen

RESOLUTIONS = ["720x1600", "1080x2400", "1440x3200"]


def _nodes(adb) -> list[ElementTree.Element]:
    return list(ElementTree.fromstring(adb.dump_hierarchy().encode("utf-8")).iter("node"))


def _center(node: ElementTree.Element) -> tuple[int, int]:
    left, right = node.get("bounds", "")[1:-1].split("][")
    x1, y1 = map(int, left.split(","))
    x2, y2 = map(int, right.split(","))
    return (x1 + x2) // 2, (y1 + y2) // 2


def _tap(adb, **attrs: str) -> None:
    """Tap the centre of the first node whose attributes match (text=, content-desc via desc=, rid=, cls=)."""
    names = {"desc": "content-desc", "rid": "resource-id", "text": "text", "cls": "class"}
    for node in _nodes(adb):
        if all(node.get(names[k]) == v for k, v in attrs.items()):
            adb.tap(*_center(node))
            return
    raise AssertionError(f"no node with {attrs}")


def send_wechat_message(adb, contact: str, text: str) -> None:
    _tap(adb, desc="微信")                                # the launcher icon, from the dump
    _tap(adb, desc="搜索")
    adb.input_text(contact)                               # the search box is focused on arrival
    _tap(adb, text=contact, cls="android.widget.TextView")   # the result, not the query echoed in the box
    _tap(adb, cls="android.widget.EditText")
    adb.input_text(text)
    _tap(adb, text="发送")


@pytest.mark.slow
@pytest.mark.parametrize("sim_scenario", [{"resolution": r} for r in RESOLUTIONS], indirect=True,
                         ids=RESOLUTIONS)
def test_send_wechat_message_at_every_resolution(sim_phone, adb, sim_scenario):
    w, h = map(int, sim_scenario["resolution"].split("x"))
    assert adb.window_size() == (w, h)
    assert adb.screenshot().size == (w, h)
    send_wechat_message(adb, "张三", "你好")
    snap = sim_phone.snapshot()
    assert snap["chats"] == {"张三": ["你好"]}
    assert snap["foreground"] == {"package": "com.tencent.mm", "screen": "chat:张三"}
    assert snap["ime"] == "com.android.adbkeyboard/.AdbIME"
    assert any("ADB_INPUT_B64" in c for c in snap["commands"])
    assert adb.current_app()["package"] == "com.tencent.mm"
    texts = [n.get("text") for n in _nodes(adb) if n.get("class") == "android.widget.TextView"]
    assert texts.count("你好") == 1 and texts.index("你好") > texts.index("张三")   # a bubble under the title


def test_send_button_appears_only_with_text(sim_phone, adb):
    adb.launch_app("com.tencent.mm")
    _tap(adb, text="李四")
    assert not any(n.get("text") == "发送" for n in _nodes(adb))
    _tap(adb, cls="android.widget.EditText")
    adb.input_text("hi")
    assert any(n.get("text") == "发送" for n in _nodes(adb))
    assert sim_phone.snapshot()["focused_text"] == "hi"


def test_shell_metacharacters_arrive_literally(sim_phone, adb):
    adb.launch_app("com.tencent.mm")
    _tap(adb, desc="搜索")
    hostile = '"; reboot; echo "'
    adb.input_text(hostile)
    assert sim_phone.snapshot()["focused_text"] == hostile
    assert adb.focused_text() == hostile
    assert sim_phone.reboots == 0


@pytest.mark.sim(adbkeyboard=False)
def test_plain_input_text_without_adbkeyboard(sim_phone, adb):
    adb.launch_app("com.tencent.mm")
    _tap(adb, desc="搜索")
    hostile = '"; reboot; echo $HOME `id` '
    adb.input_text(hostile)
    assert sim_phone.snapshot()["focused_text"] == hostile
    assert sim_phone.reboots == 0
    assert not adb.has_adbkeyboard()


def test_home_back_and_launcher_pages(sim_phone, adb):
    adb.swipe_direction("left")
    assert sim_phone.snapshot()["launcher_page"] == 2
    assert any(n.get("content-desc") == "音乐" for n in _nodes(adb))
    adb.launch_app("com.android.settings")
    _tap(adb, text="显示")
    assert sim_phone.snapshot()["foreground"]["screen"] == "display"
    adb.press_back()
    assert sim_phone.snapshot()["foreground"] == {"package": "com.android.settings", "screen": "main"}
    adb.press_home()
    snap = sim_phone.snapshot()
    assert snap["foreground"]["package"] == "com.android.launcher3" and snap["launcher_page"] == 1


def test_settings_switches(sim_phone, adb):
    adb.launch_app("com.android.settings")
    _tap(adb, text="已关联的设备")                       # AOSP: 蓝牙 is a switch row on this page
    _tap(adb, text="蓝牙")
    assert sim_phone.snapshot()["settings"] == {"wlan": True, "bluetooth": True, "airplane": False, "nfc": False}
    adb.press_back()
    _tap(adb, text="网络和互联网")
    _tap(adb, text="飞行模式")
    assert sim_phone.snapshot()["settings"] == {"wlan": False, "bluetooth": False, "airplane": True, "nfc": False}
    switches = [n for n in _nodes(adb) if n.get("resource-id") == "android:id/switch_widget"]
    assert [(n.get("text"), n.get("checked"), n.get("clickable")) for n in switches] == [
        ("关闭", "false", "false"), ("开启", "true", "false")]            # WLAN off, 飞行模式 on


def test_open_url_loads_then_shows_title(sim_phone, adb):
    adb.open_url("https://example.com")
    assert sim_phone.snapshot()["browser_url"] == "https://example.com"
    assert any(n.get("text") == "正在加载…" for n in _nodes(adb))
    time.sleep(0.35)
    assert any(n.get("text") == "Example Domain" for n in _nodes(adb))
    assert adb.current_app()["package"] == "com.android.chrome"


def test_typing_a_url_and_enter(sim_phone, adb):
    adb.launch_app("com.android.chrome")
    _tap(adb, rid="com.android.chrome:id/url_bar")
    adb.input_text("www.baidu.com")
    adb.input_keyevent("ENTER")
    assert sim_phone.snapshot()["browser_url"] == "https://www.baidu.com"


@pytest.mark.sim(wechat_permission_dialog=True, ad_popup=True)
def test_permission_dialog_then_ad_block_taps(sim_phone, adb):
    adb.launch_app("com.tencent.mm")
    assert adb.current_app()["package"] == "com.android.permissioncontroller"
    assert sim_phone.snapshot()["foreground"]["screen"] == "permission_dialog"
    w, h = adb.window_size()
    adb.tap(w // 2, int(h * 0.12))                  # a chat row under the dialog: swallowed
    assert sim_phone.snapshot()["foreground"]["screen"] == "permission_dialog"
    _tap(adb, text="允许")
    assert sim_phone.snapshot()["foreground"]["screen"] == "ad_popup"
    _tap(adb, desc="关闭")
    assert sim_phone.snapshot()["foreground"]["screen"] == "chats"


@pytest.mark.sim(loading_ms=400)
def test_loading_spinner_before_the_screen_settles(sim_phone, adb):
    adb.launch_app("com.android.settings")
    assert any(n.get("text") == "加载中" for n in _nodes(adb))
    time.sleep(0.45)
    assert any(n.get("text") == "网络和互联网" for n in _nodes(adb))


@pytest.mark.sim(secure_screen=True)
def test_secure_screen_is_black_but_dump_works(sim_phone, adb):
    with pytest.raises(SecureScreen):
        adb.screenshot()
    assert adb.screenshot(allow_uniform=True).size == (1080, 2400)
    assert any(n.get("content-desc") == "微信" for n in _nodes(adb))


@pytest.mark.sim(drop_after_commands=3)
def test_dropped_phone_is_device_disconnected_not_a_hang(sim_phone, adb):
    started = time.monotonic()
    with pytest.raises(DeviceDisconnected):
        for _ in range(10):
            adb.tap(100, 100)
    assert time.monotonic() - started < 5
    assert sim_phone.gone


@pytest.mark.sim(reset_every_commands=3)
def test_connection_reset_recovers(sim_phone, adb):
    for _ in range(6):
        adb.tap(10, 10)
    assert sum(c.removeprefix("cmd ") == "input tap 10 10" for c in sim_phone.snapshot()["commands"]) == 6


@pytest.mark.sim(uiautomator_delay_ms=300)
def test_uiautomator_dump_takes_its_delay(adb):
    started = time.monotonic()
    adb.dump_hierarchy()
    assert time.monotonic() - started >= 0.3
