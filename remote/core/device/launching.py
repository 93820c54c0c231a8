"""Opening an app as its launcher icon does, without starting a Java program on the phone when it can.

``monkey -p PKG -c android.intent.category.LAUNCHER 1`` (adbutils' ``app_start``, Open-AutoGLM) starts
an app_process each time: 0.2-1 s on real phones (docs/adb.md#real-phones-behaviours-r1-r11, R11). Current Androids resolve the
launcher activity natively: ``cmd package resolve-activity --brief -a android.intent.action.MAIN -c
android.intent.category.LAUNCHER PKG`` prints the component on its last line (``No activity found``
otherwise), and ``am start -n COMPONENT`` (a script around ``cmd activity``) starts it with the flags a
launcher's tap uses (NEW_TASK | RESET_TASK_IF_NEEDED: an app already running comes to the front where
it was). The component is asked once per package; a phone that cannot answer (``cmd package`` is
Android 7+), a package with several launcher activities (the answer is the chooser), or a start that
fails, is launched with ``monkey`` as before.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from typing import Any

from remote.errors import DeviceCommandError

logger = logging.getLogger(__name__)
MAIN, LAUNCHER = "android.intent.action.MAIN", "android.intent.category.LAUNCHER"
LAUNCH_FLAGS = "0x10200000"     # FLAG_ACTIVITY_NEW_TASK | FLAG_ACTIVITY_RESET_TASK_IF_NEEDED
_COMPONENT = re.compile(r"([A-Za-z][\w.]*)/([\w.$]+)")


def launcher_component(answer: str, package: str) -> str | None:
    """The component ``resolve-activity --brief`` names for ``package`` (its last line), else None.

    >>> launcher_component("priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\\n"
    ...                    "com.tencent.mm/.ui.LauncherUI", "com.tencent.mm")
    'com.tencent.mm/.ui.LauncherUI'
    >>> launcher_component("No activity found", "x.y"), launcher_component("android/com.android.internal.app."
    ...                    "ResolverActivity", "x.y")
    (None, None)
    """
    lines = [line.strip() for line in answer.splitlines() if line.strip()]
    m = _COMPONENT.fullmatch(lines[-1]) if lines else None
    return m.group(0) if m is not None and m.group(1) == package else None


class AppLauncher:
    """``AppLauncher(shell, act, serial).launch("com.tencent.mm")``: ``shell`` reads, ``act`` changes the screen."""

    def __init__(self, shell: Callable[[Sequence[Any]], str], act: Callable[[Sequence[Any]], str],
                 serial: Callable[[], str] = str) -> None:
        self.shell, self.act, self.serial = shell, act, serial
        self._components: dict[str, str | None] = {}

    def launch(self, package: str) -> None:
        component = self.component(package)
        if component is not None:
            out = self.act(["am", "start", "-a", MAIN, "-c", LAUNCHER, "-f", LAUNCH_FLAGS, "-n", component])
            if "Error" not in out:
                return
            logger.info("am start %s failed (%s): launching with monkey", component, out.strip()[:200])
            self._components[package] = None
        out = self.act(["monkey", "-p", package, "-c", LAUNCHER, "1"])
        if "No activities found" in out or "not found" in out.lower():
            raise DeviceCommandError(f"app {package} is not installed or has no launcher activity",
                                     command="monkey", output=out, serial=self.serial())

    def component(self, package: str) -> str | None:
        """The package's launcher activity, asked once (None: launch with monkey)."""
        if package not in self._components:
            self._components[package] = launcher_component(self.shell(self.resolve_command(package)), package)
        return self._components[package]

    def known(self, package: str) -> bool:
        return package in self._components

    @staticmethod
    def resolve_command(package: str) -> list[str]:
        """The command that names ``package``'s launcher activity (asked ahead by a run that opens it)."""
        return ["cmd", "package", "resolve-activity", "--brief", "-a", MAIN, "-c", LAUNCHER, package]
