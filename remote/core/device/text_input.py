"""Typing text on the phone: ADBKeyboard's Base64 broadcast (any language), plain `input text` for ASCII.

`TextTyper` is handed the shell it types through and a way to read the focused
field back; `ADBController` builds one. The protocol facts and the state file
that restores a crashed run's keyboard are in ``ime``.
"""

from __future__ import annotations

import atexit
import logging
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from remote.core.device import ime as adb_ime
from remote.errors import (
    ActionError,
    DeviceCommandError,
    DeviceError,
    InputMethodMissing,
    InputMethodPermission,
)

logger = logging.getLogger(__name__)
DEL_KEY, MOVE_END_KEY, ENTER_KEY = 67, 123, 66


class Shell(Protocol):
    """What typing needs of the ADB link."""

    serial: str

    def shell(self, args: Sequence[object] | str, timeout: float | None = None) -> str: ...


class TextTyper:
    """``TextTyper(link, read_field=controller.focused_text).type("你好", verify=True)``."""

    def __init__(self, link: Shell, read_field: Callable[[], str | None], *, state_dir: str | None = None,
                 operation_delay: float = 0.0, sleep: Callable[[float], None] = time.sleep) -> None:
        self.link = link
        self.read_field = read_field
        self.state_dir = state_dir
        self.operation_delay = operation_delay
        self.sleep = sleep
        self._adbkeyboard: bool | None = None
        self._previous_ime: str | None = None
        self._switched = False
        self._atexit = False

    def _shell(self, args: Sequence[object], timeout: float | None = None) -> str:
        return self.link.shell(args, timeout)

    def has_adbkeyboard(self) -> bool:
        if self._adbkeyboard is None:
            out = self._shell(["ime", "list", "-a", "-s"])
            if adb_ime.permission_denied(out):
                raise InputMethodPermission("the phone refused to list input methods", serial=self.link.serial,
                                            hint=adb_ime.PERMISSION_HINT)
            self._adbkeyboard = adb_ime.ADBKEYBOARD_IME in adb_ime.ime_ids(out)
        return self._adbkeyboard

    def current_ime(self) -> str:
        return self._shell(["settings", "get", "secure", "default_input_method"]).strip()

    def recover_stale_ime(self) -> None:
        """A crashed run left ADBKeyboard active: put the keyboard it replaced back."""
        state = adb_ime.ImeStateFile(self.link.serial, self.state_dir)
        previous = state.load()
        if not previous:
            return
        if self.current_ime() == adb_ime.ADBKEYBOARD_IME and previous != adb_ime.ADBKEYBOARD_IME:
            self._shell(["ime", "set", previous])
            logger.warning("an earlier run left ADBKeyboard active; restored input method %s", previous)
        state.clear()

    def restore(self) -> None:
        """Restore the input method that was active before we switched to ADBKeyboard."""
        if self._atexit:
            atexit.unregister(self.restore)
            self._atexit = False
        if not self._switched:
            return
        try:
            if self._previous_ime:
                self._shell(["ime", "set", self._previous_ime], timeout=5)
                logger.info("restored input method %s", self._previous_ime)
            adb_ime.ImeStateFile(self.link.serial, self.state_dir).clear()
        except DeviceError as exc:
            # The state file stays, so the next start restores it.
            logger.warning("could not restore input method %s now: %s", self._previous_ime, exc)
        finally:
            self._switched = False

    def forget_switch(self) -> None:
        """Leave the keyboard as it is at exit (tests that simulate a crash)."""
        self._switched = False

    def _ensure_adbkeyboard(self) -> None:
        if self._switched:
            return
        current = self.current_ime()
        if current == adb_ime.ADBKEYBOARD_IME:
            return
        for args in (["ime", "enable", adb_ime.ADBKEYBOARD_IME], ["ime", "set", adb_ime.ADBKEYBOARD_IME]):
            out = self._shell(args)
            if adb_ime.permission_denied(out):
                raise InputMethodPermission("the phone refused to switch to ADBKeyboard", serial=self.link.serial,
                                            hint=adb_ime.PERMISSION_HINT)
        if self.current_ime() != adb_ime.ADBKEYBOARD_IME:
            raise InputMethodPermission("ADBKeyboard did not become the active input method",
                                        serial=self.link.serial, hint=adb_ime.PERMISSION_HINT)
        self._previous_ime, self._switched = current, True
        adb_ime.ImeStateFile(self.link.serial, self.state_dir).save(current)
        if not self._atexit:
            atexit.register(self.restore)
            self._atexit = True

    def _broadcast(self, action: str, *extras: str) -> str:
        return self._shell(["am", "broadcast", "-a", action, *extras])

    def _type_adbkeyboard(self, text: str, clear: bool) -> None:
        if clear:
            self._broadcast("ADB_CLEAR_TEXT")
        for piece in adb_ime.text_chunks(text):
            if adb_ime.broadcast_ok(self._broadcast("ADB_INPUT_B64", "--es", "msg", adb_ime.b64(piece))):
                continue
            out = self._broadcast("ADB_INPUT_TEXT", "--es", "msg", piece)
            if not adb_ime.broadcast_ok(out):
                raise DeviceCommandError("ADBKeyboard did not accept the text", command="am broadcast",
                                         output=out, serial=self.link.serial)

    def _type_plain(self, text: str, clear: bool) -> None:
        if not text.isascii():
            raise InputMethodMissing("typing non-ASCII text needs ADBKeyboard, which is not installed",
                                     serial=self.link.serial, hint=adb_ime.INSTALL_HINT)
        if clear:
            self.clear()
        for i, line in enumerate(text.replace("\r\n", "\n").split("\n")):
            if i:   # `input text` cannot carry a newline: an ENTER key event types it
                self._shell(["input", "keyevent", str(ENTER_KEY)])
            for piece in adb_ime.input_text_pieces(line):
                out = self._shell(["input", "text", piece])
                if "Exception" in out:
                    raise DeviceCommandError("`input text` failed on the phone", command="input text", output=out,
                                             serial=self.link.serial)

    def type(self, text: str, *, clear: bool = False, verify: bool = False, before: str | None = None) -> bool:
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
        if before is None or clear:   # `before`: the field's text, when the caller knows it (no read)
            before = "" if clear or not verify else (self.read_field() or "")
        typer = self._type_adbkeyboard if use_ime else self._type_plain
        typer(text, clear)
        if self.operation_delay:
            self.sleep(self.operation_delay)
        if not verify:
            return True
        expected = text if clear else before + text
        got = self.read_field()
        if got in (expected, text):   # == text: what read as the field's text was its hint
            return True
        logger.warning("typed text reads back as %r, expected %r; typing once more", got, expected)
        typer(expected, True)
        return self.read_field() == expected

    def clear(self) -> None:
        """Empty the focused field (ADBKeyboard's clear, else DEL presses for its length)."""
        if self.has_adbkeyboard():
            self._ensure_adbkeyboard()
            self._broadcast("ADB_CLEAR_TEXT")
            return
        length = len(self.read_field() or "")
        if length:
            self._shell(["input", "keyevent", str(MOVE_END_KEY)])
            self._shell(["input", "keyevent", *[str(DEL_KEY)] * length])
