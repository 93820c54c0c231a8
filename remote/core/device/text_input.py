"""Typing text on the phone: ADBKeyboard's Base64 broadcast (any language), plain `input text` for ASCII.

A mixin of ADBController (it uses ``self.shell``, ``self.dump_hierarchy`` and the
IME bookkeeping fields the controller sets up). The protocol facts and the state
file that restores a crashed run's keyboard are in ``adb_ime``.
"""

from __future__ import annotations

import atexit
import logging
from typing import Any

from remote.core.device import ime as adb_ime
from remote.errors import ActionError, DeviceCommandError, InputMethodMissing, InputMethodPermission

logger = logging.getLogger(__name__)
DEL_KEY, MOVE_END_KEY = 67, 123


class TextInput:
    serial: str
    operation_delay: float
    _adbkeyboard: bool | None
    _previous_ime: str | None
    _ime_switched: bool
    _atexit: bool
    _state_dir: str | None

    def shell(self, args: Any, timeout: float | None = None) -> str:  # provided by ADBController
        raise NotImplementedError

    def focused_text(self) -> str | None:  # provided by ADBController
        raise NotImplementedError

    def close(self) -> None:  # provided by ADBController
        raise NotImplementedError

    def _sleep(self, seconds: float) -> None:  # provided by ADBController
        raise NotImplementedError

    def has_adbkeyboard(self) -> bool:
        if self._adbkeyboard is None:
            out = self.shell(["ime", "list", "-a", "-s"])
            if adb_ime.permission_denied(out):
                raise InputMethodPermission("the phone refused to list input methods", serial=self.serial,
                                            hint=adb_ime.PERMISSION_HINT)
            self._adbkeyboard = adb_ime.ADBKEYBOARD_IME in adb_ime.ime_ids(out)
        return self._adbkeyboard

    def current_ime(self) -> str:
        return self.shell(["settings", "get", "secure", "default_input_method"]).strip()

    def _recover_stale_ime(self) -> None:
        state = adb_ime.ImeStateFile(self.serial, self._state_dir)
        previous = state.load()
        if not previous:
            return
        if self.current_ime() == adb_ime.ADBKEYBOARD_IME and previous != adb_ime.ADBKEYBOARD_IME:
            self.shell(["ime", "set", previous])
            logger.warning("an earlier run left ADBKeyboard active; restored input method %s", previous)
        state.clear()

    def _ensure_adbkeyboard(self) -> None:
        if self._ime_switched:
            return
        current = self.current_ime()
        if current == adb_ime.ADBKEYBOARD_IME:
            return
        for args in (["ime", "enable", adb_ime.ADBKEYBOARD_IME], ["ime", "set", adb_ime.ADBKEYBOARD_IME]):
            out = self.shell(args)
            if adb_ime.permission_denied(out):
                raise InputMethodPermission("the phone refused to switch to ADBKeyboard", serial=self.serial,
                                            hint=adb_ime.PERMISSION_HINT)
        if self.current_ime() != adb_ime.ADBKEYBOARD_IME:
            raise InputMethodPermission("ADBKeyboard did not become the active input method", serial=self.serial,
                                        hint=adb_ime.PERMISSION_HINT)
        self._previous_ime, self._ime_switched = current, True
        adb_ime.ImeStateFile(self.serial, self._state_dir).save(current)
        if not self._atexit:
            atexit.register(self.close)
            self._atexit = True

    def _broadcast(self, action: str, *extras: str) -> str:
        return self.shell(["am", "broadcast", "-a", action, *extras])

    def _type_adbkeyboard(self, text: str, clear: bool) -> None:
        if clear:
            self._broadcast("ADB_CLEAR_TEXT")
        for piece in adb_ime.text_chunks(text):
            if adb_ime.broadcast_ok(self._broadcast("ADB_INPUT_B64", "--es", "msg", adb_ime.b64(piece))):
                continue
            out = self._broadcast("ADB_INPUT_TEXT", "--es", "msg", piece)
            if not adb_ime.broadcast_ok(out):
                raise DeviceCommandError("ADBKeyboard did not accept the text", command="am broadcast",
                                         output=out, serial=self.serial)

    def _type_plain(self, text: str, clear: bool) -> None:
        if not text.isascii():
            raise InputMethodMissing("typing non-ASCII text needs ADBKeyboard, which is not installed",
                                     serial=self.serial, hint=adb_ime.INSTALL_HINT)
        if clear:
            self.clear_text()
        if text:
            out = self.shell(["input", "text", adb_ime.escape_input_text(text)])
            if "Exception" in out:
                raise DeviceCommandError("`input text` failed on the phone", command="input text", output=out,
                                         serial=self.serial)

    def input_text(self, text: str, *, clear: bool = False, verify: bool = False) -> bool:
        """Type ``text`` into the focused field; True when typed (and, with ``verify``, read back equal).

        ADBKeyboard's Base64 broadcast when installed (any language), else plain
        ``input text`` for ASCII. With ``verify`` the field is read back from the UI
        dump and, if it differs, cleared and typed once more.
        """
        if not isinstance(text, str):
            raise ActionError(f"text must be a string, not {type(text).__name__}")
        use_ime = self.has_adbkeyboard()
        if use_ime:
            self._ensure_adbkeyboard()
        before = "" if clear or not verify else (self.focused_text() or "")
        typer = self._type_adbkeyboard if use_ime else self._type_plain
        typer(text, clear)
        if self.operation_delay:
            self._sleep(self.operation_delay)
        if not verify:
            return True
        expected = text if clear else before + text
        got = self.focused_text()
        if got == expected:
            return True
        logger.warning("typed text reads back as %r, expected %r; typing once more", got, expected)
        typer(expected, True)
        return self.focused_text() == expected

    def clear_text(self) -> None:
        """Empty the focused field (ADBKeyboard's clear, else DEL presses for its length)."""
        if self.has_adbkeyboard():
            self._ensure_adbkeyboard()
            self._broadcast("ADB_CLEAR_TEXT")
            return
        length = len(self.focused_text() or "")
        if length:
            self.shell(["input", "keyevent", str(MOVE_END_KEY)])
            self.shell(["input", "keyevent", *[str(DEL_KEY)] * length])
