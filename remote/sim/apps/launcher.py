"""The home screen: two pages of app icons (swipe left/right), page dots and a dock.

Drawn as the scenario's ROM draws it (ids and structure from real dumps, see
``README.md``):

* ``aosp`` — Launcher3 (``com.android.launcher3``): ``launcher`` > ``drag_layer`` >
  ``workspace`` (a ScrollView) with the search box ``btn_qsb_search``, ``page_indicator``
  and the ``hotseat``; an icon is one clickable TextView whose text and content-desc
  are the app's name, with no id (in the hotseat too, its label not drawn).
* ``miui`` — MIUI's launcher (``com.miui.home``): an icon is a clickable ImageView
  ``icon_icon`` (content-desc: the name) above a clickable TextView ``icon_title``
  (text: the name); the page dots are ImageViews described 第1屏, 第2屏; dock icons
  have no title.
"""

from __future__ import annotations

from collections.abc import Callable

from PIL import ImageDraw

from remote.sim.apps.common import SUBTLE, text_view
from remote.sim.apps.host import Phone
from remote.sim.apps.icons import AppInfo, draw_icon, icon_painter
from remote.sim.render import draw_label
from remote.sim.widgets import Metrics, Widget

PACKAGES = {"aosp": "com.android.launcher3", "miui": "com.miui.home"}
ACTIVITIES = {"aosp": "com.android.launcher3.uioverride.QuickstepLauncher", "miui": "com.miui.home.launcher.Launcher"}

PAGE_APPS: list[list[AppInfo]] = [
    [
        AppInfo("微信", "com.tencent.mm", "com.tencent.mm.ui.LauncherUI", (7, 193, 96), "squircle", "bubbles"),
        AppInfo("设置", "com.android.settings", "com.android.settings.Settings", (96, 110, 128), "circle", "gear"),
        AppInfo("Chrome", "com.android.chrome", "com.google.android.apps.chrome.Main", (26, 115, 232), "circle",
                "globe"),
        AppInfo("相册", "com.android.gallery3d", "com.android.gallery3d.app.GalleryActivity", (255, 152, 0),
                "squircle", "mountain"),
        AppInfo("日历", "com.android.calendar", "com.android.calendar.AllInOneActivity", (229, 57, 53), "square",
                "31"),
        AppInfo("时钟", "com.android.deskclock", "com.android.deskclock.DeskClock", (33, 33, 33), "circle", "clock"),
        AppInfo("计算器", "com.android.calculator2", "com.android.calculator2.Calculator", (0, 150, 136),
                "square", "="),
        AppInfo("天气", "com.remote.weather", "com.remote.weather.MainActivity", (79, 195, 247), "squircle", "sun"),
    ],
    [
        AppInfo("文件管理", "com.android.documentsui", "com.android.documentsui.files.FilesActivity",
                (255, 193, 7), "square", "folder"),
        AppInfo("音乐", "com.android.music", "com.android.music.MusicBrowserActivity", (156, 39, 176), "circle",
                "note"),
        AppInfo("地图", "com.remote.maps", "com.remote.maps.MainActivity", (76, 175, 80), "square", "pin"),
        AppInfo("备忘录", "com.android.notes", "com.android.notes.NotesActivity", (255, 213, 79), "squircle", "记"),
        AppInfo("邮件", "com.android.email", "com.android.email.activity.Welcome", (40, 90, 200), "squircle",
                "envelope"),
        AppInfo("录音机", "com.android.soundrecorder", "com.android.soundrecorder.SoundRecorder", (211, 47, 47),
                "circle", "mic"),
    ],
]
DOCK_APPS: list[AppInfo] = [
    AppInfo("电话", "com.android.dialer", "com.android.dialer.main.impl.MainActivity", (52, 168, 83), "circle",
            "phone"),
    AppInfo("信息", "com.android.mms", "com.android.mms.ui.ConversationList", (3, 169, 244), "squircle", "信"),
    AppInfo("相机", "com.android.camera2", "com.android.camera.CameraLauncher", (69, 90, 100), "circle", "camera"),
    AppInfo("联系人", "com.android.contacts", "com.android.contacts.activities.PeopleActivity", (121, 85, 72),
            "squircle", "人"),
]
ALL_APPS: list[AppInfo] = [a for page in PAGE_APPS for a in page] + DOCK_APPS
PAGES = len(PAGE_APPS)

COLUMNS = 4
CELL_W, CELL_H, ICON, ROW0 = 90.0, 96.0, 56.0, 56.0


def activity(rom: str) -> str:
    return ACTIVITIES[rom]


def _opener(phone: Phone, package: str) -> Callable[[], None]:
    def launch() -> None:
        phone.launch(package)
    return launch


