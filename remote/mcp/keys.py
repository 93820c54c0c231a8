"""Keyboard tools: type text (any language, through ADBKeyboard) and press named keys or combinations.

Typing goes through `ADBController.input_text`: ADBKeyboard's Base64 broadcast
when it is installed (Chinese, emoji, quotes and ``;`` arrive as characters; no
shell ever sees the text unquoted), plain ``input text`` for ASCII otherwise.
The field is read back from the UI tree, and the input method the person had is
restored after every call, so their own keyboard works between the agent's calls.
"""

from __future__ import annotations

import logging
from typing import Any

from remote.core.device.adb_controller import KEYCODES, keycode
from remote.errors import ActionError
from remote.mcp.aim import aim, count_forms
from remote.mcp.asking import Asker
from remote.mcp.gestures import front_allowed, judge
from remote.mcp.session import Session

logger = logging.getLogger(__name__)

KEY_NAMES: dict[str, int] = {
    **{k.lower(): v for k, v in KEYCODES.items()},
    "return": 66, "backspace": 67, "delete": 112, "del": 67, "esc": 111, "escape": 111, "recent": 187,
    "recents": 187, "up": 19, "down": 20, "left": 21, "right": 22, "ctrl": 113, "control": 113,
    "shift": 59, "alt": 57, "meta": 117, "cut": 277, "copy": 278, "paste": 279, "page_up": 92,
    "page_down": 93, "plus": 81, "move_home": 122, "move_end": 123, "volume_up": 24, "volume_down": 25, "power": 26,
    **{chr(97 + i): 29 + i for i in range(26)}, **{str(d): 7 + d for d in range(10)},
    **{f"f{n}": 130 + n for n in range(1, 13)},
}


def key_code(name: str) -> int:
    """``"enter"``, ``"KEYCODE_ENTER"``, ``"Back"`` and ``"66"`` are all keys; unknown names raise ActionError."""
    text = name.strip()
    low = text.lower().removeprefix("keycode_")
    if low in KEY_NAMES:
        return KEY_NAMES[low]
    return keycode(text)


def press_key(session: Session, combo: str, repeat: int = 1, asker: Asker | None = None) -> str:
    """``"enter"``, ``"back"``, ``"home"``; ``"ctrl+a"`` as a key combination (Android 11+).

    Raw key codes obey `remote.core.device.keyrules` (through the gated device): a call key asks the person, a key
    that launches an app obeys the allow list, an unknown one is refused."""
    parts = [p for p in combo.replace(" ", "").split("+") if p] if combo.strip() != "+" else ["plus"]
    if not parts:
        raise ActionError("no key named", hint="e.g. enter, back, home, del, tab, ctrl+a")
    codes = [key_code(p) for p in parts]
    times = max(1, min(int(repeat), 50))
    device = session.device.asking(asker.confirm if asker is not None else None)
    if len(codes) == 1:
        out = device.press_key(codes[0], times)
    else:
        out = device.press_combination(codes, times)
    session.acted()
    if "Error" in out or "Exception" in out:
        raise ActionError(f"the phone refused {combo!r}: {out.strip()[:200]}",
                          hint="key combinations need Android 11 or later (`input keycombination`)")
    if len(codes) == 1:
        session.journal.key(codes[0], times)
    return f"pressed {combo} ({'+'.join(map(str, codes))})" + (f" x{times}" if times > 1 else "")


def type_text(session: Session, asker: Asker, text: str, *, x: float | None = None, y: float | None = None,
              element: int | None = None, target_ref: str | None = None, clear: bool = False,
              submit: bool = False, verify: bool = True) -> str:
    """Type into the focused field (or into the named target, tapped first); ENTER after it with ``submit``.

    Each phone action (the tap, the typing, ENTER) goes through the gated device, which checks the app
    in front before and after it: a tap that opened another app stops the typing there."""
    if not isinstance(text, str):
        raise ActionError("text must be a string")
    package = front_allowed(session, "type")
    notes = []
    field: tuple[tuple[int, int], Any] | None = None    # where the field was tapped, and the screen it was on
    if count_forms(x, y, element, target_ref):
        target = aim(session, x=x, y=y, element=element, target_ref=target_ref, what="the field")
        sensitive = judge(session, asker, target, package, "tap the field")
        field = (target.point, session.screen_at(target.point))
        session.device.tap(*target.point)
        session.acted()
        notes.append(f"tapped the field {target.describe(session.shot)}" + (f"; {sensitive}" if sensitive else ""))
    try:
        ok = session.device.input_text(text, clear=clear, verify=verify)
        session.acted()
        route = session.adb.typer.last_route
        how = route.value if route is not None else "input text"
        if verify:   # only a read-back says "typed"; without one the text was sent, not seen
            notes.append(f"typed {len(text)} characters via {how}"
                         + ("; the field reads back as typed" if ok else _unread(session)))
        else:
            notes.append(f"sent {len(text)} characters via {how} (not verified: the field was not read back)")
        if verify and not ok:   # a password field (it shows dots): a password is never kept for save_task
            session.journal.unsaveable()
        else:                   # one step: the field, tapped and typed into
            session.journal.typed(text, clear, *(field or (None, None)), checked=verify)
        if submit:
            session.device.press_key(KEY_NAMES["enter"])
            session.acted()
            session.journal.key(KEY_NAMES["enter"], 1)
            notes.append("pressed ENTER")
    finally:
        _restore_ime(session)
    return "; ".join(notes)


def _unread(session: Session) -> str:
    """Why the field does not read back as typed: a password field (fine), no field, or a changed text."""
    tree = session.tree()
    node = tree.focused_node() if tree is not None else None
    if node is not None and node.password:
        return " into a password field (not read back: it shows dots)"
    if node is None:
        raise ActionError("no text field has the focus, so the text went nowhere",
                          hint="pass target= (the field), or tap the field first")
    raise ActionError(f"the text did not arrive as typed: the field reads {node.text!r}",
                      hint="the app may filter or reformat input; take a screenshot to check")


def _restore_ime(session: Session) -> None:
    """Give the person their keyboard back after every call (ADBKeyboard is switched on again when needed).

    ``close()`` restores the saved input method and never raises for a device failure."""
    session.adb.close()
