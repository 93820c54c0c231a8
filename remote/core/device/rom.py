"""Which ROM a phone runs, read from ``getprop``, and the switch each ROM hides behind a refusal.

Facts (docs/adb.md#real-phones-behaviours-r1-r11 and its sources): MIUI/HyperOS without 「USB调试（安全设置）」 and vivo
without 「USB模拟点击」 refuse injected input (INJECT_EVENTS); MIUI without that switch and
ColorOS with permission monitoring on refuse ``ime`` (WRITE_SECURE_SETTINGS). No source names a
switch for EMUI or One UI, so their steps say that plainly instead of inventing one.

ROM detection, in this order (a HyperOS phone also carries the MIUI property)::

    ro.mi.os.version.name      HyperOS   (OS1.0, OS2.0 ...)
    ro.miui.ui.version.name    MIUI      (V140 ...)
    ro.build.version.oplusrom  ColorOS   (older: ro.build.version.opporom)
    ro.vivo.os.version         vivo OriginOS / Funtouch OS
    ro.build.version.emui      EMUI      (EmotionUI_12.0.0)
    ro.build.version.oneui     One UI    (80500 = 8.5)
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass

INJECT_EVENTS = "INJECT_EVENTS"
WRITE_SECURE_SETTINGS = "WRITE_SECURE_SETTINGS"
DOCTOR = "then run `remote doctor` (`python -m remote doctor`) to check the rest of the phone"


class RomFamily(enum.StrEnum):
    HYPEROS = "hyperos"
    MIUI = "miui"
    COLOROS = "coloros"
    VIVO = "vivo"
    EMUI = "emui"
    ONEUI = "oneui"
    OTHER = "other"          # AOSP, Pixel, or a ROM none of the properties names


LABELS = {RomFamily.HYPEROS: "HyperOS", RomFamily.MIUI: "MIUI", RomFamily.COLOROS: "ColorOS",
          RomFamily.VIVO: "vivo OriginOS/Funtouch", RomFamily.EMUI: "EMUI", RomFamily.ONEUI: "One UI",
          RomFamily.OTHER: "Android"}
# (family, property) in the order they are looked at.
_MARKERS = ((RomFamily.HYPEROS, "ro.mi.os.version.name"), (RomFamily.MIUI, "ro.miui.ui.version.name"),
            (RomFamily.COLOROS, "ro.build.version.oplusrom"), (RomFamily.COLOROS, "ro.build.version.opporom"),
            (RomFamily.VIVO, "ro.vivo.os.version"), (RomFamily.EMUI, "ro.build.version.emui"),
            (RomFamily.ONEUI, "ro.build.version.oneui"))
PROPERTIES = tuple(dict.fromkeys(name for _, name in _MARKERS)) + (
    "ro.product.manufacturer", "ro.product.model", "ro.build.version.release", "ro.build.version.sdk")


@dataclass(frozen=True)
class Rom:
    """``Rom(RomFamily.MIUI, "V140", "Xiaomi", "13", 33).label == "MIUI V140 (Android 13)"``."""

    family: RomFamily
    version: str = ""
    manufacturer: str = ""
    android: str = ""
    sdk: int = 0

    @property
    def name(self) -> str:
        """``MIUI V140``; a phone no marker names goes by its maker (``Google Android``)."""
        if self.family is RomFamily.OTHER:
            return f"{self.manufacturer} Android" if self.manufacturer else "Android"
        return LABELS[self.family] + (f" {self.version}" if self.version else "")

    @property
    def label(self) -> str:
        return f"{self.name} (Android {self.android or '?'})"


def parse_getprop(output: str) -> dict[str, str]:
    """``getprop`` with no argument prints ``[name]: [value]`` lines.

    >>> parse_getprop("[ro.build.version.sdk]: [33]\\n[ro.miui.ui.version.name]: [V140]")
    {'ro.build.version.sdk': '33', 'ro.miui.ui.version.name': 'V140'}
    """
    return {m.group(1): m.group(2) for m in re.finditer(r"^\[([^\]]+)\]: \[(.*)\]\s*$", output, re.MULTILINE)}


def detect(props: Mapping[str, str]) -> Rom:
    """The ROM these properties describe (``RomFamily.OTHER`` when none of the markers is set)."""
    family, version = RomFamily.OTHER, ""
    for candidate, name in _MARKERS:
        value = props.get(name, "").strip()
        if value:
            family, version = candidate, value
            break
    if family is RomFamily.ONEUI and version.isdigit() and len(version) >= 5:
        number = int(version)
        version = f"{number // 10000}.{number // 100 % 100}"   # 80500 -> 8.5
    if family is RomFamily.EMUI:
        version = version.removeprefix("EmotionUI_")
    sdk = props.get("ro.build.version.sdk", "").strip()
    return Rom(family, version, props.get("ro.product.manufacturer", "").strip(),
               props.get("ro.build.version.release", "").strip(), int(sdk) if sdk.isdigit() else 0)


# ---------------------------------------------------------------- the switches

_MI_SWITCH = ("Settings → Additional settings → Developer options: turn on 「USB调试（安全设置）」 "
              "(\"USB debugging (Security settings)\"), besides 「USB调试」 itself")
_COLOROS_SWITCH = ("Settings → Additional settings → Developer options: turn on 「禁止权限监控」 "
                   "(\"Disable permission monitoring\")")
_VIVO_SWITCH = "Settings → Developer options: turn on 「USB模拟点击」 (allow simulated clicks over USB)"
_RECONNECT = "unplug the phone and plug it in again (or `adb kill-server`), then run the task again"
_SET_KEYBOARD = ("or make ADB Keyboard the phone's keyboard yourself (Settings → language & input → "
                 "on-screen keyboard): `remote` then types with it without switching")

# (family, permission) -> what to switch on. Where no source names a switch, the steps say so.
_STEPS: dict[tuple[RomFamily, str], tuple[str, ...]] = {
    (RomFamily.MIUI, INJECT_EVENTS): (_MI_SWITCH, _RECONNECT),
    (RomFamily.HYPEROS, INJECT_EVENTS): (_MI_SWITCH, _RECONNECT),
    (RomFamily.MIUI, WRITE_SECURE_SETTINGS): (_MI_SWITCH, _RECONNECT, _SET_KEYBOARD),
    (RomFamily.HYPEROS, WRITE_SECURE_SETTINGS): (_MI_SWITCH, _RECONNECT, _SET_KEYBOARD),
    (RomFamily.VIVO, INJECT_EVENTS): (_VIVO_SWITCH, _RECONNECT),
    (RomFamily.COLOROS, WRITE_SECURE_SETTINGS): (_COLOROS_SWITCH, _RECONNECT, _SET_KEYBOARD),
}
_WHAT = {INJECT_EVENTS: "taps, swipes and key presses from USB debugging",
         WRITE_SECURE_SETTINGS: "switching the keyboard from USB debugging"}


def steps(rom: Rom, permission: str) -> tuple[str, ...]:
    """What to do on this ROM when ``permission`` is refused, one step per string.

    >>> steps(Rom(RomFamily.COLOROS), WRITE_SECURE_SETTINGS)[0][:60]
    'Settings → Additional settings → Developer options: turn on '
    """
    known = _STEPS.get((rom.family, permission))
    if known:
        return known
    what = _WHAT.get(permission, f"a command that needs {permission}")
    unknown = (f"{LABELS[rom.family]} refuses {what}, and no switch for it on this ROM is known to `remote`: "
               "look in Developer options for a setting about USB debugging security or simulated input, "
               "turn it on, and turn USB debugging off and on again")
    return (unknown, _RECONNECT) + ((_SET_KEYBOARD,) if permission == WRITE_SECURE_SETTINGS else ())


def switch_name(rom: Rom, permission: str) -> str:
    """The switch's own name on this ROM (「USB调试（安全设置）」), or '' where none is known."""
    step = _STEPS.get((rom.family, permission), ("",))[0]
    m = re.search(r"「[^」]+」", step)
    return m.group(0) if m else ""


def hint(rom: Rom, permission: str) -> str:
    """The steps as one line, ending with the pointer to `remote doctor`."""
    return "; ".join(steps(rom, permission)) + "; " + DOCTOR