def _wallpaper(m: Metrics) -> Callable[[ImageDraw.ImageDraw, Widget], None]:
    def paint(draw: ImageDraw.ImageDraw, w: Widget) -> None:
        x1, y1, x2, y2 = w.bounds
        steps = 32
        for i in range(steps):  # a vertical gradient in bands: cheap and calm
            t = i / (steps - 1)
            color = (int(40 + 30 * t), int(70 + 40 * t), int(120 + 50 * t))
            draw.rectangle((x1, y1 + (y2 - y1) * i // steps, x2, y1 + (y2 - y1) * (i + 1) // steps), fill=color)
        draw.ellipse((x2 - m.px(160), y1 + m.px(420), x2 + m.px(80), y1 + m.px(660)), fill=(70, 110, 165))
    return paint


def build(phone: Phone, m: Metrics) -> Widget:
    rom = phone.scenario.layout
    page = min(phone.launcher_page, PAGES - 1)
    if rom == "miui":
        return _miui(phone, m, page)
    lid = "com.android.launcher3:id/"
    root = Widget("android.widget.FrameLayout", (0, 0, m.width, m.height), paint=_wallpaper(m), rid=lid + "launcher")
    layer = Widget("android.widget.FrameLayout", (0, 0, m.width, m.height), rid=lid + "drag_layer")
    workspace = Widget("android.widget.ScrollView", m.box(0, m.status_dp, 360, 600), rid=lid + "workspace",
                       scrollable=True)
    qsb = Widget("android.widget.FrameLayout", m.box(12, m.status_dp + 2, 336, 28),
                 rid=lid + "search_container_workspace")
    qsb.add(Widget("android.widget.TextView", m.box(16, m.status_dp + 3, 328, 26), text="搜索",
                   rid=lid + "btn_qsb_search", clickable=True, focusable=True, on_tap=lambda: None,
                   bg=(255, 255, 255), radius=m.px(20), fg=SUBTLE, text_size=m.px(14), align="center"))
    workspace.add(qsb)
    for i, app in enumerate(PAGE_APPS[page]):
        col, row = i % COLUMNS, i // COLUMNS
        cell = text_view(m.box(col * CELL_W, ROW0 + row * CELL_H, CELL_W, CELL_H - 4), app.name, 0,
                         fg=(255, 255, 255), desc=app.name, clickable=True, on_tap=_opener(phone, app.package))
        cell.long_clickable = True
        cell.paint = _cell_painter(m, app)  # the label is drawn under the icon
        workspace.add(cell)
    layer.add(workspace, _page_dots(m, page, lid + "page_indicator"))
    dock = Widget("android.view.ViewGroup", m.box(0, 676, 360, 88), rid=lid + "hotseat")
    for i, app in enumerate(DOCK_APPS):
        dock.add(Widget("android.widget.TextView", m.box(i * CELL_W, 676, CELL_W, 88), text=app.name, desc=app.name,
                        clickable=True, focusable=True, long_clickable=True,
                        on_tap=_opener(phone, app.package), paint=icon_painter(app, m.px(ICON), m.px(16))))
    layer.add(dock)
    root.add(layer)
    return root


def _cell_painter(m: Metrics, app: AppInfo) -> Callable[[ImageDraw.ImageDraw, Widget], None]:
    icon = icon_painter(app, m.px(ICON), m.px(8))

    def paint(draw: ImageDraw.ImageDraw, w: Widget) -> None:
        icon(draw, w)
        x1, y1, x2, _ = w.bounds
        draw_label(draw, (x1, y1 + m.px(68), x2, y1 + m.px(86)), app.name, m.px(13), (255, 255, 255), "center")
    return paint


def _page_dots(m: Metrics, page: int, rid: str) -> Widget:
    def paint(draw: ImageDraw.ImageDraw, w: Widget) -> None:
        cx, cy = w.center
        r = m.px(3.5)
        for i in range(PAGES):
            x = cx + (i - (PAGES - 1) / 2) * m.px(16)
            fill = (255, 255, 255) if i == page else (150, 165, 190)
            draw.ellipse((x - r, cy - r, x + r, cy + r), fill=fill)

    return Widget("android.view.View", m.box(140, 648, 80, 20), rid=rid, desc=f"第 {page + 1} 页，共 {PAGES} 页",
                  paint=paint)


# ---------------------------------------------------------------- MIUI


def _miui_icon(phone: Phone, m: Metrics, app: AppInfo, x: float, y: float, titled: bool) -> list[Widget]:
    hid = "com.miui.home:id/"

    def paint(draw: ImageDraw.ImageDraw, w: Widget) -> None:
        draw_icon(draw, w.bounds, app)

    out = [Widget("android.widget.ImageView", m.box(x + (CELL_W - ICON) / 2, y + 8, ICON, ICON), rid=hid + "icon_icon",
                  desc=app.name, clickable=True, long_clickable=True, on_tap=_opener(phone, app.package),
                  paint=paint)]
    if titled:
        out.append(text_view(m.box(x, y + 68, CELL_W, 18), app.name, m.px(13), fg=(255, 255, 255), align="center",
                             rid=hid + "icon_title", clickable=True, on_tap=_opener(phone, app.package)))
        out[-1].long_clickable = True
    return out


def _miui(phone: Phone, m: Metrics, page: int) -> Widget:
    root = Widget("android.widget.FrameLayout", (0, 0, m.width, m.height), paint=_wallpaper(m))
    workspace = Widget("android.view.ViewGroup", m.box(0, m.status_dp, 360, 600), scrollable=True)
    for i, app in enumerate(PAGE_APPS[page]):
        col, row = i % COLUMNS, i // COLUMNS
        cell = Widget("android.widget.FrameLayout", m.box(col * CELL_W, ROW0 + row * CELL_H, CELL_W, CELL_H - 4))
        cell.add(*_miui_icon(phone, m, app, col * CELL_W, ROW0 + row * CELL_H, titled=True))
        workspace.add(cell)
    root.add(workspace)
    dots = Widget("android.widget.LinearLayout", m.box(140, 648, 80, 20))
    for i in range(PAGES):
        def paint(draw: ImageDraw.ImageDraw, w: Widget, on: bool = i == page) -> None:
            cx, cy = w.center
            r = m.px(3.5)
            draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=(255, 255, 255) if on else (150, 165, 190))
        dots.add(Widget("android.widget.ImageView", m.box(140 + 28 + i * 16, 648, 12, 20), desc=f"第{i + 1}屏",
                        clickable=True, paint=paint))
    root.add(dots)
    dock = Widget("android.view.ViewGroup", m.box(0, 676, 360, 88))
    for i, app in enumerate(DOCK_APPS):
        dock.add(*_miui_icon(phone, m, app, i * CELL_W, 684, titled=False))
    root.add(dock)
    return root
