"""The per-session allow list (the seed's ``request_access``) and the names apps go by.

An agent declares the apps it will work in; every acting tool checks the app in
front before it touches the phone and refuses, naming the app and what to do,
when that app is not allowed. The home screen and the system's own surfaces
(status bar, permission dialogs) stay allowed: they are how apps are opened and
how an allowed app asks for its permissions. `remote.mcp.gated.GatedDevice`
applies the gate to every act (the tools' and the whole-task runner's), before
and after it. Some packages are never force-stopped (`CRITICAL_PACKAGES`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

from remote.apps import AppModule, ModuleRegistry
from remote.errors import ActionError

logger = logging.getLogger(__name__)

# The launchers of common ROMs (the home screen is how apps open), and the system's own surfaces.
LAUNCHERS = frozenset({
    "com.android.launcher", "com.android.launcher3", "com.google.android.apps.nexuslauncher", "com.miui.home",
    "com.huawei.android.launcher", "com.sec.android.app.launcher", "com.oppo.launcher", "com.bbk.launcher2",
    "net.oneplus.launcher", "com.hihonor.android.launcher",
})
SYSTEM_PACKAGES = frozenset({
    "android", "com.android.systemui", "com.android.permissioncontroller", "com.google.android.permissioncontroller",
    *LAUNCHERS,
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


    def refuse_stop(self, package: str) -> None:
        """Raise `AccessDenied` for packages whose force-stop breaks the phone itself (not only one app)."""
        if package in CRITICAL_PACKAGES or package in self.system or package.startswith(CRITICAL_PREFIXES):
            raise AccessDenied(f"{package} is part of the phone itself (system UI, home screen, telephony or "
                               "system services); refusing to force-stop it",
                               hint="stop_app is for apps; press HOME or BACK to leave a screen")


# Force-stopping these takes the phone's own UI or services down, whoever allowed what.
CRITICAL_PACKAGES = frozenset({
    "com.android.phone", "com.android.server.telecom", "com.android.shell", "com.android.bluetooth",
    "com.android.nfc", "com.android.networkstack", "com.google.android.networkstack", "com.android.se",
    "com.google.android.gms", "com.google.android.gsf", "com.android.inputmethod.latin",
    "com.google.android.inputmethod.latin", "com.android.adbkeyboard", "com.android.keychain",
})
CRITICAL_PREFIXES = ("com.android.providers.", "com.android.server.")
