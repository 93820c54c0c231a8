"""A browser (`com.android.chrome`): a URL bar; ENTER or `am start -a VIEW -d URL` loads a page.

Chrome keeps its resource ids from release to release, and the sim uses the real
ones: ``toolbar``, ``url_bar`` (the omnibox EditText), ``tab_switcher_button``,
``menu_button``, and on the new tab page ``search_box_text`` (an EditText reading
搜索或输入网址; tapping it focuses the omnibox). A page shows a progress bar and
正在加载… for ``PAGE_LOAD_MS`` (at least the scenario's ``loading_ms``), then its title.
"""

from __future__ import annotations

import time
from urllib.parse import quote, urlparse

from remote.sim.apps.common import SUBTLE, paint_magnifier, paint_plus_circle, text_view
from remote.sim.apps.host import Phone
from remote.sim.widgets import Metrics, Widget

PACKAGE = "com.android.chrome"
ID = "com.android.chrome:id/"
PAGE_LOAD_MS = 300
TITLES = {"example.com": "Example Domain", "www.example.com": "Example Domain", "baidu.com": "百度一下，你就知道",
          "www.baidu.com": "百度一下，你就知道", "m.baidu.com": "百度一下", "www.qq.com": "腾讯网"}


def activity(screen: str) -> str:
    return "com.google.android.apps.chrome.Main"


def normalize(text: str) -> str:
    """``example.com`` -> ``https://example.com``; words -> a search URL."""
    text = text.strip()
    if "://" in text:
        return text
    if " " not in text and "." in text:
        return "https://" + text
    return "https://www.google.com/search?q=" + quote(text)


def title_of(url: str) -> str:
    parsed = urlparse(url)
    if parsed.netloc.endswith("google.com") and parsed.path == "/search":
        from urllib.parse import parse_qs

        return parse_qs(parsed.query).get("q", [""])[0] + " - Google 搜索"
    return TITLES.get(parsed.netloc, parsed.netloc or url)


def navigate(phone: Phone, url: str) -> None:
    phone.browser_url = normalize(url)
    phone.fields["chrome.url"] = ""
    phone.focus = None
    phone.browser_loaded_at = time.monotonic() + max(PAGE_LOAD_MS, phone.scenario.loading_ms) / 1000.0
    phone.changed()


def on_enter(phone: Phone) -> None:
    if phone.focus == "chrome.url" and phone.fields.get("chrome.url", "").strip():
        navigate(phone, phone.fields["chrome.url"])


def on_editor_action(phone: Phone, code: int) -> None:
    if code in (2, 3, 6):  # GO, SEARCH, DONE
        on_enter(phone)


def _focus_bar(phone: Phone) -> None:
    # Chrome selects the whole URL on focus, so what is typed next replaces it.
    phone.fields["chrome.url"] = ""
    phone.focus_field("chrome.url")


def build(phone: Phone, m: Metrics, screen: str) -> Widget:
    top = m.status_dp
    root = Widget("android.widget.LinearLayout", m.box(0, top, 360, m.content_bottom_dp - top),
                  bg=(255, 255, 255), package=PACKAGE)
    focused = phone.focus == "chrome.url"
    url = phone.browser_url or ""
    shown = phone.fields.get("chrome.url", "") if focused else url.split("://", 1)[-1]
    bar = Widget("android.widget.FrameLayout", m.box(0, top, 360, 56), rid=ID + "toolbar", bg=(255, 255, 255))
    bar.add(Widget("android.widget.EditText", m.box(12, top + 8, 256, 40), text=shown, hint="搜索或输入网址",
                   rid=ID + "url_bar", clickable=True, focusable=True, focused=focused, long_clickable=True,
                   on_tap=lambda: _focus_bar(phone), bg=(241, 243, 244), radius=m.px(20), text_size=m.px(15)))
    bar.add(Widget("android.widget.ImageButton", m.box(272, top + 8, 40, 40), desc="切换或关闭标签页",
                   rid=ID + "tab_switcher_button", clickable=True, focusable=True, on_tap=lambda: None,
                   border=(60, 60, 60), radius=m.px(6), text="", paint=None))
    bar.add(Widget("android.widget.ImageButton", m.box(316, top + 8, 40, 40), desc="更多选项", rid=ID + "menu_button",
                   clickable=True, focusable=True, on_tap=lambda: None, paint=paint_plus_circle((60, 60, 60))))
    root.add(bar)
    y = top + 64
    if not url:
        root.add(text_view(m.box(0, y + 120, 360, 40), "Google", m.px(30), align="center", fg=(66, 133, 244)))
        box = Widget("android.widget.EditText", m.box(24, y + 180, 312, 48), text="搜索或输入网址",
                     rid=ID + "search_box_text", clickable=True, focusable=True, on_tap=lambda: _focus_bar(phone),
                     bg=(241, 243, 244), radius=m.px(24), fg=SUBTLE, text_size=m.px(15))
        box.add(Widget("android.widget.ImageView", m.box(32, y + 190, 28, 28), paint=paint_magnifier(SUBTLE)))
        root.add(box)
    elif time.monotonic() < phone.browser_loaded_at:
        root.add(Widget("android.widget.ProgressBar", m.box(0, top + 56, 120, 3), rid=ID + "progress",
                        bg=(26, 115, 232)))
        root.add(text_view(m.box(0, y + 120, 360, 30), "正在加载…", m.px(16), fg=SUBTLE, align="center",
                           rid=ID + "loading_text"))
    else:
        title = title_of(url)
        web = Widget("android.webkit.WebView", m.box(0, y, 360, m.content_bottom_dp - y), text=title,
                     rid=ID + "web_contents", scrollable=True, focusable=True)
        web.add(text_view(m.box(16, y + 40, 328, 44), title, m.px(26), rid=""))
        web.add(text_view(m.box(16, y + 100, 328, 24), url, m.px(13), fg=(26, 115, 232)))
        web.add(text_view(m.box(16, y + 136, 328, 24), "这是模拟浏览器中打开的页面。", m.px(15), fg=(80, 80, 80)))
        root.add(web)
    return root
