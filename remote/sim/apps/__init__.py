"""The simulated apps: which exist, what each screen looks like, how keys reach them.

`compose(phone, metrics)` builds the whole screen tree for the phone's state:
the foreground app's screen (or its 加载中 spinner), the status bar, the
gesture strip, and any dialog or popup on top. Apps are written against the
`host.Phone` protocol, so this package never imports the phone.
"""

from __future__ import annotations

import time

from remote.sim.apps import chrome, launcher, settings, wechat, wechat_overlays
from remote.sim.apps.common import back_button, nav_handle, spinner_content, status_bar, text_view
from remote.sim.apps.host import Phone
from remote.sim.apps.icons import AppInfo
from remote.sim.widgets import Metrics, Widget

WECHAT = wechat.PACKAGE
SETTINGS = settings.PACKAGE
CHROME = chrome.PACKAGE
LAUNCHER_PAGES = launcher.PAGES
LAUNCHERS = frozenset(launcher.PACKAGES.values())
PERMISSION_COMPONENT = wechat_overlays.PERMISSION_COMPONENT

APPS: dict[str, AppInfo] = {app.package: app for app in launcher.ALL_APPS}

_MODULES = {WECHAT: wechat, SETTINGS: settings, CHROME: chrome}


def version_name(phone: Phone, package: str) -> str:
    """What ``dumpsys package`` says: WeChat the scenario's release (``random``, a release newer than any
    listed: 8.0.99), Settings the Android release, the others 1.0."""
    if package == WECHAT:
        version = phone.scenario.versions.get("wechat", "")
        return "8.0.99" if version == "random" else version
    return "13" if package == SETTINGS else "1.0"


def launcher_package(rom: str) -> str:
    """``com.android.launcher3`` on AOSP, ``com.miui.home`` on MIUI."""
    return launcher.PACKAGES[rom]


def activity_of(phone: Phone, package: str, screen: str) -> str:
    if package in LAUNCHERS:
        return launcher.activity(phone.scenario.layout)
    if package == SETTINGS:
        return settings.activity(phone, screen)
    module = _MODULES.get(package)
    if module is wechat:
        return wechat.activity(screen)
    if module is chrome:
        return chrome.activity(screen)
    return APPS[package].activity if package in APPS else f"{package}.MainActivity"


def focus_package(phone: Phone, package: str, screen: str) -> str:
    """The package of the focused window: Settings' search belongs to another package on AOSP."""
    if package == SETTINGS:
        return settings.package_of(phone, screen)
    return package


def browser_loading(phone: Phone) -> bool:
    return time.monotonic() < phone.browser_loaded_at


def on_enter(phone: Phone) -> None:
    module = _MODULES.get(phone.foreground)
    if module is not None:
        module.on_enter(phone)


def on_scroll(phone: Phone, m: Metrics, dy_px: int) -> None:
    """A vertical swipe in an app: Settings scrolls its lists (the other apps' lists fit their screens)."""
    if phone.foreground == SETTINGS and not phone.loading:
        settings.scroll(phone, m, dy_px)


def on_editor_action(phone: Phone, code: int) -> None:
    module = _MODULES.get(phone.foreground)
    if module is not None:
        module.on_editor_action(phone, code)


def compose(phone: Phone, m: Metrics) -> Widget:
    package = phone.foreground
    root = Widget("android.widget.FrameLayout", (0, 0, m.width, m.height), package=package)
    top = m.status_dp
    if package in LAUNCHERS:
        root.add(launcher.build(phone, m))
        root.add(status_bar(m, None, dark_text=False), nav_handle(m, dark=False))
        return root
    if phone.loading:
        root.add(spinner_content(m, package, top))
    else:
        module = _MODULES.get(package)
        root.add(module.build(phone, m, phone.screen) if module else _generic(phone, m, package))
    root.add(status_bar(m, _status_color(package)), nav_handle(m))
    if not phone.loading and package == WECHAT:
        for overlay in wechat_overlays.overlays(phone, m):
            root.add(overlay)
    return root


def _status_color(package: str) -> tuple[int, int, int]:
    return (237, 237, 237) if package == WECHAT else (255, 255, 255)


def _generic(phone: Phone, m: Metrics, package: str) -> Widget:
    """Apps the simulation does not model: a title and a note."""
    app = APPS[package]
    root = Widget("android.widget.LinearLayout", m.box(0, m.status_dp, 360, m.content_bottom_dp - m.status_dp),
                  bg=(255, 255, 255))
    root.add(Widget("android.widget.FrameLayout", m.box(0, m.status_dp, 360, 56), bg=app.color))
    root.add(back_button(m, m.status_dp + 4, "", phone.back, color=(255, 255, 255)))
    root.add(text_view(m.box(56, m.status_dp + 8, 240, 40), app.name, m.px(20), fg=(255, 255, 255),
                       rid="android:id/title"))
    root.add(text_view(m.box(16, 140, 328, 30), f"模拟应用：{app.name}", m.px(16), align="center",
                       fg=(120, 120, 120)))
    return root
