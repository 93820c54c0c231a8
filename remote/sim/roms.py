"""What real phones of each ROM say that the simulated phone repeats: identity, refusals, ADBKeyboard builds.

Every text here is a real phone's, from the sources in docs/adb.md#real-phones-behaviours-r1-r11 (R1, R2, R3, R7):

* ``input`` refused (INJECT_EVENTS): MIUI/HyperOS without 「USB调试（安全设置）」, vivo without
  「USB模拟点击」. Android 11+ runs ``input`` as ``cmd input``, whose shell command prints
  ``Exception occurred while executing 'tap':`` and the exception (kkevsekk1/AutoX#1216, a vivo on
  OriginOS 4 / Android 14, exit code 255; droidrun/mobilerun-portal#5).
* ``ime`` refused (WRITE_SECURE_SETTINGS): every subcommand, checked before the subcommand is read,
  so the line says ``'ime'`` (zai-org/Open-AutoGLM#106, an OPPO). ``settings put secure`` answers
  the settings provider's own denial (whyakari/TermuxDisableProcces#1, a POCO).
* ADBKeyboard: see `remote.core.device.adbkeyboard` (not imported: the sim imports no product code).

What is not known, and drawn plainly: the exact model names and version strings below are ones of
the right shape, not a particular phone's; the stack traces are shortened to the frames the
sources show; how long an old ADBKeyboard takes to register its receiver after ``ime set`` (a
race on real phones) is modelled as "the first broadcast after the switch is lost".
"""

from __future__ import annotations

from remote.errors import ConfigError

# ROM -> the properties that identify it (docs/adb.md: the ROM detection list), and its Settings/launcher layout.
IDENTITIES: dict[str, dict[str, str]] = {
    "aosp": {},
    "miui": {"ro.product.manufacturer": "Xiaomi", "ro.product.brand": "Redmi", "ro.product.model": "22101317C",
             "ro.miui.ui.version.name": "V140", "ro.miui.ui.version.code": "14"},
    "hyperos": {"ro.product.manufacturer": "Xiaomi", "ro.product.brand": "Xiaomi", "ro.product.model": "23127PN0CC",
                "ro.miui.ui.version.name": "V816", "ro.miui.ui.version.code": "816",
                "ro.mi.os.version.name": "OS2.0", "ro.mi.os.version.code": "2"},
    "coloros": {"ro.product.manufacturer": "OPPO", "ro.product.brand": "OPPO", "ro.product.model": "PJZ110",
                "ro.build.version.oplusrom": "V14.0.0"},
    "originos": {"ro.product.manufacturer": "vivo", "ro.product.brand": "vivo", "ro.product.model": "V2309A",
                 "ro.vivo.os.version": "14.0", "ro.vivo.os.name": "OriginOS"},
    "emui": {"ro.product.manufacturer": "HUAWEI", "ro.product.brand": "HUAWEI", "ro.product.model": "NOH-AN00",
             "ro.build.version.emui": "EmotionUI_12.0.0"},
    "oneui": {"ro.product.manufacturer": "samsung", "ro.product.brand": "samsung", "ro.product.model": "SM-S9280",
              "ro.build.version.oneui": "60101"},
}
LAYOUTS = {"aosp": "aosp", "miui": "miui", "hyperos": "miui", "coloros": "aosp", "originos": "aosp",
           "emui": "aosp", "oneui": "aosp"}
ROMS = tuple(IDENTITIES)
KEYBOARDS = ("latin", "adbkeyboard")   # the keyboard the person chose: the default one, or ADB Keyboard
ANDROID_SDK = {10: 29, 11: 30, 12: 31, 13: 33, 14: 34, 15: 35, 16: 36}

INJECT_REFUSED = ("java.lang.SecurityException: Injecting input events requires the caller (or the source of the "
                  "instrumentation, if any) to have the INJECT_EVENTS permission.\n"
                  "\tat com.android.server.input.InputManagerService.injectInputEventToTarget("
                  "InputManagerService.java:1060)\n"
                  "\tat android.hardware.input.InputManagerGlobal.injectInputEvent(InputManagerGlobal.java:1234)\n"
                  "\tat com.android.server.input.InputShellCommand.injectMotionEvent(InputShellCommand.java:182)\n"
                  "\tat com.android.server.input.InputShellCommand.onCommand(InputShellCommand.java:236)\n"
                  "\tat com.android.modules.utils.BasicShellCommandHandler.exec(BasicShellCommandHandler.java:97)\n")
SECURE_SETTINGS_REFUSED = (
    "java.lang.SecurityException: uid 2000 does not have android.permission.WRITE_SECURE_SETTINGS.\n"
    "\tat android.app.ContextImpl.enforce(ContextImpl.java:2187)\n"
    "\tat android.app.ContextImpl.enforceCallingPermission(ContextImpl.java:2205)\n"
    "\tat com.android.server.inputmethod.InputMethodManagerService$ShellCommandImpl.onCommand("
    "InputMethodManagerService.java:5583)\n"
    "\tat com.android.modules.utils.BasicShellCommandHandler.exec(BasicShellCommandHandler.java:97)\n")
