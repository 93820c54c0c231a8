"""The simulated phone's clipboard, reached the ways a real phone's is.

A real phone gives adb's shell no clipboard command (stock Android through 16
answers ``cmd clipboard`` with "No shell command implementation."), so tools
reach it through a helper app. This phone ships the widely used one, clipper
(``ca.zgrs.clipper``, github.com/majido/clipper), and answers its broadcasts as
its receiver does::

    am broadcast -a clipper.set -e text 'hello'
      Broadcast completed: result=-1, data="Text is copied into clipboard."
    am broadcast -a clipper.get
      Broadcast completed: result=0, data=""        # Android 10+: a background app may not read

Android 10 lets only the app in front (or the active input method) read the
clipboard, and clipper runs in the background, so ``clipper.get`` reads nothing
here, as on a real Android 13 phone. Pasting works: ``KEYCODE_PASTE`` (279) puts
the clipboard into the focused field, which is how an agent reads it back.
"""

from __future__ import annotations

from typing import Any, Protocol


class SimPhone(Protocol):
    """What the clipboard needs of the phone (a protocol, so that phone.py can import this module)."""

    lock: Any
    clipboard: str | None

    def type_text(self, text: str) -> bool: ...

PACKAGE = "ca.zgrs.clipper"
KEYCODE_PASTE = 279
RESULT_OK, RESULT_CANCELED = -1, 0
SDK = 33          # what `getprop ro.build.version.sdk` says on this phone
READ_LIMIT_SDK = 29


def broadcast(phone: SimPhone, action: str, extras: dict[str, str]) -> str | None:
    """clipper's receiver: the ``Broadcast completed`` line `am` prints, or None when the action is not clipper's."""
    result = _receive(phone, action, extras)
    return None if result is None else f'Broadcast completed: result={result[0]}, data="{result[1]}"\n'


def _receive(phone: SimPhone, action: str, extras: dict[str, str]) -> tuple[int, str] | None:
    if action == "clipper.set":
        if "text" not in extras:
            return RESULT_CANCELED, 'No text is provided. Use -e text "text to be pasted"'
        with phone.lock:
            phone.clipboard = extras["text"]
        return RESULT_OK, "Text is copied into clipboard."
    if action == "clipper.get":
        with phone.lock:
            text = phone.clipboard
        if text is None or SDK >= READ_LIMIT_SDK:   # clipper is never the app in front here
            return RESULT_CANCELED, ""
        return RESULT_OK, text
    return None


def paste(phone: SimPhone) -> None:
    """KEYCODE_PASTE: the focused field gets the clipboard's text (nothing when it is empty)."""
    with phone.lock:
        if phone.clipboard:
            phone.type_text(phone.clipboard)
