"""App tools: open an app by name (the modules' names and aliases), list, stop, open a URL.

Opening an app is gated by the app asked for, not by the one in front: the
allow list says where the agent may work, and opening is how it gets there.
"""

from __future__ import annotations

import re
import time
from urllib.parse import urlsplit

from remote.errors import ActionError
from remote.mcp import deadline
from remote.mcp.access import resolve_app
from remote.mcp.session import Session

SETTLE_S = 5.0


def installed_packages(session: Session, third_party_only: bool = False) -> list[str]:
    args = ["pm", "list", "packages"] + (["-3"] if third_party_only else [])
    out = session.adb.shell(args)
    return sorted({line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("package:")})


def list_apps(session: Session) -> str:
    """Apps with a module (names the agent can use with open_app), then the installed packages."""
    lines = ["Apps remote knows (open_app accepts any of these names, or the package):"]
    installed = installed_packages(session)
    for m in sorted(session.registry.modules.values(), key=lambda m: m.name):
        if not m.package or m.default:
            continue
        names = ", ".join(dict.fromkeys(n for n in (m.display_name, m.name) if n))
        mark = "" if m.package in installed else " (not installed)"
        allowed = "allowed" if session.gate.allows(m.package) else "not allowed yet"
        lines.append(f"- {names}: {m.package}{mark}, {allowed}")
    lines.append(f"Installed packages ({len(installed)}): " + ", ".join(installed))
    return "\n".join(lines)


def open_app(session: Session, name: str) -> str:
    package = _package(session, name)
    session.device.launch_app(package)      # checks the app asked for, and the app in front afterwards
    session.acted()
    front = _wait_front(session, package)
    if front == package:
        session.journal.launched(package)
    if front != package:
        return f"asked {package} to start; {front or 'nothing'} is in front after {SETTLE_S:g} s"
    return f"opened {package} ({name})" if name != package else f"opened {package}"


def stop_app(session: Session, name: str) -> str:
    package = _package(session, name)
    session.gate.refuse_stop(package)
    session.gate.check(package, f"stop {package}", in_front=False)
    session.adb.shell(["am", "force-stop", package])
    session.acted()
    session.journal.unsaveable()
    return f"stopped {package}; {session.front().get('package') or 'nothing'} is in front now"


def open_url(session: Session, url: str) -> str:
    """http(s) only: other schemes (tel:, sms:, intent:) reach apps the allow list has not seen."""
    parts = urlsplit((url or "").strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or re.search(r"\s", url.strip()):
        raise ActionError(f"only http(s) URLs can be opened, not {url!r}",
                          hint="use open_app for apps; calls and messages are not opened from URLs")
    with session.device.acting("open a URL", launches=True):    # the app it opens in must be allowed too
        session.adb.open_url(url.strip())
    session.acted()
    session.journal.opened(url.strip())
    front = session.front().get("package", "")
    return f"opened {url.strip()} in {front or 'an unknown app'}"


def _package(session: Session, name: str) -> str:
    try:
        return resolve_app(name, session.registry)
    except ActionError:
        return resolve_app(name, session.registry, installed_packages(session))


def _wait_front(session: Session, package: str) -> str:
    until = time.monotonic() + SETTLE_S
    front = ""
    while time.monotonic() < until:
        front = session.front().get("package", "")
        if front == package or "permissioncontroller" in front:   # a permission dialog over the app
            return front
        deadline.current().sleep(0.2)
    return front
