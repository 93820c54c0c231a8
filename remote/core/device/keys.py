"""Android key names and codes (pure): ``keycode("enter") == keycode("KEYCODE_ENTER") == keycode(66) == 66``."""

from __future__ import annotations

from remote.errors import ActionError

KEYCODES: dict[str, int] = {
    "HOME": 3, "BACK": 4, "CALL": 5, "ENDCALL": 6, "END_CALL": 6, "DPAD_UP": 19, "DPAD_DOWN": 20,
    "DPAD_LEFT": 21, "DPAD_RIGHT": 22, "DPAD_CENTER": 23, "VOLUME_UP": 24, "VOLUME_DOWN": 25,
    "POWER": 26, "CAMERA": 27, "TAB": 61, "SPACE": 62, "ENTER": 66, "DEL": 67, "MENU": 82,
    "SEARCH": 84, "MEDIA_PLAY_PAUSE": 85, "PAGE_UP": 92, "PAGE_DOWN": 93, "ESCAPE": 111,
    "FORWARD_DEL": 112, "MOVE_HOME": 122, "MOVE_END": 123, "VOLUME_MUTE": 164, "APP_SWITCH": 187,
    "WAKEUP": 224, "SLEEP": 223,
}
MAX_KEYCODE = 400


def keycode(key: int | str) -> int:
    """``66``, ``"ENTER"``, ``"enter"`` and ``"KEYCODE_ENTER"`` all give 66; anything else is an ActionError."""
    if isinstance(key, int) and not isinstance(key, bool):
        if 0 <= key <= MAX_KEYCODE:
            return key
        raise ActionError(f"key code {key} is out of range (0..{MAX_KEYCODE})")
    name = str(key).strip().upper().removeprefix("KEYCODE_")
    if name.isdigit():
        return keycode(int(name))
    if name not in KEYCODES:
        raise ActionError(f"unknown key {str(key)[:40]!r}",
                          hint=f"use a key code number or one of {', '.join(KEYCODES)}")
    return KEYCODES[name]
