"""The simulated apps: which exist, what each screen looks like, how keys reach them.

`compose(phone, metrics)` builds the whole screen tree for the phone's state:
the foreground app's screen (or its 加载中 spinner), the status bar, the
gesture strip, and any dialog or popup on top.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from remote.sim.apps import chrome, launcher, settings, wechat
from remote.sim.apps.common import nav_handle, spinner_content, status_bar, text_view
from remote.sim.apps.icons import AppInfo
from remote.sim.widgets import Metrics, Widget

if TYPE_CHECKING:
    from remote.sim.phone import SimPhone

LAUNCHER = launcher.PACKAGE
WECHAT = wechat.PACKAGE
SETTINGS = settings.PACKAGE
CHROME = chrome.PACKAGE
LAUNCHER_PAGES = launcher.PAGES
PERMISSION_COMPONENT = wechat.PERMISSION_COMPONENT

APPS: dict[str, AppInfo] = {app.package: app for app in launcher.ALL_APPS}

_MODULES = {WECHAT: wechat, SETTINGS: settings, CHROME: chrome}


def activity_of(package: str, screen: str) -> str:
    if package == LAUNCHER:
        return launcher.ACTIVITY
    module = _MODULES.get(package)
    if module is not None:
        return module.activity(screen)
    return APPS[package].activity if package in APPS else f"{package}.MainActivity"


def browser_loading(phone: SimPhone) -> bool:
    return time.monotonic() < phone.browser_loaded_at


def on_show(phone: SimPhone, package: str) -> None:
    module = _MODULES.get(package)
    if module is not None and hasattr(module, "on_show"):
        module.on_show(phone)


def on_enter(phone: SimPhone) -> None:
    module = _MODULES.get(phone.foreground)
    if module is not None:
        module.on_enter(phone)


def on_editor_action(phone: SimPhone, code: int) -> None:
    module = _MODULES.get(phone.foreground)
    if module is not None:
        module.on_editor_action(phone, code)


def compose(phone: SimPhone, m: Metrics) -> Widget:
    package = phone.foreground
    root = Widget("android.widget.FrameLayout", (0, 0, m.width, m.height), package=package)
    top = m.status_dp
    if package == LAUNCHER:
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
        for overlay in wechat.overlays(phone, m):
            root.add(overlay)
    return root


def _status_color(package: str) -> tuple[int, int, int]:
    return (237, 237, 237) if package == WECHAT else (255, 255, 255)


def _generic(phone: SimPhone, m: Metrics, package: str) -> Widget:
    """Apps the simulation does not model: a title and a note."""
    from remote.sim.apps.common import back_button

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
