"""The simulated apps as hostile as real ones: WeChat ids per release (or random), AOSP/MIUI Settings and
launchers, Chrome's real ids; scenario keys versions: and rom: validated with clear errors."""

from __future__ import annotations

import base64
from itertools import combinations
from pathlib import Path
from xml.etree import ElementTree

import pytest

from remote.errors import ConfigError
from remote.sim import SimPhone
from remote.sim.commands import run as shell_run
from remote.sim.scenario import Scenario
from remote.sim.versions import DOCUMENTED, WECHAT_RELEASES, WECHAT_ROLES, WECHAT_VERSIONS

MM = "com.tencent.mm:id/"


def nodes(phone: SimPhone) -> list[ElementTree.Element]:
    return list(ElementTree.fromstring(phone.dump_xml().encode("utf-8")).iter("node"))


def ids(phone: SimPhone) -> set[str]:
    return {n.get("resource-id", "") for n in nodes(phone) if n.get("resource-id", "").startswith(MM)}


def shell(phone: SimPhone, line: str) -> tuple[int, str]:
    out = bytearray()
    status = shell_run(phone, line, lambda fd, data: out.extend(data) if fd == 1 else None)
    return status, out.decode()


def open_chat(phone: SimPhone, name: str = "张三") -> None:
    phone.launch("com.tencent.mm")
    phone.tap(*phone.find(text=name).center)


def test_three_real_releases_whose_ids_all_differ():
    assert len(WECHAT_VERSIONS) >= 3
    for a, b in combinations(WECHAT_VERSIONS, 2):
        shared = set(WECHAT_RELEASES[a].ids.values()) & set(WECHAT_RELEASES[b].ids.values())
        assert not shared, (a, b, shared)
    for version, documented in DOCUMENTED.items():
        release = WECHAT_RELEASES[version]
        assert set(release.ids) == set(WECHAT_ROLES)
        assert all(release.ids[role] == rid for role, rid in documented.items())
        assert all(1 <= len(rid) <= 3 and rid[0].isalpha() for rid in release.ids.values())   # shaped like real ones


@pytest.mark.parametrize("version", WECHAT_VERSIONS)
def test_the_chat_screen_carries_the_release_ids(version):
    phone = SimPhone(versions={"wechat": version})
    open_chat(phone)
    field = next(n for n in nodes(phone) if n.get("class") == "android.widget.EditText")
    assert field.get("resource-id") == MM + WECHAT_RELEASES[version].ids["chat_input"]
    assert not any(rid.endswith(("/chat_input", "/send_btn", "/search_icon", "/tab_chats")) for rid in ids(phone))


def test_the_newest_release_is_the_default_and_uses_the_documented_ids():
    assert Scenario().versions == {"wechat": WECHAT_VERSIONS[-1]}
    phone = SimPhone()
    phone.launch("com.tencent.mm")
    assert phone.find(desc="搜索").rid == MM + "meb"
    open_chat(phone)
    assert phone.find(text="张三").rid == MM + "obn"


def test_random_draws_fresh_ids_on_every_start():
    first, second = SimPhone(versions={"wechat": "random"}), SimPhone(versions={"wechat": "random"})
    for phone in (first, second):
        open_chat(phone)
    assert ids(first) and ids(first) != ids(second)
    again = ids(first)
    first.key(4)
    open_chat(first)
    assert ids(first) == again                 # drawn once per start, not per screen


def test_layouts_differ_where_releases_differ():
    entries = {}
    for version in WECHAT_VERSIONS:
        phone = SimPhone(versions={"wechat": version})
        phone.launch("com.tencent.mm")
        entry = phone.find(desc="搜索") or phone.find(text="搜索")
        entries[version] = entry.cls
        assert {n.get("text") for n in nodes(phone)} >= {"微信", "通讯录", "发现", "我"}
        assert phone.find(desc="更多功能按钮") is not None
    assert set(entries.values()) == {"android.widget.ImageView", "android.widget.TextView"}   # icon vs bar


def test_the_send_button_appears_only_after_text_is_typed():
    phone = SimPhone(versions={"wechat": "8.0.32"})
    open_chat(phone)
    assert phone.find(text="发送") is None and phone.find(desc="更多功能按钮") is not None
    phone.tap(*next(w for w in phone.tree().walk() if w.cls == "android.widget.EditText").center)
    phone.type_text("hi")
    assert phone.find(text="发送").rid == MM + "b8k" and phone.find(desc="返回") is not None


