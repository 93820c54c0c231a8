"""Reading a refusal in what ``input``, ``ime``, ``am``, ``monkey``, ``pm`` and ``settings`` print.

A refused command still exits and prints; adb gives no status worth reading (docs/adb.md#the-shell-answers-with-text-not-a-status), so
the text is the verdict. The texts real phones print (docs/adb.md#real-phones-behaviours-r1-r11, R1, R2)::

    Exception occurred while executing 'tap':
    java.lang.SecurityException: Injecting input events requires the caller (or the source of the
    instrumentation, if any) to have the INJECT_EVENTS permission.          # MIUI/HyperOS, vivo (Android 11+)
    java.lang.SecurityException: Injecting to another application requires INJECT_EVENTS permission
                                                                             # the same, older Androids
    Exception occurred while executing 'ime':
    java.lang.SecurityException: uid 2000 does not have android.permission.WRITE_SECURE_SETTINGS.
                                                                             # ColorOS, MIUI: every `ime` subcommand
    Security exception: uid 2000 does not have android.permission.WRITE_SECURE_SETTINGS.   # Android 10's form

`read(command, output)` turns one of them into a `Refusal`; `error(refusal, rom, serial)` into the
error that names the switch to flip on that ROM.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from remote.core.device import rom as roms
from remote.errors import InputInjectionRefused, InputMethodPermission, PhoneRefused

READ = frozenset({"input", "ime", "am", "monkey", "pm", "settings", "cmd"})
_SECURITY = re.compile(r"(?:java\.lang\.SecurityException|Security exception): *([^\n]*)")
_COMMAND_START = re.compile(r"(?:^|[;&|]\s*)([\w./-]+)")


@dataclass(frozen=True)
class Refusal:
    """One refused command: what it was, the permission it lacked ('' when none is named), the phone's line."""

    command: str
    permission: str
    line: str

    @property
    def what(self) -> str:
        """``input tap`` -> 'the tap'; the kind of action, for a message."""
        words = self.command.split()
        words = words[1:] if words[:1] == ["cmd"] else words
        if words and words[0] == "input" and len(words) > 1:
            return {"tap": "taps", "swipe": "swipes", "keyevent": "key presses", "text": "`input text`"}.get(
                words[1], "input")
        return f"`{' '.join(words[:2])}`"


def programs(command: Sequence[object] | str) -> list[str]:
    """The programs a command line runs: ``"input tap 1 2 ; input tap 1 2"`` -> ['input', 'input']."""
    if not isinstance(command, str):
        return [str(command[0]).rsplit("/", 1)[-1]] if command else []
    return [name.rsplit("/", 1)[-1] for name in _COMMAND_START.findall(command)]


def read(command: Sequence[object] | str, output: str) -> Refusal | None:
    """The refusal in ``output``, when ``command`` runs one of the programs whose refusals we read.

    >>> read(["ime", "list", "-s"], "Exception occurred while executing 'ime':\\n"
    ...      "java.lang.SecurityException: uid 2000 does not have android.permission.WRITE_SECURE_SETTINGS.").permission
    'WRITE_SECURE_SETTINGS'
    >>> read(["input", "tap", 1, 2], "") is None
    True
    """
    if "ecurity" not in output or not READ.intersection(programs(command)):
        return None
    found = _SECURITY.search(output)
    if found is None:
        return None
    line = found.group(1).strip()
    permission = next((p for p in (roms.INJECT_EVENTS, roms.WRITE_SECURE_SETTINGS) if p in line), "")
    text = command if isinstance(command, str) else shlex.join(str(a) for a in command)
    return Refusal(text[:200], permission, line[:300])


def error(refusal: Refusal, rom: roms.Rom, serial: str | None = None) -> PhoneRefused:
    """The error for this refusal on this ROM: its message says what was refused, its hint what to switch on."""
    kind: type[PhoneRefused] = PhoneRefused
    message = f"the phone refused {refusal.what}: {refusal.line}"
    hint = f"{rom.label} refuses this command from USB debugging; {roms.DOCTOR}"
    if refusal.permission == roms.INJECT_EVENTS:
        kind, hint = InputInjectionRefused, roms.hint(rom, refusal.permission)
        message = (f"the phone refused {refusal.what} (INJECT_EVENTS): {rom.label} does not let USB debugging "
                   "touch the screen")
    elif refusal.permission == roms.WRITE_SECURE_SETTINGS:
        kind, hint = InputMethodPermission, roms.hint(rom, refusal.permission)
        message = (f"the phone refused {refusal.what} (WRITE_SECURE_SETTINGS): {rom.label} does not let USB "
                   "debugging switch the keyboard")
    return kind(message, permission=refusal.permission, command=refusal.command, rom=rom.family.value,
                output=refusal.line, serial=serial, hint=hint)
