"""The MCP package's parts, in process: the element list, coordinates, the allow list, keys, clipboard.

Device-facing parts run against the simulated phone through the real adbutils
client (the `adb` fixture); the MCP seam itself is in test_mcp_stdio.py.
"""

from __future__ import annotations

import csv
import re

import pytest

from remote.apps import ModuleRegistry
from remote.core.locate.ui_tree import parse_hierarchy
from remote.errors import ActionError, ConfigError, LocateError
from remote.mcp import apps, clipboard, gestures, keys
from remote.mcp.access import AccessDenied, AccessGate, resolve_app
from remote.mcp.aim import aim
from remote.mcp.asking import Asker, sensitive_word
from remote.mcp.gated import GatedDevice
from remote.mcp.server import is_loopback, parse_address
from remote.mcp.session import Session, SessionOptions
from remote.mcp.shot import build_elements, pick_nodes
from remote.sim import SimPhone
from tests.support.data import data_path, looked

REAL_DEV = data_path("real-dev")
LINE = re.compile(r'^(\d+)\. \[(\w+)\] "(.*)" \((\d+),(\d+) (\d+)x(\d+)\)( (enabled|disabled))')
REGISTRY = ModuleRegistry()


@pytest.fixture
def session(adb, sim_phone, tmp_path) -> Session:
    return Session(adb, registry=REGISTRY, gate=AccessGate(["com.tencent.mm"]), phone=sim_phone,
                   options=SessionOptions(runs_dir=None, work_dir=tmp_path, busy_wait=5))


def no_asker() -> Asker:
    return Asker(None)


# ---------------------------------------------------------------- the element list (pure)


def wechat_tree(resolution: str = "1080x2400"):
    phone = SimPhone(resolution=resolution)
    phone.launch("com.tencent.mm")
    return parse_hierarchy(phone.dump_xml(), phone.size), phone.size


