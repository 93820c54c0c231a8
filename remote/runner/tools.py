"""What a step needs, handed in once per task: the phone, the locator, the checks, the clock, a person.

Also the two small helpers every part of a step uses: ``Capture`` (a screen and,
when asked, the UI tree of that screen state: `remote.runner.capture`) and ``Apps``
(what an app's name means on this phone).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

from remote.core.device.protocol import Device
from remote.core.records import FailureReason
from remote.errors import TaskError
from remote.runner.capture import Capture as Capture
from remote.runner.clock import Clock
from remote.runner.protocols import Checks, Locator, Person, VisionTier

logger = logging.getLogger(__name__)


class AppMissing(TaskError):
    """The task names an app this phone does not have (``final``: a known package, not installed)."""

    reason = FailureReason.APP_MISSING

    def __init__(self, message: str, *, hint: str = "", final: bool = True) -> None:
        super().__init__(message, hint=hint)
        self.final = final


@dataclass
class Apps:
    """What app names mean: known names -> packages (modules, templates), and what is installed."""

    device: Device
    packages_by_name: Mapping[str, str] = field(default_factory=dict)   # name people say -> package
    home_refs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)   # package -> its module's home markers
    launched: list[str] = field(default_factory=list)                   # packages this run launched, in order

    def package_for(self, name: str) -> str | None:
        wanted = name.strip().lower()
        return next((pkg for said, pkg in self.packages_by_name.items() if said.lower() == wanted), None)

    def name_of(self, package: str) -> str | None:
        return next((said for said, pkg in self.packages_by_name.items() if pkg == package), None)

    def require_installed(self, package: str, said: str | None = None) -> None:
        if package not in self.device.installed_packages():
            said = said or self.name_of(package)
            label = f"{said} ({package})" if said and said != package else package
            raise AppMissing(f"no app {label} on this phone: it is not installed",
                             hint="install it, or check the name with `adb shell pm list packages`")


@dataclass
class StepTools:
    """Everything a step may use, typed; built once per task by the TaskRunner."""

    device: Device
    locator: Locator
    checks: Checks
    clock: Clock
    person: Person
    capture: Capture
    apps: Apps
    vision: VisionTier | None = None
    dry_run: bool = False
    yes: bool = False
    module_package: str = ""        # the routed module's app (steps with stay_in_app must not leave it)
    home_refs: tuple[str, ...] = ()  # the routed module's home screen markers (back_to_home: any of them)
    sensitive_words: tuple[str, ...] = ()   # the routed module's own sensitive words
