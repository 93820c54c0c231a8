"""editable: and role:CLASS:LABEL targets: found by what a person sees, not by resource ids (pure, on XML)."""

from __future__ import annotations

import json

import pytest
from PIL import Image

from remote.core.locate.hybrid_locator import HybridLocator
from remote.core.locate.target_ref import parse_role, parse_target
from remote.core.locate.tree_roles import find_editable, find_role, row_labels
from remote.core.locate.ui_tree import parse_hierarchy
from tests.support.data import data_path, looked

TRACES = data_path("traces")


def node(cls: str, bounds: str, text: str = "", desc: str = "", rid: str = "", *, clickable: bool = False,
         focused: bool = False, checkable: bool = False, checked: bool = False, hint: str = "",
         children: str = "") -> str:
    attrs = (f'text="{text}" resource-id="{rid}" class="{cls}" package="com.tencent.mm" content-desc="{desc}" '
             f'checkable="{str(checkable).lower()}" checked="{str(checked).lower()}" '
             f'clickable="{str(clickable).lower()}" enabled="true" focusable="{str(clickable).lower()}" '
             f'focused="{str(focused).lower()}" bounds="{bounds}"' + (f' hint="{hint}"' if hint else ""))
    return f"<node {attrs}>{children}</node>" if children else f"<node {attrs}/>"


def dump(*nodes: str) -> str:
    return f'<hierarchy rotation="0">{node("android.widget.FrameLayout", "[0,0][1080,2400]", children="".join(nodes))}</hierarchy>'


# A WeChat chat screen as release 8.0.47 dumps it: obfuscated ids, a title that reads like a tab label.
CHAT = dump(
    node("android.widget.TextView", "[180,80][900,200]", text="微信", rid="com.tencent.mm:id/obn"),
    node("android.widget.ImageView", "[930,80][1060,200]", desc="更多功能按钮", rid="com.tencent.mm:id/j7s",
         clickable=True),
    node("android.widget.EditText", "[150,2200][750,2320]", rid="com.tencent.mm:id/bkk", clickable=True),
    node("android.widget.Button", "[870,2206][1050,2314]", text="发送", rid="com.tencent.mm:id/bql", clickable=True),
    node("android.widget.RelativeLayout", "[0,2330][270,2400]", rid="com.tencent.mm:id/kd_", clickable=True,
         children=node("android.widget.TextView", "[90,2360][180,2400]", text="微信", rid="com.tencent.mm:id/f2s")),
)


def tree(xml: str = CHAT):
    return parse_hierarchy(xml, (1080, 2400))


def locate(target_ref: str, xml: str = CHAT):
    """The locator's answer on a blank 1080x2400 screen with this dump (the tree tier alone decides)."""
    return HybridLocator().locate(target_ref, Image.new("RGB", (1080, 2400), (250, 250, 250)), hierarchy=xml)


def test_the_grammar_parses_both_forms():
    assert parse_target("editable:") == ("editable", "")
    assert parse_target("editable:搜索") == ("editable", "搜索")
    assert parse_target("role:Button:发送") == ("role", "Button:发送")
    assert parse_role("Button:发送") == ("Button", "发送")
    assert parse_role("TextView:12:30") == ("TextView", "12:30")      # a label may hold ':'
    assert parse_role("Switch") == ("Switch", "")


def test_editable_is_the_only_text_field_then_the_focused_one():
    hits = find_editable(tree())
    assert [(h.match, h.node.resource_id) for h in hits] == [("only", "com.tencent.mm:id/bkk")]
    two = dump(node("android.widget.EditText", "[0,100][500,200]", text="张"),
               node("android.widget.EditText", "[0,300][500,400]", focused=True))
    assert [(h.match, h.node.bounds) for h in find_editable(tree(two))] == [("focused", (0, 300, 500, 400))]


def test_several_unfocused_fields_are_ambiguous_and_none_is_not_found():
    two = dump(node("android.widget.EditText", "[0,100][500,200]"), node("android.widget.EditText", "[0,300][500,400]"))
    located = locate("editable:", two)
    assert located.success and not located.reliable and len(located.candidates) == 2
    none = locate("editable:", dump(node("android.widget.Button", "[0,0][10,10]", text="x")))
    assert not none.success


def test_editable_with_a_label_matches_hint_text_or_desc():
    xml = dump(node("android.widget.EditText", "[0,100][500,200]", hint="搜索"),
               node("android.widget.AutoCompleteTextView", "[0,300][500,400]", desc="用户名"),
               node("android.widget.TextView", "[0,500][500,600]", text="搜索"))
    assert [h.node.bounds for h in find_editable(tree(xml), "搜索")] == [(0, 100, 500, 200)]
    assert [h.match for h in find_editable(tree(xml), "用户名")] == ["exact"]
    assert find_editable(tree(xml), "密码") == []


