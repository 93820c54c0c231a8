"""A WeChat-like messenger (`com.tencent.mm`), drawn the way the scenario's release draws it.

Screens (the phone's stack for this package): ``main`` (tabs 微信/通讯录/发现/我,
tab in ``fields["mm.tab"]``), ``search`` (input focused on arrival, results are the
contacts whose name contains the query) and ``chat:<name>`` (input box; 发送 only
while the box holds text; the chat's earlier messages (``HISTORY``: white bubbles at the left for
the contact's, green at the right for mine), then those sent on this phone (green)). The chat list previews
each chat's last message.

Resource ids come from the release (`remote.sim.versions`): obfuscated, different in
every version, fresh on every start with ``versions: {wechat: random}``. What stays
is what stays in real releases: texts, content-descs (搜索, 更多功能按钮, 返回),
classes and the layout, except where releases differ (the search entry is an icon
in the action bar, or a bar over the chat list). Overlays are in `wechat_overlays`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from remote.sim import versions
from remote.sim.apps.common import (
    GREY_BAR,
    SUBTLE,
    WECHAT_GREEN,
    avatar_color,
    list_row,
    paint_avatar,
    paint_back_arrow,
    paint_magnifier,
    paint_plus_circle,
    text_view,
)
from remote.sim.apps.host import Phone
from remote.sim.apps.wechat_paint import multiline, paint_dots, paint_smiley
from remote.sim.render import text_width
from remote.sim.widgets import Metrics, Widget

PACKAGE = "com.tencent.mm"
TABS = [("chats", "微信"), ("contacts", "通讯录"), ("discover", "发现"), ("me", "我")]
# What each chat held before the phone started (who said it, what): the chat list previews its last message.
HISTORY: dict[str, list[tuple[str, str]]] = {
    "张三": [("them", "周末有空吗？"), ("me", "有空"), ("them", "明天见")],
    "李四": [("them", "[图片]")],
    "王五": [("me", "文件发你了"), ("them", "好的，收到")],
    "文件传输助手": [("me", "[文件] 周报.docx")],
}
BAR = 48.0
TABBAR = 56.0
SEARCH_BAR = 44.0
Rid = Callable[[str], str]


def release_of(phone: Phone) -> versions.Release:
    """The release this phone runs, drawn once per phone (``random`` draws new ids on every start)."""
    found = phone.app_state.get("wechat.release")
    if found is None:
        found = versions.release("wechat", phone.scenario.versions["wechat"])
        phone.app_state["wechat.release"] = found
    return found


def _rid(phone: Phone) -> Rid:
    release = release_of(phone)
    return lambda role: release.rid(PACKAGE, role)


def activity(screen: str) -> str:
    if screen == "search":
        return "com.tencent.mm.plugin.fts.ui.FTSMainUI"
    if screen.startswith("chat:"):
        return "com.tencent.mm.ui.chatting.ChattingUI"
    return "com.tencent.mm.ui.LauncherUI"


def on_enter(phone: Phone) -> None:
    """ENTER in the chat box starts a new line (WeChat's default); elsewhere nothing."""
    if phone.focus and phone.focus.startswith("mm.chat:"):
        phone.type_text("\n")


def on_editor_action(phone: Phone, code: int) -> None:
    if code == 4 and phone.focus and phone.focus.startswith("mm.chat:"):  # IME_ACTION_SEND
        send(phone, phone.focus[len("mm.chat:"):])


def send(phone: Phone, name: str) -> None:
    key = f"mm.chat:{name}"
    text = phone.fields.get(key, "")
    if text.strip():
        phone.chats.setdefault(name, []).append(text)
        phone.fields[key] = ""
    phone.changed()


def conversation(phone: Phone, name: str) -> list[tuple[str, str]]:
    """A chat's messages, oldest first: what it held before, then what was sent on this phone."""
    return [*HISTORY.get(name, []), *(("me", text) for text in phone.chats.get(name, []))]


def last_message(phone: Phone, name: str) -> str:
    """The chat's newest message (what the chat list previews), "" for an empty chat."""
    said = conversation(phone, name)
    return said[-1][1] if said else ""


def open_chat(phone: Phone, name: str) -> None:
    phone.push(f"chat:{name}")


def open_search(phone: Phone) -> None:
    phone.fields["mm.search"] = ""
    phone.push("search", focus="mm.search")


def build(phone: Phone, m: Metrics, screen: str) -> Widget:
    root = Widget("android.widget.LinearLayout", m.box(0, m.status_dp, 360, m.content_bottom_dp - m.status_dp),
                  bg=(255, 255, 255), package=PACKAGE)
    rid = _rid(phone)
    if screen == "search":
        _search(phone, m, root, rid)
    elif screen.startswith("chat:"):
        _chat(phone, m, root, rid, screen[len("chat:"):])
    else:
        _main(phone, m, root, rid)
    return root


# ---------------------------------------------------------------- main (tabs)


def _icon(m: Metrics, box: tuple[float, float], desc: str, rid: str, on_tap: Callable[[], None],
          paint: Callable[..., None]) -> Widget:
    return Widget("android.widget.ImageView", m.box(box[0], box[1], 44, 44), desc=desc, rid=rid, clickable=True,
                  focusable=True, on_tap=on_tap, paint=paint)


def _main(phone: Phone, m: Metrics, root: Widget, rid: Rid) -> None:
    tab = phone.fields.get("mm.tab", "chats")
    top = m.status_dp
    bar = Widget("android.widget.FrameLayout", m.box(0, top, 360, BAR), bg=GREY_BAR, rid=rid("action_bar"))
    bar.add(text_view(m.box(100, top, 160, BAR), dict(TABS)[tab], m.px(17), align="center", rid=rid("title")))
    search_bar = tab == "chats" and release_of(phone).layout.get("search_entry") == "bar"
    if tab != "me" and not search_bar:
        bar.add(_icon(m, (268, top + 2), "搜索", rid("search"), lambda: open_search(phone), paint_magnifier()))
    if tab != "me":
        bar.add(_icon(m, (312, top + 2), "更多功能按钮", rid("more"), lambda: None, paint_plus_circle()))
    root.add(bar)
    y = top + BAR
    if search_bar:
        root.add(_search_bar(phone, m, y, rid))
        y += SEARCH_BAR
    body = Widget("android.widget.ListView", m.box(0, y, 360, m.content_bottom_dp - TABBAR - y), rid=rid("list"))
    if tab == "chats":
        for name in phone.scenario.contacts:
            body.add(_chat_row(phone, m, y, name, rid))
            y += 72
    elif tab == "contacts":
        _contacts(phone, m, body, y, rid)
    elif tab == "discover":
        for label in ("朋友圈", "视频号", "扫一扫", "摇一摇", "看一看", "搜一搜", "小程序"):
            body.add(list_row(m, y, 56, label, chevron=True))
            y += 56
    else:
        _me(m, body, y, rid)
    root.add(body)
    root.add(_tabbar(phone, m, tab, rid))


def _search_bar(phone: Phone, m: Metrics, y: float, rid: Rid) -> Widget:
    """The search entry as a bar over the chat list: a clickable row reading 搜索."""
    row = Widget("android.widget.LinearLayout", m.box(8, y + 4, 344, SEARCH_BAR - 8), rid=rid("search"),
                 clickable=True, focusable=True, on_tap=lambda: open_search(phone), bg=(255, 255, 255),
                 radius=m.px(6))
    row.add(Widget("android.widget.ImageView", m.box(140, y + 8, 28, 28), paint=paint_magnifier(SUBTLE)),
            text_view(m.box(166, y + 4, 80, SEARCH_BAR - 8), "搜索", m.px(15), fg=SUBTLE,
                      rid=rid("search_bar_text")))
    return row


def _contacts(phone: Phone, m: Metrics, body: Widget, y: float, rid: Rid) -> None:
    for label in ("新的朋友", "群聊", "标签"):
        body.add(list_row(m, y, 56, label, x=16))
        y += 56
    for name in sorted(phone.scenario.contacts):
        row = Widget("android.widget.LinearLayout", m.box(0, y, 360, 56), rid=rid("contact_item"), clickable=True,
                     focusable=True, on_tap=partial(open_chat, phone, name))
        row.add(Widget("android.widget.ImageView", m.box(16, y + 10, 36, 36),
                       paint=paint_avatar(name, avatar_color(name))),
                text_view(m.box(64, y + 16, 260, 24), name, m.px(16), rid=rid("contact_name")))
        body.add(row)
        y += 56


def _me(m: Metrics, body: Widget, y: float, rid: Rid) -> None:
    me = Widget("android.widget.LinearLayout", m.box(0, y, 360, 120), clickable=True, focusable=True,
                on_tap=lambda: None, rid=rid("profile"))
    me.add(Widget("android.widget.ImageView", m.box(24, y + 28, 64, 64), paint=paint_avatar("我", (87, 107, 149))),
           text_view(m.box(104, y + 32, 200, 28), "我的微信", m.px(20), rid=rid("nickname")),
           text_view(m.box(104, y + 64, 200, 22), "微信号：sim_user", m.px(14), fg=SUBTLE))
    body.add(me)
    y += 128
    for label in ("服务", "收藏", "朋友圈", "设置"):
        body.add(list_row(m, y, 56, label, chevron=True))
        y += 56


def _chat_row(phone: Phone, m: Metrics, y: float, name: str, rid: Rid) -> Widget:
    sent = phone.chats.get(name)
    preview = last_message(phone, name)
    row = Widget("android.widget.LinearLayout", m.box(0, y, 360, 72), rid=rid("chat_item"), clickable=True,
                 focusable=True, long_clickable=True, on_tap=lambda: open_chat(phone, name))
    row.add(Widget("android.widget.ImageView", m.box(12, y + 12, 48, 48), rid=rid("avatar"),
                   paint=paint_avatar(name, avatar_color(name))))
    row.add(text_view(m.box(68, y + 12, 220, 26), name, m.px(16), rid=rid("chat_name")))
    row.add(text_view(m.box(68, y + 40, 240, 22), preview.replace("\n", " "), m.px(13), fg=SUBTLE,
                      rid=rid("chat_preview")))
    row.add(text_view(m.box(290, y + 12, 62, 22), "昨天" if not sent else "12:00", m.px(12), fg=(178, 178, 178),
                      align="right", rid=rid("chat_time")))
    row.add(Widget("android.view.View", m.box(68, y + 71.5, 292, 0.5), bg=(229, 229, 229)))
    return row


def _tabbar(phone: Phone, m: Metrics, current: str, rid: Rid) -> Widget:
    """Four RelativeLayout tabs sharing one id each for the tab, its icon and its label (one layout, inflated
    four times), as in real releases."""
    y = m.content_bottom_dp - TABBAR
    bar = Widget("android.widget.LinearLayout", m.box(0, y, 360, TABBAR), bg=(247, 247, 247), rid=rid("tab_bar"))
    for i, (key, label) in enumerate(TABS):
        selected = key == current
        color = WECHAT_GREEN if selected else (60, 60, 60)

        def select(k: str = key) -> None:
            phone.fields["mm.tab"] = k
            phone.changed()

        tab = Widget("android.widget.RelativeLayout", m.box(i * 90, y, 90, TABBAR), rid=rid("tab"),
                     clickable=True, focusable=True, selected=selected, on_tap=select)
        tab.add(Widget("android.widget.ImageView", m.box(i * 90 + 33, y + 6, 24, 24), rid=rid("tab_icon"),
                       bg=color, radius=m.px(6)))
        tab.add(text_view(m.box(i * 90, y + 32, 90, 20), label, m.px(11), fg=color, align="center",
                          rid=rid("tab_label")))
        bar.add(tab)
    return bar


# ---------------------------------------------------------------- search


def _search(phone: Phone, m: Metrics, root: Widget, rid: Rid) -> None:
    top = m.status_dp
    query = phone.fields.get("mm.search", "")
    bar = Widget("android.widget.FrameLayout", m.box(0, top, 360, 56), bg=GREY_BAR)
    bar.add(Widget("android.widget.ImageView", m.box(0, top + 4, 48, 48), desc="返回", rid=rid("search_back"),
                   clickable=True, focusable=True, on_tap=phone.back, paint=paint_back_arrow()))
    bar.add(Widget("android.widget.EditText", m.box(48, top + 8, 300, 40), text=query, hint="搜索",
                   rid=rid("search_input"), clickable=True, focusable=True, focused=phone.focus == "mm.search",
                   long_clickable=True, on_tap=lambda: phone.focus_field("mm.search"), bg=(255, 255, 255),
                   radius=m.px(6), text_size=m.px(16)))
    root.add(bar)
    y = top + 64
    if not query:
        root.add(text_view(m.box(0, y + 24, 360, 24), "搜索指定内容", m.px(14), fg=SUBTLE, align="center"))
        for i, label in enumerate(("朋友圈", "文章", "公众号", "小程序", "音乐", "表情")):
            root.add(text_view(m.box(30 + (i % 3) * 100, y + 64 + (i // 3) * 44, 100, 32), label, m.px(15),
                               fg=(87, 107, 149), align="center"))
        return
    needle = query.strip().lower()
    matches = [c for c in phone.scenario.contacts if needle and needle in c.lower()]
    if not matches:
        root.add(text_view(m.box(0, y + 24, 360, 24), f"没有找到“{query}”相关结果", m.px(14), fg=SUBTLE,
                           align="center", rid=rid("search_empty")))
        return
    root.add(text_view(m.box(16, y, 200, 28), "联系人", m.px(13), fg=SUBTLE, rid=rid("search_header")))
    y += 32
    results = Widget("android.widget.ListView", m.box(0, y, 360, 64 * len(matches)), rid=rid("search_results"))
    for name in matches:
        row = Widget("android.widget.RelativeLayout", m.box(0, y, 360, 64), rid=rid("search_result_item"),
                     clickable=True, focusable=True, on_tap=partial(open_chat, phone, name))
        row.add(Widget("android.widget.ImageView", m.box(16, y + 10, 44, 44), rid=rid("avatar"),
                       paint=paint_avatar(name, avatar_color(name))))
        row.add(text_view(m.box(72, y + 18, 260, 28), name, m.px(16), rid=rid("search_result_name")))
        results.add(row)
        y += 64
    root.add(results)


# ---------------------------------------------------------------- chat


def _chat(phone: Phone, m: Metrics, root: Widget, rid: Rid, name: str) -> None:
    top = m.status_dp
    bar = Widget("android.widget.FrameLayout", m.box(0, top, 360, BAR), bg=GREY_BAR, rid=rid("action_bar"))
    bar.add(Widget("android.widget.ImageView", m.box(0, top, 48, 48), desc="返回", rid=rid("chat_back"),
                   clickable=True, focusable=True, on_tap=phone.back, paint=paint_back_arrow()))
    bar.add(text_view(m.box(60, top, 240, BAR), name, m.px(17), align="center", rid=rid("chat_title")))
    bar.add(_icon(m, (312, top + 2), "聊天信息", rid("chat_info"), lambda: None, paint_dots))
    root.add(bar)
    input_h = 56.0
    area_top, area_bottom = top + BAR, m.content_bottom_dp - input_h
    root.add(_messages(phone, m, rid, name, area_top, area_bottom))
    root.add(_input_bar(phone, m, rid, name, area_bottom, input_h))


def _messages(phone: Phone, m: Metrics, rid: Rid, name: str, area_top: float, area_bottom: float) -> Widget:
    area = Widget("android.widget.ListView", m.box(0, area_top, 360, area_bottom - area_top), bg=GREY_BAR,
                  rid=rid("chat_list"))
    size = m.px(16)
    shown: list[tuple[str, str, list[str], float]] = []
    for who, msg in reversed(conversation(phone, name)):  # newest at the bottom; keep what fits
        lines = msg.split("\n")
        h = 20.0 + 22 * len(lines)
        if sum(x[3] + 12 for x in shown) + h + 12 > area_bottom - area_top - 12:
            break
        shown.insert(0, (who, msg, lines, h))
    y = area_top + 12
    for who, msg, lines, h in shown:
        width_px = max(text_width(line, size) for line in lines) + m.px(24)
        width_dp = min(240.0, width_px / m.density)
        mine = who == "me"   # mine: green, at the right, my avatar; theirs: white, at the left, theirs
        bubble = Widget("android.widget.TextView", m.box(300 - width_dp if mine else 60, y, width_dp, h), text=msg,
                        rid=rid("chat_bubble"), bg=(149, 236, 105) if mine else (255, 255, 255), radius=m.px(4),
                        long_clickable=True, paint=multiline(m, lines, size))
        avatar = paint_avatar("我", (87, 107, 149)) if mine else paint_avatar(name, avatar_color(name))
        area.add(Widget("android.widget.ImageView", m.box(308 if mine else 12, y, 40, 40), rid=rid("chat_avatar"),
                        paint=avatar), bubble)
        y += h + 12
    return area


def _input_bar(phone: Phone, m: Metrics, rid: Rid, name: str, y: float, height: float) -> Widget:
    key = f"mm.chat:{name}"
    draft = phone.fields.get(key, "")
    bottom = Widget("android.widget.LinearLayout", m.box(0, y, 360, height), bg=(247, 247, 247), rid=rid("input_bar"))
    yb = y + 8
    bottom.add(Widget("android.widget.ImageButton", m.box(4, yb, 40, 40), desc="切换到按住说话", rid=rid("voice"),
                      clickable=True, focusable=True, on_tap=lambda: None, paint=paint_plus_circle((60, 60, 60))))
    input_w = 200.0 if draft else 216.0
    bottom.add(Widget("android.widget.EditText", m.box(48, yb, input_w, 40), text=draft, rid=rid("chat_input"),
                      clickable=True, focusable=True, long_clickable=True, focused=phone.focus == key,
                      on_tap=lambda: phone.focus_field(key), bg=(255, 255, 255), radius=m.px(4),
                      text_size=m.px(16)))
    ex = 48 + input_w + 4
    bottom.add(Widget("android.widget.ImageButton", m.box(ex, yb, 40, 40), desc="表情", rid=rid("emoji"),
                      clickable=True, focusable=True, on_tap=lambda: None, paint=paint_smiley))
    if draft:
        bottom.add(Widget("android.widget.Button", m.box(ex + 44, yb + 2, 60, 36), text="发送", rid=rid("send"),
                          clickable=True, focusable=True, on_tap=lambda: send(phone, name), bg=WECHAT_GREEN,
                          fg=(255, 255, 255), radius=m.px(4), text_size=m.px(15), align="center"))
    else:
        bottom.add(Widget("android.widget.ImageButton", m.box(ex + 44, yb, 40, 40), desc="更多功能按钮",
                          rid=rid("plus"), clickable=True, focusable=True, on_tap=lambda: None,
                          paint=paint_plus_circle((60, 60, 60))))
    return bottom
