"""Typing text on the phone: ADBKeyboard's Base64 broadcast (any language), plain `input text` for ASCII.

`TextTyper` is handed the shell it types through (the controller, which reads every refusal) and a
way to read the focused field back; `ADBController` builds one. The protocol facts and the state
file that restores a crashed run's keyboard are in ``ime``; which ADBKeyboard build works where, in
``adbkeyboard``.

How a text is typed, decided afresh for every text (`_route`), without commands a phone may refuse:

1. ADBKeyboard is the current keyboard: broadcast, no switching (works where ``ime`` is refused).
2. ADBKeyboard installed and usable here: switch to it (``ime enable``/``ime set``), then broadcast.
3. Otherwise ASCII goes through ``input text``; anything else stops with what to install or switch on.

After a switch the first broadcast is the warm-up: old builds register their receiver only when the
keyboard view first shows, so the first text may be lost (§10 R3). It is read back and sent again
while it has not arrived, a bounded number of times; the read-back is done twice (now, and after a
pause) before a second send, so a slow field is not typed into twice.
"""

from __future__ import annotations

import atexit
import enum
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import NoReturn, Protocol

from remote.core.device import adbkeyboard
from remote.core.device import ime as adb_ime
from remote.core.device.protocol import FieldRead
from remote.core.device.rom import Rom
from remote.errors import (
    ActionError,
    DeviceCommandError,
    DeviceError,
    InputMethodMissing,
    InputMethodPermission,
    PhoneRefused,
)

logger = logging.getLogger(__name__)
DEL_KEY, MOVE_END_KEY, ENTER_KEY = 67, 123, 66
WARMUP_TRIES, WARMUP_PAUSE_S = 3, 0.4   # at most 3 sends of the first piece, 2 read-backs each
# A read-back from a tree read at once (the resident server does not wait for the screen to go idle, as a dump
# does) can come before the app has drawn the text: two to three frames (docs/devices.md). Before the field is
# called wrong and typed again, it is read again for up to this long (a dump's read-back never is: it waited).
READBACK_WAIT_S, READBACK_POLL_S = 0.3, 0.05


class Shell(Protocol):
    """What typing needs of the phone: its serial, a shell that reads refusals, and its ROM."""

    @property
    def serial(self) -> str: ...

    def shell(self, args: Sequence[object] | str, timeout: float | None = None) -> str: ...

    def rom(self) -> Rom: ...


class Route(enum.Enum):
    IME = "ADBKeyboard"
    PLAIN = "input text"