def test_role_names_a_button_by_its_text_and_an_icon_by_its_desc():
    located = locate("role:Button:发送", CHAT)
    assert located.success and located.reliable and located.element.bbox == (870, 2206, 1050, 2314)
    assert located.method_used == "tree"
    assert locate("role:imageview:更多功能按钮", CHAT).element.bbox == (930, 80, 1060, 200)
    assert not locate("role:Button:更多功能按钮", CHAT).success


def test_a_tab_without_a_label_of_its_own_is_named_by_its_children():
    # text:微信 sees the title and the tab label equally well; the tab is the RelativeLayout named 微信.
    assert not locate("text:微信", CHAT).reliable
    located = locate("role:RelativeLayout:微信", CHAT)
    assert located.success and located.reliable and located.element.bbox == (0, 2330, 270, 2400)


def test_a_switch_is_named_by_its_row_not_by_its_on_off_text():
    row = node("android.widget.LinearLayout", "[0,300][1080,500]", clickable=True, children=(
        node("android.widget.TextView", "[200,330][600,390]", text="WLAN", rid="android:id/title")
        + node("android.widget.TextView", "[200,390][600,450]", text="SimNet", rid="android:id/summary")
        + node("android.widget.Switch", "[900,360][1040,440]", text="开启", rid="android:id/switch_widget",
               checkable=True, checked=True)))
    other = node("android.widget.LinearLayout", "[0,500][1080,700]", clickable=True, children=(
        node("android.widget.TextView", "[200,530][600,590]", text="飞行模式")
        + node("android.widget.CheckBox", "[900,560][1040,640]", checkable=True)))
    t = tree(dump(node("android.widget.TextView", "[0,100][500,200]", text="WLAN"), row, other))
    switch = next(n for n in t.nodes if n.class_name.endswith("Switch"))
    assert row_labels(t, switch) == ["开启", "WLAN", "SimNet"]
    assert [h.node.class_name for h in find_role(t, "toggle", "WLAN")] == ["android.widget.Switch"]
    assert [h.node.class_name for h in find_role(t, "toggle", "飞行模式")] == ["android.widget.CheckBox"]
    located = locate("role:toggle:WLAN", dump(row, other))
    assert located.element.bbox == (0, 300, 1080, 500)        # the row is what a tap toggles


def test_a_label_that_only_contains_the_query_is_a_candidate_not_a_tap():
    xml = dump(node("android.widget.LinearLayout", "[0,300][1080,500]", clickable=True, children=(
        node("android.widget.TextView", "[200,330][600,390]", text="开启WLAN")
        + node("android.widget.CheckBox", "[900,360][1040,440]", checkable=True))))
    partial = locate("role:toggle:WLAN", xml)
    assert not partial.success and "nothing shows exactly that" in partial.error and "开启WLAN" in partial.error
    exact = locate("role:toggle:开启WLAN", xml)
    assert exact.success and exact.element.bbox == (0, 300, 1080, 500)


def test_a_role_without_a_class_finds_nothing():
    assert find_role(tree(), "", "发送") == []


@pytest.mark.skipif(not (TRACES / "bluepie.ad_silence.apk").is_dir(),
                    reason=f"real Settings dumps not found at {looked('traces')}")
def test_real_aosp_settings_switches_are_found_by_their_row():
    """A DroidBot state of Android 10 Settings (Notification access): three rows, each with a switch_widget."""
    state = json.loads((TRACES / "bluepie.ad_silence.apk/states/state_2023-10-19_074747.json").read_text())
    views = state["views"]

    def to_xml(i: int) -> str:
        v = views[i]
        (x1, y1), (x2, y2) = v["bounds"]
        inner = "".join(to_xml(c) for c in v.get("children") or [] if views[c].get("visible", True))
        return node(v["class"] or "", f"[{x1},{y1}][{x2},{y2}]", text=v.get("text") or "",
                    desc=v.get("content_description") or "", rid=v.get("resource_id") or "",
                    clickable=bool(v.get("clickable")), checkable=bool(v.get("checkable")),
                    checked=bool(v.get("checked")), children=inner)

    xml = f'<hierarchy rotation="0">{to_xml(0)}</hierarchy>'
    for name, checked in (("Ad-silence", False), ("Quickstep", True), ("Scene4", False)):
        located = locate(f"role:toggle:{name}", xml)
        assert located.success and located.reliable, name
        t = parse_hierarchy(xml)
        hit = find_role(t, "toggle", name)[0].node
        assert hit.resource_id == "android:id/switch_widget" and hit.checked is checked
