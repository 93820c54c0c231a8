"""The pure readers of real phones' answers: ROM from getprop, refusals, ADBKeyboard builds, device states.

Each table row is a text a real phone printed (sources in docs/adb.md and docs/devices.md), not one
made up to pass; the end-to-end tests (test_real_phones.py) meet the same texts through the simulated phone.
"""

from __future__ import annotations

import pytest

from remote.core.device import adbkeyboard, refusals, screen_state, states
from remote.core.device import rom as roms
from remote.errors import DeviceNotReady, InputInjectionRefused, InputMethodPermission, PhoneRefused
from remote.sim import roms as sim_roms

MIUI_TAP = ("Exception occurred while executing 'tap':\njava.lang.SecurityException: Injecting input events requires "
            "the caller (or the source of the instrumentation, if any) to have the INJECT_EVENTS permission.\n"
            "\tat com.android.server.input.InputManagerService.injectInputEventToTarget(InputManagerService.java:1060)")
OLD_KEY = ("java.lang.SecurityException: Injecting to another application requires INJECT_EVENTS permission\n"
           "\tat android.os.Parcel.createException(Parcel.java:2075)")        # Android 10-era `input keyevent`
OPPO_IME = ("Exception occurred while executing 'ime':\njava.lang.SecurityException: uid 2000 does not have "
            "android.permission.WRITE_SECURE_SETTINGS.\n\tat android.app.ContextImpl.enforce(ContextImpl.java:2187)")
OPPO_IME_A10 = ("Security exception: uid 2000 does not have android.permission.WRITE_SECURE_SETTINGS.\n\n"
                "java.lang.SecurityException: uid 2000 does not have android.permission.WRITE_SECURE_SETTINGS.")
COLOROS_PM = "Security exception: adb clearing user data is forbidden.\n\njava.lang.SecurityException: adb clearing"


@pytest.mark.parametrize(("props", "family", "label"), [
    ({"ro.miui.ui.version.name": "V140", "ro.build.version.release": "13"}, roms.RomFamily.MIUI, "MIUI V140"),
    ({"ro.miui.ui.version.name": "V816", "ro.mi.os.version.name": "OS2.0"}, roms.RomFamily.HYPEROS, "HyperOS OS2.0"),
    ({"ro.build.version.oplusrom": "V14.0.0"}, roms.RomFamily.COLOROS, "ColorOS V14.0.0"),
    ({"ro.build.version.opporom": "V7.1"}, roms.RomFamily.COLOROS, "ColorOS V7.1"),
    ({"ro.vivo.os.version": "14.0"}, roms.RomFamily.VIVO, "vivo OriginOS/Funtouch 14.0"),
    ({"ro.build.version.emui": "EmotionUI_12.0.0"}, roms.RomFamily.EMUI, "EMUI 12.0.0"),
    ({"ro.build.version.oneui": "80500"}, roms.RomFamily.ONEUI, "One UI 8.5"),
    ({"ro.product.manufacturer": "Google"}, roms.RomFamily.OTHER, "Google Android"),
])
def test_the_rom_is_read_from_getprop(props, family, label):
    found = roms.detect(props)
    assert found.family is family and found.name == label and found.label.startswith(label + " (Android")


def test_every_simulated_rom_is_detected_as_itself():
    expected = {"aosp": "other", "miui": "miui", "hyperos": "hyperos", "coloros": "coloros", "originos": "vivo",
                "emui": "emui", "oneui": "oneui"}
    for rom, identity in sim_roms.IDENTITIES.items():
        assert roms.detect(identity).family.value == expected[rom]
    getprop = "[ro.build.version.sdk]: [36]\n[ro.mi.os.version.name]: [OS2.0]\n[ro.odd]: []\n"
    assert roms.parse_getprop(getprop) == {"ro.build.version.sdk": "36", "ro.mi.os.version.name": "OS2.0",
                                           "ro.odd": ""}


@pytest.mark.parametrize(("command", "output", "kind", "permission"), [
    (["input", "tap", 540, 1200], MIUI_TAP, InputInjectionRefused, "INJECT_EVENTS"),
    (["input", "keyevent", 3], OLD_KEY, InputInjectionRefused, "INJECT_EVENTS"),
    ("input tap 1 2 ; input tap 1 2", MIUI_TAP, InputInjectionRefused, "INJECT_EVENTS"),   # the MCP double tap
    (["ime", "list", "-s"], OPPO_IME, InputMethodPermission, "WRITE_SECURE_SETTINGS"),
    (["ime", "set", "x/.Y"], OPPO_IME_A10, InputMethodPermission, "WRITE_SECURE_SETTINGS"),
    (["pm", "clear", "com.coloros.calculator"], COLOROS_PM, PhoneRefused, ""),
])
def test_refusals_are_read_and_named(command, output, kind, permission):
    refusal = refusals.read(command, output)
    assert refusal is not None and refusal.permission == permission
    err = refusals.error(refusal, roms.Rom(roms.RomFamily.MIUI, "V140", "Xiaomi", "13", 33), "R58")
    assert type(err) is kind and err.serial == "R58" and err.rom == "miui"
    assert "remote doctor" in err.hint
    if permission:
        assert "「USB调试（安全设置）」" in err.hint


