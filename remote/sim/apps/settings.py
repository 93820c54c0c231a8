"""Settings (`com.android.settings`), drawn as the scenario's ROM draws it (`settings_pages`).

Ids are the ones real Settings dumps carry: ``android:id/title`` and ``android:id/summary``
in every row, the switch ``android:id/switch_widget`` (a Switch reading 开启/关闭, not
clickable itself: the row is) on AOSP and ``android:id/checkbox`` (a CheckBox) on MIUI,
``com.android.settings:id/recycler_view``, ``icon_frame``, ``android:id/icon``. The search
box opens a search screen (on AOSP it belongs to ``com.android.settings.intelligence``);
typing filters the index, and a result opens the page that holds it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from PIL import ImageDraw

from remote.sim.apps import settings_pages as pages
from remote.sim.apps.common import SUBTLE, paint_back_arrow, paint_magnifier, text_view
from remote.sim.apps.host import Phone
from remote.sim.widgets import Metrics, Widget

PACKAGE = "com.android.settings"
SEARCH_PACKAGE = "com.android.settings.intelligence"
ID = "com.android.settings:id/"
BLUE = (26, 115, 232)
ROW_H = 64.0
Painter = Callable[[ImageDraw.ImageDraw, Widget], None]


def activity(phone: Phone, screen: str) -> str:
    if screen == "search" and phone.scenario.layout == "aosp":
        return "com.android.settings.intelligence.search.SearchActivity"
    return "com.android.settings.Settings" if screen == "main" else "com.android.settings.SubSettings"


def package_of(phone: Phone, screen: str) -> str:
    return SEARCH_PACKAGE if screen == "search" and phone.scenario.layout == "aosp" else PACKAGE


def on_enter(phone: Phone) -> None:
    return None


def on_editor_action(phone: Phone, code: int) -> None:
    return None


def toggle(phone: Phone, key: str) -> None:
    state = phone.settings
    state[key] = not state.get(key, False)
    if key == "airplane" and state["airplane"]:  # airplane mode turns the radios off
        state["wlan"] = False
        state["bluetooth"] = False
    phone.changed()


def open_search(phone: Phone) -> None:
    phone.fields["settings.search"] = ""
    phone.push("search", focus="settings.search")


def open_result(phone: Phone, target: str) -> None:
    """Leave the search screen for the page that holds the result (the home page: back to it)."""
    phone.back()
    if target != "main":
        phone.push(target)


def build(phone: Phone, m: Metrics, screen: str) -> Widget:
    top = m.status_dp
    rom = phone.scenario.layout
    root = Widget("android.widget.LinearLayout", m.box(0, top, 360, m.content_bottom_dp - top), bg=(255, 255, 255),
                  package=package_of(phone, screen))
    if screen == "search":
        _search(phone, m, root)
        return root
    title, rows = pages.page(rom, screen)
    if screen == "main":
        y = _home_header(phone, m, root)
    else:
        y = _sub_header(phone, m, root, title)
    lst = Widget("androidx.recyclerview.widget.RecyclerView", m.box(0, y, 360, m.content_bottom_dp - y),
                 rid=ID + "recycler_view", scrollable=True, focusable=True)
    first = min(phone.app_state.get(_SCROLL + screen, 0), _last_first(m, rows, y))
    for row in rows[first:]:
        if y + ROW_H > m.content_bottom_dp:
            break
        lst.add(_row(phone, m, row, y))
        y += ROW_H
    root.add(lst)
    return root


_SCROLL = "settings.scroll."      # phone.app_state key: the first row a page's list shows


def _list_top(phone: Phone, m: Metrics, screen: str) -> float:
    top = m.status_dp
    if screen != "main":
        return top + 64
    return top + (56 if phone.scenario.layout == "miui" else 8) + 56


def _last_first(m: Metrics, rows: list[pages.Row], top: float) -> int:
    """The largest first row: the list's end sits at the bottom of the screen, and no further."""
    fits = max(1, int((m.content_bottom_dp - top) // ROW_H))
    return max(0, len(rows) - fits)


def scroll(phone: Phone, m: Metrics, dy_px: int) -> None:
    """A vertical swipe over a page: the finger up (``dy_px`` < 0) shows the rows below, a row per 64 dp moved."""
    screen = phone.screen
    if screen == "search":
        return
    rows = pages.page(phone.scenario.layout, screen)[1]
    key = _SCROLL + screen
    moved = round(-dy_px / m.density / ROW_H)
    first = max(0, min(phone.app_state.get(key, 0) + moved, _last_first(m, rows, _list_top(phone, m, screen))))
    if first != phone.app_state.get(key, 0):
        phone.app_state[key] = first
        phone.changed()


def _home_header(phone: Phone, m: Metrics, root: Widget) -> float:
    top, rom = m.status_dp, phone.scenario.layout
    y = top + 8
    if rom == "miui":
        root.add(text_view(m.box(24, top + 8, 300, 44), "设置", m.px(28)))
        y = top + 56
    box = Widget("android.widget.FrameLayout", m.box(16, y, 328, 44), rid=ID + "search_bar" if rom == "aosp" else "",
                 clickable=True, focusable=True, on_tap=lambda: open_search(phone), bg=(240, 242, 245),
                 radius=m.px(22))
    box.add(Widget("android.widget.ImageView", m.box(28, y + 8, 28, 28), paint=paint_magnifier(SUBTLE)),
            text_view(m.box(60, y, 240, 44), pages.SEARCH_HINT[rom], m.px(15), fg=SUBTLE,
                      rid=ID + "search_action_bar_title" if rom == "aosp" else ""))
    root.add(box)
    return y + 56


def _sub_header(phone: Phone, m: Metrics, root: Widget, title: str) -> float:
    top, aosp = m.status_dp, phone.scenario.layout == "aosp"
    bar = Widget("android.view.ViewGroup", m.box(0, top, 360, 56), rid=ID + "action_bar" if aosp else "")
    bar.add(Widget("android.widget.ImageButton", m.box(0, top + 4, 48, 48), desc="向上导航" if aosp else "返回",
                   clickable=True, focusable=True, on_tap=phone.back, paint=paint_back_arrow()),
            text_view(m.box(60, top + 4, 240, 48), title, m.px(20)))
    root.add(bar)
    return top + 64


def _row(phone: Phone, m: Metrics, row: pages.Row, y: float) -> Widget:
    aosp = phone.scenario.layout == "aosp"
    on_tap: Callable[[], None] = lambda: None  # noqa: E731
    if row.key:
        on_tap = partial(toggle, phone, row.key)    # the row is what toggles
    elif row.target:
        on_tap = partial(phone.push, row.target)
    out = Widget("android.widget.LinearLayout", m.box(0, y, 360, ROW_H), clickable=True, focusable=True,
                 on_tap=on_tap, paint=_divider(m))
    x = 16.0
    if row.icon:
        frame = Widget("android.widget.LinearLayout", m.box(16, y + 12, 40, 40), rid=ID + "icon_frame")
        frame.add(Widget("android.widget.ImageView", m.box(20, y + 16, 32, 32), rid="android:id/icon",
                         bg=(96, 110, 128), radius=m.px(16)))
        out.add(frame)
        x = 72.0
    summary = row.summary_for(phone)
    texts = Widget("android.widget.RelativeLayout", m.box(x, y, 280 - x, ROW_H))
    ty = y + (ROW_H - (40 if summary else 24)) / 2
    texts.add(text_view(m.box(x, ty, 280 - x, 24), row.title, m.px(16), rid="android:id/title"))
    if summary:
        texts.add(text_view(m.box(x, ty + 22, 280 - x, 18), summary, m.px(13), rid="android:id/summary", fg=SUBTLE))
    out.add(texts)
    if row.key:
        out.add(_switch(m, y, bool(phone.settings.get(row.key, False)), aosp))
    return out


def _switch(m: Metrics, y: float, on: bool, aosp: bool) -> Widget:
    frame = Widget("android.widget.LinearLayout", m.box(280, y, 72, ROW_H), rid="android:id/widget_frame")
    if aosp:
        widget = Widget("android.widget.Switch", m.box(292, y + 16, 52, 32), text="开启" if on else "关闭",
                        rid="android:id/switch_widget", checkable=True, checked=on, paint=_switch_painter(m))
    else:
        widget = Widget("android.widget.CheckBox", m.box(292, y + 16, 52, 32), rid="android:id/checkbox",
                        checkable=True, checked=on, paint=_switch_painter(m))
    frame.add(widget)
    return frame


def _divider(m: Metrics) -> Painter:
    def paint(draw: ImageDraw.ImageDraw, w: Widget) -> None:
        x1, _, x2, y2 = w.bounds
        draw.line([(x1 + m.px(16), y2 - 1), (x2, y2 - 1)], fill=(229, 229, 229), width=max(1, m.px(0.5)))
    return paint


def _switch_painter(m: Metrics) -> Painter:
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


# ---------------------------------------------------------------- search


def _search(phone: Phone, m: Metrics, root: Widget) -> None:
    top, rom = m.status_dp, phone.scenario.layout
    query = phone.fields.get("settings.search", "")
    sid = SEARCH_PACKAGE + ":id/" if rom == "aosp" else ""
    bar = Widget("android.widget.LinearLayout", m.box(0, top, 360, 56), rid=sid + "search_view" if sid else "")
    bar.add(Widget("android.widget.ImageButton", m.box(0, top + 4, 48, 48), desc="向上导航" if rom == "aosp" else "返回",
                   clickable=True, focusable=True, on_tap=phone.back, paint=paint_back_arrow()))
    bar.add(Widget("android.widget.EditText", m.box(52, top + 8, 296, 40), text=query, hint=pages.SEARCH_HINT[rom],
                   rid="android:id/search_src_text" if rom == "aosp" else "", clickable=True, focusable=True,
                   focused=phone.focus == "settings.search", long_clickable=True,
                   on_tap=lambda: phone.focus_field("settings.search"), bg=(240, 242, 245), radius=m.px(20),
                   text_size=m.px(16)))
    root.add(bar)
    y = top + 64
    if not query.strip():
        return
    found = pages.search(rom, query)
    if not found:
        root.add(text_view(m.box(0, y + 24, 360, 24), "无结果", m.px(14), fg=SUBTLE, align="center"))
        return
    results = Widget("androidx.recyclerview.widget.RecyclerView", m.box(0, y, 360, ROW_H * len(found)),
                     rid=sid + "list_results" if sid else "", scrollable=True)
    for title, target in found:
        row = Widget("android.widget.LinearLayout", m.box(0, y, 360, ROW_H), clickable=True, focusable=True,
                     on_tap=partial(open_result, phone, target), paint=_divider(m))
        row.add(text_view(m.box(16, y + 10, 328, 24), title, m.px(16), rid="android:id/title"),
                text_view(m.box(16, y + 34, 328, 18), pages.breadcrumb(rom, target), m.px(13), fg=SUBTLE,
                          rid=sid + "breadcrumb" if sid else "android:id/summary"))
        results.add(row)
        y += ROW_H
    root.add(results)