SETTINGS_PUT_REFUSED = (
    "java.lang.SecurityException: Permission denial: writing to settings requires:"
    "android.permission.WRITE_SECURE_SETTINGS\n"
    "\tat com.android.providers.settings.SettingsProvider.enforceWritePermission(SettingsProvider.java:2272)\n"
    "\tat com.android.providers.settings.SettingsService$MyShellCommand.putForUser(SettingsService.java:382)\n")


def executing(command: str, trace: str) -> str:
    """A shell command's exception as ``BasicShellCommandHandler`` prints it (stderr; exit status 255)."""
    return f"Exception occurred while executing '{command}':\n{trace}"


# ---------------------------------------------------------------- ADBKeyboard builds (senzhk/ADBKeyBoard)

# build -> (minSdk, targetSdk, has the receiver fix of PR #84). All say versionCode 2, versionName 2.0.
ADBKEYBOARD_BUILDS = {"v2.5-dev": (21, 33, True), "v2.4-dev": (21, 33, False), "root-2023": (15, 33, False)}


def dumpsys_package(build: str, installed: bool) -> str:
    """``dumpsys package com.android.adbkeyboard``, shortened to the lines that identify the build.

    What a real phone prints for a package that is not installed is not known here; the sim prints
    no ``Package [...]`` section then.
    """
    if not installed:
        return "Dexopt state:\n  Unable to find package: com.android.adbkeyboard\n"
    min_sdk, target_sdk, _ = ADBKEYBOARD_BUILDS[build]
    return ("Packages:\n  Package [com.android.adbkeyboard] (5d3c2a1):\n    userId=10234\n"
            "    codePath=/data/app/~~Qm9vaw==/com.android.adbkeyboard-c2ltcGxl==\n"
            f"    versionCode=2 minSdk={min_sdk} targetSdk={target_sdk}\n    versionName=2.0\n"
            "    flags=[ DEBUGGABLE HAS_CODE ALLOW_CLEAR_USER_DATA ALLOW_BACKUP ]\n")


def receiver_works(build: str, sdk: int) -> bool:
    """Whether this build's receiver can receive at all on this Android (the unfixed builds: not on 16)."""
    return ADBKEYBOARD_BUILDS[build][2] or sdk < ANDROID_SDK[16]


def first_broadcasts_lost(build: str) -> int:
    """Broadcasts lost right after ``ime set``: the unfixed builds register their receiver late."""
    return 0 if ADBKEYBOARD_BUILDS[build][2] else 1


# ---------------------------------------------------------------- device states on the adb server (R7)

STATES = ("device", "unauthorized", "offline", "no permissions")
NO_PERMISSIONS_LINE = ("no permissions (missing udev rules? user is in the plugdev group); "
                       "see [http://developer.android.com/tools/device.html]")
TRANSPORT_REFUSALS = {
    "unauthorized": ("device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS is not set\n"
                     "Try 'adb kill-server' if that seems wrong.\nOtherwise check for a confirmation dialog on your "
                     "device."),
    "offline": "device offline",
    "no permissions": ("insufficient permissions for device: missing udev rules? user is in the plugdev group\n"
                       "See [http://developer.android.com/tools/device.html] for more information"),
}


def check(scenario: object) -> None:
    """The real-phone keys of a scenario (`remote.sim.scenario.Scenario`); ConfigError naming the bad one."""
    def want(ok: bool, message: str) -> None:
        if not ok:
            raise ConfigError(message)

    get = scenario.__getattribute__
    want(get("rom") in ROMS, f"rom must be one of {', '.join(ROMS)}, not {get('rom')!r}")
    want(get("android") in ANDROID_SDK and not isinstance(get("android"), bool),
         f"android must be a release from {min(ANDROID_SDK)} to {max(ANDROID_SDK)}, not {get('android')!r}")
    for name in ("input_refused", "ime_refused"):
        want(isinstance(get(name), bool), f"{name} must be true or false, not {get(name)!r}")
    want(get("adbkeyboard_build") in ADBKEYBOARD_BUILDS,
         f"adbkeyboard_build must be one of {', '.join(ADBKEYBOARD_BUILDS)}, not {get('adbkeyboard_build')!r}")
    want(get("keyboard") in KEYBOARDS, f"keyboard must be one of {', '.join(KEYBOARDS)}, not {get('keyboard')!r}")
    want(get("keyboard") != "adbkeyboard" or get("adbkeyboard"), "keyboard: adbkeyboard needs adbkeyboard: true")
    want(get("device_state") in STATES, f"device_state must be one of {', '.join(STATES)}, not "
                                        f"{get('device_state')!r}")
    polls = get("device_state_polls")
    want(polls is None or (isinstance(polls, int) and not isinstance(polls, bool) and polls >= 1),
         f"device_state_polls must be null or a whole number >= 1, not {polls!r}")
