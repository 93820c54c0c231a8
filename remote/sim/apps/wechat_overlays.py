"""What WeChat shows over its screens: the system permission dialog on first launch and an ad.

The permission dialog belongs to Android's permission controller, whose ids are
AOSP's and stable; the ad is WeChat's own (obfuscated ids), marked 广告 as ads must be.
"""

from __future__ import annotations

from remote.sim.apps.common import text_view
from remote.sim.apps.host import Phone
from remote.sim.apps.wechat import PACKAGE, release_of
from remote.sim.apps.wechat_paint import paint_close_x, wrapped
from remote.sim.widgets import Metrics, Widget

PERMISSION_PACKAGE = "com.android.permissioncontroller"
PERMISSION_COMPONENT = f"{PERMISSION_PACKAGE}/{PERMISSION_PACKAGE}.permission.ui.GrantPermissionsActivity"
PERMISSION_TEXT = "要允许“微信”访问您设备上的照片、媒体内容和文件吗？"


def overlays(phone: Phone, m: Metrics) -> list[Widget]:
    if phone.permission_pending:
        return _permission_dialog(phone, m)
    if phone.ad_pending and phone.screen == "main" and phone.fields.get("mm.tab", "chats") == "chats":
        return [_ad(phone, m)]
    return []


def _scrim(m: Metrics, package: str) -> Widget:
    # Clickable so that taps on the app below are swallowed until the dialog is dismissed.
    return Widget("android.widget.FrameLayout", (0, 0, m.width, m.height), package=package, clickable=True,
                  on_tap=lambda: None, dim=0.5, dump=False)


def _permission_dialog(phone: Phone, m: Metrics) -> list[Widget]:
    pid = f"{PERMISSION_PACKAGE}:id/"

    def answer() -> None:
        phone.permission_pending = False
        phone.changed()

    y = m.height_dp / 2 - 110
    box = Widget("android.widget.LinearLayout", m.box(24, y, 312, 220), package=PERMISSION_PACKAGE,
                 rid=pid + "grant_dialog", bg=(255, 255, 255), radius=m.px(20))
    message = text_view(m.box(40, y + 24, 280, 84), PERMISSION_TEXT, 0, rid=pid + "permission_message")
    message.paint = wrapped(PERMISSION_TEXT, m, 17, 280)
    box.add(message)
    box.add(Widget("android.widget.Button", m.box(40, y + 116, 280, 44), text="允许",
                   rid=pid + "permission_allow_button", clickable=True, focusable=True, on_tap=answer,
                   fg=(26, 115, 232), text_size=m.px(16), align="center", bg=(232, 240, 254), radius=m.px(22)))
    box.add(Widget("android.widget.Button", m.box(40, y + 166, 280, 44), text="拒绝",
                   rid=pid + "permission_deny_button", clickable=True, focusable=True, on_tap=answer,
                   fg=(26, 115, 232), text_size=m.px(16), align="center"))
    return [_scrim(m, PERMISSION_PACKAGE), box]


def _ad(phone: Phone, m: Metrics) -> Widget:
    """A full-screen layer (it swallows taps) holding the ad card and its 关闭 X below it."""
    ids = release_of(phone)

    def rid(role: str) -> str:
        return ids.rid(PACKAGE, role)

    def close() -> None:
        phone.ad_pending = False
        phone.changed()

    layer = Widget("android.widget.FrameLayout", (0, 0, m.width, m.height), package=PACKAGE, clickable=True,
                   on_tap=lambda: None, dim=0.5)
    y = m.height_dp / 2 - 200
    card = Widget("android.widget.FrameLayout", m.box(40, y, 280, 360), rid=rid("ad_card"), bg=(250, 81, 81),
                  radius=m.px(16))
    card.add(text_view(m.box(276, y + 8, 36, 20), "广告", m.px(11), fg=(255, 220, 220), align="center",
                       rid=rid("ad_label")))
    card.add(text_view(m.box(40, y + 60, 280, 44), "限时福利", m.px(30), fg=(255, 236, 160), align="center",
                       rid=rid("ad_title")))
    card.add(text_view(m.box(40, y + 120, 280, 30), "新人专享红包 最高88元", m.px(16), fg=(255, 255, 255),
                       align="center"))
    card.add(Widget("android.widget.Button", m.box(80, y + 270, 200, 48), text="立即领取", rid=rid("ad_button"),
                    clickable=True, focusable=True, on_tap=lambda: None, bg=(255, 214, 102), fg=(200, 40, 40),
                    radius=m.px(24), text_size=m.px(17), align="center"))
    layer.add(card, Widget("android.widget.ImageView", m.box(160, y + 376, 40, 40), desc="关闭", rid=rid("ad_close"),
                           clickable=True, focusable=True, on_tap=close, paint=paint_close_x))
    return layer
