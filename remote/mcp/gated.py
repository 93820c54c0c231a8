"""`GatedDevice`: the phone as an agent's acts reach it, the allow list checked before and after every act.

Before an act the app in front must be allowed. After it the app in front is
looked at again: an act may open another app (a home-screen icon, a link, a
key that launches an app, a field that opens a share sheet); when that app is
not allowed, HOME leaves it (HOME is never delivered to an app, so nothing more
happens in it) and `AccessDenied` says what happened. So an act made of several
phone actions (tap the field, type, press ENTER) is checked after each one.

Raw key codes go through `remote.core.device.keyrules`: a call key needs the person's
yes, a key that launches an app obeys the allow list, an unknown one is refused.
Reading methods (screenshot, UI dump, sizes) pass straight through.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

from remote.core.device.keyrules import KeyKind, KeyRule, rule
from remote.core.device.keys import keycode
from remote.mcp import deadline
from remote.mcp.access import LAUNCHERS, AccessDenied, AccessGate

logger = logging.getLogger(__name__)
Confirm = Callable[[str], "bool | None"]
HOME = 3


def _doing(name: str) -> str:
    return name.replace("_", " ")


class GatedDevice:
    """An ADBController seen through one session's allow list (``GatedDevice(adb, gate)``)."""

    _ACTS = ("tap", "long_press", "swipe", "swipe_direction", "input_text", "clear_text", "press_back", "call",
             "open_url")
    _CALLS = ("call",)      # a call the person confirmed brings up the in-call screen: that is its point

    def __init__(self, adb: Any, gate: AccessGate, on_act: Callable[[], None] | None = None,
                 confirm: Confirm | None = None, settle_s: float = 0.6) -> None:
        self._adb = adb
        self._gate = gate
        self._on_act = on_act
        self._confirm = confirm
        self.settle_s = settle_s      # how long an app started from a system surface may take to come up

    def asking(self, confirm: Confirm | None) -> GatedDevice:
        """The same device, asking ``confirm`` (the person) before a call key; None answers no."""
        return GatedDevice(self._adb, self._gate, self._on_act, confirm, self.settle_s)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._adb, name)
        if name in self._ACTS and callable(attr):
            def checked(*args: Any, **kwargs: Any) -> Any:
                with self.acting(_doing(name), check_after=name not in self._CALLS):
                    return attr(*args, **kwargs)
            return checked
        return attr

    # ------------------------------------------------------------------ the checks
    def front(self) -> str:
        return str(self._adb.current_app().get("package", ""))

    def check_front(self, doing: str) -> str:
        """The app in front, after checking that the agent may act in it (and that the call is not over)."""
        deadline.current().check()
        package = self.front()
        self._gate.check(package, doing)
        if self._on_act is not None:
            self._on_act()
        return package

    @contextlib.contextmanager
    def acting(self, doing: str, *, before: str | None = None, launches: bool = False,
               check_after: bool = True) -> Iterator[str]:
        """Check the app in front, act (the ``with`` body), then check the app in front again."""
        package = self.check_front(doing) if before is None else before
        yield package
        if check_after:
            self.after(doing, package, launches=launches)

    def after(self, doing: str, before: str, *, launches: bool = False) -> None:
        """Raise `AccessDenied` (after leaving it with HOME) when the act brought an app not allowed to the front.

        An app takes a moment to come up, and between two windows none has the focus: from the home screen
        (or with ``launches``) wait up to ``settle_s`` for the app in front to change, and always for one to
        be known. When none is known by then, nothing is judged: the next act's check refuses it."""
        waits = launches or before in LAUNCHERS
        front = self.front()
        until = time.monotonic() + self.settle_s
        while (not front or (waits and front == before)) and time.monotonic() < until:
            time.sleep(0.1)
            front = self.front()
        if not front or self._gate.allows(front):
            return
        self._adb.input_keyevent(HOME)
        now = self.front() or "nothing"
        granted = ", ".join(sorted(self._gate.allowed)) or "none yet"
        raise AccessDenied(f"{doing} brought {front} to the front, which is not in this session's allowed apps "
                           f"({granted}); pressed HOME to leave it ({now} is in front now)",
                           hint=f"call request_access(apps=[\"{front}\"]) first if the person wants the agent there")

    # ------------------------------------------------------------------ acts with their own rules
    def double_tap(self, x: int, y: int) -> bool:
        """Two taps in one shell call, inside Android's double-tap window (`ADBController.double_tap`: `cmd input`
        60 ms apart); False when the phone is too old for `cmd input` (two `input` processes land too far apart)."""
        with self.acting("double-tap"):
            return bool(self._adb.double_tap(x, y))

    def launch_app(self, package: str) -> None:
        self._gate.check(package, f"open {package}", in_front=False)
        if self._on_act is not None:
            self._on_act()
        with self.acting(f"open {package}", before=self.front(), launches=True):
            self._adb.launch_app(package)

    def input_keyevent(self, key: int | str) -> None:
        self.press_key(keycode(key))

    def press_key(self, code: int, times: int = 1) -> str:
        """Press ``code`` ``times`` times (one shell call); the shell's output. HOME is always allowed."""
        if code == HOME:
            if self._on_act is not None:
                self._on_act()
            return str(self._adb.shell(["input", "keyevent", *[str(HOME)] * times]))
        key = rule(code)
        doing = f"press KEYCODE_{key.name}" if not key.name.isdigit() else f"press key {code}"
        with self.acting(doing, launches=key.kind is KeyKind.APP, check_after=key.kind is not KeyKind.CALL):
            self.allow_key(key)
            return str(self._adb.shell(["input", "keyevent", *[str(code)] * times]))

    def allow_key(self, key: KeyRule) -> None:
        """Raise `AccessDenied` unless this key may be pressed now (see `remote.core.device.keyrules`)."""
        if key.kind is KeyKind.IN_APP:
            return
        if key.kind is KeyKind.CALL:
            answer = self._confirm(f"The agent wants to press KEYCODE_{key.name} ({key.code}), which places, "
                                   "answers or ends a phone call. Allow it?") if self._confirm else None
            if answer is True:
                return
            why = "the person said no" if answer is False else "nobody could be asked"
            raise AccessDenied(f"KEYCODE_{key.name} ({key.code}) is a phone call and needs the person's yes; {why}",
                               hint="let the person make calls on the phone")
        if key.kind is KeyKind.APP:
            if self._gate.open or any(self._gate.allows(p) for p in key.packages):
                return
            which = f" ({', '.join(key.packages)})" if key.packages else \
                "; which app that is depends on the phone, so only --allow '*' lets it through"
            raise AccessDenied(f"KEYCODE_{key.name} ({key.code}) opens {key.opens}{which}, not in this session's "
                               "allowed apps",
                               hint="open an allowed app with open_app instead")
        raise AccessDenied(f"key code {key.code} acts outside the app in front in a way remote does not know; "
                           "refused", hint="use a named key (enter, back, home, del, ...) or open_app")

    def press_combination(self, codes: list[int], times: int = 1) -> str:
        """``input keycombination`` (Android 11+), every key of it allowed in the app in front."""
        for code in codes:
            key = rule(code)
            if key.kind is not KeyKind.IN_APP:
                self.allow_key(key)
        out = ""
        with self.acting(f"press {'+'.join(map(str, codes))}"):
            for _ in range(times):
                out = str(self._adb.shell(["input", "keycombination", *map(str, codes)]))
                if "Error" in out or "Exception" in out:
                    break
        return out