def test_rows_are_named_by_their_texts_and_the_texts_are_not_listed_again():
    tree, size = wechat_tree()
    elements, total = build_elements(tree, size, (540, 1200))
    names = [e.name for e in elements]
    assert "张三 · 明天见 · 昨天" in names                 # the clickable row carries its children's texts
    assert "张三" not in names                               # ... which are not listed a second time
    search = next(e for e in elements if e.name == "搜索")
    assert search.role == "Button" and search.rid == "com.tencent.mm:id/meb"   # 8.0.47, the default release
    assert search.image_bbox == tuple(v // 2 for v in search.bbox)   # half-size image: half the pixels
    assert total == len(elements)


def test_element_lines_follow_the_seed_format_and_the_cap_says_what_is_hidden():
    tree, size = wechat_tree()
    elements, total = build_elements(tree, size, (288, 640), max_elements=3)
    assert [e.number for e in elements] == [1, 2, 3] and total > 3
    for e in elements:
        m = LINE.match(e.line())
        assert m, e.line()
        assert (int(m[4]), int(m[5])) == e.image_bbox[:2]
    from remote.mcp.shot import Shot
    shot = Shot(device_size=size, image_size=(288, 640), jpeg=b"", elements=elements, total_elements=total)
    assert f"{total - 3} more not listed" in shot.element_text()
    assert "1 image px = 3.75 device px" in shot.header()


def test_shot_maps_image_points_to_device_pixels_and_refuses_points_outside_it():
    from remote.mcp.shot import Shot
    shot = Shot(device_size=(1440, 3200), image_size=(288, 640), jpeg=b"")
    assert shot.to_device(144, 320) == (720, 1600)
    assert shot.to_device(0, 0) == (0, 0)
    with pytest.raises(ActionError, match="outside the last screenshot"):
        shot.to_device(300, 10)
    with pytest.raises(ActionError, match="no element 4"):
        shot.element(4)


@pytest.mark.skipif(not (REAL_DEV / "MANIFEST.tsv").is_file(),
                    reason=f"real-dev data absent: no MANIFEST.tsv in {looked('real-dev')}")
def test_no_interactive_or_labelled_node_of_a_real_dump_goes_missing():
    """Elements missing from the list is what agents report of other servers: here every clickable,
    editable or scrollable node is listed, and every text is listed or part of a listed row's name."""
    rows = list(csv.DictReader((REAL_DEV / "MANIFEST.tsv").open(encoding="utf-8"), delimiter="\t"))
    assert rows
    for row in rows:
        w, h = (int(v) for v in row["image_wxh"].split("x"))
        tree = parse_hierarchy((REAL_DEV / row["xml_path"]).read_text(encoding="utf-8"), (w, h))
        picked = {n.position for n, _ in pick_nodes(tree)}
        for node in tree.visible_nodes():
            interactive = node.clickable or node.checkable or node.scrollable or "EditText" in node.class_name
            if interactive:
                assert node.position in picked, (row["xml_path"], node)
            elif node.label.strip():
                assert node.position in picked or tree.clickable_target(node).position in picked, \
                    (row["xml_path"], node)
        elements, total = build_elements(tree, (w, h), (w // 3, h // 3), max_elements=10_000)
        assert total == len(picked) == len(elements)
        assert all(LINE.match(e.line()) for e in elements)


# ---------------------------------------------------------------- apps and the allow list


@pytest.mark.parametrize("name", ["微信", "WeChat", "wechat", "com.tencent.mm"])
def test_app_names_resolve_through_the_modules(name):
    assert resolve_app(name, REGISTRY) == "com.tencent.mm"


def test_an_unknown_app_name_lists_the_known_ones():
    with pytest.raises(ActionError, match="no app called") as info:
        resolve_app("支付宝钱包", REGISTRY)
    assert "com.tencent.mm" in info.value.hint


def test_the_gate_names_the_app_in_front_and_what_to_do():
    gate = AccessGate(["com.android.settings"])
    gate.check("com.android.settings")
    gate.check("com.android.launcher3")             # the home screen is always allowed
    with pytest.raises(AccessDenied, match="com.tencent.mm is in front") as info:
        gate.check("com.tencent.mm", "tap")
    assert 'request_access(apps=["com.tencent.mm"])' in info.value.hint
    assert AccessGate(["*"]).allows("anything.at.all")


def test_gated_device_refuses_acting_in_an_app_not_allowed_but_still_reads(adb, sim_phone):
    adb.launch_app("com.tencent.mm")
    device = GatedDevice(adb, AccessGate(["com.android.settings"]))
    before = len(sim_phone.commands)
    with pytest.raises(AccessDenied):
        device.tap(540, 1200)
    assert not any(c.removeprefix("cmd ").startswith("input tap") for c in sim_phone.commands[before:])
    assert device.window_size() == (1080, 2400)      # reading passes through
    device.input_keyevent("HOME")                    # HOME leaves the app: allowed
    assert sim_phone.snapshot()["foreground"]["package"] == "com.android.launcher3"


def test_sensitive_words_come_from_the_module_and_the_built_in_list():
    assert sensitive_word("转账给张三", "com.tencent.mm", REGISTRY) == "转账"
    assert sensitive_word("清空聊天记录", "com.tencent.mm", REGISTRY) == "清空聊天记录"
    assert sensitive_word("发送", "com.tencent.mm", REGISTRY) == ""


# ---------------------------------------------------------------- keys, scrolling, addresses


def test_key_names():
    assert [keys.key_code(k) for k in ("enter", "KEYCODE_BACK", "Home", "66", "ctrl", "a", "paste")] == \
        [66, 4, 3, 66, 113, 29, 279]
    with pytest.raises(ActionError, match="unknown key"):
        keys.key_code("hyperdrive")


def test_scroll_down_moves_the_finger_up_and_stays_on_screen():
    swipes = gestures.scroll_vector("down", 3, (540, 2300), (1080, 2400))
    assert len(swipes) == 1
    x1, y1, x2, y2 = swipes[0]
    assert x1 == x2 == 540 and y2 < y1 and y2 > 0 and y1 < 2400
    assert abs((y1 - y2) - 0.45 * 2400) <= 1
    long = gestures.scroll_vector("right", 10, (540, 1200), (1080, 2400))
    assert len(long) == 3 and all(a > b for a, _, b, _ in long)
    with pytest.raises(ActionError):
        gestures.scroll_vector("sideways", 1, (0, 0), (10, 10))


def test_http_addresses():
    assert parse_address("127.0.0.1:8765") == ("127.0.0.1", 8765)
    assert parse_address("[::1]:9000") == ("::1", 9000)
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5")
    with pytest.raises(ConfigError):
        parse_address("8765")


def test_serving_http_beyond_loopback_without_a_token_is_refused_before_the_phone_opens(capsys, monkeypatch):
    from remote.cli import main

    monkeypatch.delenv("REMOTE_MCP_TOKEN", raising=False)
    assert main(["mcp", "--device", "no-such-phone", "--http", "0.0.0.0:8765"]) == 2
    assert "needs a bearer token" in capsys.readouterr().err


# ---------------------------------------------------------------- the session on the simulated phone


@pytest.mark.parametrize("sim_scenario", [{"resolution": r, "uiautomator_delay_ms": 0}
                                          for r in ("720x1600", "1080x2400", "1440x3200")],
                         indirect=True, ids=["720", "1080", "1440"])
def test_an_element_tapped_by_image_coordinates_lands_on_its_device_pixels(session, sim_phone):
    shot = session.screenshot(max_side=640)
    icon = next(e for e in shot.elements if e.name == "微信")
    widget = sim_phone.find(desc="微信")            # the phone's own idea of where the icon is
    assert widget is not None
    x1, y1, x2, y2 = icon.image_bbox
    report = gestures.tap(session, no_asker(), x=(x1 + x2) / 2, y=(y1 + y2) / 2)
    tx, ty = (int(v) for v in next(c for c in reversed(sim_phone.commands) if c.removeprefix("cmd ").startswith("input tap")).split()[-2:])
    wx1, wy1, wx2, wy2 = widget.bounds
    assert wx1 <= tx < wx2 and wy1 <= ty < wy2
    assert f"device ({tx},{ty})" in report
    assert sim_phone.snapshot()["foreground"]["package"] == "com.tencent.mm"


def test_a_stale_element_number_is_refused_after_the_screen_changed(session, sim_phone):
    shot = session.screenshot()
    row = next(e for e in shot.elements if e.name == "微信")
    gestures.tap(session, no_asker(), element=row.number)          # opens WeChat: the launcher list is stale
    with pytest.raises(LocateError, match="not on the screen any more"):
        aim(session, element=row.number)


def test_target_ref_reports_the_tier_and_ambiguity_is_not_a_coin_toss(session, sim_phone):
    sim_phone.launch("com.tencent.mm")
    found = aim(session, target_ref="desc:搜索")
    assert found.tier == "tree" and found.confidence >= 0.95
    assert "via tree (confidence" in found.how
    with pytest.raises(LocateError, match="places nearly equally well"):
        aim(session, target_ref="text:微信")            # the title and the tab label: the agent must choose
    with pytest.raises(ActionError, match="one way"):
        aim(session, x=1, y=1, target_ref="desc:搜索")


def test_type_then_read_back_and_the_input_method_is_given_back(session, sim_phone):
    sim_phone.launch("com.tencent.mm")
    gestures.tap(session, no_asker(), target_ref="desc:搜索")
    report = keys.type_text(session, no_asker(), "张三 😀")
    assert "reads back as typed" in report
    assert sim_phone.snapshot()["focused_text"] == "张三 😀"
    assert sim_phone.snapshot()["ime"] != "com.android.adbkeyboard/.AdbIME"


def test_typing_with_no_field_focused_says_so(session, sim_phone):
    sim_phone.launch("com.tencent.mm")
    with pytest.raises(ActionError, match="no text field has the focus"):
        keys.type_text(session, no_asker(), "hello")


def test_clipboard_write_then_read_by_pasting_restores_the_field(session, sim_phone):
    assert "6 characters" in clipboard.write(session, "剪贴板 ok")
    assert sim_phone.snapshot()["clipboard"] == "剪贴板 ok"
    sim_phone.launch("com.tencent.mm")
    with pytest.raises(ActionError, match="Android 13 lets only the app in front"):
        clipboard.read(session, "helper")
    gestures.tap(session, no_asker(), target_ref="desc:搜索")
    keys.type_text(session, no_asker(), "李")
    assert clipboard.read(session).endswith(": 剪贴板 ok")
    assert sim_phone.snapshot()["focused_text"] == "李"


def test_clipboard_broadcast_answers_parse():
    assert clipboard.parse_broadcast('Broadcast completed: result=-1, data="a "quoted" line\nand more"') == \
        (-1, 'a "quoted" line\nand more')
    assert clipboard.parse_broadcast("Broadcasting: Intent { act=x }\nBroadcast completed: result=0") == (0, None)


def test_open_app_is_gated_by_the_app_asked_for(session):
    with pytest.raises(AccessDenied, match="com.android.settings is not in this session's allowed apps"):
        apps.open_app(session, "设置")
    assert apps.open_app(session, "微信") == "opened com.tencent.mm (微信)"
    with pytest.raises(ActionError, match="only http"):
        apps.open_url(session, "tel:10086")


# ---------------------------------------------------------------- the SDK's client in process, without elicitation


def test_a_client_that_cannot_be_asked_gets_no_grants_and_clear_refusals(session, sim_phone):
    import anyio
    from mcp import Client

    from remote.mcp.server import build_server

    def text(result) -> str:
        return "\n".join(c.text for c in result.content if c.type == "text")

    async def scenario() -> None:
        async with Client(build_server(session), mode="legacy") as client:
            task = await client.call_tool("run_task", {"task": "打开WLAN"})
            assert task.is_error and "com.android.settings is not in this session's allowed apps" in text(task)
            granted = await client.call_tool("request_access", {"apps": ["设置"]})
            assert granted.is_error and "an agent cannot grant itself apps" in text(granted)
            assert "--allow com.android.settings" in text(granted)
            taught = await client.call_tool("teach_step", {"text": "点搜索"})
            assert taught.is_error and "needs a client that supports elicitation" in text(taught)
            with sim_phone.lock:
                sim_phone.launch("com.tencent.mm")
                sim_phone.ad_pending = True
                sim_phone.changed()
            refused = await client.call_tool("tap", {"target_ref": "text:新人专享红包 最高88元"})
            assert refused.is_error and "needs a person's confirmation" in text(refused)
            assert sim_phone.snapshot()["foreground"]["screen"] == "ad_popup"
    anyio.run(scenario)
