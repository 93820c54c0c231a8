"""The phone's keyboards: the ``ime`` command, and ADBKeyboard's broadcast receiver.

``ime list|enable|disable|set|reset`` answer as Android's InputMethodManagerService shell
command does (refused on ColorOS with permission monitoring on, R2); ``receive`` is AdbIME's
receiver for the ``am broadcast`` actions (ADB_INPUT_TEXT, _B64, _CHARS, _CODE, ADB_EDITOR_CODE,
ADB_CLEAR_TEXT, ADB_ACTION_*), with the old builds' late receiver and Android 16 (`remote.sim.roms`).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import TYPE_CHECKING

from remote.sim import roms
from remote.sim.device import ADB_IME
from remote.sim.shell import Ctx

if TYPE_CHECKING:
    from remote.sim.device import Phone


def ime(ctx: Ctx, argv: list[str]) -> int:
    phone = ctx.phone
    sub, args = (argv[1] if len(argv) > 1 else ""), argv[2:]
    if phone.scenario.ime_refused:   # checked before the subcommand is read (roms: R2)
        ctx.err(roms.executing("ime", roms.SECURE_SETTINGS_REFUSED))
        return 255
    with phone.lock:
        if sub == "list":
            _ime_list(ctx, phone, args)
            return 0
        if sub in ("enable", "disable", "set") and args:
            return _ime_switch(ctx, phone, sub, args[-1])
        if sub == "reset":
            phone.imes_enabled = [phone.imes_installed[0]]
            phone.ime = phone.imes_installed[0]
            ctx.out(f"Reset current and enabled IMEs for user #0\n  Selected: {phone.ime}\n")
            phone.changed()
            return 0
    ctx.err("Usage: ime <command>:\n  list [-a] [-s]\n  enable [--user <USER_ID>] <ID>\n"
            "  disable [--user <USER_ID>] <ID>\n  set [--user <USER_ID>] <ID>\n  reset\n")
    return 255


def _ime_list(ctx: Ctx, phone: Phone, args: list[str]) -> None:
    """``ime list [-a] [-s]``: the enabled (``-a``: installed) input methods, ids only with ``-s``."""
    ids = phone.imes_installed if "-a" in args else phone.imes_enabled
    if "-s" in args:
        ctx.out("".join(i + "\n" for i in ids))
        return
    for i in ids:
        pkg, _, svc = i.partition("/")
        ctx.out(f"{i}:\n  mId={i} mSettingsActivity=null\n  Service:\n    "
                f"ServiceInfo:\n      name={pkg + svc if svc.startswith('.') else svc}\n      "
                f"packageName={pkg}\n")


def _ime_switch(ctx: Ctx, phone: Phone, sub: str, target: str) -> int:
    """``ime enable|disable|set ID``, as the phone answers them."""
    if target not in phone.imes_installed:
        verb = "selected" if sub == "set" else sub + "d"
        ctx.err(f"Unknown input method {target} cannot be {verb} for user #0\n")
        return 255 if sub == "set" else 0
    if sub == "enable":
        already = target in phone.imes_enabled
        if not already:
            phone.imes_enabled.append(target)
        ctx.out(f"Input method {target}: {'already enabled' if already else 'now enabled'} for user #0\n")
    elif sub == "disable":
        if target in phone.imes_enabled and len(phone.imes_enabled) > 1:
            phone.imes_enabled.remove(target)
            if phone.ime == target:
                phone.ime = phone.imes_enabled[0]
        ctx.out(f"Input method {target}: now disabled for user #0\n")
    else:
        if target not in phone.imes_enabled:
            ctx.err(f"Unknown input method {target} cannot be selected for user #0\n")
            return 255
        if target == ADB_IME and phone.ime != ADB_IME:   # a fresh AdbIME service: old builds are late
            phone.adbkeyboard_lost = roms.first_broadcasts_lost(phone.scenario.adbkeyboard_build)
        phone.ime = target
        ctx.out(f"Input method {target} selected for user #0\n")
    phone.changed()
    return 0


def receive(phone: Phone, action: str, extras: dict[str, str]) -> None:
    """AdbIME's receiver: registered only while ADBKeyboard is the current IME; old builds register it late
    (the first broadcast after `ime set` is lost) and not at all on Android 16 (`remote.sim.roms`)."""
    if not _listening(phone):
        return
    handler = _RECEIVES.get(action)
    if handler is not None:
        handler(phone, extras)
    elif action.startswith("ADB_ACTION_"):
        editor_code = {"GO": 2, "SEARCH": 3, "SEND": 4, "NEXT": 5, "DONE": 6}.get(action[len("ADB_ACTION_"):])
        if editor_code:
            phone.editor_action(editor_code)


def _listening(phone: Phone) -> bool:
    """Whether AdbIME's receiver gets this broadcast (a broadcast lost to a late registration is used up)."""
    if phone.ime != ADB_IME or ADB_IME not in phone.imes_installed:
        return False
    if not roms.receiver_works(phone.scenario.adbkeyboard_build, int(phone.sdk)):
        return False
    if phone.adbkeyboard_lost:
        phone.adbkeyboard_lost -= 1
        return False
    return True


def _input_text(phone: Phone, extras: dict[str, str]) -> None:
    if "msg" in extras:
        phone.type_text(extras["msg"])
    elif "mcode" in extras:
        codes = extras["mcode"].split(",")
        for code in codes[1::2]:
            if code.strip().isdigit():
                phone.key(int(code))


def _input_b64(phone: Phone, extras: dict[str, str]) -> None:
    if "msg" not in extras:
        return
    try:
        text = base64.b64decode(extras["msg"], validate=False).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        text = "NOT SUPPORTED"
    phone.type_text(text)


def _input_chars(phone: Phone, extras: dict[str, str]) -> None:
    if "chars" not in extras:
        return
    try:
        phone.type_text("".join(chr(int(c)) for c in extras["chars"].split(",") if c.strip()))
    except ValueError:
        pass


def _input_code(phone: Phone, extras: dict[str, str]) -> None:
    if extras.get("code", "").isdigit():
        phone.key(int(extras["code"]))


def _editor_code(phone: Phone, extras: dict[str, str]) -> None:
    if extras.get("code", "").isdigit():
        phone.editor_action(int(extras["code"]))


# AdbIME's broadcasts, by action (ADB_ACTION_GO/SEARCH/SEND/NEXT/DONE: an editor action each)
_RECEIVES: dict[str, Callable[[Phone, dict[str, str]], None]] = {
    "ADB_INPUT_TEXT": _input_text, "ADB_INPUT_B64": _input_b64, "ADB_INPUT_CHARS": _input_chars,
    "ADB_INPUT_CODE": _input_code, "ADB_EDITOR_CODE": _editor_code,
    "ADB_CLEAR_TEXT": lambda phone, extras: phone.clear_text()}