def test_output_that_is_not_a_refusal_is_left_alone():
    assert refusals.read(["input", "tap", 1, 2], "") is None
    assert refusals.read(["cat", "/sdcard/notes.txt"], MIUI_TAP) is None          # only the commands we read
    assert refusals.read(["am", "broadcast", "-a", "X"], "Broadcast completed: result=0") is None


@pytest.mark.parametrize(("family", "permission", "switch"), [
    (roms.RomFamily.MIUI, roms.INJECT_EVENTS, "「USB调试（安全设置）」"),
    (roms.RomFamily.HYPEROS, roms.WRITE_SECURE_SETTINGS, "「USB调试（安全设置）」"),
    (roms.RomFamily.VIVO, roms.INJECT_EVENTS, "「USB模拟点击」"),
    (roms.RomFamily.COLOROS, roms.WRITE_SECURE_SETTINGS, "「禁止权限监控」"),
    (roms.RomFamily.EMUI, roms.INJECT_EVENTS, ""),        # no source names a switch: the steps say so
    (roms.RomFamily.ONEUI, roms.WRITE_SECURE_SETTINGS, ""),
])
def test_each_rom_names_its_own_switch_or_says_none_is_known(family, permission, switch):
    rom = roms.Rom(family)
    assert roms.switch_name(rom, permission) == switch
    text = " ".join(roms.steps(rom, permission))
    assert (switch in text) if switch else "no switch for it on this ROM is known" in text


@pytest.mark.parametrize(("build", "sdk", "too_old", "unsure"), [
    ("root-2023", 33, False, False), ("root-2023", 36, True, False),
    ("v2.4-dev", 36, False, True), ("v2.5-dev", 36, False, True), ("v2.5-dev", 35, False, False),
])
def test_adbkeyboard_builds_are_told_apart_by_min_sdk(build, sdk, too_old, unsure):
    parsed = adbkeyboard.parse_build(sim_roms.dumpsys_package(build, installed=True))
    assert parsed.installed and parsed.version_code == 2 and parsed.version_name == "2.0"
    assert parsed.too_old_for(sdk) is too_old and parsed.maybe_unfixed_for(sdk) is unsure
    assert not adbkeyboard.parse_build(sim_roms.dumpsys_package(build, installed=False)).installed
    assert adbkeyboard.FIXED_RELEASE in " ".join(adbkeyboard.INSTALL_STEPS)


def test_enabled_keyboards_come_from_settings_without_permission():
    kb = adbkeyboard.Keyboards("com.android.adbkeyboard/.AdbIME",
                               adbkeyboard.parse_enabled("a.b/.Latin;-921088104:com.android.adbkeyboard/.AdbIME"))
    assert kb.adbkeyboard_current and kb.adbkeyboard_enabled and adbkeyboard.parse_enabled("null") == ()


@pytest.mark.parametrize(("state", "words"), [
    ("unauthorized", "accept the USB debugging prompt on the phone (and tick 'always allow'"),
    ("offline", "adb connect IP:PORT"),
    ("no", "udev"),                         # adbutils' first word of `no permissions (missing udev rules? …)`
    ("recovery", "boot it into Android normally"),
])
def test_device_states_say_what_to_do(state, words):
    err = states.not_ready("R58", state)
    assert isinstance(err, DeviceNotReady) and words in err.hint and err.exit_code == 2
    assert err.state == states.normalise(state)


def test_transport_refusals_name_the_state():
    for state, text in sim_roms.TRANSPORT_REFUSALS.items():
        assert states.from_transport_error(text) == state
    assert states.from_transport_error("closed") is None


@pytest.mark.parametrize("dump,shown", [
    ("  mShowRequested=true mShowExplicitlyRequested=false mShowForced=false mInputShown=true\n", True),
    ("Input method service state:\n  mCurMethodId=com.android.adbkeyboard/.AdbIME\n  mInputShown=false\n", False),
    ("Input method service state:\n  mCurMethodId=x/.Y\n", None),     # a dump without the line says nothing
    ("  mInputShownSomething=true\n", None),
])
def test_the_soft_keyboard_is_read_from_dumpsys_input_method(dump, shown):
    assert screen_state.keyboard_shown(dump) is shown
