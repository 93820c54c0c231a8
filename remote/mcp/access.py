"""The per-session allow list (the seed's ``request_access``) and the names apps go by.

An agent declares the apps it will work in; every acting tool checks the app in
front before it touches the phone and refuses, naming the app and what to do,
when that app is not allowed. The home screen and the system's own surfaces
(status bar, permission dialogs) stay allowed: they are how apps are opened and
how an allowed app asks for its permissions. `GatedDevice` applies the same
check to everything the whole-task runner does.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from typing import Any

from remote.apps import AppModule, ModuleRegistry
from remote.errors import ActionError

logger = logging.getLogger(__name__)

# Surfaces of the system itself, and the launchers of common ROMs (the home screen is how apps open).
SYSTEM_PACKAGES = frozenset({
    "android", "com.android.systemui", "com.android.permissioncontroller",
    "com.google.android.permissioncontroller", "com.android.launcher", "com.android.launcher3",
    "com.google.android.apps.nexuslauncher", "com.miui.home", "com.huawei.android.launcher",
    "com.sec.android.app.launcher", "com.oppo.launcher", "com.bbk.launcher2", "net.oneplus.launcher",
    "com.hihonor.android.launcher",
})
_PACKAGE = re.compile(r"[A-Za-z][\w]*(\.[A-Za-z_][\w]*)+")


class AccessDenied(ActionError):
    """The app in front (or the app asked for) is not on the session's allow list."""


def resolve_app(name: str, registry: ModuleRegistry, installed: Iterable[str] = ()) -> str:
    """The package an app name means: ``"微信"``, ``"WeChat"``, ``"wechat"`` and ``"com.tencent.mm"`` all
    give ``com.tencent.mm``. Module names, display names and keywords are known; a package name is taken
    as it is."""
    text = (name or "").strip()
    if not text:
        raise ActionError("no app named", hint="pass an app name (微信) or a package (com.tencent.mm)")
    if _PACKAGE.fullmatch(text):
        return text
    key = text.casefold()
    modules = [m for m in registry.modules.values() if m.package]
    for test in (_named, _displayed, _keyword):
        hits = [m for m in modules if test(m, key)]
        if len(hits) == 1:
            return hits[0].package
        if len(hits) > 1:
            raise ActionError(f"{text!r} could mean {', '.join(m.package for m in hits)}",
                              hint="pass the package name")
    matches = [p for p in installed if key in p.casefold()]
    if len(matches) == 1:
        return matches[0]
    known = ", ".join(f"{m.display_name or m.name} ({m.package})" for m in modules)
    raise ActionError(f"no app called {text!r} is known", hint=f"known apps: {known}; or pass a package "
                                                             "name from list_apps")


def _named(module: AppModule, key: str) -> bool:
    return module.name.casefold() == key


def _displayed(module: AppModule, key: str) -> bool:
    display = module.display_name.casefold()
    return display == key or any(part == key for part in display.split())


def _keyword(module: AppModule, key: str) -> bool:
    return any(k.casefold() == key for k in module.keywords)


class AccessGate:
    """Which packages the agent may act in. ``AccessGate({"*"})`` allows every app."""

    def __init__(self, allowed: Iterable[str] = (), system: Iterable[str] = SYSTEM_PACKAGES) -> None:
        self.allowed: set[str] = set(allowed)
        self.system = set(system)

    @property
    def open(self) -> bool:
        return "*" in self.allowed

    def grant(self, packages: Iterable[str]) -> None:
        self.allowed.update(packages)

    def allows(self, package: str) -> bool:
        return self.open or package in self.allowed or package in self.system

    def check(self, package: str, doing: str = "act", *, in_front: bool = True) -> None:
        """Raise `AccessDenied` unless ``package`` (the app in front, or with ``in_front=False`` the app
        asked for) may be acted in."""
        if self.allows(package):
            return
        if not package:
            raise AccessDenied(f"cannot tell which app is in front, so cannot {doing}",
                               hint="the phone may be locked or between screens: take a screenshot")
        granted = ", ".join(sorted(self.allowed)) or "none yet"
        where = "is in front and " if in_front else ""
        raise AccessDenied(f"{package} {where}is not in this session's allowed apps ({granted}); "
                           f"refusing to {doing}",
                           hint=f"call request_access(apps=[\"{package}\"]) first"
                                + (", or open an allowed app" if in_front else ""))


class GatedDevice:
    """An ADBController whose acting methods first check the app in front against the gate.

    Reading methods (screenshot, UI dump, sizes) pass straight through.
    """

    _FRONT_CHECKED = ("tap", "long_press", "swipe", "swipe_direction", "input_text", "clear_text",
                      "press_back", "call")

    def __init__(self, adb: Any, gate: AccessGate, on_act: Callable[[], None] | None = None) -> None:
        self._adb = adb
        self._gate = gate
        self._on_act = on_act

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._adb, name)
        if name in self._FRONT_CHECKED and callable(attr):
            def checked(*args: Any, **kwargs: Any) -> Any:
                self.check_front(name.replace("_", " "))
                return attr(*args, **kwargs)
            return checked
        return attr

    def check_front(self, doing: str) -> None:
        self._gate.check(self._adb.current_app().get("package", ""), doing)
        if self._on_act is not None:
            self._on_act()

    def input_keyevent(self, key: int | str) -> None:
        if str(key).upper().removeprefix("KEYCODE_") not in ("HOME", "3"):   # HOME leaves an app: always allowed
            self.check_front("press a key")
        self._adb.input_keyevent(key)

    def launch_app(self, package: str) -> None:
        self._gate.check(package, f"open {package}", in_front=False)
        if self._on_act is not None:
            self._on_act()
        self._adb.launch_app(package)

    def open_url(self, url: str) -> None:
        self.check_front("open a URL")
        self._adb.open_url(url)
