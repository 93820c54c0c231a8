"""Which ADBKeyboard a phone has, whether it can work on that Android, and the keyboards it has on.

Facts, read in senzhk/ADBKeyBoard's history (docs/adb.md#real-phones-behaviours-r1-r11, R3):

* every build since 2020 says ``versionCode=2``, ``versionName=2.0``; the version fields cannot
  tell builds apart. What differs is ``minSdk``: the APK at the repository root (2023-11, marked
  "[Old]" in its README, the one most guides link) was built with ``minSdk=15``; the releases
  v2.2-dev ... v2.5-dev (2026) with ``minSdk=21``.
* before PR #84 (2026-04-23, release v2.5-dev, "With A16 fix") the broadcast receiver was
  registered when the keyboard's view was first created, without ``RECEIVER_EXPORTED``: the first
  text after ``ime set`` is often lost, and on Android 16 (SDK 36) nothing arrives at all.
  ``Broadcast completed: result=0`` is printed either way.
* so a ``minSdk=15`` build on Android 16 is known not to work; a ``minSdk=21`` build may be
  v2.4-dev (no fix) or v2.5-dev (fixed): only typing and reading the field back tells.

The keyboards a phone has on are read from ``settings get secure enabled_input_methods`` and
``default_input_method``, which need no permission (``ime list`` needs WRITE_SECURE_SETTINGS on
ColorOS and MIUI, §10 R2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from remote.core.device import ime

PACKAGE, IME_ID = ime.ADBKEYBOARD_PACKAGE, ime.ADBKEYBOARD_IME

FIXED_RELEASE = "v2.5-dev"
FIXED_URL = "https://github.com/senzhk/ADBKeyBoard/releases/download/v2.5-dev/keyboardservice-debug.apk"
ANDROID_16_SDK = 36
DEV_BUILD_MIN_SDK = 21
INSTALL_STEPS = (f"download ADBKeyboard {FIXED_RELEASE} ({FIXED_URL}; the APK at the repository's root is an old "
                 "build that receives nothing on Android 16)",
                 "`adb install -r keyboardservice-debug.apk`",
                 f"`adb shell ime enable {IME_ID}` (or switch it on in Settings → language & input)")


@dataclass(frozen=True)
class Build:
    """What ``dumpsys package com.android.adbkeyboard`` says of the installed build (``installed=False``: none)."""

    installed: bool
    version_name: str = ""
    version_code: int | None = None
    min_sdk: int | None = None
    target_sdk: int | None = None

    @property
    def family(self) -> str:
        """'the repository-root APK (2020-2023)', 'a 2026 release (v2.2-dev ... v2.5-dev)', or 'an unknown build'."""
        if self.min_sdk is None:
            return "an unknown build"
        if self.min_sdk < DEV_BUILD_MIN_SDK:
            return "the repository-root APK (2020-2023)"
        return "a 2026 release (v2.2-dev ... v2.5-dev)"

    @property
    def describe(self) -> str:
        if not self.installed:
            return "not installed"
        fields = [f"versionName {self.version_name or '?'}", f"versionCode {self.version_code}",
                  f"minSdk {self.min_sdk}"]
        return f"{self.family}: " + ", ".join(fields)

    def too_old_for(self, sdk: int) -> bool:
        """Known not to receive anything on this Android (the pre-2026 APK on Android 16)."""
        return self.installed and self.min_sdk is not None and self.min_sdk < DEV_BUILD_MIN_SDK \
            and sdk >= ANDROID_16_SDK

    def maybe_unfixed_for(self, sdk: int) -> bool:
        """A 2026 build on Android 16: v2.5-dev works, v2.4-dev receives nothing, and nothing printed tells which."""
        return self.installed and not self.too_old_for(sdk) and sdk >= ANDROID_16_SDK


def parse_build(output: str) -> Build:
    """The build from ``dumpsys package com.android.adbkeyboard``::

        Packages:
          Package [com.android.adbkeyboard] (3f2a1b):
            versionCode=2 minSdk=21 targetSdk=33
            versionName=2.0
    """
    if f"Package [{PACKAGE}]" not in output:
        return Build(installed=False)

    def number(name: str) -> int | None:
        m = re.search(rf"\b{name}=(\d+)", output)
        return int(m.group(1)) if m else None

    name = re.search(r"\bversionName=(\S+)", output)
    return Build(True, name.group(1) if name else "", number("versionCode"), number("minSdk"), number("targetSdk"))


@dataclass(frozen=True)
class Keyboards:
    """The phone's keyboards: the current one and the enabled ones, from ``settings get secure``."""

    current: str
    enabled: tuple[str, ...]

    @property
    def adbkeyboard_current(self) -> bool:
        return self.current == IME_ID

    @property
    def adbkeyboard_enabled(self) -> bool:
        return IME_ID in self.enabled


def parse_enabled(value: str) -> tuple[str, ...]:
    """``enabled_input_methods`` is ``id[;subtype…]:id…``: the ids, without subtypes.

    >>> parse_enabled("com.android.inputmethod.latin/.LatinIME;-921088104:com.android.adbkeyboard/.AdbIME")
    ('com.android.inputmethod.latin/.LatinIME', 'com.android.adbkeyboard/.AdbIME')
    """
    value = value.strip()
    if not value or value == "null":
        return ()
    return tuple(part.split(";", 1)[0] for part in value.split(":") if part.strip())
