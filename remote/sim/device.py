"""What the ADB server and the device shell need of a phone, and the system parts every phone shares.

`Phone` is the seam: the shell commands (`remote.sim.android`, `remote.sim.commands`)
and the device services (`remote.sim.service`, `remote.sim.sync`) use nothing else.
Two phones provide it: `remote.sim.phone.SimPhone` (apps made of widget trees we
draw) and `remote.sim.trace.TracePhone` (a DroidBot recording of a real app,
replayed). `BasePhone` holds what does not depend on the screen: the scenario's
link faults, the filesystem, input methods, system switches, the clipboard, the command log::

    phone.screencap(png=True)      # bytes of the current screen (PNG, or raw RGBA with a 16-byte header)
    phone.dump_xml()               # the `uiautomator dump` of it
    phone.tap(540, 960); phone.key(4); phone.type_text("hi"); phone.launch("com.sina.weibo")
"""

from __future__ import annotations

import threading
from typing import Any, Protocol

from remote.sim import clipboard, roms
from remote.sim.fs import FakeFS
from remote.sim.realism import Hardware
from remote.sim.scenario import Scenario
from remote.sim.tree_server import TreeServerState

LATIN_IME = "com.android.inputmethod.latin/.LatinIME"
ADB_IME = "com.android.adbkeyboard/.AdbIME"
SYSTEM_PACKAGES = ("com.android.systemui", "com.android.permissioncontroller", "com.android.inputmethod.latin",
                   clipboard.PACKAGE)
# Key codes that type a character (`input keyevent 29` types "a").
KEY_CHARS = {**{7 + i: str(i) for i in range(10)}, **{29 + i: chr(97 + i) for i in range(26)},
             62: " ", 55: ",", 56: ".", 69: "-", 70: "=", 76: "/", 77: "@", 81: "+"}


class Phone(Protocol):
    """Everything the shell and the ADB services touch (see the module docstring)."""

    serial: str
    sdk: str
    scenario: Scenario
    size: tuple[int, int]
    lock: threading.RLock
    fs: FakeFS
    ime: str
    imes_installed: list[str]
    imes_enabled: list[str]
    settings: dict[str, bool]
    clipboard: str | None
    commands: list[str]
    volume: int                    # the media volume, 0-15 (`dumpsys audio`)
    shell_connections: int
    gone: bool
    reboots: int
    hw: Hardware
    tree_server: TreeServerState
    adbkeyboard_lost: int          # broadcasts ADBKeyboard will still miss (an old build right after `ime set`)
    device_list_reads: int         # how often the adb server listed this phone (for device_state_polls)

    @property
    def version(self) -> int: ...

    @property
    def density_dpi(self) -> int: ...
    def properties(self) -> dict[str, str]: ...
    def device_state(self) -> str: ...
    def packages(self) -> list[str]: ...
    def version_name(self, package: str) -> str | None: ...
    def changed(self) -> None: ...
    def snapshot(self) -> dict[str, Any]: ...
    # the screen
    def screencap(self, png: bool) -> bytes: ...
    def dump_xml(self, compressed: bool = False) -> str: ...
    def focus_component(self) -> str: ...
    def launcher_activity(self, package: str) -> str | None: ...
    def keyboard_shown(self) -> bool: ...
    # input
    def tap(self, x: int, y: int) -> None: ...
    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> None: ...
    def key(self, code: int) -> None: ...
    def type_text(self, text: str) -> bool: ...
    def clear_text(self) -> None: ...
    def editor_action(self, code: int) -> None: ...
    # apps
    def launch(self, package: str) -> bool: ...
    def force_stop(self, package: str) -> None: ...
    def open_url(self, url: str) -> None: ...
    def home(self) -> None: ...


class BasePhone:
    """The system half of a phone: link faults, filesystem, IMEs, switches, the shell's bookkeeping.

    Subclasses provide the screen, the input events and the apps (the rest of `Phone`).
    """

    model = "SimPhone"
    product = "sim_phone"
    android_release = "13"
    sdk = "33"
    locale = "zh-CN"

    def __init__(self, scenario: Scenario, serial: str, size: tuple[int, int]) -> None:
        self.scenario = scenario
        self.serial = serial
        self.size = size
        self.lock = threading.RLock()
        self.fs = FakeFS()
        self._version = 0
        self.settings = {"wlan": True, "bluetooth": False, "airplane": False}
        self.imes_installed = [LATIN_IME] + ([ADB_IME] if scenario.adbkeyboard else [])
        self.imes_enabled = [LATIN_IME] + ([ADB_IME] if scenario.keyboard == "adbkeyboard" else [])
        self.ime = ADB_IME if scenario.keyboard == "adbkeyboard" else LATIN_IME
        self.adbkeyboard_lost = 0
        self.android_release, self.sdk = str(scenario.android), str(scenario.sdk)
        self.device_list_reads = 0
        self.clipboard: str | None = None      # set through the clipper helper's broadcasts (remote.sim.clipboard)
        self.volume = 7                         # the media volume, 0-15 (`dumpsys audio`; the volume keys move it)
        self.commands: list[str] = []
        self.shell_connections = 0
        self.gone = False
        self.reboots = 0
        self.hw = Hardware(scenario)          # power, keyguard, dumps, taps (remote.sim.realism)
        self.tree_server = TreeServerState(scenario)   # uiautomator2's resident server (remote.sim.tree_server)

    @property
    def density_dpi(self) -> int:
        return 440

    def changed(self) -> None:
        with self.lock:
            self._version += 1

    @property
    def version(self) -> int:
        """How often the screen changed (a tree server's cache is stale once it moves)."""
        return self._version

    def app_packages(self) -> list[str]:
        """The apps this phone has besides the system ones (subclasses list theirs)."""
        return []

    def packages(self) -> list[str]:
        """What ``pm list packages`` prints, sorted."""
        extra = {"com.android.adbkeyboard"} if ADB_IME in self.imes_installed else set()
        return sorted({*SYSTEM_PACKAGES, *self.app_packages()} | extra)

    def version_name(self, package: str) -> str | None:
        """``versionName`` of an installed package (``dumpsys package``); None when it is not installed."""
        return "1.0" if package in self.packages() else None

    def properties(self) -> dict[str, str]:
        """``getprop``'s values: the phone's own, then its ROM's identity (`remote.sim.roms`) and Android release."""
        return {**self._base_properties(), **roms.IDENTITIES[self.scenario.rom]}

    def device_state(self) -> str:
        """The phone's state on the adb server's list: the scenario's, until `device_state_polls` reads."""
        polls = self.scenario.device_state_polls
        if polls is not None and self.device_list_reads > polls:
            return "device"
        return self.scenario.device_state

    def _base_properties(self) -> dict[str, str]:
        w, h = self.size
        return {"ro.product.model": self.model, "ro.product.brand": "remote", "ro.product.name": self.product,
                "ro.product.device": "sim", "ro.product.manufacturer": "remote",
                "ro.build.version.release": self.android_release, "ro.build.version.sdk": self.sdk,
                "ro.serialno": self.serial, "ro.sf.lcd_density": str(self.density_dpi),
                "ro.product.cpu.abi": "arm64-v8a", "sys.boot_completed": "1", "ro.build.characteristics": "default",
                "persist.sys.locale": self.locale, "ro.sim.resolution": f"{w}x{h}"}