@pytest.mark.parametrize(("data", "message"), [
    ({"versions": {"wechat": "9.9.9"}}, "known: 8.0.1, 8.0.32, 8.0.47, random"),
    ({"versions": {"qq": "1.0"}}, "known apps: wechat"),
    ({"versions": ["wechat"]}, "versions must map an app to a version"),
    ({"rom": "lineage"}, "rom must be one of aosp, miui, hyperos, coloros, originos, emui, oneui"),
])
def test_bad_versions_and_roms_are_clear_errors(tmp_path, data, message):
    path = tmp_path / "s.yaml"
    key, value = next(iter(data.items()))
    path.write_text(f"{key}: {value!r}\n".replace("'", '"'), encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        Scenario.load(path)
    assert message in str(err.value) and str(path) in str(err.value)


def test_a_scenario_file_picks_a_release_and_a_rom(tmp_path):
    path = Path(tmp_path / "s.yaml")
    path.write_text('versions: {wechat: "8.0.1"}\nrom: miui\n', encoding="utf-8")
    phone = SimPhone(path)
    assert phone.scenario.versions == {"wechat": "8.0.1"} and phone.launcher == "com.miui.home"


def test_aosp_and_miui_launchers_have_their_own_ids():
    aosp, miui = SimPhone(), SimPhone(rom="miui")
    aosp_ids = {n.get("resource-id") for n in nodes(aosp)}
    assert {"com.android.launcher3:id/workspace", "com.android.launcher3:id/hotseat"} <= aosp_ids
    icon = next(n for n in nodes(aosp) if n.get("text") == "微信")
    assert (icon.get("content-desc"), icon.get("resource-id"), icon.get("clickable")) == ("微信", "", "true")
    titles = [n for n in nodes(miui) if n.get("resource-id") == "com.miui.home:id/icon_title"]
    assert "微信" in [n.get("text") for n in titles]
    assert any(n.get("content-desc") == "第2屏" for n in nodes(miui))
    assert shell(miui, "dumpsys window | grep mCurrentFocus")[1].count("com.miui.home/") == 1
    miui.tap(*miui.find(rid="com.miui.home:id/icon_icon", desc="设置").center)
    assert miui.snapshot()["foreground"]["package"] == "com.android.settings"


def test_where_the_switches_sit_differs_between_roms():
    aosp, miui = SimPhone(), SimPhone(rom="miui")
    for phone in (aosp, miui):
        phone.launch("com.android.settings")
    assert aosp.find(text="WLAN") is None and aosp.find(text="网络和互联网") is not None
    assert miui.find(text="WLAN") is not None and miui.find(rid="android:id/checkbox") is not None  # 飞行模式
    aosp.tap(*aosp.find(text="网络和互联网").center)
    switch = aosp.find(rid="android:id/switch_widget")
    assert (switch.cls, switch.text, switch.checkable, switch.clickable) == ("android.widget.Switch", "开启", True, False)
    miui.tap(*miui.find(text="WLAN").center)
    assert miui.find(rid="android:id/checkbox").checked and miui.find(rid="android:id/checkbox").cls.endswith("CheckBox")


@pytest.mark.parametrize(("rom", "hint", "component"), [
    ("aosp", "搜索设置", "com.android.settings.intelligence/"),
    ("miui", "搜索设置项", "com.android.settings/"),
])
def test_settings_search_opens_the_page_that_holds_a_result(rom, hint, component):
    phone = SimPhone(rom=rom)
    phone.launch("com.android.settings")
    phone.tap(*phone.find(text=hint).center)
    assert phone.focus_component().startswith(component)
    phone.type_text("蓝牙")
    result = next(w for w in phone.tree().walk() if w.text == "蓝牙" and w.cls == "android.widget.TextView")
    phone.tap(*result.center)
    assert phone.snapshot()["foreground"]["screen"] == ("connected" if rom == "aosp" else "bluetooth")


def test_chrome_keeps_its_real_ids():
    phone = SimPhone()
    phone.launch("com.android.chrome")
    box = phone.find(rid="com.android.chrome:id/search_box_text")
    assert box.cls == "android.widget.EditText" and box.text == "搜索或输入网址"
    phone.tap(*box.center)
    assert phone.focused_widget().rid == "com.android.chrome:id/url_bar"
    assert {"com.android.chrome:id/tab_switcher_button", "com.android.chrome:id/menu_button"} <= {
        n.get("resource-id") for n in nodes(phone)}


def test_an_ad_is_marked_and_closes_without_ids():
    phone = SimPhone(ad_popup=True, versions={"wechat": "random"})
    phone.launch("com.tencent.mm")
    assert phone.find(text="广告") is not None
    phone.tap(*phone.find(desc="关闭").center)
    assert phone.snapshot()["foreground"]["screen"] == "chats"


def test_grep_extended_and_toybox_flags():
    phone = SimPhone()
    status, out = shell(phone, "dumpsys window | grep -E 'mCurrentFocus|mFocusedApp'")
    assert status == 0 and len(out.splitlines()) == 2 and "mCurrentFocus=" in out and "mFocusedApp=" in out
    assert shell(phone, "dumpsys window | grep 'mCurrentFocus\\|mFocusedApp'")[1] == out   # basic regex alternation
    assert shell(phone, "echo Hello | grep -i hello") == (0, "Hello\n")
    assert shell(phone, "echo abc | grep -v b") == (1, "")
    assert shell(phone, "echo a1b22 | grep -oE '[0-9]+'") == (0, "1\n22\n")
    assert shell(phone, "echo 'a+b' | grep 'a+b'") == (0, "a+b\n")     # + is literal in a basic regex
    assert shell(phone, "echo x | grep -E '(' ; echo $?") == (0, "2\n")
    assert shell(phone, "echo abc | grep -c -e x -e a") == (0, "1\n")


def test_input_text_turns_percent_s_into_spaces():
    phone = SimPhone()
    phone.launch("com.tencent.mm")
    phone.tap(*phone.find(desc="搜索").center)
    assert shell(phone, "input text 'a%sb'")[0] == 0
    assert phone.snapshot()["focused_text"] == "a b"


def test_a_newline_typed_with_adbkeyboard_is_drawn_and_dumped():
    phone = SimPhone()
    open_chat(phone)
    phone.tap(*next(w for w in phone.tree().walk() if w.cls == "android.widget.EditText").center)
    shell(phone, "ime enable com.android.adbkeyboard/.AdbIME; ime set com.android.adbkeyboard/.AdbIME")
    msg = base64.b64encode("第一行\n第二行".encode()).decode()
    assert shell(phone, f"am broadcast -a ADB_INPUT_B64 --es msg {msg}")[0] == 0
    assert phone.screencap(png=True)[:4] == b"\x89PNG"
    xml = phone.dump_xml()
    assert "\n" not in xml and "第一行&#10;第二行" in xml
    field = next(n for n in nodes(phone) if n.get("class") == "android.widget.EditText")
    assert field.get("text") == "第一行\n第二行"