class TextTyper:
    """``TextTyper(controller, read_field=controller.focused_text).type("你好", verify=True)``."""

    def __init__(self, link: Shell, read_field: FieldRead, *, state_dir: str | None = None,
                 operation_delay: float = 0.0, sleep: Callable[[float], None] = time.sleep,
                 reads_at_once: Callable[[], bool] = lambda: False) -> None:
        self.link = link
        self.read_field = read_field
        self.reads_at_once = reads_at_once   # the field is read without waiting for the screen to go idle
        self.state_dir = state_dir
        self.operation_delay = operation_delay
        self.sleep = sleep
        self._build: adbkeyboard.Build | None = None
        self._refused: InputMethodPermission | None = None   # switching keyboards was refused this session
        self._previous_ime: str | None = None
        self._switched = False
        self._warm = False          # ADBKeyboard's receiver answered since it became the keyboard
        self._atexit = False
        self.last_route: Route | None = None
        self._routing = threading.Lock()

    def _shell(self, args: Sequence[object], timeout: float | None = None) -> str:
        return self.link.shell(args, timeout)

    # ---------------------------------------------------------------- what the phone has
    def build(self) -> adbkeyboard.Build:
        """The installed ADBKeyboard build (``dumpsys package``), read once."""
        if self._build is None:
            self._build = adbkeyboard.parse_build(self._shell(["dumpsys", "package", adbkeyboard.PACKAGE]))
        return self._build

    def has_adbkeyboard(self) -> bool:
        return self.build().installed

    def keyboards(self) -> adbkeyboard.Keyboards:
        """The current and enabled keyboards, from ``settings get secure`` (no permission needed)."""
        enabled = self._shell(["settings", "get", "secure", "enabled_input_methods"])
        return adbkeyboard.Keyboards(self.current_ime(), adbkeyboard.parse_enabled(enabled))

    def current_ime(self) -> str:
        return self._shell(["settings", "get", "secure", "default_input_method"]).strip()

    # ---------------------------------------------------------------- keyboard switching
    def recover_stale_ime(self) -> None:
        """A crashed run left ADBKeyboard active: put the keyboard it replaced back."""
        state = adb_ime.ImeStateFile(self.link.serial, self.state_dir)
        previous = state.load()
        if not previous:
            return
        try:
            if self.current_ime() == adb_ime.ADBKEYBOARD_IME and previous != adb_ime.ADBKEYBOARD_IME:
                self._shell(["ime", "set", previous])
                logger.warning("an earlier run left ADBKeyboard active; restored input method %s", previous)
        except PhoneRefused as exc:
            logger.warning("could not restore input method %s: %s", previous, exc.message)
        state.clear()

    def restore(self) -> None:
        """Restore the input method that was active before we switched to ADBKeyboard."""
        with self._routing:    # a switch under way (`prepare` ahead, on its thread) ends first
            self._restore()

    def _restore(self) -> None:
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
            self._switched = self._warm = False

    def forget_switch(self) -> None:
        """Leave the keyboard as it is at exit (tests that simulate a crash)."""
        self._switched = False

    def _switch(self, keyboards: adbkeyboard.Keyboards) -> None:
        """Make ADBKeyboard the keyboard; InputMethodPermission (with the ROM's switch) when refused."""
        if not keyboards.adbkeyboard_enabled:
            self._shell(["ime", "enable", adb_ime.ADBKEYBOARD_IME])
        self._shell(["ime", "set", adb_ime.ADBKEYBOARD_IME])
        if self.current_ime() != adb_ime.ADBKEYBOARD_IME:
            raise InputMethodPermission("ADBKeyboard did not become the current keyboard after `ime set`",
                                        serial=self.link.serial, permission="WRITE_SECURE_SETTINGS",
                                        hint="enable ADB Keyboard in Settings → language & input, or make it the "
                                             "phone's keyboard there; then check with `python -m remote doctor`")
        self._previous_ime, self._switched, self._warm = keyboards.current, True, False
        adb_ime.ImeStateFile(self.link.serial, self.state_dir).save(keyboards.current)
        if not self._atexit:
            atexit.register(self.restore)
            self._atexit = True

    # ---------------------------------------------------------------- choosing how to type
    def _route(self, text: str) -> Route:
        """How to type ``text`` here (the module docstring's three cases); raises when nothing can. One thread
        at a time (`prepare` may run ahead of the step that types, on a thread of the run's start)."""
        with self._routing:
            return self._route_now(text)

    def _route_now(self, text: str) -> Route:
        build = self.build()
        rom = self.link.rom()
        if not build.installed or build.too_old_for(rom.sdk):
            if text.isascii():
                return Route.PLAIN
            if not build.installed:
                raise InputMethodMissing("typing non-ASCII text needs ADBKeyboard, which is not installed",
                                         serial=self.link.serial, hint="; ".join(adbkeyboard.INSTALL_STEPS))
            raise InputMethodMissing(f"the ADBKeyboard on this phone is {build.describe}: on Android "
                                     f"{rom.android} that build receives nothing", serial=self.link.serial,
                                     hint="; ".join(adbkeyboard.INSTALL_STEPS))
        if self._switched:
            return Route.IME
        keyboards = self.keyboards()
        if keyboards.adbkeyboard_current:
            return Route.IME
        if self._refused is None:
            try:
                self._switch(keyboards)
                return Route.IME
            except InputMethodPermission as exc:
                self._refused = exc
        if text.isascii():
            logger.info("switching to ADBKeyboard is refused; typing ASCII with `input text`")
            return Route.PLAIN
        refused = self._refused
        raise InputMethodPermission(f"typing non-ASCII text needs ADBKeyboard as the current keyboard, and "
                                    f"{refused.message}", serial=self.link.serial, permission=refused.permission,
                                    command=refused.command, rom=refused.rom, hint=refused.hint)

    def prepare(self, text: str) -> None:
        """Get the keyboard ready for ``text`` ahead of typing it (read what the phone has, switch to
        ADBKeyboard), while the caller would only wait; what cannot be done is met again, and said, by `type`."""
        try:
            self._route(text)
        except DeviceError as exc:
            logger.info("the keyboard is not ready ahead of typing: %s", exc.message)

    # ---------------------------------------------------------------- typing
    def type(self, text: str, *, clear: bool = False, verify: bool = False, before: str | None = None,
             read_field: FieldRead | None = None) -> bool:
        """Type ``text`` into the focused field; True when typed (and, with ``verify``, read back equal).

        ``read_field``: how this typing reads the field back (else the typer's own reader); every read of
        this typing, its warm-up and clearing included, goes through it.

        Without ``verify`` True means sent, not seen: only a read-back (``verify``, and the warm-up
        after a switch, which happens either way) shows the text arrived. With ``verify`` a field
        that differs is cleared and typed once more.
        """
        if not isinstance(text, str):
            raise ActionError(f"text must be a string, not {type(text).__name__}")
        read = read_field or self.read_field
        route = self.last_route = self._route(text)
        warm_up = route is Route.IME and not self._warm
        if clear:
            before = ""
        elif before is None and not warm_up:   # `before`: the field's text when the caller knows it (a UI tree)
            before = (read() or "") if verify else ""
        if route is Route.IME:   # a warm-up learns an unknown `before` from its own read-back
            confirmed, before = self._type_adbkeyboard(text, clear, before, read)
        else:
            self._type_plain(text, clear, read)
            confirmed = False
        if self.operation_delay:
            self.sleep(self.operation_delay)
        if not verify or confirmed:
            return True
        if before is None:   # nothing was typed (an empty text), so the field holds what it held
            before = read() or ""
        expected = text if clear else before + text
        got = self._read_back(read, (expected, text))   # == text: what read as the field's text was its hint
        if got in (expected, text):
            return True
        logger.warning("typed text reads back as %d characters, expected %d; typing once more", len(got or ""),
                       len(expected))
        (self._type_plain if route is Route.PLAIN else self._retype_adbkeyboard)(expected, True, read)
        return read() == expected

    def _read_back(self, read: FieldRead, wanted: tuple[str, ...]) -> str | None:
        """The field's text; read at once (`reads_at_once`), read again every `READBACK_POLL_S` until it is one
        of ``wanted`` or `READBACK_WAIT_S` has passed, as the app may not have drawn it yet."""
        got = read()
        if not self.reads_at_once():
            return got
        for _ in range(round(READBACK_WAIT_S / READBACK_POLL_S)):   # counted in pauses: a sleep that skips waits
            if got in wanted:                                        # (the tests') never makes a busy loop
                break
            self.sleep(READBACK_POLL_S)
            got = read()
        return got

    def _broadcast(self, action: str, *extras: str) -> str:
        """To ADBKeyboard's package explicitly (``-p``): phones that drop implicit broadcasts still deliver it."""
        return self._shell(["am", "broadcast", "-a", action, "-p", adbkeyboard.PACKAGE, *extras])

    def _send(self, piece: str) -> None:
        if adb_ime.broadcast_ok(self._broadcast("ADB_INPUT_B64", "--es", "msg", adb_ime.b64(piece))):
            return
        out = self._broadcast("ADB_INPUT_TEXT", "--es", "msg", piece)
        if not adb_ime.broadcast_ok(out):
            raise DeviceCommandError("ADBKeyboard did not accept the text", command="am broadcast",
                                     output=out, serial=self.link.serial)

    def _type_adbkeyboard(self, text: str, clear: bool, before: str | None,
                          read: FieldRead) -> tuple[bool, str | None]:
        """Broadcast the text; (True when a read-back already showed all of it (the warm-up did), the field's
        text before it: as given, or learnt by the warm-up's read-back when not known)."""
        pieces = adb_ime.text_chunks(text)
        if clear:
            self._clear_adbkeyboard(read, warm_up=not self._warm)
            before = ""
        if not pieces:
            return False, before
        exact, rest = False, pieces
        if not self._warm:
            (exact, before), rest = self._warm_up(pieces[0], before, read), pieces[1:]
        for piece in rest:
            self._send(piece)
        return exact and not rest, before

    def _retype_adbkeyboard(self, text: str, clear: bool, read: FieldRead) -> None:
        self._type_adbkeyboard(text, clear, "", read)

    def _warm_up(self, piece: str, before: str | None, read: FieldRead) -> tuple[bool, str]:
        """Send the first piece until the field reads it back (bounded); (True when it reads exactly as
        expected, the field's text before the piece).

        ``before`` None (not known: no UI tree was at hand) is not read first, which would cost a dump of its
        own: the field's text before is what the read-back shows ahead of the piece once it has arrived.
        Raises when it never arrives, or when no field has the focus (nothing could be read back).
        """
        for attempt in range(WARMUP_TRIES):
            self._send(piece)
            for pause in (0.0, WARMUP_PAUSE_S * (attempt + 1)):
                if pause:
                    self.sleep(pause)
                got = read()
                if got is None:
                    raise ActionError("no text field has the focus, so ADBKeyboard's text went nowhere",
                                      hint="tap the field first")
                # arrived: the piece ends the field (a known text before it changed, or the field was its hint)
                if got.endswith(piece) and (before is None or got != before or got == piece):
                    self._warm = True
                    if attempt:
                        logger.warning("ADBKeyboard received text only on send %d after the switch", attempt + 1)
                    if before is None:
                        return True, got[:len(got) - len(piece)]
                    return got in (before + piece, piece), before
        self._not_received()

    def _not_received(self) -> NoReturn:
        build, rom = self.build(), self.link.rom()
        if build.maybe_unfixed_for(rom.sdk):
            raise InputMethodMissing(f"ADBKeyboard received nothing on Android {rom.android}: this is "
                                     f"{build.describe}, and only {adbkeyboard.FIXED_RELEASE} works on Android 16",
                                     serial=self.link.serial, hint="; ".join(adbkeyboard.INSTALL_STEPS))
        raise DeviceCommandError(f"ADBKeyboard received nothing after {WARMUP_TRIES} sends ('Broadcast completed' "
                                 "is printed whether or not it did)", command="am broadcast",
                                 serial=self.link.serial,
                                 hint=f"install ADBKeyboard {adbkeyboard.FIXED_RELEASE} "
                                      f"({adbkeyboard.FIXED_URL}) and check with `python -m remote doctor`")

    def _clear_adbkeyboard(self, read: FieldRead, *, warm_up: bool) -> None:
        """ADB_CLEAR_TEXT; after a switch it is sent again (harmless) while the field does not read empty.

        An empty field may read as its hint on older Androids, so this never fails by itself: the
        text's own warm-up decides whether ADBKeyboard receives.
        """
        for attempt in range(WARMUP_TRIES if warm_up else 1):
            if attempt:
                self.sleep(WARMUP_PAUSE_S * attempt)
            self._broadcast("ADB_CLEAR_TEXT")
            if warm_up and read() in ("", None):
                return

    def _type_plain(self, text: str, clear: bool, read: FieldRead) -> None:
        if not text.isascii():
            raise InputMethodMissing("non-ASCII text cannot go through `input text`", serial=self.link.serial,
                                     hint="; ".join(adbkeyboard.INSTALL_STEPS))
        if clear:
            self._clear_plain(read)
        for i, line in enumerate(text.replace("\r\n", "\n").split("\n")):
            if i:   # `input text` cannot carry a newline: an ENTER key event types it
                self._shell(["input", "keyevent", str(ENTER_KEY)])
            for piece in adb_ime.input_text_pieces(line):
                out = self._shell(["input", "text", piece])
                if "Exception" in out:
                    raise DeviceCommandError("`input text` failed on the phone", command="input text", output=out,
                                             serial=self.link.serial)

    def clear(self) -> None:
        """Empty the focused field (ADBKeyboard's clear where it can be used, else DEL presses for its length)."""
        try:
            route = self._route("")
        except InputMethodPermission:
            route = Route.PLAIN
        if route is Route.IME:
            self._clear_adbkeyboard(self.read_field, warm_up=not self._warm)
        else:
            self._clear_plain(self.read_field)

    def _clear_plain(self, read: FieldRead) -> None:
        length = len(read() or "")
        if length:
            self._shell(["input", "keyevent", str(MOVE_END_KEY)])
            self._shell(["input", "keyevent", *[str(DEL_KEY)] * length])
