"""Settings (`com.android.settings`): WLAN, 蓝牙, 飞行模式 switches; 显示 and 声音 pages."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PIL import ImageDraw

from remote.sim.apps.common import SUBTLE, back_button, list_row, text_view
from remote.sim.widgets import Metrics, Widget

if TYPE_CHECKING:
    from remote.sim.phone import SimPhone

PACKAGE = "com.android.settings"
ID = "com.android.settings:id/"
BLUE = (26, 115, 232)
SWITCHES = [("wlan", "WLAN"), ("bluetooth", "蓝牙"), ("airplane", "飞行模式")]


def activity(screen: str) -> str:
    return "com.android.settings.Settings" if screen == "main" else "com.android.settings.SubSettings"


def on_enter(phone: SimPhone) -> None:
    return None


def on_editor_action(phone: SimPhone, code: int) -> None:
    return None


def toggle(phone: SimPhone, key: str) -> None:
    state = phone.settings
    state[key] = not state[key]
    if key == "airplane" and state["airplane"]:  # airplane mode turns the radios off
        state["wlan"] = False
        state["bluetooth"] = False
    phone.changed()


def _summary(phone: SimPhone, key: str) -> str:
    on = phone.settings[key]
    if key == "wlan":
        return "已连接到 SimNet" if on else "已关闭"
    if key == "bluetooth":
        return "已开启" if on else "已关闭"
    return "已开启" if on else "已关闭"


def _switch_painter(m: Metrics):
    def paint(draw: ImageDraw.ImageDraw, w: Widget) -> None:
        x1, y1, x2, y2 = w.bounds
        cy = (y1 + y2) // 2
        h = m.px(16)
        track = BLUE if w.checked else (190, 190, 190)
        draw.rounded_rectangle((x1 + m.px(4), cy - h // 2, x2 - m.px(4), cy + h // 2), radius=h // 2, fill=track)
        r = m.px(11)
        kx = x2 - m.px(4) - r if w.checked else x1 + m.px(4) + r
        draw.ellipse((kx - r, cy - r, kx + r, cy + r), fill=(255, 255, 255), outline=(160, 160, 160))
    return paint


def build(phone: SimPhone, m: Metrics, screen: str) -> Widget:
    top = m.status_dp
    root = Widget("android.widget.LinearLayout", m.box(0, top, 360, m.content_bottom_dp - top),
                  bg=(255, 255, 255), package=PACKAGE)
    if screen in ("display", "sound"):
        _subpage(phone, m, root, screen)
        return root
    root.add(text_view(m.box(16, top + 16, 300, 48), "设置", m.px(28), rid=ID + "homepage_title"))
    search = Widget("android.widget.TextView", m.box(16, top + 72, 328, 48), text="", hint="搜索设置",
                    rid=ID + "search_action_bar", clickable=True, focusable=True, on_tap=lambda: None,
                    bg=(240, 242, 245), radius=m.px(24), text_size=m.px(15))
    root.add(search)
    y = top + 132
    for key, label in SWITCHES:
        row = list_row(m, y, 72, label, rid=ID + f"{key}_row", summary=_summary(phone, key),
                       on_tap=lambda k=key: toggle(phone, k))
        row.add(Widget("android.widget.Switch", m.box(292, y + 20, 52, 32), rid=ID + f"switch_{key}",
                       checkable=True, checked=phone.settings[key], clickable=True, focusable=True,
                       on_tap=lambda k=key: toggle(phone, k), paint=_switch_painter(m)))
        root.add(row)
        y += 72
    for key, label, summary in (("display", "显示", "深色主题、字体大小、亮度"), ("sound", "声音", "音量、振动、勿扰模式"),
                                ("about", "关于手机", "SimPhone")):
        root.add(list_row(m, y, 72, label, rid=ID + f"{key}_row", summary=summary, chevron=True,
                          on_tap=(lambda k=key: phone.push(k)) if key != "about" else None))
        y += 72
    return root


def _subpage(phone: SimPhone, m: Metrics, root: Widget, screen: str) -> None:
    top = m.status_dp
    title = "显示" if screen == "display" else "声音"
    root.add(back_button(m, top + 4, ID + "back_btn", phone.back))
    root.add(text_view(m.box(60, top + 4, 240, 48), title, m.px(22), rid=ID + "page_title"))
    y = top + 72
    rows = (("亮度", "自适应"), ("深色主题", "关闭"), ("字体大小", "默认")) if screen == "display" else \
        (("媒体音量", f"{phone.volume}/15"), ("铃声音量", "10/15"), ("勿扰模式", "关闭"))
    for label, summary in rows:
        root.add(list_row(m, y, 72, label, summary=summary))
        y += 72
    root.add(text_view(m.box(16, y + 16, 328, 24), "模拟设置页面", m.px(12), fg=SUBTLE))
