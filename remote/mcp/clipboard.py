"""The phone's clipboard, as far as Android lets adb reach it (docs/mcp.md#clipboard has the table).

- adb's shell has no clipboard command: stock Android through 16 answers
  ``cmd clipboard`` with "No shell command implementation." and ADBKeyboard has
  no clipboard broadcast. So writing goes through the clipper helper app
  (``am broadcast -a clipper.set``), which works on every version.
- Reading: ``clipper.get`` works up to Android 9. From Android 10 only the app in
  front or the active input method may read the clipboard, so a background
  helper reads nothing, and we say so instead of returning "". What does work
  there is pasting: ``method="paste"`` presses PASTE in the focused field, reads
  the field back from the UI tree, and puts the field's old text back.
"""

from __future__ import annotations

import re

from remote.errors import ActionError, DeviceCommandError
from remote.mcp.gestures import front_allowed
from remote.mcp.session import Session

CLIPPER = "ca.zgrs.clipper"
KEYCODE_PASTE = 279
READ_LIMIT_SDK = 29
_RESULT = re.compile(r'Broadcast completed: result=(-?\d+)(?:, data="(.*)")?', re.DOTALL)
NO_HELPER_HINT = ("install the clipper helper (github.com/majido/clipper, package ca.zgrs.clipper): adb's shell "
                  "has no clipboard command of its own; or type the text with the type tool")


def parse_broadcast(output: str) -> tuple[int, str | None]:
    """``am broadcast``'s answer: ``(result code, data or None)``.

    >>> parse_broadcast('Broadcasting: Intent { act=clipper.get }\\nBroadcast completed: result=-1, data="你好"')
    (-1, '你好')
    """
    m = _RESULT.search(output)
    if not m:
        raise DeviceCommandError("am broadcast gave no result", command="am broadcast", output=output[:500])
    data = m.group(2)
    if data is not None:
        data = data.rstrip()
        data = data[:-1] if data.endswith('"') else data
    return int(m.group(1)), data


def has_clipper(session: Session) -> bool:
    out = session.adb.shell(["pm", "list", "packages", CLIPPER])
    return f"package:{CLIPPER}" in out.split()


def sdk(session: Session) -> int:
    try:
        return int(session.adb.getprop("ro.build.version.sdk") or 0)
    except ValueError:
        return 0


def write(session: Session, text: str) -> str:
    if not isinstance(text, str):
        raise ActionError("text must be a string")
    if not has_clipper(session):
        raise ActionError("this phone offers no way to set the clipboard from adb", hint=NO_HELPER_HINT)
    code, data = parse_broadcast(session.adb.shell(["am", "broadcast", "-a", "clipper.set", "--es", "text", text]))
    if code != -1:
        raise DeviceCommandError(f"clipper did not take the text: {data or 'no answer (is it installed?)'}",
                                 command="am broadcast -a clipper.set")
    return f"the clipboard holds {len(text)} characters (set through clipper)"


def read(session: Session, method: str = "auto") -> str:
    """``auto``: the helper, then pasting into the focused field; ``helper`` or ``paste`` to choose."""
    if method not in ("auto", "helper", "paste"):
        raise ActionError(f"unknown method {method!r}", hint="use auto, helper or paste")
    level = sdk(session)
    why = ""
    if method in ("auto", "helper"):
        text, why = _read_helper(session, level)
        if text is not None:
            return f"clipboard (read by clipper): {text}"
        if method == "helper":
            raise ActionError(why, hint=NO_HELPER_HINT if "install" in why else
                              "try method='paste' with a text field focused")
    try:
        text = _read_paste(session)
    except ActionError as exc:
        raise ActionError(f"{why + '; ' if why else ''}{exc.message}", hint=exc.hint) from exc
    return f"clipboard (pasted into the focused field and read back; the field was restored): {text}"


def _read_helper(session: Session, level: int) -> tuple[str | None, str]:
    if not has_clipper(session):
        return None, "no clipboard helper is installed (install clipper)"
    code, data = parse_broadcast(session.adb.shell(["am", "broadcast", "-a", "clipper.get"]))
    if code == -1:
        return data or "", ""
    if level >= READ_LIMIT_SDK:
        return None, (f"Android {_version(level)} lets only the app in front or the input method read the "
                      "clipboard, so clipper (in the background) cannot read it")
    return None, "the clipboard is empty"


def _read_paste(session: Session) -> str:
    front_allowed(session, "paste into a field")
    before = session.adb.focused_text()
    if before is None:
        raise ActionError("reading by pasting needs a focused text field, and none has the focus",
                          hint="tap a text field first (its text is put back afterwards)")
    session.device.press_key(KEYCODE_PASTE)
    after = session.adb.focused_text() or ""
    session.acted()
    pasted = after[len(before):] if after.startswith(before) else after
    if after != before:
        try:
            session.device.input_text(before, clear=True)
        finally:
            session.adb.close()   # the person's input method back
    if not pasted:
        raise ActionError("pasting added nothing: the clipboard is empty (or the field refuses pastes)")
    return pasted


def _version(level: int) -> str:
    names = {29: "10", 30: "11", 31: "12", 32: "12L", 33: "13", 34: "14", 35: "15", 36: "16"}
    return names.get(level, f"API {level}")
