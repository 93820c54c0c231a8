"""The home screen: two pages of app icons (swipe left/right), page dots and a dock.

An icon is one clickable TextView whose text and content-desc are the app's name,
as in Launcher3; dock icons have no label (content-desc only).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PIL import ImageDraw

from remote.sim.apps.common import text_view
from remote.sim.apps.icons import AppInfo, icon_painter
from remote.sim.widgets import Metrics, Widget

if TYPE_CHECKING:
    from remote.sim.phone import SimPhone

PACKAGE = "com.android.launcher3"
ACTIVITY = "com.android.launcher3.uioverride.QuickstepLauncher"

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


def _wallpaper(m: Metrics):
    def paint(draw: ImageDraw.ImageDraw, w: Widget) -> None:
        x1, y1, x2, y2 = w.bounds
        steps = 32
        for i in range(steps):  # a vertical gradient in bands: cheap and calm
            t = i / (steps - 1)
            color = (int(40 + 30 * t), int(70 + 40 * t), int(120 + 50 * t))
            draw.rectangle((x1, y1 + (y2 - y1) * i // steps, x2, y1 + (y2 - y1) * (i + 1) // steps), fill=color)
        draw.ellipse((x2 - m.px(160), y1 + m.px(420), x2 + m.px(80), y1 + m.px(660)), fill=(70, 110, 165))
    return paint


def build(phone: SimPhone, m: Metrics) -> Widget:
    root = Widget("android.widget.FrameLayout", (0, 0, m.width, m.height), paint=_wallpaper(m),
                  rid="com.android.launcher3:id/launcher")
    page = min(phone.launcher_page, PAGES - 1)
    workspace = Widget("android.widget.ScrollView", m.box(0, m.status_dp, 360, 600),
                       rid="com.android.launcher3:id/workspace", scrollable=True)
    for i, app in enumerate(PAGE_APPS[page]):
        col, row = i % COLUMNS, i // COLUMNS
        x, y = col * CELL_W, ROW0 + row * CELL_H
        cell = text_view(m.box(x, y, CELL_W, CELL_H - 4), "", m.px(13), fg=(255, 255, 255), desc=app.name,
                         clickable=True, on_tap=lambda p=app.package: phone.launch(p))
        cell.text = app.name
        cell.text_size = 0  # the label is drawn by `paint`, under the icon
        cell.long_clickable = True
        cell.paint = _cell_painter(m, app)
        workspace.add(cell)
    root.add(workspace)
    root.add(_page_dots(m, page))
    dock = Widget("android.view.ViewGroup", m.box(0, 676, 360, 88), rid="com.android.launcher3:id/hotseat")
    for i, app in enumerate(DOCK_APPS):
        cell = Widget("android.widget.TextView", m.box(i * CELL_W, 676, CELL_W, 88), desc=app.name,
                      clickable=True, focusable=True, long_clickable=True,
                      on_tap=lambda p=app.package: phone.launch(p),
                      paint=icon_painter(app, m.px(ICON), m.px(16)))
        dock.add(cell)
    root.add(dock)
    return root


def _cell_painter(m: Metrics, app: AppInfo):
    icon = icon_painter(app, m.px(ICON), m.px(8))

    def paint(draw: ImageDraw.ImageDraw, w: Widget) -> None:
        from remote.sim.render import draw_label

        icon(draw, w)
        x1, y1, x2, _ = w.bounds
        draw_label(draw, (x1, y1 + m.px(68), x2, y1 + m.px(86)), app.name, m.px(13), (255, 255, 255), "center")
    return paint


def _page_dots(m: Metrics, page: int) -> Widget:
    def paint(draw: ImageDraw.ImageDraw, w: Widget) -> None:
        cx, cy = w.center
        r = m.px(3.5)
        for i in range(PAGES):
            x = cx + (i - (PAGES - 1) / 2) * m.px(16)
            fill = (255, 255, 255) if i == page else (150, 165, 190)
            draw.ellipse((x - r, cy - r, x + r, cy + r), fill=fill)

    return Widget("android.view.View", m.box(140, 648, 80, 20), rid="com.android.launcher3:id/page_indicator",
                  desc=f"第 {page + 1} 页，共 {PAGES} 页", paint=paint)
