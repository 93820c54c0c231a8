"""A WeChat-like messenger (`com.tencent.mm`).

Screens (the phone's stack for this package): ``main`` (tabs 微信/通讯录/发现/我,
tab in ``fields["mm.tab"]``), ``search`` (input focused on arrival, results are the
contacts whose name contains the query) and ``chat:<name>`` (input box; 发送 only
while the box holds text; sent messages are green bubbles). Overlays: the
permission dialog on first launch and the ad with a 关闭 X over the chat list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from remote.sim.apps.common import (
    GREY_BAR,
    SUBTLE,
    WECHAT_GREEN,
    avatar_color,
    back_button,
    list_row,
    paint_avatar,
    paint_magnifier,
    paint_plus_circle,
    text_view,
)
from remote.sim.render import text_width
from remote.sim.widgets import Metrics, Widget

if TYPE_CHECKING:
    from remote.sim.phone import SimPhone

PACKAGE = "com.tencent.mm"
PERMISSION_PACKAGE = "com.android.permissioncontroller"
PERMISSION_COMPONENT = f"{PERMISSION_PACKAGE}/{PERMISSION_PACKAGE}.permission.ui.GrantPermissionsActivity"
ID = "com.tencent.mm:id/"
TABS = [("chats", "微信"), ("contacts", "通讯录"), ("discover", "发现"), ("me", "我")]
PREVIEWS = {"张三": "明天见", "李四": "[图片]", "王五": "好的，收到", "文件传输助手": "[文件] 周报.docx"}
BAR = 48.0
TABBAR = 56.0


def activity(screen: str) -> str:
    if screen == "search":
        return "com.tencent.mm.plugin.fts.ui.FTSMainUI"
    if screen.startswith("chat:"):
        return "com.tencent.mm.ui.chatting.ChattingUI"
    return "com.tencent.mm.ui.LauncherUI"


def on_enter(phone: SimPhone) -> None:
    """ENTER in the chat box starts a new line (WeChat's default); elsewhere nothing."""
    if phone.focus and phone.focus.startswith("mm.chat:"):
        phone.type_text("\n")


def on_editor_action(phone: SimPhone, code: int) -> None:
    if code == 4 and phone.focus and phone.focus.startswith("mm.chat:"):  # IME_ACTION_SEND
        send(phone, phone.focus[len("mm.chat:"):])


def send(phone: SimPhone, name: str) -> None:
    key = f"mm.chat:{name}"
    text = phone.fields.get(key, "")
    if text.strip():
        phone.chats.setdefault(name, []).append(text)
        phone.fields[key] = ""
    phone.changed()


def open_chat(phone: SimPhone, name: str) -> None:
    phone.push(f"chat:{name}")


def open_search(phone: SimPhone) -> None:
    phone.fields["mm.search"] = ""
    phone.push("search", focus="mm.search")


def build(phone: SimPhone, m: Metrics, screen: str) -> Widget:
    root = Widget("android.widget.LinearLayout", m.box(0, m.status_dp, 360, m.content_bottom_dp - m.status_dp),
                  bg=(255, 255, 255), package=PACKAGE)
    if screen == "search":
        _search(phone, m, root)
    elif screen.startswith("chat:"):
        _chat(phone, m, root, screen[len("chat:"):])
    else:
        _main(phone, m, root)
    return root


# ---------------------------------------------------------------- main (tabs)


def _main(phone: SimPhone, m: Metrics, root: Widget) -> None:
    tab = phone.fields.get("mm.tab", "chats")
    top = m.status_dp
    title = dict(TABS)[tab]
    bar = Widget("android.widget.FrameLayout", m.box(0, top, 360, BAR), bg=GREY_BAR, rid=ID + "action_bar")
    bar.add(text_view(m.box(100, top, 160, BAR), title, m.px(17), align="center", rid=ID + "title"))
    if tab != "me":
        bar.add(Widget("android.widget.ImageView", m.box(268, top + 2, 44, 44), desc="搜索", rid=ID + "search_icon",
                       clickable=True, focusable=True, on_tap=lambda: open_search(phone), paint=paint_magnifier()))
        bar.add(Widget("android.widget.ImageView", m.box(312, top + 2, 44, 44), desc="更多功能按钮",
                       rid=ID + "more_icon", clickable=True, focusable=True, on_tap=lambda: None,
                       paint=paint_plus_circle()))
    root.add(bar)
    y = top + BAR
    body = Widget("android.widget.ListView", m.box(0, y, 360, m.content_bottom_dp - TABBAR - y),
                  rid=ID + "list", scrollable=False)
    if tab == "chats":
        for name in phone.scenario.contacts:
            body.add(_chat_row(phone, m, y, name))
            y += 72
    elif tab == "contacts":
        for label in ("新的朋友", "群聊", "标签"):
            body.add(list_row(m, y, 56, label, x=16))
            y += 56
        for name in sorted(phone.scenario.contacts):
            row = list_row(m, y, 56, name, rid=ID + "contact_item", x=64, on_tap=lambda n=name: open_chat(phone, n))
            row.add(Widget("android.widget.ImageView", m.box(16, y + 10, 36, 36),
                           paint=paint_avatar(name, avatar_color(name))))
            body.add(row)
            y += 56
    elif tab == "discover":
        for label in ("朋友圈", "视频号", "扫一扫", "摇一摇", "看一看", "搜一搜", "小程序"):
            body.add(list_row(m, y, 56, label, chevron=True))
            y += 56
    else:
        me = Widget("android.widget.LinearLayout", m.box(0, y, 360, 120), clickable=True, focusable=True,
                    on_tap=lambda: None, rid=ID + "profile")
        me.add(Widget("android.widget.ImageView", m.box(24, y + 28, 64, 64),
                      paint=paint_avatar("我", (87, 107, 149))),
               text_view(m.box(104, y + 32, 200, 28), "我的微信", m.px(20), rid=ID + "nickname"),
               text_view(m.box(104, y + 64, 200, 22), "微信号：sim_user", m.px(14), fg=SUBTLE))
        body.add(me)
        y += 128
        for label in ("服务", "收藏", "朋友圈", "设置"):
            body.add(list_row(m, y, 56, label, chevron=True))
            y += 56
    root.add(body)
    root.add(_tabbar(phone, m, tab))


def _chat_row(phone: SimPhone, m: Metrics, y: float, name: str) -> Widget:
    sent = phone.chats.get(name)
    preview = sent[-1] if sent else PREVIEWS.get(name, "")
    row = Widget("android.widget.LinearLayout", m.box(0, y, 360, 72), rid=ID + "chat_item", clickable=True,
                 focusable=True, long_clickable=True, on_tap=lambda: open_chat(phone, name))
    row.add(Widget("android.widget.ImageView", m.box(12, y + 12, 48, 48), rid=ID + "avatar",
                   paint=paint_avatar(name, avatar_color(name))))
    row.add(text_view(m.box(68, y + 12, 220, 26), name, m.px(16), rid=ID + "chat_name"))
    row.add(text_view(m.box(68, y + 40, 240, 22), preview.replace("\n", " "), m.px(13), fg=SUBTLE,
                      rid=ID + "chat_preview"))
    row.add(text_view(m.box(290, y + 12, 62, 22), "昨天" if not sent else "12:00", m.px(12), fg=(178, 178, 178),
                      align="right", rid=ID + "chat_time"))
    row.add(Widget("android.view.View", m.box(68, y + 71.5, 292, 0.5), bg=(229, 229, 229)))
    return row


def _tabbar(phone: SimPhone, m: Metrics, current: str) -> Widget:
    y = m.content_bottom_dp - TABBAR
    bar = Widget("android.widget.LinearLayout", m.box(0, y, 360, TABBAR), bg=(247, 247, 247), rid=ID + "tab_bar")
    for i, (key, label) in enumerate(TABS):
        selected = key == current
        color = WECHAT_GREEN if selected else (60, 60, 60)

        def select(k: str = key) -> None:
            phone.fields["mm.tab"] = k
            phone.changed()

        tab = Widget("android.widget.RelativeLayout", m.box(i * 90, y, 90, TABBAR), rid=ID + f"tab_{key}",
                     clickable=True, focusable=True, selected=selected, on_tap=select)
        tab.add(Widget("android.widget.ImageView", m.box(i * 90 + 33, y + 6, 24, 24), rid=ID + "tab_icon",
                       bg=color, radius=m.px(6)))
        tab.add(text_view(m.box(i * 90, y + 32, 90, 20), label, m.px(11), fg=color, align="center",
                          rid=ID + "tab_label"))
        bar.add(tab)
    return bar


# ---------------------------------------------------------------- search


def _search(phone: SimPhone, m: Metrics, root: Widget) -> None:
    top = m.status_dp
    query = phone.fields.get("mm.search", "")
    bar = Widget("android.widget.FrameLayout", m.box(0, top, 360, 56), bg=GREY_BAR)
    bar.add(back_button(m, top + 4, ID + "back_btn", phone.back))
    bar.add(Widget("android.widget.EditText", m.box(48, top + 8, 248, 40), text=query, hint="搜索",
                   rid=ID + "search_input", clickable=True, focusable=True, focused=phone.focus == "mm.search",
                   long_clickable=True, on_tap=lambda: phone.focus_field("mm.search"), bg=(255, 255, 255),
                   radius=m.px(6), text_size=m.px(16)))
    bar.add(text_view(m.box(300, top + 8, 56, 40), "取消", m.px(16), fg=(87, 107, 149), align="center",
                      rid=ID + "search_cancel", clickable=True, on_tap=phone.back))
    root.add(bar)
    y = top + 64
    if not query:
        root.add(text_view(m.box(0, y + 24, 360, 24), "搜索指定内容", m.px(14), fg=SUBTLE, align="center"))
        for i, label in enumerate(("朋友圈", "文章", "公众号", "小程序", "音乐", "表情")):
            root.add(text_view(m.box(30 + (i % 3) * 100, y + 64 + (i // 3) * 44, 100, 32), label, m.px(15),
                               fg=(87, 107, 149), align="center"))
        return
    matches = [c for c in phone.scenario.contacts if query.strip().lower() in c.lower()] if query.strip() else []
    if not matches:
        root.add(text_view(m.box(0, y + 24, 360, 24), f"没有找到“{query}”相关结果", m.px(14), fg=SUBTLE,
                           align="center", rid=ID + "search_empty"))
        return
    root.add(text_view(m.box(16, y, 200, 28), "联系人", m.px(13), fg=SUBTLE, rid=ID + "search_header"))
    y += 32
    results = Widget("android.widget.ListView", m.box(0, y, 360, 64 * len(matches)), rid=ID + "search_results")
    for name in matches:
        row = Widget("android.widget.RelativeLayout", m.box(0, y, 360, 64), rid=ID + "search_result_item",
                     clickable=True, focusable=True, on_tap=lambda n=name: open_chat(phone, n))
        row.add(Widget("android.widget.ImageView", m.box(16, y + 10, 44, 44), rid=ID + "avatar",
                       paint=paint_avatar(name, avatar_color(name))))
        row.add(text_view(m.box(72, y + 18, 260, 28), name, m.px(16), rid=ID + "search_result_name"))
        results.add(row)
        y += 64
    root.add(results)


# ---------------------------------------------------------------- chat


def _chat(phone: SimPhone, m: Metrics, root: Widget, name: str) -> None:
    top = m.status_dp
    key = f"mm.chat:{name}"
    draft = phone.fields.get(key, "")
    bar = Widget("android.widget.FrameLayout", m.box(0, top, 360, BAR), bg=GREY_BAR, rid=ID + "action_bar")
    bar.add(back_button(m, top, ID + "back_btn", phone.back))
    bar.add(text_view(m.box(60, top, 240, BAR), name, m.px(17), align="center", rid=ID + "chat_title"))
    bar.add(Widget("android.widget.ImageView", m.box(312, top + 2, 44, 44), desc="聊天信息", rid=ID + "chat_info",
                   clickable=True, focusable=True, on_tap=lambda: None, paint=_dots))
    root.add(bar)
    input_h = 56.0
    area_top, area_bottom = top + BAR, m.content_bottom_dp - input_h
    area = Widget("android.widget.ListView", m.box(0, area_top, 360, area_bottom - area_top), bg=GREY_BAR,
                  rid=ID + "chat_list")
    size = m.px(16)
    heights = []
    for msg in phone.chats.get(name, []):
        lines = msg.split("\n")
        heights.append((msg, lines, 20 + 22 * len(lines)))
    y, shown = area_top + 12, []
    for msg, lines, h in reversed(heights):  # newest at the bottom; keep what fits
        if sum(x[2] + 12 for x in shown) + h + 12 > area_bottom - area_top - 12:
            break
        shown.insert(0, (msg, lines, h))
    for msg, lines, h in shown:
        width_px = max(text_width(line, size) for line in lines) + m.px(24)
        width_dp = min(240.0, width_px / m.density)
        bubble = Widget("android.widget.TextView", m.box(300 - width_dp, y, width_dp, h), text=msg,
                        rid=ID + "chat_bubble", bg=(149, 236, 105), radius=m.px(4), long_clickable=True,
                        paint=_multiline(m, lines, size))
        area.add(Widget("android.widget.ImageView", m.box(308, y, 40, 40), rid=ID + "avatar",
                        paint=paint_avatar("我", (87, 107, 149))), bubble)
        y += h + 12
    root.add(area)
    bottom = Widget("android.widget.LinearLayout", m.box(0, area_bottom, 360, input_h), bg=(247, 247, 247),
                    rid=ID + "input_bar")
    yb = area_bottom + 8
    bottom.add(Widget("android.widget.ImageButton", m.box(4, yb, 40, 40), desc="切换到按住说话", rid=ID + "voice_btn",
                      clickable=True, focusable=True, on_tap=lambda: None, paint=paint_plus_circle((60, 60, 60))))
    input_w = 200.0 if draft else 216.0
    bottom.add(Widget("android.widget.EditText", m.box(48, yb, input_w, 40), text=draft, rid=ID + "chat_input",
                      clickable=True, focusable=True, long_clickable=True, focused=phone.focus == key,
                      on_tap=lambda: phone.focus_field(key), bg=(255, 255, 255), radius=m.px(4),
                      text_size=m.px(16)))
    ex = 48 + input_w + 4
    bottom.add(Widget("android.widget.ImageButton", m.box(ex, yb, 40, 40), desc="表情", rid=ID + "emoji_btn",
                      clickable=True, focusable=True, on_tap=lambda: None, paint=_smiley))
    if draft:
        bottom.add(Widget("android.widget.Button", m.box(ex + 44, yb + 2, 60, 36), text="发送", rid=ID + "send_btn",
                          clickable=True, focusable=True, on_tap=lambda: send(phone, name), bg=WECHAT_GREEN,
                          fg=(255, 255, 255), radius=m.px(4), text_size=m.px(15), align="center"))
    else:
        bottom.add(Widget("android.widget.ImageButton", m.box(ex + 44, yb, 40, 40), desc="更多功能按钮",
                          rid=ID + "plus_btn", clickable=True, focusable=True, on_tap=lambda: None,
                          paint=paint_plus_circle((60, 60, 60))))
    root.add(bottom)


def _multiline(m: Metrics, lines: list[str], size: int):
    def paint(draw, w: Widget) -> None:
        from remote.sim.render import draw_label

        x1, y1, x2, _ = w.bounds
        for i, line in enumerate(lines):
            ly = y1 + m.px(10) + i * m.px(22)
            draw_label(draw, (x1 + m.px(4), ly, x2, ly + m.px(22)), line, size, (25, 25, 25))
    return paint


def _dots(draw, w: Widget) -> None:
    cx, cy = w.center
    r = max(2, (w.bounds[3] - w.bounds[1]) // 18)
    for dx in (-3, 0, 3):
        draw.ellipse((cx + dx * r * 2 - r, cy - r, cx + dx * r * 2 + r, cy + r), fill=(25, 25, 25))


def _smiley(draw, w: Widget) -> None:
    cx, cy = w.center
    r = (w.bounds[3] - w.bounds[1]) // 4
    width = max(2, r // 6)
    draw.ellipse((cx - r, cy - r, cx + r, cy + r), outline=(60, 60, 60), width=width)
    draw.arc((cx - r // 2, cy - r // 3, cx + r // 2, cy + r // 2), start=20, end=160, fill=(60, 60, 60), width=width)


# ---------------------------------------------------------------- overlays


def overlays(phone: SimPhone, m: Metrics) -> list[Widget]:
    if phone.permission_pending:
        return _permission_dialog(phone, m)
    if phone.ad_pending and phone.screen == "main" and phone.fields.get("mm.tab", "chats") == "chats":
        return _ad(phone, m)
    return []


def _scrim(m: Metrics, package: str) -> Widget:
    # Clickable so that taps on the app below are swallowed until the dialog is dismissed.
    return Widget("android.widget.FrameLayout", (0, 0, m.width, m.height), package=package, clickable=True,
                  on_tap=lambda: None, dim=0.5, dump=False)


def _permission_dialog(phone: SimPhone, m: Metrics) -> list[Widget]:
    pid = f"{PERMISSION_PACKAGE}:id/"

    def answer() -> None:
        phone.permission_pending = False
        phone.changed()

    y = m.height_dp / 2 - 110
    box = Widget("android.widget.LinearLayout", m.box(24, y, 312, 220), package=PERMISSION_PACKAGE,
                 rid=pid + "grant_dialog", bg=(255, 255, 255), radius=m.px(20))
    box.add(text_view(m.box(40, y + 24, 280, 84), "", m.px(17), rid=pid + "permission_message"))
    box.children[-1].paint = _wrapped("要允许“微信”访问您设备上的照片、媒体内容和文件吗？", m, 17, 280)
    box.children[-1].text = "要允许“微信”访问您设备上的照片、媒体内容和文件吗？"
    box.children[-1].text_size = 0
    box.add(Widget("android.widget.Button", m.box(40, y + 116, 280, 44), text="允许",
                   rid=pid + "permission_allow_button", clickable=True, focusable=True, on_tap=answer,
                   fg=(26, 115, 232), text_size=m.px(16), align="center", bg=(232, 240, 254), radius=m.px(22)))
    box.add(Widget("android.widget.Button", m.box(40, y + 166, 280, 44), text="拒绝",
                   rid=pid + "permission_deny_button", clickable=True, focusable=True, on_tap=answer,
                   fg=(26, 115, 232), text_size=m.px(16), align="center"))
    return [_scrim(m, PERMISSION_PACKAGE), box]


def _ad(phone: SimPhone, m: Metrics) -> list[Widget]:
    def close() -> None:
        phone.ad_pending = False
        phone.changed()

    y = m.height_dp / 2 - 200
    card = Widget("android.widget.FrameLayout", m.box(40, y, 280, 360), rid=ID + "ad_card", bg=(250, 81, 81),
                  radius=m.px(16))
    card.add(text_view(m.box(40, y + 60, 280, 44), "限时福利", m.px(30), fg=(255, 236, 160), align="center",
                       rid=ID + "ad_title"))
    card.add(text_view(m.box(40, y + 120, 280, 30), "新人专享红包 最高88元", m.px(16), fg=(255, 255, 255),
                       align="center"))
    card.add(Widget("android.widget.Button", m.box(80, y + 270, 200, 48), text="立即领取", rid=ID + "ad_button",
                    clickable=True, focusable=True, on_tap=lambda: None, bg=(255, 214, 102), fg=(200, 40, 40),
                    radius=m.px(24), text_size=m.px(17), align="center"))
    close_btn = Widget("android.widget.ImageView", m.box(160, y + 376, 40, 40), desc="关闭", rid=ID + "ad_close",
                       clickable=True, focusable=True, on_tap=close, paint=_close_x)
    return [_scrim(m, PACKAGE), card, close_btn]


def _close_x(draw, w: Widget) -> None:
    x1, y1, x2, y2 = w.bounds
    width = max(2, (x2 - x1) // 16)
    draw.ellipse((x1, y1, x2 - 1, y2 - 1), outline=(255, 255, 255), width=width)
    pad = (x2 - x1) // 3
    draw.line([(x1 + pad, y1 + pad), (x2 - pad, y2 - pad)], fill=(255, 255, 255), width=width)
    draw.line([(x2 - pad, y1 + pad), (x1 + pad, y2 - pad)], fill=(255, 255, 255), width=width)


def _wrapped(text: str, m: Metrics, size_dp: float, width_dp: float):
    def paint(draw, w: Widget) -> None:
        from remote.sim.render import draw_label

        size = m.px(size_dp)
        lines, line = [], ""
        for ch in text:
            if text_width(line + ch, size) > m.px(width_dp) - size:
                lines.append(line)
                line = ""
            line += ch
        lines.append(line)
        x1, y1, x2, _ = w.bounds
        for i, ln in enumerate(lines):
            ly = y1 + i * int(size * 1.5)
            draw_label(draw, (x1, ly, x2, ly + int(size * 1.5)), ln, size, (25, 25, 25))
    return paint
